"""The at-its-place rule of bot/patches/obsolete.py: upstream changed the very lines a hunk removes, and each line
the hunk adds is either upstream's line there or upstream's equivalent (a line with every name the patch's
line brings in), one of them verbatim; a hunk that only adds lines is provided when upstream added them at
that place. Pure functions over the file at the old and the new ref.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import pygit2

from bot.lang import cpp
from bot.patches.hunks import Image, find_exact
from bot.patches.patchfile import Hunk, lines_of


class Edit(NamedTuple):
    """One of upstream's edits from the old to the new ref."""

    rows: set[int]  # the 0-based old rows it removes; when it only inserts, the row it inserts before
    added: list[bytes]
    new_start: int  # 1-based line at the new ref where its lines start
    inserts_only: bool


@dataclass(frozen=True)
class ChangeAtPlace:
    """Upstream's change at a hunk's place that provides the hunk."""

    new_start: int  # 1-based line at the new ref where it starts
    count: int  # the lines it adds
    differs: list[tuple[bytes, bytes]]  # a line the patch adds, and upstream's equivalent of it


class UpstreamChange:
    """One file at the old and the new ref, for every hunk of it in turn: the old file's lines indexed once,
    and upstream's edits between the refs worked out once (when a hunk first needs them), by row."""

    def __init__(self, old: bytes, new: bytes):
        self.old, self.new = old, new
        self.image = Image(lines_of(old))

    @cached_property
    def edits(self) -> list[Edit]:
        return _upstream_changes(self.old, self.new)

    @cached_property
    def _inserting(self) -> dict[int, list[Edit]]:
        """Old row -> the edits that only insert before it, in order."""
        found: dict[int, list[Edit]] = {}
        for edit in self.edits:
            for row in edit.rows if edit.inserts_only else ():
                found.setdefault(row, []).append(edit)
        return found

    @cached_property
    def _replacing(self) -> dict[int, list[int]]:
        """Old row -> the numbers of the edits that replace it."""
        found: dict[int, list[int]] = {}
        for number, edit in enumerate(self.edits):
            for row in edit.rows if not edit.inserts_only else ():
                found.setdefault(row, []).append(number)
        return found

    def inserting_at(self, row: int) -> list[Edit]:
        """The edits that only insert before 0-based old `row`, in order."""
        return self._inserting.get(row, [])

    def replacing(self, rows: set[int]) -> list[Edit]:
        """The edits that replace some of `rows` (not those that only insert), in order."""
        numbers = sorted({n for row in rows for n in self._replacing.get(row, ())})
        return [self.edits[n] for n in numbers]


def change_at_place(file: UpstreamChange, hunk: Hunk, c_family: bool) -> ChangeAtPlace | None:
    """Upstream's change at the hunk's place when it made the hunk's change, itself or by an equivalent."""
    added = added_lines(hunk)
    placement = find_exact(file.image, hunk) if added else None
    if placement is None:
        return None
    removed_rows, removed = _removed(hunk, placement.start)
    covering = _covering(file, hunk, placement.start, removed_rows)
    theirs = _lines_of(covering)
    compared = _compare(added, theirs, removed, c_family)  # None without edits
    if compared is None:
        return None
    verbatim, differs = compared
    if not verbatim or (not removed_rows and differs):
        return None
    return ChangeAtPlace(min(e.new_start for e in covering), len(theirs), differs)


def _norm(line: bytes) -> bytes:
    return b" ".join(line.split())


def _upstream_changes(old: bytes, new: bytes) -> list[Edit]:
    """Upstream's edits from `old` to `new`."""
    edits = []
    for h in pygit2.Patch.create_from(old, new, context_lines=0).hunks:
        added = [line.raw_content for line in h.lines if line.origin == "+"]
        if h.old_lines:
            edits.append(
                Edit(set(range(h.old_start - 1, h.old_start - 1 + h.old_lines)), added, h.new_start, False)
            )
        else:
            edits.append(Edit({h.old_start}, added, h.new_start, True))  # inserted after 1-based old_start
    return edits


def _new_names(line: bytes, removed: list[bytes], c_family: bool) -> set[bytes] | None:
    """The names a changed line brings in that the lines it replaces did not have (None outside C/C++)."""
    if not c_family:
        return None
    return set(cpp.names(line)).difference(*(cpp.names(r) for r in removed))


def _covering(file: UpstreamChange, hunk: Hunk, start: int, removed_rows: set[int]) -> list[Edit]:
    """Upstream's edits at the hunk's place (0-based `start`): those that together replace every line it
    removes, or, when it only adds lines, those that insert where it inserts; none when upstream did not."""
    if not removed_rows:
        boundary = start + next(i for i, line in enumerate(hunk.lines) if line.kind == "+")
        return file.inserting_at(boundary)
    covering = file.replacing(removed_rows)
    return covering if removed_rows <= _rows_of(covering) else []


def _lines_of(edits: list[Edit]) -> list[bytes]:
    """The lines upstream's `edits` add."""
    return [line for e in edits for line in e.added]


def _rows_of(edits: list[Edit]) -> set[int]:
    return set().union(*(e.rows for e in edits))


def _equivalent(line: bytes, theirs: list[bytes], removed: list[bytes], c_family: bool) -> bytes | None:
    """Upstream's line with every name the patch's `line` brings in, if any."""
    brings = _new_names(line, removed, c_family)
    return next((t for t in theirs if brings and brings <= set(cpp.names(t))), None)


def _compare(
    added: list[bytes], theirs: list[bytes], removed: list[bytes], c_family: bool
) -> tuple[int, list[tuple[bytes, bytes]]] | None:
    """How many of the `added` lines upstream has verbatim (braces and lone keywords aside), and how it
    has the others; None when upstream has no equivalent of one."""
    theirs_norm = {_norm(t) for t in theirs}
    verbatim, differs = 0, []
    for line in added:
        if _norm(line) in theirs_norm:
            verbatim += len(_norm(line)) > 3  # a brace or a lone keyword is no evidence
            continue
        match = _equivalent(line, theirs, removed, c_family)
        if match is None:
            return None
        differs.append((line, match))
    return verbatim, differs


def _removed(hunk: Hunk, start: int) -> tuple[set[int], list[bytes]]:
    """The 0-based rows the hunk placed at `start` removes, and their lines."""
    pre = [line for line in hunk.lines if line.kind != "+"]
    rows = {start + i for i, line in enumerate(pre) if line.kind == "-"}
    return rows, [line.text for line in pre if line.kind == "-"]


def added_lines(hunk: Hunk) -> list[bytes]:
    """The lines the hunk adds, blank ones aside: a blank line is no evidence either way."""
    return [line.text for line in hunk.lines if line.kind == "+" and line.text.strip()]
