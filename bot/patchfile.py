"""Parse and write patches exactly as git writes them.

A patch is kept as bytes: CRLF content, missing final newlines and the
`git format-patch` mail header and trailer survive a round trip untouched.
"""

from __future__ import annotations

import base64
import re
import zlib
from dataclasses import dataclass, field

HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*?)\r?\n?$")
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"
_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


class PatchError(Exception):
    """The patch is malformed or unsafe; the message says where."""


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


@dataclass
class PatchFile:
    preamble: bytes
    files: list[FilePatch]
    trailer: bytes


def _split(data: bytes) -> list[bytes]:
    """Lines with their endings, split on LF only so that CR stays part of the content."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _unquote(raw: bytes) -> bytes:
    """git's C-style quoting of unusual path names."""
    if not raw.startswith(b'"'):
        return raw
    out = bytearray()
    i = 1
    while i < len(raw) and raw[i : i + 1] != b'"':
        ch = raw[i : i + 1]
        if ch == b"\\":
            nxt = raw[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if re.fullmatch(rb"[0-7]", nxt):
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
                continue
            raise PatchError(f"bad escape in quoted path {raw!r}")
        out += ch
        i += 1
    return bytes(out)


def _path(raw: bytes, prefix: bytes, lineno: int) -> str | None:
    raw = raw.rstrip(b"\r\n").split(b"\t", 1)[0] if not raw.startswith(b'"') else raw.rstrip(b"\r\n")
    name = _unquote(raw)
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


def _git_header_paths(line: bytes) -> tuple[str | None, str | None]:
    """Paths from `diff --git a/X b/Y` when X == Y (the only unambiguous case without ---/+++)."""
    rest = line[len(b"diff --git ") :].rstrip(b"\r\n")
    if rest.startswith(b'"'):
        return None, None
    half = (len(rest) - 1) // 2
    a, b = rest[:half], rest[half + 1 :]
    if a.startswith(b"a/") and b.startswith(b"b/") and a[2:] == b[2:]:
        return a[2:].decode("utf-8", "replace"), b[2:].decode("utf-8", "replace")
    return None, None


def parse(data: bytes) -> PatchFile:
    lines = _split(data)
    starts = [i for i, line in enumerate(lines) if line.startswith(b"diff --git ")]
    if not starts:  # a plain unified diff
        starts = [
            i
            for i, line in enumerate(lines)
            if line.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ ")
        ]
    if not starts:
        raise PatchError("no file changes found (no 'diff --git' or '---'/'+++' lines)")
    preamble = b"".join(lines[: starts[0]])
    files: list[FilePatch] = []
    i = starts[0]
    trailer_start = len(lines)
    while i < len(lines):
        fp, i = _parse_file(lines, i)
        files.append(fp)
        if i < len(lines) and not lines[i].startswith((b"diff --git ", b"--- ")):
            later = [j for j in range(i, len(lines)) if lines[j].startswith(b"diff --git ")]
            if later:
                raise PatchError(f"line {i + 1}: unexpected text between file changes: {lines[i][:60]!r}")
            trailer_start = i
            break
    return PatchFile(preamble, files, b"".join(lines[trailer_start:]))


def _parse_file(lines: list[bytes], i: int) -> tuple[FilePatch, int]:
    """One file's change from line `i`: the `diff --git` line and its extended headers (modes, index,
    renames), a binary payload or the `---`/`+++` pair and its hunks; and the line after it.

    It reads as `git apply` does, one section after the other, each optional, so it stays one function
    walking the lines: the paths come from `---`/`+++` when present, else from the rename headers, else
    from the `diff --git` line, and every disagreement between them is an error naming its line."""
    start = i
    header: list[bytes] = []
    fp = FilePatch(header=header, old_path=None, new_path=None)
    git_old = git_new = None
    have_minus = have_plus = False
    rename_from = rename_to = None
    new_file = deleted = False
    if lines[i].startswith(b"diff --git "):
        git_old, git_new = _git_header_paths(lines[i])
        header.append(lines[i])
        i += 1
        while i < len(lines):
            line = lines[i]
            text = line.rstrip(b"\r\n")
            if line.startswith((b"--- ", b"@@ ", b"diff --git ", b"GIT binary patch", b"Binary files ")):
                break
            m = re.match(rb"(old mode|new mode|deleted file mode|new file mode) (\d{6})$", text)
            if m:
                kind, mode = m[1].decode(), m[2].decode()
                if kind in ("old mode", "deleted file mode"):
                    fp.old_mode = mode
                else:
                    fp.new_mode = mode
                new_file |= kind == "new file mode"
                deleted |= kind == "deleted file mode"
            elif m := re.match(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d{6}))?$", text):
                fp.index_old, fp.index_new = m[1].decode(), m[2].decode()
                if m[3]:
                    fp.old_mode = fp.old_mode or m[3].decode()
                    fp.new_mode = fp.new_mode or m[3].decode()
            elif text.startswith((b"rename from ", b"copy from ")):
                rename_from = _unquote(text.split(b" ", 2)[2]).decode("utf-8", "replace")
            elif text.startswith((b"rename to ", b"copy to ")):
                rename_to = _unquote(text.split(b" ", 2)[2]).decode("utf-8", "replace")
            elif not text.startswith((b"similarity index ", b"dissimilarity index ")):
                raise PatchError(f"line {i + 1}: unknown header line {text[:60]!r}")
            header.append(line)
            i += 1
    if i < len(lines) and lines[i].startswith((b"GIT binary patch", b"Binary files ")):
        # Base85 lines start with a length letter, so a `-- ` mail trailer cannot be one of them.
        while i < len(lines) and not lines[i].startswith((b"diff --git ", b"-- ")):
            fp.binary.append(lines[i])
            i += 1
    if i < len(lines) and lines[i].startswith(b"--- "):
        if i + 1 >= len(lines) or not lines[i + 1].startswith(b"+++ "):
            raise PatchError(f"line {i + 1}: '---' without '+++'")
        old = _path(lines[i][4:], b"a/", i + 1)
        new = _path(lines[i + 1][4:], b"b/", i + 2)
        header += [lines[i], lines[i + 1]]
        have_minus = have_plus = True
        i += 2
        fp.old_path, fp.new_path = old, new
        while i < len(lines) and lines[i].startswith(b"@@"):
            hunk, i = _parse_hunk(lines, i)
            fp.hunks.append(hunk)
        if not fp.hunks:
            raise PatchError(f"line {i + 1}: file {fp.path!r} has headers but no hunks")
    if not (have_minus and have_plus):
        fp.old_path = None if new_file else (rename_from or git_old)
        fp.new_path = None if deleted else (rename_to or git_new)
        if fp.old_path is None and fp.new_path is None:
            raise PatchError(f"line {start + 1}: cannot tell which file this change is for")
    elif rename_from and fp.old_path != rename_from:
        raise PatchError(f"line {start + 1}: 'rename from' disagrees with the '---' path")
    fp.raw = b"".join(lines[start:i])
    return fp, i


