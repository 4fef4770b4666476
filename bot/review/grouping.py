"""One item per upstream cause: what several detectors or files report of one change, said once.

Two passes. Drafts that name the same cause (a GGUF key, a CMake option)
merge before the upstream commits are looked up; findings that the same
upstream commit (or two) introduced merge after, when they are of one area
or of one upstream file, whichever detectors drafted them. The merged item
keeps the most severe part's title and text and lists the other parts.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import TypeVar

from bot.markup import code_span
from bot.model import SEVERITY_ORDER, Finding
from bot.review.changes import Draft

MAX_SHARED_COMMITS = 2  # a longer commit list is a file's whole history, not one change
T = TypeVar("T", Draft, Finding)


def _groups(items: Sequence[T], key: Callable[[T], Hashable | None]) -> list[list[T]]:
    """Items with the same key together, in the order of each group's first item; a None key stays alone."""
    groups: dict[Hashable, list[T]] = {}
    alone: list[list[T]] = []
    for item in items:
        k = key(item)
        if k is None:
            alone.append([item])
        else:
            groups.setdefault(k, []).append(item)
    return list(groups.values()) + alone


def _parts(lead: Draft | Finding, others: Sequence[Draft | Finding]) -> str:
    lines = []
    for o in others:
        path, line = (o.path, o.line) if isinstance(o, Draft) else (o.upstream_path, o.upstream_line)
        where = code_span(f"{path}:{line}") if line else code_span(path)
        lines.append(f"- {where}" if o.title == lead.title else f"- {o.title} ({where})")
    return "The same upstream change also shows in:\n" + "\n".join(dict.fromkeys(lines))


def _most_severe(group: Sequence[T]) -> tuple[T, list[T]]:
    ordered = sorted(group, key=lambda x: SEVERITY_ORDER[x.severity])
    return ordered[0], ordered[1:]


def by_cause(drafts: Sequence[Draft]) -> list[Draft]:
    merged = []
    for group in _groups(drafts, lambda d: d.cause):
        lead, others = _most_severe(group)
        if others:
            refs = tuple(dict.fromkeys(r for d in group for r in d.local_refs))
            lead = replace(lead, detail=f"{lead.detail}\n\n{_parts(lead, others)}", local_refs=refs)
        merged.append(lead)
    return merged


def _shas(f: Finding) -> frozenset[str] | None:
    shas = frozenset(c.sha for c in f.upstream_commits)
    return shas if 0 < len(shas) <= MAX_SHARED_COMMITS else None


def _area_key(f: Finding) -> Hashable | None:
    shas = _shas(f)
    return (f.area, shas) if shas else None


def _file_key(f: Finding) -> Hashable | None:
    shas = _shas(f)
    return (f.upstream_path, shas) if shas else None


def by_commit(findings: Sequence[Finding]) -> list[Finding]:
    """One item per upstream commit (or two) and area, then per such commit and upstream file; then the
    changes near a patch's hunks folded into an item about the same upstream file and patch."""
    return _patch_context_folded(_merged_by(_merged_by(findings, _area_key), _file_key))


def _patch_context_folded(findings: Sequence[Finding]) -> list[Finding]:
    """A patch-context item (upstream changed a file near a carried patch's hunks) said as a part of an item
    about the same upstream file that points into the same patch: that item already sends the maintainer to
    the patch for what changed there (a parameter gone, an architecture upstreamed)."""
    kept = [f for f in findings if f.area != "patch-context"]
    parts: dict[int, list[Finding]] = {}
    for f in (f for f in findings if f.area == "patch-context"):
        host = _host(f, kept)
        if host is None:
            kept.append(f)
        else:
            parts.setdefault(host, []).append(f)
    for i, folded in parts.items():
        kept[i] = _with_parts(kept[i], folded)
    return kept


def _with_parts(lead: Finding, folded: list[Finding]) -> Finding:
    """The item with the folded ones listed as its parts, their references and commits added."""
    commits = list(lead.upstream_commits)
    for c in (c for f in folded for c in f.upstream_commits):
        if c not in commits:
            commits.append(c)
    return replace(
        lead,
        detail=f"{lead.detail}\n\n{_parts(lead, folded)}",
        local_refs=list(dict.fromkeys([*lead.local_refs, *(r for f in folded for r in f.local_refs)])),
        upstream_commits=commits,
    )


def _host(item: Finding, findings: Sequence[Finding]) -> int | None:
    """The first other-area item about the same upstream file that points into one of the item's patches."""
    patches = {r.path for r in item.local_refs}
    return next(
        (
            i
            for i, f in enumerate(findings)
            if f.area != "patch-context"
            and f.upstream_path == item.upstream_path
            and patches & {r.path for r in f.local_refs}
        ),
        None,
    )


def _merged_by(findings: Sequence[Finding], key: Callable[[Finding], Hashable | None]) -> list[Finding]:
    merged = []
    for group in _groups(findings, key):
        lead, others = _most_severe(group)
        if others:
            lead = replace(
                lead,
                detail=f"{lead.detail}\n\n{_parts(lead, others)}",
                local_refs=list(dict.fromkeys(r for f in group for r in f.local_refs)),
            )
        merged.append(lead)
    return merged
