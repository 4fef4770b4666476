"""Upstream changes near a carried patch's hunks.

A patch that still applies can still be wrong: upstream may have changed
the code around the hunk (a renamed variable, a new early return) so that
the hunk's intent no longer holds. Upstream changes within WINDOW lines of
a hunk that applied as it was ask for a look: one item per patch and
upstream file, for information. A hunk the patch section already explains
(moved, merged, in conflict, or of a patch upstream now carries) gets none:
it is said there.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.markup import code_span
from bot.model import LocalRef
from bot.patches.patchfile import FilePatch, Hunk, PatchFile
from bot.review.changes import Draft, FileChange, Span
from bot.review.source import excerpt

WINDOW = 20


def _near(change: FileChange, old_start: int, old_count: int, window: int) -> list[Span]:
    low = old_start - window
    high = old_start + max(old_count, 1) - 1 + window
    return [
        s for s in change.significant if s.old_start <= high and s.old_start + max(s.old_count, 1) - 1 >= low
    ]


_NearHunk = tuple[int, Hunk, list[Span]]  # (1-based number in its file, the hunk, upstream's spans near it)


def patch_context_drafts(
    patches: list[tuple[str, PatchFile]],
    changes: Mapping[str, FileChange],
    explained: frozenset[tuple[str, int]] = frozenset(),
    window: int = WINDOW,
) -> list[Draft]:
    """One item per (patch, upstream file) whose unexplained hunks have significant upstream changes within
    `window` old-ref lines; `explained` holds the (patch path, hunk header line) the patch section reports."""
    drafts = []
    for patch_path, pf in patches:
        for fp in pf.files:
            change = changes.get(fp.old_path or "")
            if fp.is_new or fp.is_binary or change is None:
                continue
            hunks = _hunks_near(patch_path, fp, change, explained, window)
            if hunks:
                drafts.append(_context_draft(patch_path, change, hunks, window))
    return drafts


def _hunks_near(
    patch_path: str, fp: FilePatch, change: FileChange, explained: frozenset[tuple[str, int]], window: int
) -> list[_NearHunk]:
    """The file's hunks the patch section does not explain that have upstream changes within `window`."""
    return [
        (number, hunk, near)
        for number, hunk in enumerate(fp.hunks, 1)
        if (patch_path, hunk.header_line) not in explained
        and (near := _near(change, hunk.old_start, hunk.old_count, window))
    ]


def _context_draft(patch_path: str, change: FileChange, hunks: list[_NearHunk], window: int) -> Draft:
    """The item for one patch's hunks in one upstream file: which hunks, near which upstream lines, and an
    excerpt of upstream's change there."""
    spans = sorted({s for _, _, near in hunks for s in near}, key=lambda s: s.old_start)
    removed, added = _first_lines(change, spans)
    blame, gone = _blamed(change, spans, removed)
    numbers = ", ".join(str(number) for number, _, _ in hunks)
    listed = "; ".join(_listing(number, hunk, near) for number, hunk, near in hunks)
    name = patch_path.rsplit("/", 1)[-1]
    many = len(hunks) > 1
    # of the hunks, not the patch: the patch section says what became of the patch, which another hunk of it
    # may have made fuzzy
    these = f"{'Hunks' if many else 'Hunk'} {numbers} of {code_span(patch_path)}"
    return Draft(
        "patch-context",
        "info",
        f"Upstream changed {change.path} near hunk{'s' if many else ''} {numbers} of {name}",
        f"{these} {'apply as they were' if many else 'applies as it was'}, but upstream changed the code within "
        f"{window} lines of {'them' if many else 'it'}: {listed}. Check that the patch's intent still holds."
        f"\n\n{excerpt(removed, added)}",
        change.path,
        change.where(spans[0]),
        blame,
        gone,
        tuple(LocalRef(patch_path, hunk.header_line) for _, hunk, _ in hunks),
    )


def _first_lines(change: FileChange, spans: list[Span]) -> tuple[list[str], list[str]]:
    """The first four lines upstream removed and added in the spans, for the excerpt."""
    removed = [change.old_lines[n - 1] for s in spans for n in s.old_lines][:4]
    added = [change.new_lines[n - 1] for s in spans for n in s.new_lines][:4]
    return removed, added


def _blamed(
    change: FileChange, spans: list[Span], removed: list[str]
) -> tuple[tuple[tuple[int, int], ...], tuple[str, str] | None]:
    """The new-ref line ranges whose commits to name, or when upstream only removed lines there, the old
    file and the first removed line to find the commit that removed them by."""
    blame = tuple((s.new_start, s.new_start + s.new_count - 1) for s in spans if s.new_count)
    gone = None if blame else (change.old_path or change.path, removed[0].strip() if removed else "")
    return blame, gone


def _listing(number: int, hunk: Hunk, near: list[Span]) -> str:
    """`hunk N (old line L) near upstream line(s) A, B-C`."""
    lines = ", ".join(
        f"{s.old_start}" + (f"-{s.old_start + s.old_count - 1}" if s.old_count > 1 else "") for s in near
    )
    return f"hunk {number} (old line {hunk.old_start}) near upstream line(s) " + lines
