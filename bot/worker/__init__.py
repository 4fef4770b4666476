"""The job runner and one module per kind of job: analysis, commands, regeneration, platform validation.

Imports bot.gh, bot.render, bot.stores, the engine (which the analysis child runs) and every layer below.
"""
