"""Upstream changes near a carried patch's hunks.

A patch that still applies can still be wrong: upstream may have changed
the code around the hunk (a renamed variable, a new early return) so that
the hunk's intent no longer holds. Upstream changes within WINDOW lines of
a hunk that applied as it was ask for a look: one item per patch and
upstream file, for information. A hunk the patch section already explains
(moved, merged, in conflict, or of a patch upstream now carries) gets none:
it is said there.

A name a hunk's added lines use that the patched function declared at the
old ref (a local such as `buft`) and no longer has at all is more than a
look: the patched file no longer compiles, whatever the patch section says
of how it applies. Medium, one item per patch, file and name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.lang import cpp
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
            drafts += _lost_names(patch_path, fp, change)
    return drafts


_WORD = re.compile(rb"\b[A-Za-z_]\w{2,}\b")
_KEYWORDS = frozenset(
    b"auto bool break case catch char class const constexpr continue default delete double else enum explicit "
    b"extern false float for goto if inline int long namespace new nullptr operator private protected public "
    b"return short signed sizeof static struct switch template this throw true try typedef typename union "
    b"unsigned using virtual void volatile while size_t".split()
)


def _lost_names(patch_path: str, fp: FilePatch, change: FileChange) -> list[Draft]:
    """The names the file's hunks add uses of that were locals in scope where the hunk goes at the old ref and
    are not at the new ref."""
    if not (change.old_path and change.new_path and change.significant and cpp.is_c_family(change.path)):
        return []
    old, new = change.old_code_lines, change.new_code_lines
    found: dict[str, Draft] = {}
    for number, hunk in enumerate(fp.hunks, 1):
        lost, row = _names_lost(hunk, old, new)
        for name in lost:
            found.setdefault(name, _lost_draft(patch_path, change, number, hunk, name, row))
    return list(found.values())


def _names_lost(hunk: Hunk, old: list[str], new: list[str]) -> tuple[list[str], int]:
    """The names the hunk's added lines use (and do not declare) that are locals in scope where it goes at
    the old ref and not at the new ref, and the (0-based) row it goes after at the new ref."""
    added = b"\n".join(line.text for line in hunk.lines if line.kind == "+")
    rows = _rows(old, new, _anchor(hunk))
    if not added or rows is None:
        return [], 0
    at_old, at_new = rows
    before = cpp.locals_at("\n".join(old).encode(), at_old)
    after = cpp.locals_at("\n".join(new).encode(), at_new)
    declared = set(cpp.locals_at(added + b"\n", added.count(b"\n")))
    used = {w.decode() for w in _WORD.findall(added) if w not in _KEYWORDS}
    return sorted((used & before) - after - declared), at_new


ANCHOR_LINES = 3  # the context lines before a hunk's first added line that find where it goes


def _anchor(hunk: Hunk) -> list[str]:
    """The context lines just before the hunk's first added line, spaces squeezed."""
    lines: list[str] = []
    for line in hunk.lines:
        if line.kind == "+":
            break
        if line.kind == " ":
            lines.append(" ".join(line.text.decode("utf-8", "replace").split()))
    return [t for t in lines if t][-ANCHOR_LINES:]


def _rows(old: list[str], new: list[str], anchor: list[str]) -> tuple[int, int] | None:
    """Where the hunk goes at each ref: the longest tail of its anchor found once at both (upstream may have
    changed the first of its context lines)."""
    for size in range(len(anchor), 0, -1):
        at_old, at_new = _row(old, anchor[-size:]), _row(new, anchor[-size:])
        if at_old is not None and at_new is not None:
            return at_old, at_new
    return None


def _row(code: list[str], anchor: list[str]) -> int | None:
    """The 0-based row of the anchor's last line where the anchor's lines stand in a row, when once only."""
    if not anchor:
        return None
    squeezed = [" ".join(line.split()) for line in code]
    rows = [
        n + len(anchor) - 1
        for n in range(len(squeezed) - len(anchor) + 1)
        if squeezed[n] == anchor[0] and squeezed[n : n + len(anchor)] == anchor
    ]
    return rows[0] if len(rows) == 1 else None


def _lost_draft(patch_path: str, change: FileChange, number: int, hunk: Hunk, name: str, row: int) -> Draft:
    return Draft(
        "patch-context",
        "medium",
        f"Hunk {number} of {patch_path.rsplit('/', 1)[-1]} uses {code_span(name)}, a local upstream's code no "
        "longer has there",
        f"Hunk {number} of {code_span(patch_path)} adds code to {code_span(change.path)} that uses "
        f"{code_span(name)}, a local variable in scope where the hunk goes at the old ref and not at the new "
        "one. Even where the hunk still applies, the patched file no longer compiles, or the name now means "
        "something else: regenerate the hunk against the new code.",
        change.path,
        row + 1,
        local_refs=(LocalRef(patch_path, _using_line(hunk, name)),),
        cause=f"patch-name:{patch_path}:{change.path}:{name}",
    )


def _using_line(hunk: Hunk, name: str) -> int:
    """The patch file's line of the hunk's first added line that names `name` (its header's when none)."""
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    at = next((n for n, line in enumerate(hunk.lines) if line.kind == "+" and word.search(line.text)), None)
    return hunk.header_line + 1 + at if at is not None and hunk.header_line else hunk.header_line


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
