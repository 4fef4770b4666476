"""Every text the bot writes: the checklist comment, its banners, replies and check-run bodies.

One jinja environment (`env`) renders bot/templates/; the modules here turn reports, dispatches and runs into
the values those templates show. The decisions (what to dispatch, which run is whose) stay in
`bot.decisions.validation` and the analysis; nothing here posts anything.
Imports bot.decisions and the layers below it.
"""
