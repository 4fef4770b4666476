"""The PR checklist: a pure function of the report, the changed paths and the boxes a person ticked.

Past the comment's size limit the least important review items fold into one line, one at a time, until
the checklist fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.decisions.validation import AutoValidation
from bot.model import Finding, PinReport, Report
from bot.render.env import MARKER, render_template
from bot.render.findings import SEVERITY_HEADINGS, finding_id, review_findings, review_item
from bot.render.items import Item, tick
from bot.render.patches import PinView, pin_view
from bot.render.platforms import platform_items
from bot.render.runfindings import joined, run_findings
from bot.render.steps import merge_steps
from bot.render.verdict import REVIEW_SEVERITIES, verdict

COMMENT_LIMIT = 65536
BANNER_ROOM = 1000  # a comment's checklist leaves this much of the limit for a re-checking or failure banner


@dataclass
class Checklist:
    pins: list[PinView]
    failed: list[PinReport]  # pins that could not be checked, each with its error
    verdict: str
    steps: list[Item]
    review: list[tuple[str, list[tuple[Item, Finding]]]]  # (severity heading, items): high, then medium
    info: list[Finding]
    platforms: list[Item]
    platform_rows: list[dict] = field(default_factory=list)
    folded: int = 0


@dataclass
class _Review:
    """The review's part of the checklist: its items by severity, what folded away, and the info list."""

    sections: list[tuple[str, list[tuple[Item, Finding]]]]
    counts: dict[str, int]  # severity -> items before folding: the verdict counts them all
    folded: int
    info: list[Finding]

    @property
    def items(self) -> list[Item]:
        return [item for _, listed in self.sections for item, _ in listed]


def _findings(report: Report, rows: list[dict]) -> list[Finding]:
    """Every pin's shown findings with the platform runs' joined to them, the most severe first."""
    found = [f for pin in report.pins for f in review_findings(pin)]
    return joined(found, run_findings(rows))


def _sections(findings: list[Finding]) -> list[tuple[str, list[tuple[Item, Finding]]]]:
    """The findings' boxes under their severity's heading, in the findings' order."""
    sections: dict[str, list[tuple[Item, Finding]]] = {}
    for f in findings:
        item = Item(finding_id(f), review_item(f))
        sections.setdefault(SEVERITY_HEADINGS[f.severity], []).append((item, f))
    return list(sections.items())


def _counts(findings: list[Finding]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f.severity == s) for s in REVIEW_SEVERITIES}


def _review(report: Report, rows: list[dict], max_findings: int | None) -> _Review:
    """The review items, at most `max_findings` of them (None: all); once any folds, the info list goes too."""
    findings = _findings(report, rows)
    actionable = [f for f in findings if f.severity != "info"]
    kept = actionable if max_findings is None else actionable[:max_findings]
    folded = len(actionable) - len(kept)
    info = [] if folded else [f for f in findings if f.severity == "info"]
    return _Review(_sections(kept), _counts(actionable), folded, info)


def build_checklist(
    report: Report,
    changed_paths: Iterable[str],
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    max_findings: int | None = None,
    prefix: str | None = "/llama",
    patch_dirs: Mapping[str, str] | None = None,
    auto: AutoValidation | None = None,
) -> Checklist:
    """Which items the PR needs, and which are already done (by the bot or by a person); `auto` is what
    became of the `auto` platforms for the head."""
    steps = merge_steps(report, list(changed_paths), auto, prefix)
    rows = platforms or []
    review = _review(report, rows, max_findings)
    items = platform_items(rows, report)
    tick([*steps, *review.items, *items], ticked)
    dirs = patch_dirs or {}
    return Checklist(
        [pin_view(pin, prefix, dirs.get(pin.name)) for pin in report.pins],
        list(report.failed),
        verdict(report.pins, list(report.failed), review.counts, prefix),
        steps,
        review.sections,
        review.info,
        items,
        rows,
        review.folded,
    )


def render_markdown(
    report: Report,
    changed_paths: Iterable[str],
    *,
    head_sha: str | None = None,
    ran_at: str | None = None,
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    marker: bool = False,
    limit: int = COMMENT_LIMIT,
    prefix: str | None = "/llama",
    patch_dirs: Mapping[str, str] | None = None,
    auto: AutoValidation | None = None,
) -> str:
    """The checklist; past `limit` characters the least important findings fold into one line.

    `patch_dirs` (pin name -> its patch directory) lets a pin without patches name where it looked.
    """
    changed = list(changed_paths)
    ticked = set(ticked)
    total = sum(1 for f in _findings(report, platforms or []) if f.severity != "info")
    for keep in [None, *range(total, -1, -1)]:
        checklist = build_checklist(report, changed, ticked, platforms, keep, prefix, patch_dirs, auto)
        text = render_template(
            "checklist.md.j2",
            c=checklist,
            head_sha=head_sha,
            ran_at=ran_at,
            marker=MARKER if marker else "",
            prefix=prefix,
        )
        if len(text) <= limit:
            return text
    return text[: limit - 200] + "\n\n… (truncated: see the check runs for the full report)\n"


def render_comment(
    report: Report,
    changed_paths: Iterable[str],
    *,
    head_sha: str,
    ran_at: str,
    prefix: str,
    ticked: Iterable[str] = (),
    platforms: list[dict] | None = None,
    patch_dirs: Mapping[str, str] | None = None,
    auto: AutoValidation | None = None,
) -> str:
    """The checklist as the PR's comment: with its marker, leaving room for a banner above it."""
    return render_markdown(
        report,
        changed_paths,
        head_sha=head_sha,
        ran_at=ran_at,
        ticked=ticked,
        platforms=platforms,
        marker=True,
        limit=COMMENT_LIMIT - BANNER_ROOM,
        prefix=prefix,
        patch_dirs=patch_dirs,
        auto=auto,
    )
