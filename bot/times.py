"""Moments as the bot writes them for people."""

from __future__ import annotations

import datetime as dt


def human(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")
