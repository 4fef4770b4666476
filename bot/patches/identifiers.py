"""Names a patch's added lines use that upstream removed or renamed between the two refs.

A carried patch may still apply while its added lines name a constructor parameter upstream dropped
(the name now means the member of the same name), or a field upstream renamed. The upstream diff of the
touched file and of its header says so: a parameter, field or function declared at the old ref and no
longer at the new one. A rename is taken when the diff shows it one for one (a changed line whose tokens
differ from the old line's in that one name only) and the new name is declared; the patch's added lines
are then renamed the same way. Anything else is named, with upstream's line, for a person to look at.
Pure functions over file contents; the engine reads the files and attributes the lines to commits.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace

import pygit2

from bot.cache import facts
from bot.lang import cpp
from bot.markup import code_span
from bot.model import Commit
from bot.patches.hunks import Image, find_exact
from bot.patches.patchfile import FilePatch, Line, PatchFile, lines_of

HEADER_SUFFIXES = (".h", ".hpp", ".hh")


@dataclass(frozen=True)
class UpstreamChange:
    """A declaration upstream removed, with the diff's lines that removed it."""

    path: str
    kind: str  # parameter | field | function
    name: str
    owner: str  # the function of a parameter, the type of a field
    old_line: int  # 1-based, at the old ref
    old_text: str
    new_line: int  # 1-based, at the new ref: where the diff put the lines replacing it
    new_text: str
    renamed_to: str | None  # the one-for-one rename the diff shows, if it shows one
    member_line: int = 0  # 1-based line at the new ref using `this-><name>`: the name now means the member

    @property
    def what(self) -> str:
        owner = f" of {self.owner}" if self.owner else ""
        return f"the {self.kind} {code_span(self.name)}{owner}"


@dataclass
class Use:
    """An added line of the patch that names a declaration upstream removed."""

    file: str
    hunk: int  # 0-based number of the hunk in its file
    change: UpstreamChange
    commits: list[Commit] = field(default_factory=list, compare=False)  # the engine attributes the change

    @property
    def doubt(self) -> str:
        """The use, said of a patch that is not rebuilt (it applies as it is)."""
        c = self.change
        if not c.renamed_to:
            return self.note
        return (
            f"its added lines name {c.what}, which upstream renamed to {code_span(c.renamed_to)} at "
            f"{c.path}:{c.new_line} ({code_span(c.old_text)} became {code_span(c.new_text)}): the build fails "
            f"on the old name; rename it in the patch"
        )

    @property
    def note(self) -> str:
        c = self.change
        if c.renamed_to:
            return (
                f"renamed {code_span(c.name)} to {code_span(c.renamed_to)} in the added lines, as upstream did at "
                f"{c.path}:{c.new_line} ({code_span(c.old_text)} became {code_span(c.new_text)})"
            )
        member = (
            f"; upstream now uses {code_span(f'this->{c.name}')} ({c.path}:{c.member_line})"
            if c.member_line
            else ""
        )
        return (
            f"its added lines name {c.what}, which upstream removed: in {c.path}, {code_span(c.old_text)} (line "
            f"{c.old_line} at the old ref) became {code_span(c.new_text)} (line {c.new_line}){member}; check what "
            f"{code_span(c.name)} means there now"
        )


def headers_of(path: str) -> list[str]:
    """The header files beside a C/C++ source that declare what it defines (same directory and stem)."""
    stem, suffix = posixpath.splitext(path)
    return [stem + h for h in HEADER_SUFFIXES if h != suffix.lower()] if cpp.is_c_family(path) else []


def apply_to(old: bytes, fp: FilePatch) -> tuple[bytes, list[set[int]]] | None:
    """The file as the patch makes it from `old`, and for each hunk the 0-based rows of its added lines."""
    image = Image(lines_of(old))
    spans: list[tuple[int, int]] = []  # (start, length of the hunk's postimage) in the image so far
    for hunk in fp.hunks:
        placement = find_exact(image, hunk)
        if placement is None:
            return None
        start = placement.start
        image.splice(start, start + len(hunk.before), hunk.after)
        delta = len(hunk.after) - len(hunk.before)
        spans = [(s + delta, n) if s > start else (s, n) for s, n in spans]
        spans.append((start, len(hunk.after)))
    rows = []
    for hunk, (start, _) in zip(fp.hunks, spans):
        rows.append({start + i for i in hunk.added_rows})
    return b"".join(image.lines), rows


