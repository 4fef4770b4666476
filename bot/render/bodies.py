"""The checklist comment's bodies between two checklists: a run under way, and a run that failed."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from bot.render.banners import failed_banner, rechecking_banner, render_progress, results_of, under_banner
from bot.render.env import MARKER, render_template
from bot.render.items import ticked_ids
from bot.times import human, utc_now

# the note `with_ticks` writes, on a line of its own
_TICKS_NOTE = re.compile(r"^<!-- llama-bot:ticked ([\w.:\- ]*) -->\r?$", re.MULTILINE)


def carried_ticks(body: str | None) -> set[str]:
    """Boxes a person ticked: visible ones, and those kept in a note while a run replaced the checklist."""
    body = body or ""
    kept = {i for note in _TICKS_NOTE.findall(body) for i in note.split()}
    return ticked_ids(body) | kept


def with_ticks(body: str, ticked: Iterable[str]) -> str:
    """A progress or error body that remembers the ticked boxes for the next checklist."""
    ids = sorted(ticked)
    return f"{body.rstrip()}\n\n<!-- llama-bot:ticked {' '.join(ids)} -->\n" if ids else body


def progress_body(
    previous: str | None, head_sha: str, since: dt.datetime, fetching: str | None = None
) -> str:
    """The checklist comment while a run is under way: the last checklist (ticks and all) stays readable
    under a banner; without one, a progress note that remembers the ticked boxes. `fetching` names the
    upstream whose mirror the run is fetching."""
    results = results_of(previous)
    if results is not None:
        results_sha, checklist = results
        banner = rechecking_banner(head_sha, since.strftime("%H:%M UTC"), results_sha, fetching)
        return under_banner(checklist, banner, True)
    return with_ticks(render_progress(head_sha, human(since), fetching), carried_ticks(previous))


def error_body(previous: str | None, head_sha: str, message: str, hint: str) -> str:
    """The checklist comment of a run that could not check the commit: why, and what to do, above the last
    checklist when there is one."""
    ran_at = human(utc_now())
    results = results_of(previous)
    if results is not None:
        results_sha, checklist = results
        return under_banner(checklist, failed_banner(head_sha, ran_at, message, hint, results_sha), False)
    body = render_template(
        "reply_checklist_error.md.j2",
        marker=MARKER,
        head_sha=head_sha,
        ran_at=ran_at,
        message=message,
        hint=hint,
    )
    return with_ticks(body, carried_ticks(previous))


def untouched_body(previous: str, head_sha: str, pins: list[str]) -> str:
    """The checklist comment of a PR that no longer touches a pin: no checklist of an older commit."""
    body = render_template(
        "checklist_untouched.md.j2", marker=MARKER, head_sha=head_sha, ran_at=human(utc_now()), pins=pins
    )
    return with_ticks(body, carried_ticks(previous))
