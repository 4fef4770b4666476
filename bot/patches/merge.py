"""Three-way merge of one file over lists of lines, edit by edit, with the rules maintainers use where the
patch's edits and upstream's touch.

Pure functions: base is the file the patch was written against, ours is base with the patch, theirs is the
new upstream file. Upstream's lines are compared with the base ignoring whitespace, so a block upstream
re-indented or re-aligned still lines up with the base; our lines next to such lines are re-indented and
re-spaced like them. Where both sides inserted lines at the same point, upstream's lines come first and
ours after (an entry appended to a list stays the last one). Edits that only touch are kept both, in base
order; entries we added before a list's terminator stay right before it when upstream rewrote it with
entries of its own. Only edits that change the same base lines differently are an overlap: then there
is no merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from bot.markup import code_span
from bot.patches.hunks import indent_shift, is_terminator, norm, realign


@dataclass(frozen=True)
class Edit:
    """Base lines [start, end) replaced by `lines`; start == end is an insertion before base line `start`."""

    start: int
    end: int
    lines: tuple[bytes, ...]

    @property
    def inserts(self) -> bool:
        return self.start == self.end


@dataclass
class Placed:
    """One of our edits in the merged file: where its lines begin, and what a rule did to place it."""

    edit: Edit
    at: int
    notes: list[str] = field(default_factory=list)


@dataclass
class Merged:
    lines: list[bytes]
    ours: list[Placed]


class Overlap(Exception):
    """Our edit and upstream's change the same base lines differently; the message says where."""


