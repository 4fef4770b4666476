"""What analyses keep across runs: the content-addressed store of upstream facts under the data dir,
keyed by blob ids and an extractor's version. Imports nothing of the bot."""
