"""A change's `diff --git` line and the extended headers after it (modes, index, renames and copies), and
git's quoting of the paths they name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.patches.patchfile import FilePatch

_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


class PatchError(Exception):
    """The patch is malformed or unsafe; the message says where."""


def unquote(raw: bytes) -> bytes:
    """git's C-style quoting of unusual path names."""
    if not raw.startswith(b'"'):
        return raw
    out = bytearray()
    i = 1
    while i < len(raw) and raw[i : i + 1] != b'"':
        if raw[i : i + 1] == b"\\":
            byte, i = _escaped(raw, i)
            out.append(byte)
        else:
            out += raw[i : i + 1]
            i += 1
    return bytes(out)


def _escaped(raw: bytes, i: int) -> tuple[int, int]:
    """The byte the backslash escape at i of a quoted path stands for (a letter or three octal digits), and
    the index after the escape."""
    nxt = raw[i + 1 : i + 2]
    if nxt in _ESCAPES:
        return _ESCAPES[nxt], i + 2
    if re.fullmatch(rb"[0-7]", nxt):
        return int(raw[i + 1 : i + 4], 8), i + 4
    raise PatchError(f"bad escape in quoted path {raw!r}")


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


@dataclass
class HeaderPaths:
    """What a change's `diff --git` line and extended headers say about its paths."""

    git_old: str | None = None
    git_new: str | None = None
    rename_from: str | None = None
    rename_to: str | None = None
    new_file: bool = False
    deleted: bool = False


_HEADERS_END = (b"--- ", b"@@ ", b"diff --git ", b"GIT binary patch", b"Binary files ")


def read_git_headers(lines: list[bytes], i: int, fp: FilePatch, said: HeaderPaths) -> int:
    """The `diff --git` line at i and the extended headers after it, into `fp` and `said`; the line after."""
    said.git_old, said.git_new = _git_header_paths(lines[i])
    fp.header.append(lines[i])
    i += 1
    while i < len(lines) and not lines[i].startswith(_HEADERS_END):
        _read_header(lines[i].rstrip(b"\r\n"), i + 1, fp, said)
        fp.header.append(lines[i])
        i += 1
    return i


def _mode_header(m: re.Match[bytes], fp: FilePatch, said: HeaderPaths) -> None:
    kind, mode = m[1].decode(), m[2].decode()
    if kind in ("old mode", "deleted file mode"):
        fp.old_mode = mode
    else:
        fp.new_mode = mode
    said.new_file |= kind == "new file mode"
    said.deleted |= kind == "deleted file mode"


def _index_header(m: re.Match[bytes], fp: FilePatch, said: HeaderPaths) -> None:
    fp.index_old, fp.index_new = m[1].decode(), m[2].decode()
    if m[3]:
        fp.old_mode = fp.old_mode or m[3].decode()
        fp.new_mode = fp.new_mode or m[3].decode()


def _source_header(m: re.Match[bytes], fp: FilePatch, said: HeaderPaths) -> None:
    said.rename_from = unquote(m[1]).decode("utf-8", "replace")


def _target_header(m: re.Match[bytes], fp: FilePatch, said: HeaderPaths) -> None:
    said.rename_to = unquote(m[1]).decode("utf-8", "replace")


def _similarity_header(m: re.Match[bytes], fp: FilePatch, said: HeaderPaths) -> None:
    """Similarity says nothing the change needs."""


_EXTENDED_HEADERS = (  # each extended header git writes, and what reading it records
    (re.compile(rb"(old mode|new mode|deleted file mode|new file mode) (\d{6})$"), _mode_header),
    (re.compile(rb"index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d{6}))?$"), _index_header),
    (re.compile(rb"(?:rename|copy) from (.*)", re.DOTALL), _source_header),
    (re.compile(rb"(?:rename|copy) to (.*)", re.DOTALL), _target_header),
    (re.compile(rb"(?:similarity|dissimilarity) index "), _similarity_header),
)


def _read_header(text: bytes, lineno: int, fp: FilePatch, said: HeaderPaths) -> None:
    """One extended header line (without its ending), by the first kind it matches; any other is an error."""
    for pattern, record in _EXTENDED_HEADERS:
        if m := pattern.match(text):
            record(m, fp, said)
            return
    raise PatchError(f"line {lineno}: unknown header line {text[:60]!r}")
