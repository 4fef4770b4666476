"""Which hunks of a carried patch the new upstream already provides, though the patch does not reverse-apply.

Two rules, each per hunk:

- by names: every entry the hunk's added lines define (an enum entry, a table row, a switch case, a
  type, a comparison with a string literal), new at the old ref, is defined at the new ref under the
  same name in the same enum, table or function, whatever upstream's implementation around it;
- at its place (bot/patches/obsolete_place.py): upstream changed the very lines the hunk removes, and each line
  the hunk adds is either upstream's line there or upstream's equivalent (a line with every name the
  patch's line brings in), one of them verbatim; a hunk that only adds lines is provided when upstream
  added them at that place.

The patch is obsolete as a whole when every hunk is provided, or when at least half of its hunks are
provided by names and none of the rest defines an entry of its own: their new entries all name what
upstream now provides (share a word no old file used, like the LAGUNA of LLM_ARCH_LAGUNA), or they define
nothing. Otherwise the provided hunks are dropped and the rest of the patch is checked as usual.
Pure functions over file contents: the engine reads the files and attributes the lines to commits;
bot/patches/obsolete_report.py writes the results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from bot.lang import cpp
from bot.markup import code_span
from bot.patches.identifiers import apply_to
from bot.patches.obsolete_place import UpstreamChange, added_lines, change_at_place
from bot.patches.patchfile import FilePatch, Hunk, PatchFile


@dataclass(frozen=True)
class FileSides:
    """One file the patch changes, as the engine reads it."""

    old: bytes | None  # at the old ref with the earlier patches: what the patch was written against
    new: bytes | None  # at the new ref with the earlier patches
    upstream: bytes | None  # at the new ref as upstream has it (no carried patch)


@dataclass
class Provided:
    """A hunk the new upstream provides."""

    file: str
    index: int  # the hunk's 0-based number in its file
    hunk: Hunk
    what: list[str]  # what upstream provides, for a person: entry labels, or the lines at that place
    keys: list[str]  # the entry names (by-names rule); empty for the at-its-place rule
    lines: list[int]  # 1-based lines at the new ref where upstream provides it
    differs: list[str] = field(default_factory=list)  # what the patch adds that upstream has otherwise
    fileno: int = 0  # the file's 0-based number in the patch


@dataclass
class Leftover:
    """A hunk upstream does not provide, and why it does not keep the patch alive when it does not."""

    file: str
    index: int
    hunk: Hunk
    missing: list[cpp.Definition]  # entries it defines that upstream lacks
    missing_lines: list[bytes] = field(default_factory=list)  # the added lines defining them
    belongs: bool = False  # every missing entry names what upstream provides (or it defines none)
    fileno: int = 0

    @property
    def summary(self) -> str:
        if self.missing:
            return ", ".join(d.label for d in self.missing)
        return _quote_line(next(iter(added_lines(self.hunk)), b""))


@dataclass
class Assessment:
    provided: list[Provided]
    leftovers: list[Leftover]

    @property
    def whole(self) -> bool:
        """Whether the patch is obsolete as a whole (the module docstring says when)."""
        if not self.provided:
            return False
        by_names = sum(bool(p.keys) for p in self.provided)
        total = len(self.provided) + len(self.leftovers)
        return not self.leftovers or (2 * by_names >= total and all(left.belongs for left in self.leftovers))


def _quote(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return code_span(text if len(text) <= width else text[: width - 1] + "…")


def _quote_line(line: bytes) -> str:
    return _quote(line.decode("utf-8", "replace"))


def _distinctive(key: str, olds: list[bytes]) -> set[str]:
    """The words of a name that no old file mentions (as a word of a name, a literal or a comment)."""
    lowered = [old.lower() for old in olds]
    return {
        w
        for w in cpp.words(key.encode())
        if not w.isdigit()
        and not any(
            re.search(rb"(?<![a-z0-9])" + re.escape(w.encode()) + rb"(?![a-z0-9])", old) for old in lowered
        )
    }


def _key(d: cpp.Definition) -> tuple[str, str, str]:
    return (d.kind, d.key, d.owner)


def _rows_by_key(text: bytes) -> dict[tuple[str, str, str], int]:
    """The 0-based row of each entry's first definition in `text`."""
    rows: dict[tuple[str, str, str], int] = {}
    for d in cpp.definitions(text):
        rows.setdefault(_key(d), d.row)
    return rows


