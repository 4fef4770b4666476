"""Which hunks of a carried patch the new upstream already provides, though the patch does not reverse-apply.

Two rules, each per hunk:

- by names: every entry the hunk's added lines define (an enum entry, a table row, a switch case, a
  type, a comparison with a string literal), new at the old ref, is defined at the new ref under the
  same name in the same enum, table or function, whatever upstream's implementation around it;
- at its place: upstream changed the very lines the hunk removes, and each line the hunk adds is either
  upstream's line there or upstream's equivalent (a line with every name the patch's line brings in),
  one of them verbatim; a hunk that only adds lines is provided when upstream added them at that place.

The patch is obsolete as a whole when every hunk is provided, or when at least half of its hunks are
provided by names and none of the rest defines an entry of its own: their new entries all name what
upstream now provides (share a word no old file used, like the LAGUNA of LLM_ARCH_LAGUNA), or they define
nothing. Otherwise the provided hunks are dropped and the rest of the patch is checked as usual.
Pure functions over file contents: the engine reads the files and attributes the lines to commits.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pygit2

from bot import cpp
from bot.hunks import find_exact
from bot.identifiers import Use, apply_to
from bot.model import REBUILT, Commit, HunkResult, PatchResult
from bot.patchfile import FilePatch, Hunk, PatchFile, lines_of

APPLIED = ("clean", "offset", "regenerated", "fuzzy")


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
        added = [line.text.strip().decode("utf-8", "replace") for line in self.hunk.lines if line.kind == "+"]
        return _quote(next((a for a in added if a), ""))


@dataclass
class Assessment:
    provided: list[Provided]
    leftovers: list[Leftover]

    @property
    def whole(self) -> bool:
        """Whether the patch is obsolete as a whole (the module docstring says when)."""
        if not self.provided:
            return False
        if not self.leftovers:
            return True
        by_names = sum(1 for p in self.provided if p.keys)
        total = len(self.provided) + len(self.leftovers)
        return 2 * by_names >= total and all(left.belongs for left in self.leftovers)


def _norm(line: bytes) -> bytes:
    return b" ".join(line.split())


def _quote(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return f"`{text if len(text) <= width else text[: width - 1] + '…'}`"


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
    differs = [
        _quote(line.text.decode("utf-8", "replace"))
        for line in hunk.lines
        if line.kind == "+" and line.text.strip() and b"".join(line.text.split()) not in squeezed
    ]
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


Edit = tuple[set[int], list[bytes], int, bool]


def _upstream_changes(old: bytes, new: bytes) -> list[Edit]:
    """Upstream's edits from `old` to `new`: the 0-based old rows each removes, the lines it adds, the
    1-based new line where they start, and whether it only inserts (then the set holds the row it
    inserts before)."""
    edits = []
    for h in pygit2.Patch.create_from(old, new, context_lines=0).hunks:
        added = [line.raw_content for line in h.lines if line.origin == "+"]
        if h.old_lines:
            edits.append(
                (set(range(h.old_start - 1, h.old_start - 1 + h.old_lines)), added, h.new_start, False)
            )
        else:
            edits.append(({h.old_start}, added, h.new_start, True))  # inserted after 1-based old_start
    return edits


def _new_names(line: bytes, removed: list[bytes], c_family: bool) -> set[bytes] | None:
    """The names a changed line brings in that the lines it replaces did not have (None outside C/C++)."""
    if not c_family:
        return None
    gone = {n for r in removed for n in cpp.names(r)}
    return {n for n in cpp.names(line) if n not in gone}


def _covering(edits: list[Edit], hunk: Hunk, start: int, removed_rows: set[int]) -> list[Edit]:
    """Upstream's edits at the hunk's place (0-based `start`): those that together replace every line it
    removes, or, when it only adds lines, those that insert where it inserts; none when upstream did not."""
    if not removed_rows:
        boundary = start + next(i for i, line in enumerate(hunk.lines) if line.kind == "+")
        return [e for e in edits if e[3] and boundary in e[0]]
    covering = _replacing(edits, removed_rows)
    return covering if removed_rows <= _rows_of(covering) else []


def _lines_of(edits: list[Edit]) -> list[bytes]:
    """The lines upstream's `edits` add."""
    return [line for e in edits for line in e[1]]


def _replacing(edits: list[Edit], rows: set[int]) -> list[Edit]:
    """The edits that replace some of `rows` (not those that only insert)."""
    return [e for e in edits if not e[3] and e[0] & rows]


def _rows_of(edits: list[Edit]) -> set[int]:
    return set().union(*(e[0] for e in edits))


def _equivalent(line: bytes, theirs: list[bytes], removed: list[bytes], c_family: bool) -> bytes | None:
    """Upstream's line with every name the patch's `line` brings in, if any."""
    brings = _new_names(line, removed, c_family)
    return next((t for t in theirs if brings and brings <= set(cpp.names(t))), None)


def _compare(
    added: list[bytes], theirs: list[bytes], removed: list[bytes], c_family: bool
) -> tuple[int, list[str]] | None:
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
        differs.append(
            f"{_quote(line.decode('utf-8', 'replace'))} where upstream has "
            f"{_quote(match.decode('utf-8', 'replace'))}"
        )
    return verbatim, differs


