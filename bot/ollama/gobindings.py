"""Ollama's Go packages that compile against a vendored copy of an upstream's C headers: the packages whose
cgo include path reaches the copies (`#cgo CPPFLAGS: -I${SRCDIR}/include` over `include/mlx/c`), or whose
`//go:generate` reads them (the generated bindings).

Only directories that hold both Go and C files (cgo packages) are read, and only their Go files.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.repos.snapshot import Snapshot

C_FILES = (".h", ".c", ".m", ".cpp", ".cc")
MAX_GO_FILES = 400  # per package: a larger directory is no binding package
_DIRECTIVE = re.compile(rb"^\s*//\s*(go:generate\b.*|#cgo\b.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Binding:
    """A Go package that compiles against vendored headers; `generates` when its go:generate reads them."""

    directory: str
    generates: bool
    go_files: tuple[str, ...]


def _cgo_packages(snapshot: Snapshot) -> dict[str, list[str]]:
    """Directory -> its Go files, for the directories with Go and C files."""
    go: dict[str, list[str]] = {}
    c_dirs: set[str] = set()
    for path in snapshot.files():
        directory = posixpath.dirname(path)
        if path.endswith(".go"):
            go.setdefault(directory, []).append(path)
        elif path.endswith(C_FILES):
            c_dirs.add(directory)
    return {d: sorted(files) for d, files in go.items() if d in c_dirs and len(files) <= MAX_GO_FILES}


def _paths(directory: str, directive: str) -> list[tuple[str, bool]]:
    """(repository path, is an include root) of each path a directive names, relative to the package."""
    found = []
    for word in directive.split()[1:]:
        include = word.startswith("-I")
        word = word.removeprefix("-I").replace("${SRCDIR}", directory or ".")
        if "/" not in word and not include:
            continue
        word = word.split("*", 1)[0].rstrip("/") or "."
        path = posixpath.normpath(
            word if word.startswith(directory) and directory else posixpath.join(directory, word)
        )
        if not path.startswith(".."):
            found.append(("" if path == "." else path, include))
    return found


def _reaches(path: str, include: bool, copies: str, upstream: str) -> bool:
    """Whether a named path is the copies (or inside them), or an include root `#include "<upstream>/..."`
    resolves into them from."""
    if include:
        return posixpath.join(path, upstream) == copies
    return path == copies or path.startswith(copies + "/")


def bindings(snapshot: Snapshot, vendored: Iterable[tuple[str, str]]) -> list[Binding]:
    """The Go packages that compile against (copies directory, upstream directory) pairs, by directory."""
    pairs = [(c.strip("/"), u.strip("/")) for c, u in vendored]
    found = []
    for directory, go_files in sorted(_cgo_packages(snapshot).items()):
        reached, generates = False, False
        for path in go_files:
            for match in _DIRECTIVE.finditer(snapshot.read(path) or b""):
                directive = match.group(1).decode("utf-8", "replace")
                hits = any(
                    _reaches(p, inc, copies, upstream)
                    for p, inc in _paths(directory, directive)
                    for copies, upstream in pairs
                )
                reached |= hits
                generates |= hits and directive.startswith("go:generate")
        if reached:
            found.append(Binding(directory, generates, tuple(go_files)))
    return found
