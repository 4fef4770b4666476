"""The bot's decisions as pure functions over plain data: who may make it act on which commit, a bump's
refs and branch, what platform validation dispatches. Imports bot.config and the layers below it."""