def _removed(hunk: Hunk, start: int) -> tuple[set[int], list[bytes]]:
    """The 0-based rows the hunk placed at `start` removes, and their lines."""
    pre = [line for line in hunk.lines if line.kind != "+"]
    rows = {start + i for i, line in enumerate(pre) if line.kind == "-"}
    return rows, [line.text for line in pre if line.kind == "-"]


def _added(hunk: Hunk) -> list[bytes]:
    """The lines the hunk adds, blank ones aside."""
    return [line.text for line in hunk.lines if line.kind == "+" and line.text.strip()]


def _placed_at(path: str, index: int, hunk: Hunk, covering: list[Edit], differs: list[str]) -> Provided:
    """The hunk upstream provides by its edits `covering` the hunk's place."""
    start = min(e[2] for e in covering)
    count = sum(len(e[1]) for e in covering)
    what = [f"the change at {path}:{start}"]
    return Provided(path, index, hunk, what, [], list(range(start, start + max(count, 1))), differs)


def _at_place(fp: FilePatch, index: int, hunk: Hunk, sides: FileSides) -> Provided | None:
    """The hunk when upstream made its change at its place, itself or by an equivalent (docstring)."""
    if sides.old is None or sides.new is None:
        return None
    added = _added(hunk)
    placement = find_exact(lines_of(sides.old), hunk) if added else None
    if placement is None:
        return None
    removed_rows, removed = _removed(hunk, placement.start)
    covering = _covering(_upstream_changes(sides.old, sides.new), hunk, placement.start, removed_rows)
    compared = _compare(added, _lines_of(covering), removed, cpp.is_c_family(fp.path))  # None without edits
    if compared is None:
        return None
    verbatim, differs = compared
    if not verbatim or (not removed_rows and differs):
        return None
    return _placed_at(fp.path, index, hunk, covering, differs)


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
    for index, hunk in enumerate(fp.hunks):
        if index in named_at:
            continue
        placed = _at_place(fp, index, hunk, sides)
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
    olds = [s.old for path, s in sides.items() if s.old is not None and cpp.is_c_family(path)]
    return set().union(*(_distinctive(k, olds) for k in keys))


def _mark_belonging(leftovers: list[Leftover], keys: set[str], sides: dict[str, FileSides]) -> None:
    marks = _marks(keys, leftovers, sides)
    for left in leftovers:
        # an entry upstream has elsewhere but not here is a gap in upstream's version, not a detail of ours
        same_name = any(d.key in keys for d in left.missing)
        left.belongs = not same_name and all(marks & cpp.words(line) for line in left.missing_lines)


def assess(pf: PatchFile, sides: dict[str, FileSides]) -> Assessment:
    """The hunks of the patch the new upstream provides, and the others (`sides` by the files' old paths)."""
    provided: list[Provided] = []
    leftovers: list[Leftover] = []
    unread: list[FilePatch] = []
    for fileno, fp in enumerate(pf.files):
        file_sides = _sides_of(fp, sides)
        if file_sides is None:
            leftovers += [Leftover(fp.path, i, h, []) for i, h in enumerate(fp.hunks)]
            continue
        if _unchanged(file_sides):
            unread.append(fp)  # upstream changed nothing here: it provides none of these hunks
            leftovers += [Leftover(fp.path, i, h, [], fileno=fileno) for i, h in enumerate(fp.hunks)]
            continue
        named, rest = _assess_file(fp, file_sides)
        provided += named
        leftovers += rest
        _number(provided, fp.path, fileno)
        _number(leftovers, fp.path, fileno)
    keys = {k for p in provided for k in p.keys}
    if keys and unread:  # entries of the files upstream left alone matter now: read them
        leftovers = _with_unread(pf, sides, unread, leftovers)
    _mark_belonging(leftovers, keys, sides)
    return Assessment(provided, leftovers)


def without(pf: PatchFile, drop: set[tuple[str, int]]) -> PatchFile:
    """The patch without the hunks (file, index) in `drop`: a file left with no hunk goes; the hunks after
    a dropped one expect their place as far up as the dropped one added lines."""
    files = []
    for fp in pf.files:
        if not any((fp.path, i) in drop for i in range(len(fp.hunks))):
            files.append(fp)
            continue
        kept, shift = [], 0
        for i, hunk in enumerate(fp.hunks):
            if (fp.path, i) in drop:
                shift += hunk.new_count - hunk.old_count
                continue
            kept.append(replace(hunk, new_start=hunk.new_start - shift))
        if kept:
            files.append(replace(fp, hunks=kept))
    return PatchFile(pf.preamble, files, pf.trailer)


def commit_note(commits: list[Commit]) -> str:
    """`by <sha> <subject>, …` for up to three commits."""
    if not commits:
        return ""
    named = ", ".join(f"{c.sha[:12]} {c.subject}" for c in commits[:3])
    return f"by {named}" + (f" and {len(commits) - 3} more" if len(commits) > 3 else "")


