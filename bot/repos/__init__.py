"""Upstream access: the mirrors the git CLI keeps, refs, fetches, blob reads, the history between two
refs, and which patches Ollama's CMake applies to which upstream. Imports bot.child and bot.lang."""