def _parse_hunk(lines: list[bytes], i: int) -> tuple[Hunk, int]:
    m = HUNK_HEADER.match(lines[i])
    if not m:
        raise PatchError(f"line {i + 1}: malformed hunk header {lines[i].rstrip()[:60]!r}")
    old_count = int(m[2]) if m[2] is not None else 1
    new_count = int(m[4]) if m[4] is not None else 1
    hunk = Hunk(int(m[1]), old_count, int(m[3]), new_count, m[5], [], i + 1)
    header_line = i + 1
    i += 1
    old_left, new_left = old_count, new_count
    while old_left > 0 or new_left > 0:
        if i >= len(lines):
            raise PatchError(f"line {header_line}: hunk ends early (file truncated?)")
        line = lines[i]
        kind = line[:1].decode("latin-1")
        if line in (b"\n", b"\r\n"):  # an empty context line whose leading space was stripped
            kind, line = " ", b" " + line
        if kind == " " and old_left and new_left:
            old_left, new_left = old_left - 1, new_left - 1
        elif kind == "-" and old_left:
            old_left -= 1
        elif kind == "+" and new_left:
            new_left -= 1
        elif line.startswith(b"\\") and hunk.lines:
            hunk.lines[-1].text = hunk.lines[-1].text.removesuffix(b"\n")
            i += 1
            continue
        else:
            raise PatchError(
                f"line {i + 1}: hunk line does not fit the counts in its header (line {header_line})"
            )
        hunk.lines.append(Line(kind, line[1:]))
        i += 1
    if i < len(lines) and lines[i].startswith(b"\\"):
        hunk.lines[-1].text = hunk.lines[-1].text.removesuffix(b"\n")
        i += 1
    return hunk, i