def _text(line: bytes) -> str:
    return " ".join(line.decode("utf-8", "replace").split())


def _one_for_one(old_line: bytes, new_line: bytes, name: str) -> str | None:
    """The name that replaces `name` when the two lines' tokens differ in that one token only."""
    old, new = cpp.tokens(old_line), cpp.tokens(new_line)
    if len(old) != len(new):
        return None
    differ = [(a, b) for a, b in zip(old, new) if a.text != b.text]
    if len(differ) != 1:
        return None
    a, b = differ[0]
    return b.text.decode() if a.text.decode() == name and a.is_name and b.is_name else None


_Key = tuple[str, str, str]


def _gone(old: bytes, new: bytes) -> tuple[list[cpp.Declaration], set[_Key]]:
    """The declarations of `old` that `new` lacks, and the (kind, name, owner) of `new`'s."""
    declared = cpp.declarations(new)
    now = {(d.kind, d.name, d.owner) for d in declared}
    fields = {d.name for d in declared if d.kind == "field"}
    # a field name another type still declares is ambiguous in `x.name`: no evidence about this one
    gone = [
        d
        for d in cpp.declarations(old)
        if (d.kind, d.name, d.owner) not in now and not (d.kind == "field" and d.name in fields)
    ]
    return gone, now


def _first_member_lines(source: bytes) -> dict[str, int]:
    """The 1-based line of each name's first `this-><name>`."""
    members: dict[str, int] = {}
    for name, line in _member_uses(source):
        members.setdefault(name, line)
    return members


def _hunk_removing(hunks: list[pygit2.DiffHunk], row: int) -> pygit2.DiffHunk | None:
    """The diff's hunk that removes the 1-based old `row`."""
    return next((h for h in hunks if h.old_start <= row < h.old_start + h.old_lines), None)


def _renamed(d: cpp.Declaration, old_line: bytes, new_line: bytes, now: set[_Key]) -> str | None:
    """The one-for-one rename of `d` between its line and the line replacing it, when `new` declares
    that name in its place."""
    renamed = _one_for_one(old_line, new_line, d.name)
    return renamed if renamed is not None and (d.kind, renamed, d.owner) in now else None


def _removal(
    path: str,
    d: cpp.Declaration,
    hunk: pygit2.DiffHunk,
    lines: tuple[list[bytes], list[bytes]],
    now: set[_Key],
    member_line: int,
) -> UpstreamChange:
    """The removal of `d` by `hunk`, with the line replacing its own when the hunk replaces line for line."""
    old_lines, new_lines = lines
    row = d.row + 1
    paired = hunk.new_start + row - hunk.old_start if hunk.old_lines == hunk.new_lines else 0
    renamed = _renamed(d, old_lines[row - 1], new_lines[paired - 1], now) if paired else None
    at = paired or hunk.new_start
    new_text = _text(new_lines[at - 1]) if hunk.new_lines and at - 1 < len(new_lines) else "(nothing)"
    return UpstreamChange(
        path, d.kind, d.name, d.owner, row, _text(old_lines[row - 1]), at, new_text, renamed, member_line
    )


# What the patch stage reads out of each file a patch edits at both refs: kept in the facts store by content,
# a re-check of the same refs parses none of them again (on b10091 -> b10242, 12 files: 0.08 s).
REMOVED = facts.Extractor("removed-declarations", 1, __name__)


def removed_declarations(path: str, old: bytes, new: bytes) -> list[UpstreamChange]:
    """The parameters, fields and functions declared in `old` and not in `new`, with the diff's lines."""
    if old == new or not cpp.is_c_family(path):
        return []
    key = (path, facts.bytes_id(old), facts.bytes_id(new))
    return facts.remembered(REMOVED, key, lambda: _removed_declarations(path, old, new))


def _removed_declarations(path: str, old: bytes, new: bytes) -> list[UpstreamChange]:
    gone, now = _gone(old, new)
    if not gone:
        return []
    lines = old.split(b"\n"), new.split(b"\n")
    members = _first_member_lines(new)
    hunks = pygit2.Patch.create_from(old, new, context_lines=0).hunks
    out = []
    for d in gone:
        hunk = _hunk_removing(hunks, d.row + 1)
        if hunk is None:  # the line is still there: what it belongs to was renamed, not the name
            continue
        out.append(_removal(path, d, hunk, lines, now, members.get(d.name, 0)))
    return out