def _exact_key(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\x01\n"


def _loose_key(line: bytes) -> bytes:
    return norm(line) + b"\n"


def edits(base: list[bytes], other: list[bytes], loose: bool = False) -> list[Edit]:
    """git's line diff from base to other (ignoring whitespace when `loose`), as edits in base order."""
    key = _loose_key if loose else _exact_key
    # Both buffers stay referenced while the patch is read: libgit2 points into them.
    before, after = b"".join(map(key, base)), b"".join(map(key, other))
    patch = pygit2.Patch.create_from(
        before,
        after,
        flag=pygit2.enums.DiffOption.FORCE_TEXT,
        context_lines=0,
    )
    out = []
    for hunk in patch.hunks:
        start = hunk.old_start if hunk.old_lines == 0 else hunk.old_start - 1
        first = hunk.new_start - 1 if hunk.new_lines else 0
        out.append(Edit(start, start + hunk.old_lines, tuple(other[first : first + hunk.new_lines])))
    return out


def _kept(base: list[bytes], theirs: list[bytes], changes: list[Edit]) -> dict[int, bytes]:
    """Upstream's version of every base line its edits leave in place (maybe re-spaced)."""
    kept: dict[int, bytes] = {}
    shift = 0
    changed = iter(changes)
    nxt = next(changed, None)
    i = 0
    while i < len(base):
        if nxt is not None and nxt.start == i:
            shift += len(nxt.lines) - (nxt.end - nxt.start)
            i = nxt.end
            nxt = next(changed, None)
            continue
        kept[i] = theirs[i + shift]
        i += 1
    return kept


def _lines_word(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"


def merge(base: list[bytes], ours: list[bytes], theirs: list[bytes]) -> Merged:
    """The merged file, and where each of our edits went; raises Overlap."""
    mine = edits(base, ours)
    their = edits(base, theirs, loose=True)
    for e in mine:
        for t in their:
            if problem := _overlap(e, t):
                raise Overlap(problem)
    return _Merger(base, _kept(base, theirs, their), _Theirs.of(their), mine).run()


def _overlap(e: Edit, t: Edit) -> str | None:
    """Why our edit `e` and upstream's `t` cannot both be kept: they replace the same base lines
    differently, or one inserts inside the lines the other replaces; None when they only touch."""
    same = (e.start, e.end, e.lines) == (t.start, t.end, t.lines)
    if not same and not e.inserts and not t.inserts and e.start < t.end and t.start < e.end:
        return f"upstream changed base lines {t.start + 1}-{t.end} that the patch changes too"
    if _inserts_inside(e, t) or _inserts_inside(t, e):
        return f"upstream changed base lines {t.start + 1}-{t.end} around the patch's insertion"
    return None


def _inserts_inside(insertion: Edit, replacement: Edit) -> bool:
    """Whether the first edit inserts among the base lines the second replaces: before one of them other
    than the first (inside the replaced lines, not at their edge)."""
    return insertion.inserts and replacement.start < insertion.start < replacement.end


@dataclass(frozen=True)
class _Theirs:
    """Upstream's edits, looked up by the base line they touch."""

    insert: dict[int, Edit]  # insertions by the base line they go before
    replace: dict[int, Edit]  # replacements by their first base line
    end: dict[int, Edit]  # replacements by the base line after them

    @classmethod
    def of(cls, their: list[Edit]) -> _Theirs:
        return cls(
            {e.start: e for e in their if e.inserts},
            {e.start: e for e in their if not e.inserts},
            {e.end: e for e in their if not e.inserts},
        )


_NO_NEIGHBOURS = _Theirs({}, {}, {})  # for an edit a rule already placed among upstream's lines


class _Merger:
    """Walks the base line by line, writing upstream's lines and ours in merged order."""

    def __init__(self, base: list[bytes], kept: dict[int, bytes], theirs: _Theirs, mine: list[Edit]) -> None:
        self.base, self.kept, self.theirs = base, kept, theirs
        self.mine = {(e.start, e.inserts): e for e in mine}
        self.out: list[bytes] = []
        self.placed: list[Placed] = []

    def run(self) -> Merged:
        p: int | None = 0
        while p is not None and p <= len(self.base):
            p = self._step(p)
        return Merged(self.out, self.placed)

    def _step(self, p: int) -> int | None:
        """The insertions before base line p, then the line itself (or the edit replacing it); the next
        base line to walk, or None after the insertions at the end of the file."""
        after_list = self._insertions(p)
        if after_list is not None:
            return after_list
        if p == len(self.base):
            return None
        return self._line(p)

    def _insertions(self, p: int) -> int | None:
        """Upstream's insertion before base line p (unless ours inserts the same lines), then ours; when
        ours goes before a list terminator that upstream rewrote with entries of its own, upstream's
        rewrite with ours right before its terminator, and the base line after that rewrite."""
        theirs_ins, ours_ins = self.theirs.insert.get(p), self.mine.get((p, True))
        if theirs_ins is not None and theirs_ins != ours_ins:  # both insert at p: equal when their lines are
            self.out.extend(theirs_ins.lines)
        if ours_ins is None:
            return None
        theirs_rep = self.theirs.replace.get(p)
        cut = _list_end(self.base, p, theirs_rep)
        if theirs_rep is None or not cut:
            self._place(ours_ins, self.theirs)
            return None
        self.out.extend(theirs_rep.lines[:cut])
        self._place(ours_ins, _NO_NEIGHBOURS, terminator=theirs_rep.lines[cut])
        self.out.extend(theirs_rep.lines[cut:])
        return theirs_rep.end

    def _line(self, p: int) -> int:
        """Base line p: our replacement starting there, else upstream's, else upstream's version of the
        line; the base line after it."""
        ours_rep, theirs_rep = self.mine.get((p, False)), self.theirs.replace.get(p)
        if ours_rep is not None:
            same = (
                theirs_rep is not None
                and theirs_rep.lines == ours_rep.lines
                and theirs_rep.end == ours_rep.end
            )
            self._place(ours_rep, self.theirs, same)
            return ours_rep.end
        if theirs_rep is not None:
            self.out.extend(theirs_rep.lines)
            return theirs_rep.end
        self.out.append(self.kept[p])
        return p + 1

    def _place(self, e: Edit, theirs: _Theirs, same: bool = False, terminator: bytes = b"") -> None:
        """Append our edit's lines, adjusted to upstream's spacing, and say which rules placed it."""
        notes = []
        if terminator:
            notes.append(
                "upstream rewrote the end of the list: kept ours after its new entries, right before "
                + code_span(norm(terminator).decode(errors="replace"))
            )
        lines = list(e.lines)
        if not same:
            notes += _neighbour_notes(e, theirs)
            respacing = _respacing(e, self.base, self.kept)
            if respacing is not None:
                lines, note = respacing
                notes.append(note)
        self.placed.append(Placed(e, len(self.out), notes))
        self.out.extend(lines)


def _list_end(base: list[bytes], p: int, theirs: Edit | None) -> int | None:
    """Where in upstream's replacement of the list terminator at base line p the terminator now is, when
    upstream put entries before it: the place for entries we inserted before the terminator."""
    if theirs is None or p >= len(base) or not is_terminator(base[p]):
        return None
    return next((j for j, line in enumerate(theirs.lines) if j and is_terminator(line)), None)


def _neighbour_notes(e: Edit, theirs: _Theirs) -> list[str]:
    """How upstream's edits touching ours (above, at the same place, below) were ordered around it."""
    notes = []
    above = theirs.insert.get(e.start)
    if above is not None and above.lines != e.lines:
        notes.append(
            f"upstream inserted {_lines_word(len(above.lines))} at the same place: kept theirs first, ours after"
            if e.inserts
            else f"upstream inserted {_lines_word(len(above.lines))} just above: kept theirs first"
        )
    if e.start in theirs.end:
        changed = theirs.end[e.start]
        notes.append(
            f"upstream changed the {_lines_word(changed.end - changed.start)} just above: kept ours after them"
        )
    if e.end in theirs.replace:
        notes.append(
            f"upstream changed the {_lines_word(theirs.replace[e.end].end - e.end)} just below: kept ours before them"
        )
    if not e.inserts and e.end in theirs.insert:
        notes.append(
            f"upstream inserted {_lines_word(len(theirs.insert[e.end].lines))} just below: kept ours first"
        )
    return notes


def _respacing(e: Edit, base: list[bytes], kept: dict[int, bytes]) -> tuple[list[bytes], str] | None:
    """Our edit's lines re-indented and re-aligned like the base line they line up with, when upstream
    re-spaced lines around or under the edit, and a note saying what that did; None when it re-spaced none."""
    respaced = [i for i in range(e.start - 1, e.end + 1) if i in kept and kept[i] != base[i]]
    if not respaced:
        return None
    lines, shift = _spaced_like_anchor(e, base, kept)
    replaced = any(e.start <= i < e.end for i in respaced)
    return lines, _respacing_note(shift, lines != list(e.lines), replaced)


def _spaced_like_anchor(e: Edit, base: list[bytes], kept: dict[int, bytes]) -> tuple[list[bytes], int]:
    """Our edit's lines re-indented and re-aligned the way upstream re-spaced their anchor line, and the
    columns its indentation moved; the lines as they are when upstream changed the anchor."""
    anchor = _anchor(e, kept)
    if anchor is None:
        return list(e.lines), 0
    old, new = base[anchor], kept[anchor]
    return [realign(line, old, new) for line in e.lines], indent_shift(old, new)


def _anchor(e: Edit, kept: dict[int, bytes]) -> int | None:
    """The base line our edit's lines are spaced like: the line above an insertion (else the one below
    it), or the first line a replacement replaces; None when upstream changed it."""
    anchors = (e.start - 1, e.end) if e.inserts else (e.start,)
    return next((i for i in anchors if i in kept), None)


def _respacing_note(shift: int, realigned: bool, replaced: bool) -> str:
    """What re-spacing did to our lines: re-indented them, re-aligned them, or nothing (upstream re-spaced
    a line the patch replaces, or only neighbouring lines)."""
    if shift:
        return f"added lines re-indented by {shift:+d} columns like their neighbours"
    if realigned:
        return "added lines re-spaced like upstream's re-aligned neighbours"
    if replaced:
        return "upstream re-spaced a line the patch replaces: the patch's line is kept as it is"
    return "upstream re-spaced the neighbouring lines"