def safety_problem(fp: FilePatch) -> str | None:
    """Why applying this file change would be unsafe, or None."""
    for path in {fp.old_path, fp.new_path} - {None}:
        assert path is not None
        parts = path.replace("\\", "/").split("/")
        if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", path):
            return f"absolute path {path!r}"
        if ".." in parts:
            return f"path {path!r} leaves the upstream tree ('..')"
        if any(part.lower() == ".git" for part in parts):
            return f"path {path!r} writes into .git/"
        if any(part in ("", ".") for part in parts) or "\0" in path:
            return f"path {path!r} is not a plain relative path"
    for mode in (fp.old_mode, fp.new_mode):
        if mode == SYMLINK_MODE:
            return f"{fp.path!r} is a symbolic link"
        if mode == GITLINK_MODE:
            return f"{fp.path!r} is a submodule"
    return None


def binary_payload(fp: FilePatch) -> tuple[str, bytes] | None:
    """The forward (`literal`/`delta`, data) of a `GIT binary patch`, or None for `Binary files differ`."""
    lines = [line.rstrip(b"\r\n") for line in fp.binary]
    if not lines or lines[0] != b"GIT binary patch":
        return None
    m = re.fullmatch(rb"(literal|delta) (\d+)", lines[1] if len(lines) > 1 else b"")
    if not m:
        raise PatchError(f"{fp.path}: malformed binary patch")
    encoded = bytearray()
    for line in lines[2:]:
        if not line:
            break
        c = line[0]
        size = c - 64 if 65 <= c <= 90 else c - 96 + 26 if 97 <= c <= 122 else -1
        if size < 0:
            raise PatchError(f"{fp.path}: malformed binary patch line")
        encoded += base64.b85decode(line[1:])[:size]
    try:
        data = zlib.decompress(bytes(encoded))
    except zlib.error:
        raise PatchError(f"{fp.path}: binary patch data is corrupt") from None
    if len(data) != int(m[2]):
        raise PatchError(f"{fp.path}: binary patch size mismatch")
    return m[1].decode(), data


def apply_delta(source: bytes, delta: bytes) -> bytes:
    """git's binary delta format: copy ranges of `source` and insert literal bytes."""

    def varint(pos: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = delta[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value, pos

    src_size, pos = varint(0)
    dst_size, pos = varint(pos)
    if src_size != len(source):
        raise PatchError("binary delta does not fit the file it is applied to")
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[pos] << (8 * bit)
                    pos += 1
            for bit in range(3):
                if op & (1 << (4 + bit)):
                    size |= delta[pos] << (8 * bit)
                    pos += 1
            out += source[offset : offset + (size or 0x10000)]
        elif op:
            out += delta[pos : pos + op]
            pos += op
        else:
            raise PatchError("binary delta has a reserved opcode")
    if len(out) != dst_size:
        raise PatchError("binary delta produced the wrong size")
    return bytes(out)
