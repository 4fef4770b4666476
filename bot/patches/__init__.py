"""The patch format and its placement: parsing and safety, hunks found, relocated, merged or upstreamed,
identifiers renamed, the patched tree and the real `git apply`. Pure functions over bot.repos' snapshots."""
