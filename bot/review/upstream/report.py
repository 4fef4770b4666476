"""The join as a maintainer reads it (markdown) or a program does (JSON): the share of contracts resolved, the
anchors found, then per group each contract with its Ollama place and its producer at the ref, or why none."""

from __future__ import annotations

from bot.model import LocalRef
from bot.review.consumers.contracts.model import GROUPS
from bot.review.upstream.join import NOT_UPSTREAMS, RESOLVED, Resolution, by_group, summary
from bot.review.upstream.producers import Producers

MAX_PLACES = 3


def to_json(resolutions: list[Resolution], producers: Producers) -> dict:
    resolved, total = summary(resolutions)
    groups = by_group(resolutions)
    return {
        "ref": producers.ref,
        "commit": producers.tree.commit,
        "resolved": resolved,
        "total": total,
        "needs_none": sum(r.status == NOT_UPSTREAMS for r in resolutions),
        "anchors": [{"name": a.name, "paths": list(a.paths), "why": a.why} for a in producers.anchors.all()],
        "unread": dict(producers.tree.skipped),
        **{key: [r.to_json() for r in groups[key]] for key, _ in GROUPS},
    }


def share_line(resolutions: list[Resolution]) -> str:
    resolved, total = summary(resolutions)
    share = f"{100 * resolved / total:.1f}%" if total else "n/a"
    spared = sum(r.status == NOT_UPSTREAMS for r in resolutions)
    return f"{resolved} of {total} contracts resolved ({share})" + (
        f"; {spared} more need no upstream producer (why in their rows)" if spared else ""
    )


def markdown(resolutions: list[Resolution], producers: Producers, rev: str, commit: str) -> str:
    ref = producers.ref
    lines = [
        (
            f"# Where upstream produces what Ollama relies on: Ollama {rev} ({commit[:12]}), upstream {ref} "
            f"({producers.tree.commit[:12]})"
        ),
        "",
        share_line(resolutions),
        "",
        "| anchor | found | how, or why not |",
        "|---|---|---|",
        *(f"| {a.name} | {_places_text(a.paths)} | {_cell(a.why)} |" for a in producers.anchors.all()),
    ]
    if producers.tree.skipped:
        lines += [
            "",
            f"{len(producers.tree.skipped)} files could not be read (too large, or a missing blob).",
        ]
    groups = by_group(resolutions)
    for key, title in GROUPS:
        rows = groups[key]
        done = sum(r.status == RESOLVED for r in rows)
        lines += ["", f"## {title} ({done} of {len(rows)} resolved)", ""]
        lines += ["| contract | Ollama | producer at " + ref + " |", "|---|---|---|"]
        lines += [_row(r) for r in rows] or ["| none | | |"]
    return "\n".join(lines) + "\n"


def _row(r: Resolution) -> str:
    return f"| {_code(r.label)} | {_where(r.ollama)} | {_producer(r)} |"


def _producer(r: Resolution) -> str:
    if r.status == RESOLVED:
        return f"{', '.join(str(p) for p in r.producers)} ({_cell(r.why)})"
    if r.status == NOT_UPSTREAMS:
        return f"needs none: {_cell(r.why)}"
    return f"no producer found: {_cell(r.why)}"


def _where(refs: tuple[LocalRef, ...]) -> str:
    shown = ", ".join(f"{r.path}:{r.line}" for r in refs[:MAX_PLACES])
    return shown + (f" (+{len(refs) - MAX_PLACES})" if len(refs) > MAX_PLACES else "")


def _places_text(paths: tuple[str, ...]) -> str:
    if not paths:
        return "not found"
    shown = ", ".join(paths[:MAX_PLACES])
    return shown + (f" (+{len(paths) - MAX_PLACES})" if len(paths) > MAX_PLACES else "")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    text = _cell(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
