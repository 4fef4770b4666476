"""Parse and write patches exactly as git writes them.

A patch is kept as bytes: CRLF content, missing final newlines and the
`git format-patch` mail header and trailer survive a round trip untouched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.patches.patchheaders import HeaderPaths, PatchError, read_git_headers, unquote

HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*?)\r?\n?$")


@dataclass
class Line:
    kind: str  # ' ' context, '-' removed, '+' added
    text: bytes  # the file's line, with its line ending unless it is the last line without one


@dataclass
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: bytes
    lines: list[Line]
    header_line: int = 0  # 1-based line of the `@@` header in the patch file, for annotations

    @property
    def before(self) -> list[bytes]:
        return [line.text for line in self.lines if line.kind != "+"]

    @property
    def after(self) -> list[bytes]:
        return [line.text for line in self.lines if line.kind != "-"]

    @property
    def leading(self) -> int:
        """Context lines before the first change."""
        return next((i for i, line in enumerate(self.lines) if line.kind != " "), len(self.lines))

    @property
    def trailing(self) -> int:
        return next((i for i, line in enumerate(reversed(self.lines)) if line.kind != " "), len(self.lines))

    @property
    def added_rows(self) -> list[int]:
        """Where the added lines are in the postimage (`after`), 0-based."""
        return [
            i for i, kind in enumerate(line.kind for line in self.lines if line.kind != "-") if kind == "+"
        ]


def lines_of(data: bytes | None) -> list[bytes]:
    """A file's lines with their endings (the last one may lack its newline)."""
    if not data:
        return []
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


@dataclass
class FilePatch:
    header: list[bytes]  # raw lines from `diff --git` up to and including `+++`
    old_path: str | None  # None: a new file
    new_path: str | None  # None: a deleted file
    old_mode: str | None = None
    new_mode: str | None = None
    index_old: str | None = None
    index_new: str | None = None
    binary: list[bytes] = field(default_factory=list)  # raw `GIT binary patch` / `Binary files` lines
    hunks: list[Hunk] = field(default_factory=list)
    raw: bytes = b""  # this file's section exactly as it stands in the patch

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def is_new(self) -> bool:
        return self.old_path is None

    @property
    def is_deleted(self) -> bool:
        return self.new_path is None

    @property
    def is_binary(self) -> bool:
        return bool(self.binary)

    @property
    def is_renamed(self) -> bool:
        """Whether the change moves the file: it names both paths, and they differ."""
        return bool(self.old_path and self.new_path and self.old_path != self.new_path)


@dataclass
class PatchFile:
    preamble: bytes
    files: list[FilePatch]
    trailer: bytes

    @property
    def paths(self) -> set[str]:
        """Every path the patch reads or writes (old and new)."""
        return {p for fp in self.files for p in (fp.old_path, fp.new_path) if p}


def _split(data: bytes) -> list[bytes]:
    """Lines with their endings, split on LF only so that CR stays part of the content."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _path(raw: bytes, prefix: bytes, lineno: int) -> str | None:
    raw = raw.rstrip(b"\r\n").split(b"\t", 1)[0] if not raw.startswith(b'"') else raw.rstrip(b"\r\n")
    name = unquote(raw)
    if name == b"/dev/null":
        return None
    if not name.startswith(prefix):
        raise PatchError(
            f"line {lineno}: path {name.decode(errors='replace')!r} lacks the {prefix.decode()} prefix"
        )
    try:
        return name[len(prefix) :].decode("utf-8")
    except UnicodeDecodeError:
        raise PatchError(f"line {lineno}: path is not UTF-8") from None


def parse(data: bytes) -> PatchFile:
    """The patch's mail header, its file changes and its trailer (text after the last change)."""
    lines = _split(data)
    starts = _file_starts(lines)
    files: list[FilePatch] = []
    i = starts[0]
    while i < len(lines):
        fp, i = _parse_file(lines, i)
        files.append(fp)
        if _trailer_begins(lines, i):
            break
    return PatchFile(b"".join(lines[: starts[0]]), files, b"".join(lines[i:]))


def _file_starts(lines: list[bytes]) -> list[int]:
    """Where file changes begin: their `diff --git` lines, or in a plain unified diff their `---` lines."""
    starts = [i for i, line in enumerate(lines) if line.startswith(b"diff --git ")] or _unified_starts(lines)
    if not starts:
        raise PatchError("no file changes found (no 'diff --git' or '---'/'+++' lines)")
    return starts


def _unified_starts(lines: list[bytes]) -> list[int]:
    return [
        i
        for i, line in enumerate(lines)
        if line.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ ")
    ]


def _trailer_begins(lines: list[bytes], i: int) -> bool:
    """Whether line i, right after a file's change, begins the trailer: text that starts no change and has
    no `diff --git` after it (text between two changes is an error)."""
    if i >= len(lines) or lines[i].startswith((b"diff --git ", b"--- ")):
        return False
    if any(line.startswith(b"diff --git ") for line in lines[i:]):
        raise PatchError(f"line {i + 1}: unexpected text between file changes: {lines[i][:60]!r}")
    return True