def _named_hunk(
    path: str,
    index: int,
    hunk: Hunk,
    mine: list[cpp.Definition],
    rows: dict[tuple[str, str, str], int],
    text: bytes,
) -> Provided:
    """The hunk whose entries `mine` upstream defines at `rows` of its `text`, with what it adds otherwise."""
    squeezed = b"".join(text.split())  # upstream may split a statement over lines
    differs = [_quote_line(line) for line in added_lines(hunk) if b"".join(line.split()) not in squeezed]
    return Provided(
        path,
        index,
        hunk,
        list(dict.fromkeys(d.label for d in mine)),
        list(dict.fromkeys(d.key for d in mine)),
        sorted({rows[_key(d)] + 1 for d in mine}),
        differs,
    )


def _split_by_names(
    fp: FilePatch,
    rows: list[set[int]],
    defined: list[cpp.Definition],
    ours: bytes,
    upstream: dict[tuple[str, str, str], int],
    upstream_text: bytes,
) -> tuple[list[Provided], list[Leftover]]:
    """The hunks whose new entries (`defined` at `rows` of `ours`) upstream all defines, and the others."""
    ours_lines = ours.split(b"\n")
    provided, leftovers = [], []
    for index, (hunk, added) in enumerate(zip(fp.hunks, rows)):
        mine = [d for d in defined if d.row in added]
        missing = [d for d in mine if _key(d) not in upstream]
        if mine and not missing:
            provided.append(_named_hunk(fp.path, index, hunk, mine, upstream, upstream_text))
        else:
            leftovers.append(Leftover(fp.path, index, hunk, missing, [ours_lines[d.row] for d in missing]))
    return provided, leftovers


def _by_names(
    fp: FilePatch, sides: FileSides, leftovers_only: bool = False
) -> tuple[list[Provided], list[Leftover]]:
    """The hunks of one file upstream provides by names, and the others (only those: `leftovers_only`)."""
    if sides.old is None or sides.upstream is None or not cpp.is_c_family(fp.path):
        return [], []
    built = apply_to(sides.old, fp)
    if built is None:
        return [], []
    ours, rows = built
    upstream = {} if leftovers_only else _rows_by_key(sides.upstream)
    before = {_key(d) for d in cpp.definitions(sides.old)}
    defined = [d for d in cpp.definitions(ours) if _key(d) not in before]
    return _split_by_names(fp, rows, defined, ours, upstream, sides.upstream)


def _at_place(fp: FilePatch, index: int, hunk: Hunk, upstream: UpstreamChange | None) -> Provided | None:
    """The hunk when upstream made its change at its place, itself or by an equivalent."""
    if upstream is None:
        return None
    change = change_at_place(upstream, hunk, cpp.is_c_family(fp.path))
    if change is None:
        return None
    differs = [
        f"{_quote_line(ours)} where upstream has {_quote_line(theirs)}" for ours, theirs in change.differs
    ]
    what = [f"the change at {fp.path}:{change.new_start}"]
    lines = list(range(change.new_start, change.new_start + max(change.count, 1)))
    return Provided(fp.path, index, hunk, what, [], lines, differs)


def _sides_of(fp: FilePatch, sides: dict[str, FileSides]) -> FileSides | None:
    """The file's sides when upstream can provide its hunks: a text file both refs have, which the engine read."""
    if fp.is_new or fp.is_deleted or fp.is_binary or fp.old_path not in sides:
        return None
    return sides[fp.old_path]


def _unchanged(sides: FileSides) -> bool:
    return sides.old == sides.upstream and sides.old == sides.new


def _assess_file(fp: FilePatch, sides: FileSides) -> tuple[list[Provided], list[Leftover]]:
    """One file's hunks upstream provides (by names first, then at their place), and the others."""
    named, rest = _by_names(fp, sides)
    named_at = {p.index for p in named}
    rest_at = {left.index: left for left in rest}
    provided, leftovers = list(named), []
    upstream = (
        UpstreamChange(sides.old, sides.new) if sides.old is not None and sides.new is not None else None
    )
    for index, hunk in enumerate(fp.hunks):
        if index in named_at:
            continue
        placed = _at_place(fp, index, hunk, upstream)
        if placed is not None:
            provided.append(placed)
        else:
            leftovers.append(rest_at.get(index) or Leftover(fp.path, index, hunk, []))
    return provided, leftovers


