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

from bot.hunks import indent_shift, is_terminator, norm, realign


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
    patch = pygit2.Patch.create_from(
        b"".join(map(key, base)),
        b"".join(map(key, other)),
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
    kept = _kept(base, theirs, their)
    their_insert = {e.start: e for e in their if e.inserts}
    their_replace = {e.start: e for e in their if not e.inserts}
    their_end = {e.end: e for e in their if not e.inserts}
    for e in mine:
        for t in their:
            same = (e.start, e.end, e.lines) == (t.start, t.end, t.lines)
            if not same and not e.inserts and not t.inserts and e.start < t.end and t.start < e.end:
                raise Overlap(f"upstream changed base lines {t.start + 1}-{t.end} that the patch changes too")
            inside = (e.inserts and t.start < e.start < t.end) or (t.inserts and e.start < t.start < e.end)
            if inside:
                raise Overlap(
                    f"upstream changed base lines {t.start + 1}-{t.end} around the patch's insertion"
                )
    out: list[bytes] = []
    placed: list[Placed] = []
    mine_at = {(e.start, e.inserts): e for e in mine}
    p = 0
    while p <= len(base):
        theirs_ins, ours_ins = their_insert.get(p), mine_at.get((p, True))
        if theirs_ins is not None and not (ours_ins is not None and ours_ins.lines == theirs_ins.lines):
            out.extend(theirs_ins.lines)
        if ours_ins is not None:
            theirs_rep = their_replace.get(p)
            cut = _list_end(base, p, theirs_rep)
            if theirs_rep is not None and cut:
                out.extend(theirs_rep.lines[:cut])
                placed.append(_place(ours_ins, out, base, kept, {}, {}, {}, terminator=theirs_rep.lines[cut]))
                out.extend(theirs_rep.lines[cut:])
                p = theirs_rep.end
                continue
            placed.append(_place(ours_ins, out, base, kept, their_insert, their_replace, their_end))
        if p == len(base):
            break
        ours_rep, theirs_rep = mine_at.get((p, False)), their_replace.get(p)
        if ours_rep is not None:
            same = (
                theirs_rep is not None
                and theirs_rep.lines == ours_rep.lines
                and theirs_rep.end == ours_rep.end
            )
            placed.append(_place(ours_rep, out, base, kept, their_insert, their_replace, their_end, same))
            p = ours_rep.end
        elif theirs_rep is not None:
            out.extend(theirs_rep.lines)
            p = theirs_rep.end
        else:
            out.append(kept[p])
            p += 1
    return Merged(out, placed)


def _list_end(base: list[bytes], p: int, theirs: Edit | None) -> int | None:
    """Where in upstream's replacement of the list terminator at base line p the terminator now is, when
    upstream put entries before it: the place for entries we inserted before the terminator."""
    if theirs is None or p >= len(base) or not is_terminator(base[p]):
        return None
    return next((j for j, line in enumerate(theirs.lines) if j and is_terminator(line)), None)


def _place(
    e: Edit,
    out: list[bytes],
    base: list[bytes],
    kept: dict[int, bytes],
    their_insert: dict[int, Edit],
    their_replace: dict[int, Edit],
    their_end: dict[int, Edit],
    same: bool = False,
    terminator: bytes = b"",
) -> Placed:
    """Append our edit's lines to `out`, adjusted to upstream's spacing, and say which rules placed it."""
    notes = []
    if terminator:
        notes.append(
            f"upstream rewrote the end of the list: kept ours after its new entries, right before "
            f"`{norm(terminator).decode(errors='replace')}`"
        )
    if not same:
        above = their_insert.get(e.start)
        if above is not None and above.lines != e.lines:
            notes.append(
                f"upstream inserted {_lines_word(len(above.lines))} at the same place: kept theirs first, ours after"
                if e.inserts
                else f"upstream inserted {_lines_word(len(above.lines))} just above: kept theirs first"
            )
        if e.start in their_end:
            notes.append(
                f"upstream changed the {_lines_word(their_end[e.start].end - their_end[e.start].start)} "
                "just above: kept ours after them"
            )
        if e.end in their_replace:
            notes.append(
                f"upstream changed the {_lines_word(their_replace[e.end].end - e.end)} "
                "just below: kept ours before them"
            )
        if not e.inserts and e.end in their_insert:
            notes.append(
                f"upstream inserted {_lines_word(len(their_insert[e.end].lines))} just below: kept ours first"
            )
    lines = list(e.lines)
    near = [i for i in range(e.start - 1, e.end + 1) if 0 <= i < len(base) and i in kept]
    respaced = [i for i in near if kept[i] != base[i]]
    if respaced and not same:
        anchors = [e.start - 1, e.end] if e.inserts else [e.start]
        anchor = next((i for i in anchors if i in kept), None)
        shift = 0
        if anchor is not None:
            old, new = base[anchor], kept[anchor]
            shift = indent_shift(old, new)
            lines = [realign(line, old, new) for line in lines]
        if shift:
            notes.append(f"added lines re-indented by {shift:+d} columns like their neighbours")
        elif lines != list(e.lines):
            notes.append("added lines re-spaced like upstream's re-aligned neighbours")
        elif any(e.start <= i < e.end for i in respaced):
            notes.append("upstream re-spaced a line the patch replaces: the patch's line is kept as it is")
        else:
            notes.append("upstream re-spaced the neighbouring lines")
    at = len(out)
    out.extend(lines)
    return Placed(e, at, notes)
