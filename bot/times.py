"""Moments: now, as GitHub writes them, and as people read them."""

from __future__ import annotations

import datetime as dt

KEEP_SECONDS = 30 * 86400  # finished jobs, seen delivery ids and replaced PR heads are forgotten after this


def human(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(moment: dt.datetime) -> str:
    """A time as GitHub writes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
