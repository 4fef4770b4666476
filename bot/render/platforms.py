"""The checklist's platform section: a partial of its own between two tags, so a workflow run's update
renders it alone and puts it in place with one substitution, and the rest of the comment stays as the
analysis wrote it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bot.config import Platform
from bot.decisions.runreport import from_stored
from bot.decisions.validation import Dispatch, elapsed, latest_dispatches
from bot.model import Report
from bot.render.env import render_template
from bot.render.items import Item, box_id, tick
from bot.render.markdown import plain
from bot.render.steps import bumped
from bot.render.words import format_duration

PLATFORM_LABELS = {
    "metal": "Metal on macOS arm64",
    "cuda": "CUDA on Linux and Windows",
    "rocm": "ROCm on Linux and Windows",
    "vulkan": "Vulkan on Linux and Windows",
    "windows": "Windows (CPU and GPU runners)",
    "mlx-metal": "MLX Metal on macOS arm64",
    "mlx-cuda": "MLX CUDA on Linux",
    "contract-probe": "llama-server at both refs, spoken to as Ollama does (docs/probe.md)",
}
STATE_TEXT = {"queued": "queued", "in_progress": "in progress", "completed": "completed"}
PLATFORM_HEADING = "### Platform validation"
# The section's tags, as bot/templates/_platforms.md.j2 writes them.
OPEN_TAG = "<!-- llama-bot:platforms -->\n"
CLOSE_TAG = "<!-- /llama-bot:platforms -->\n"
_TAGGED = re.compile(re.escape(OPEN_TAG) + ".*?" + re.escape(CLOSE_TAG), re.DOTALL)
_FOOTER = "\n<sub>Describes commit"


def duration(start: str | None, end: str | None) -> str | None:
    """How long a run took, for a table cell or a title; None until it has both times."""
    seconds = elapsed(start, end)
    return None if seconds is None else format_duration(seconds)


def _row(name: str, last: Dispatch | None, head_sha: str) -> dict:
    """A platform's row: its latest dispatch's state, or `not run`; a run of an older commit is stale. A run
    that uploads a report has its findings (joined with the review's), or why the report was not read."""
    row: dict = {
        "name": name,
        "label": PLATFORM_LABELS.get(name, name),
        "state": "not run",
        "conclusion": None,
        "url": None,
        "duration": None,
        "sha": None,
        "stale": False,
        "reported": False,
        "findings": [],
        "report_error": None,
    }
    if last:
        pins, error = from_stored(last.report)
        row.update(
            reported=last.report is not None,
            findings=[f for pin in pins for f in pin.findings],
            report_error=error,
        )
        row.update(
            state=STATE_TEXT[last.status],
            conclusion=last.conclusion,
            url=last.run_url,
            duration=duration(last.started_at, last.completed_at),
            sha=last.head_sha,
            stale=last.head_sha != head_sha,
        )
    return row


def platform_rows(
    dispatches: Iterable[Dispatch], head_sha: str, platforms: Sequence[Platform] = ()
) -> list[dict]:
    """Rows for the checklist's platform table: the latest dispatch of each platform.

    Once anything was dispatched every configured platform gets a row (so the checklist keeps a box
    for each); before that there are none and the checklist shows its default list.
    """
    latest = latest_dispatches(dispatches)
    if not latest:
        return []
    configured = [p.name for p in platforms]
    names = configured + [n for n in latest if n not in configured]
    return [_row(name, latest.get(name), head_sha) for name in names]


def _default_platforms(report: Report) -> list[Item]:
    """Before anything was dispatched: the platforms that build what the bump changed."""
    llama_cpp, mlx = bumped(report)
    return [
        Item(f"platform-{name}", label)
        for name, label in PLATFORM_LABELS.items()
        if (mlx if name.startswith("mlx-") else llama_cpp)
    ]


def platform_items(rows: list[dict], report: Report) -> list[Item]:
    """A box per platform: per dispatched platform's row (ticked by a successful run of the head), else the
    platforms that build what the bump changed; and the integration tests."""
    items = [
        Item(
            box_id(f"platform-{row['name']}"),
            plain(row.get("label") or PLATFORM_LABELS.get(row["name"], row["name"])),
            row.get("conclusion") == "success" and not row.get("stale"),
        )
        for row in rows
    ] or _default_platforms(report)
    return [*items, Item("integration-tests", "Integration tests")]


def render_platforms(rows: list[dict], report: Report, prefix: str, ticked: Iterable[str] = ()) -> str:
    """The platform section alone, tags included, exactly as the whole checklist renders it. `report` only
    chooses the default boxes, which show while `rows` is empty (nothing dispatched yet)."""
    items = platform_items(rows, report)
    tick(items, ticked)
    return render_template("_platforms.md.j2", rows=rows, items=items, prefix=prefix)


def _untagged_section(body: str) -> tuple[int, int] | None:
    """Where the platform section of a comment written before the section had its tags starts and ends."""
    start = body.find(PLATFORM_HEADING)
    if start < 0:
        return None
    end = body.find(_FOOTER, start)
    return start, (end if end >= 0 else len(body))


def splice_platforms(body: str, section: str) -> str | None:
    """`body` (the checklist comment) with its platform section, between its tags, replaced by `section`
    (`render_platforms`); None when the body has none (a progress or error body).

    The rest of the comment (patches, steps, review) stays as the analysis wrote it, so a workflow_run
    update never needs the analysis report again.
    """
    if _TAGGED.search(body):
        return _TAGGED.sub(lambda _: section, body, count=1)
    old = _untagged_section(body)
    return None if old is None else body[: old[0]] + section + body[old[1] :]