def _parse_file(lines: list[bytes], i: int) -> tuple[FilePatch, int]:
    """One file's change from line `i`: the `diff --git` line and its extended headers (modes, index,
    renames), a binary payload or the `---`/`+++` pair and its hunks; and the line after it.

    It reads as `git apply` does, one section after the other, each optional: the paths come from
    `---`/`+++` when present, else from the rename headers, else from the `diff --git` line, and every
    disagreement between them is an error naming its line."""
    start = i
    fp = FilePatch(header=[], old_path=None, new_path=None)
    said = HeaderPaths()
    if lines[i].startswith(b"diff --git "):
        i = read_git_headers(lines, i, fp, said)
    i = _read_binary(lines, i, fp)
    if i < len(lines) and lines[i].startswith(b"--- "):
        i = _read_text_change(lines, i, fp)
        _check_rename(fp, said, start)
    else:
        _paths_from_headers(fp, said, start)
    fp.raw = b"".join(lines[start:i])
    return fp, i


def _read_binary(lines: list[bytes], i: int, fp: FilePatch) -> int:
    """A binary payload's lines from i into `fp.binary`, if one starts there; the line after it.

    Base85 lines start with a length letter, so a `-- ` mail trailer cannot be one of them."""
    if i < len(lines) and lines[i].startswith((b"GIT binary patch", b"Binary files ")):
        while i < len(lines) and not lines[i].startswith((b"diff --git ", b"-- ")):
            fp.binary.append(lines[i])
            i += 1
    return i


def _read_text_change(lines: list[bytes], i: int, fp: FilePatch) -> int:
    """The `---`/`+++` pair at i and the hunks after it, into `fp`; the line after the last hunk."""
    if i + 1 >= len(lines) or not lines[i + 1].startswith(b"+++ "):
        raise PatchError(f"line {i + 1}: '---' without '+++'")
    fp.old_path = _path(lines[i][4:], b"a/", i + 1)
    fp.new_path = _path(lines[i + 1][4:], b"b/", i + 2)
    fp.header += [lines[i], lines[i + 1]]
    i += 2
    while i < len(lines) and lines[i].startswith(b"@@"):
        hunk, i = _parse_hunk(lines, i)
        fp.hunks.append(hunk)
    if not fp.hunks:
        raise PatchError(f"line {i + 1}: file {fp.path!r} has headers but no hunks")
    return i


def _check_rename(fp: FilePatch, said: HeaderPaths, start: int) -> None:
    """A `rename from` must agree with the `---` path."""
    if said.rename_from and fp.old_path != said.rename_from:
        raise PatchError(f"line {start + 1}: 'rename from' disagrees with the '---' path")


def _paths_from_headers(fp: FilePatch, said: HeaderPaths, start: int) -> None:
    """The paths of a change without `---`/`+++`: the rename headers', else the `diff --git` line's; an
    error when nothing names the file."""
    fp.old_path = None if said.new_file else (said.rename_from or said.git_old)
    fp.new_path = None if said.deleted else (said.rename_to or said.git_new)
    if fp.old_path is None and fp.new_path is None:
        raise PatchError(f"line {start + 1}: cannot tell which file this change is for")


_COUNTED = {b" ": (1, 1), b"-": (1, 0), b"+": (0, 1)}  # (old, new) lines each kind of hunk line takes


def _parse_hunk(lines: list[bytes], i: int) -> tuple[Hunk, int]:
    """The hunk whose `@@` header is line i, and the line after it: exactly as many lines as its header
    counts, each `\\ No newline` marker taking the newline off the line before."""
    m = HUNK_HEADER.match(lines[i])
    if not m:
        raise PatchError(f"line {i + 1}: malformed hunk header {lines[i].rstrip()[:60]!r}")
    old_count = int(m[2]) if m[2] is not None else 1
    new_count = int(m[4]) if m[4] is not None else 1
    hunk = Hunk(int(m[1]), old_count, int(m[3]), new_count, m[5], [], i + 1)
    i = _read_hunk_lines(lines, i + 1, hunk)
    if i < len(lines) and lines[i].startswith(b"\\"):
        _drop_final_newline(hunk)
        i += 1
    return hunk, i


def _read_hunk_lines(lines: list[bytes], i: int, hunk: Hunk) -> int:
    """The hunk's lines from i into `hunk` until its header's counts are used up; the line after them."""
    old_left, new_left = hunk.old_count, hunk.new_count
    while old_left > 0 or new_left > 0:
        if i >= len(lines):
            raise PatchError(f"line {hunk.header_line}: hunk ends early (file truncated?)")
        line = b" " + lines[i] if lines[i] in (b"\n", b"\r\n") else lines[i]  # a stripped empty context line
        left = _counts_after(line, old_left, new_left)
        if left is not None:
            old_left, new_left = left
            hunk.lines.append(Line(line[:1].decode("latin-1"), line[1:]))
        elif line.startswith(b"\\") and hunk.lines:
            _drop_final_newline(hunk)
        else:
            raise PatchError(
                f"line {i + 1}: hunk line does not fit the counts in its header (line {hunk.header_line})"
            )
        i += 1
    return i


def _counts_after(line: bytes, old_left: int, new_left: int) -> tuple[int, int] | None:
    """The old and new lines a hunk has left after `line`, or None when it is no hunk line that fits."""
    taken = _COUNTED.get(line[:1])
    if taken is None or old_left < taken[0] or new_left < taken[1]:
        return None
    return old_left - taken[0], new_left - taken[1]


def _drop_final_newline(hunk: Hunk) -> None:
    """A `\\ No newline at end of file` marker: the line before it ends the file without a newline."""
    hunk.lines[-1].text = hunk.lines[-1].text.removesuffix(b"\n")