def _member_uses(source: bytes) -> list[tuple[str, int]]:
    """(name, 1-based line) of every `this-><name>` in the file."""
    return [(name, row + 1) for name, row in cpp.member_uses(source)]


@dataclass(frozen=True)
class Scope:
    """Where an added line stands once the patch is applied: its function, and the locals in scope there."""

    function: str
    locals: frozenset[str] = frozenset()


def _applies_here(change: UpstreamChange, token: cpp.Token, scope: Scope) -> bool:
    """Whether a name in an added line means that declaration: a parameter only inside its function, not
    as a member access (`this->x` is a member, whatever parameter was called x) and not where a local of
    that name is in scope; a field only as a member access; a function anywhere."""
    if change.kind == "field":
        return token.kind == "field_identifier"
    if change.kind == "parameter" and (
        not change.owner or change.owner != scope.function or change.name in scope.locals
    ):
        return False
    return token.kind == "identifier"


def _rename(text: bytes, renames: list[tuple[cpp.Token, str]]) -> bytes:
    for token, name in sorted(renames, key=lambda r: -r[0].start):
        text = text[: token.start] + name.encode() + text[token.end :]
    return text


def _scopes(old: bytes | None, fp: FilePatch) -> list[list[Scope]]:
    """For each hunk, the scope of each of its added lines once the patch is applied to `old` (the file it
    was written against); the hunk header's function, with no locals known, where it does not apply there."""
    built = apply_to(old, fp) if old is not None else None
    if built is None:
        return [[Scope(_section_function(hunk.section))] * len(hunk.added_rows) for hunk in fp.hunks]
    source, rows = built
    return [
        [Scope(cpp.function_at(source, row), cpp.locals_at(source, row)) for row in sorted(added)]
        for added in rows
    ]


def _section_function(section: bytes) -> str:
    """The function a hunk header names: the (qualified) name before its first parenthesis."""
    name: list[str] = []
    for token in cpp.tokens(section):
        if token.text == b"(":
            break
        name = [*name, token.text.decode()] if token.is_name or token.text == b"::" else []
    return "".join(name)


def _change_meant(token: cpp.Token, found: list[UpstreamChange], scope: Scope) -> UpstreamChange | None:
    """The removed declaration a token of an added line standing in `scope` means, if any."""
    if not token.is_name:
        return None
    text = token.text.decode()
    return next((c for c in found if text == c.name and _applies_here(c, token, scope)), None)


def _adapt_line(
    line: Line, path: str, index: int, scope: Scope, found: list[UpstreamChange], uses: list[Use]
) -> Line:
    """An added line with the one-for-one renames applied; its uses of removed declarations join `uses`."""
    renames: list[tuple[cpp.Token, str]] = []
    for token in cpp.tokens(line.text):
        change = _change_meant(token, found, scope)
        if change is None:
            continue
        if Use(path, index, change) not in uses:
            uses.append(Use(path, index, change))
        if change.renamed_to and token.row == 0:
            renames.append((token, change.renamed_to))
    return Line(line.kind, _rename(line.text, renames)) if renames else line


def _adapt_file(
    fp: FilePatch, found: list[UpstreamChange], written_against: bytes | None, uses: list[Use]
) -> FilePatch:
    """The file's hunks with their added lines adapted (`_adapt_line`), each in its scope."""
    scopes = _scopes(written_against, fp)
    hunks = []
    for index, hunk in enumerate(fp.hunks):
        added = iter(scopes[index])
        lines = [
            _adapt_line(line, fp.path, index, next(added, Scope("")), found, uses)
            if line.kind == "+"
            else line
            for line in hunk.lines
        ]
        hunks.append(replace(hunk, lines=lines))
    return replace(fp, hunks=hunks)


def adapt(
    pf: PatchFile, changes: dict[str, list[UpstreamChange]], written_against: dict[str, bytes | None]
) -> tuple[PatchFile, list[Use]]:
    """The patch with the one-for-one renames applied to its added lines, and every added line's use of a
    declaration upstream removed (`changes` by the patch's file paths: the file's and its headers';
    `written_against`: the files the patch was written against, by old path)."""
    uses: list[Use] = []
    files = []
    for fp in pf.files:
        found = changes.get(fp.path, [])
        if not found or not cpp.is_c_family(fp.path):
            files.append(fp)
            continue
        files.append(_adapt_file(fp, found, written_against.get(fp.old_path or ""), uses))
    return PatchFile(pf.preamble, files, pf.trailer), uses
