"""The comment while a run is under way or failed: a progress note, or the last checklist under a banner."""

from __future__ import annotations

import re

from bot.render.env import MARKER, RUNNING, render_template
from bot.render.markdown import plain

_RESULTS = re.compile(r"^<!-- llama-bot:results ([0-9a-f]{7,40}) -->$", re.MULTILINE)


def render_progress(head_sha: str, since: str, fetching: str | None = None) -> str:
    """The comment of a first run under way; `fetching` names the upstream whose mirror it is fetching."""
    return render_template(
        "progress.md.j2", marker=MARKER, running=RUNNING, head_sha=head_sha, since=since, fetching=fetching
    )


def results_of(body: str | None) -> tuple[str, str] | None:
    """(commit, text) of the finished checklist a comment holds, banner excluded; None when it holds none."""
    found = _RESULTS.search(body or "")
    return (found[1], body[found.start() :]) if found and body else None


def under_banner(results: str, banner: str, running: bool) -> str:
    """The finished checklist `results` (from `results_of`, ticks included) under a one-line banner."""
    return render_template(
        "checklist_banner.md.j2",
        marker=MARKER,
        running=RUNNING if running else "",
        banner=banner,
        results=results.rstrip(),
    )


def rechecking_banner(head_sha: str, since: str, results_sha: str, fetching: str | None = None) -> str:
    """The banner over the last checklist while a run is under way; `fetching` names the upstream whose
    mirror it is fetching, which on a cold start is most of the wait."""
    doing = f", fetching upstream {plain(fetching)}" if fetching else ""
    return f"⏳ Re-checking `{head_sha[:12]}` since {since}{doing}; the results below are for `{results_sha[:12]}`."


def failed_banner(head_sha: str, ran_at: str, message: str, hint: str, results_sha: str) -> str:
    """The banner over the last checklist when a later commit could not be checked."""
    return (
        f"⛔ Could not check `{head_sha[:12]}` ({ran_at}): {plain(message)} {hint} "
        f"The results below are for `{results_sha[:12]}`."
    )