def _what(provided: list[Provided]) -> str:
    keys = list(dict.fromkeys(k for p in provided for k in p.keys))
    places = [w for p in provided if not p.keys for w in p.what]
    return ", ".join(keys + places)


def _differences(provided: list[Provided], leftovers: list[Leftover]) -> str:
    """What the patch adds that upstream does not have, and where upstream's version is not the patch's."""
    parts = []
    missing = list(dict.fromkeys(f"{left.summary} ({left.file})" for left in leftovers))
    if missing:
        parts.append("upstream does not have " + "; ".join(missing))
    other = list(dict.fromkeys(d for p in provided for d in p.differs))
    if other:
        parts.append("upstream's version differs in " + "; ".join(other))
    return ": " + ", and ".join(parts) if parts else ""


def provided_hunk(p: Provided, commits: list[Commit]) -> HunkResult:
    detail = f"upstream now provides {', '.join(p.what)} (line {p.lines[0]})" if p.lines else ""
    if p.differs:
        detail += f"; it differs in {'; '.join(p.differs)}"
    return HunkResult(
        p.file,
        p.hunk.old_start,
        p.lines[0] if p.lines else p.hunk.new_start,
        "upstreamed",
        commits,
        detail,
        p.hunk.header_line,
    )


def result(
    path: str,
    ref: str,
    assessment: Assessment,
    placed: dict[tuple[str, int], HunkResult],
    commits_of: Callable[[Provided], list[Commit]],
) -> PatchResult:
    """The `upstreamed` result of a patch obsolete as a whole: what upstream provides, by which commits,
    and what differs. `placed` has where each leftover hunk would go."""
    hunks: list[tuple[tuple[int, int], HunkResult]] = []
    commits: list[Commit] = []
    for p in assessment.provided:
        found = commits_of(p)
        commits += [c for c in found if c not in commits]
        hunks.append(((p.fileno, p.index), provided_hunk(p, found)))
    for left in assessment.leftovers:
        h = placed[(left.file, left.index)]
        h.detail = f"upstream does not have {left.summary}"
        hunks.append(((left.fileno, left.index), h))
    by = commit_note(commits)
    message = (
        f"{ref} now provides what it adds: {_what(assessment.provided)}"
        + (f" ({by})" if by else "")
        + "; drop the patch, or reconcile it with upstream's version"
        + _differences(assessment.provided, assessment.leftovers)
        + "."
    )
    return PatchResult(path, "upstreamed", message, None, [h for _, h in sorted(hunks, key=lambda x: x[0])])


def _note_uses(hunks: list[HunkResult], uses: list[Use]) -> list[str]:
    """Add each renamed or named use to the detail and commits of its hunk; the notes, once each."""
    per_file: dict[str, list[HunkResult]] = {}
    for h in hunks:
        per_file.setdefault(h.file, []).append(h)
    notes = []
    for use in uses:
        placed = per_file.get(use.file, [])
        note = use.note + (f" ({commit_note(use.commits)})" if use.commits else "")
        if use.hunk < len(placed):
            h = placed[use.hunk]
            h.detail = "; ".join(d for d in (h.detail, note) if d)
            h.upstream_commits += [c for c in use.commits if c not in h.upstream_commits]
        if note not in notes:
            notes.append(note)
    return notes


def _dropped_sentence(ref: str, provided: list[tuple[Provided, list[Commit]]], total: int) -> str:
    """What of the patch `ref` has already, by which commits, and how upstream's version differs."""
    commits = [c for _, found in provided for c in found]
    by = commit_note(list(dict.fromkeys(commits)))
    return (
        f"{len(provided)} of {total} hunks are in {ref} already: "
        f"{_what([p for p, _ in provided])}"
        + (f" ({by})" if by else "")
        + "; they are dropped from the patch"
        + _differences([p for p, _ in provided], [])
        + "."
    )


def amend(
    result: PatchResult,
    ref: str,
    order: list[str],
    provided: list[tuple[Provided, list[Commit]]],
    uses: list[Use],
) -> PatchResult:
    """The result of the rest of a patch once the hunks upstream provides were dropped and the names
    upstream removed were renamed or named: `fuzzy` when the rest applies, its own status otherwise."""
    notes = _note_uses(result.hunks, uses)
    hunks = list(result.hunks) + [provided_hunk(p, commits) for p, commits in provided]
    rank = {f: i for i, f in enumerate(order)}
    hunks.sort(key=lambda h: (rank.get(h.file, len(rank)), h.old_line))
    sentences = [_dropped_sentence(ref, provided, len(hunks))] if provided else []
    sentences += [n[:1].upper() + n[1:] + "." for n in notes]
    if result.status not in APPLIED:
        return PatchResult(
            result.path,
            result.status,
            " ".join([result.message, *sentences]),
            result.regenerated,
            hunks,
            new_text=result.new_text,
        )
    tail = (
        result.message
        if result.status in REBUILT
        else "The rest applies as it is: review the rebuilt patch before committing."
    )
    return PatchResult(result.path, "fuzzy", " ".join([*sentences, tail]), result.path, hunks)