def _number(items: list[Provided] | list[Leftover], path: str, fileno: int) -> None:
    """Give the items of `path` its number in the patch."""
    for item in items:
        item.fileno = fileno if item.file == path else item.fileno


def _with_unread(
    pf: PatchFile, sides: dict[str, FileSides], unread: list[FilePatch], leftovers: list[Leftover]
) -> list[Leftover]:
    """The leftovers with the entries of the files upstream left alone read, in the patch's order."""
    for fp in unread:
        fileno = pf.files.index(fp)
        leftovers = [left for left in leftovers if left.file != fp.path]
        for left in _by_names(fp, sides[fp.old_path or ""], True)[1]:
            left.fileno = fileno
            leftovers.append(left)
    leftovers.sort(key=lambda left: (left.fileno, left.index))
    return leftovers


def _marks(keys: set[str], leftovers: list[Leftover], sides: dict[str, FileSides]) -> set[str]:
    """The words of the provided entries' names no old file used, when a leftover defines an entry."""
    if not keys or not any(left.missing for left in leftovers):
        return set()
    olds = _old_sources(sides)
    return set().union(*(_distinctive(k, olds) for k in keys))


def _old_sources(sides: dict[str, FileSides]) -> list[bytes]:
    """The C/C++ files the patch changes as they were at the old ref: where a word counts as used."""
    return [s.old for path, s in sides.items() if s.old is not None and cpp.is_c_family(path)]


def _mark_belonging(leftovers: list[Leftover], keys: set[str], sides: dict[str, FileSides]) -> None:
    marks = _marks(keys, leftovers, sides)
    for left in leftovers:
        # an entry upstream has elsewhere but not here is a gap in upstream's version, not a detail of ours
        same_name = any(d.key in keys for d in left.missing)
        left.belongs = not same_name and all(marks & cpp.words(line) for line in left.missing_lines)


def assess(pf: PatchFile, sides: dict[str, FileSides]) -> Assessment:
    """The hunks of the patch the new upstream provides, and the others (`sides` by the files' old paths)."""
    provided, leftovers, unread = _assess_files(pf, sides)
    keys = {k for p in provided for k in p.keys}
    if keys and unread:  # entries of the files upstream left alone matter now: read them
        leftovers = _with_unread(pf, sides, unread, leftovers)
    _mark_belonging(leftovers, keys, sides)
    return Assessment(provided, leftovers)


def _assess_files(
    pf: PatchFile, sides: dict[str, FileSides]
) -> tuple[list[Provided], list[Leftover], list[FilePatch]]:
    """Each file's provided hunks and leftovers, numbered in patch order, and the files upstream left
    alone (their entries not read yet)."""
    provided: list[Provided] = []
    leftovers: list[Leftover] = []
    unread: list[FilePatch] = []
    for fileno, fp in enumerate(pf.files):
        file_sides = _sides_of(fp, sides)
        if file_sides is None or _unchanged(file_sides):  # upstream provides none of these hunks
            if file_sides is not None:
                unread.append(fp)  # upstream changed nothing here: its entries are read if need be
            leftovers += [Leftover(fp.path, i, h, [], fileno=fileno) for i, h in enumerate(fp.hunks)]
            continue
        named, rest = _assess_file(fp, file_sides)
        provided += named
        leftovers += rest
        _number(provided, fp.path, fileno)
        _number(leftovers, fp.path, fileno)
    return provided, leftovers, unread


def without(pf: PatchFile, drop: set[tuple[str, int]]) -> PatchFile:
    """The patch without the hunks (file, index) in `drop`: a file left with no hunk goes."""
    files = []
    for fp in pf.files:
        if not any((fp.path, i) in drop for i in range(len(fp.hunks))):
            files.append(fp)
        elif kept := _kept_hunks(fp, drop):
            files.append(replace(fp, hunks=kept))
    return PatchFile(pf.preamble, files, pf.trailer)


def _kept_hunks(fp: FilePatch, drop: set[tuple[str, int]]) -> list[Hunk]:
    """The file's hunks not in `drop`; those after a dropped one expect their place as far up as the dropped
    one added lines."""
    kept, shift = [], 0
    for i, hunk in enumerate(fp.hunks):
        if (fp.path, i) in drop:
            shift += hunk.new_count - hunk.old_count
        else:
            kept.append(replace(hunk, new_start=hunk.new_start - shift))
    return kept
