"""Ollama's excerpt tree with some directories moved, as a maintainer would move them: the files, the Go
imports of the moved packages, the other files' references to the moved paths, and the suite's citations.

The review must find what Ollama relies on wherever it lives; running the mutation suite on a relocated
tree (suite.run_suite(layout=...)) measures whether it does. A relocation is a pure move: a line changes
only where it names a moved path, and no line moves (lines are only appended, to a .dockerignore), so the
cited lines keep their numbers.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tests.mutations.table import Consumer, Mutation

GO_MOD = "go.mod"
DOCKER_IGNORE = ".dockerignore"
# Variables naming the repository's root in the files that name the moved paths (CMake)
_ROOT_VARIABLES = ("${CMAKE_SOURCE_DIR}", "${CMAKE_CURRENT_SOURCE_DIR}", "${PROJECT_SOURCE_DIR}")
# Variables naming the directory of the file they are written in (CMake, CMake presets, cgo)
_OWN_DIRECTORY = re.compile(
    r"(?P<anchor>\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR|sourceDir|SRCDIR)\}/)"
    r"(?P<relative>(?:\.\./)+[\w.*/-]*)"
)
_GO_IMPORT_BLOCK = re.compile(r"^import\s*\((?P<specs>.*?)^\)", re.MULTILINE | re.DOTALL)
_GO_IMPORT_LINE = re.compile(r'^import\s+(?:[\w.]+\s+)?"(?P<path>[^"]+)"', re.MULTILINE)
_GO_IMPORT_SPEC = re.compile(r'^\s*(?:[\w.]+\s+)?"(?P<path>[^"]+)"', re.MULTILINE)


class RelocationError(Exception):
    """The tree cannot be relocated as asked: one line."""


@dataclass(frozen=True)
class Move:
    """One directory moved: every path under `old` goes under `new` (both end in '/')."""

    old: str
    new: str

    def __post_init__(self):
        if not (self.old.endswith("/") and self.new.endswith("/")):
            raise RelocationError(f"{self.old} -> {self.new}: a moved directory ends in '/'")


@dataclass(frozen=True)
class Layout:
    name: str
    moves: tuple[Move, ...]

    def __str__(self) -> str:
        return ", ".join(f"{m.old} -> {m.new}" for m in self.moves)


# The relocations of issue 39: Ollama's Go packages under internal/, and the llama-server build elsewhere.
LAYOUTS = (
    Layout("A", (Move("llm/", "internal/llm/"), Move("discover/", "internal/discover/"))),
    Layout("B", (Move("llama/server/", "build/llama-server/"),)),
)


def moved_path(path: str, layout: Layout) -> str:
    """Where `path` (a file or a directory) is after the relocation."""
    for move in layout.moves:
        if path.startswith(move.old):
            return move.new + path[len(move.old) :]
        if path == _directory(move.old):
            return _directory(move.new)
    return path


def relocate(files: Mapping[str, bytes], layout: Layout) -> dict[str, bytes]:
    """The tree `files` (path -> content) relocated: paths moved, then each text file's references to the
    moved paths rewritten (binary files are moved as they are)."""
    module = go_module(files)
    relocated = {}
    for path, data in files.items():
        new = moved_path(path, layout)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            relocated[new] = data
            continue
        text = _rewrite_module_paths(text, module, layout)
        text = _rewrite_own_directory_paths(text, path, new, layout)
        text = _rewrite_root_paths(text, layout)
        if new == DOCKER_IGNORE:
            text = _docker_ignore_exceptions(text, layout)
        relocated[new] = text.encode("utf-8")
    return relocated


def relocate_mutations(mutations: Iterable[Mutation], layout: Layout) -> list[Mutation]:
    """The mutations with their cited Ollama lines at the relocated paths (the line numbers do not move)."""
    return [
        dataclasses.replace(
            m, consumers=tuple(Consumer(moved_path(c.path, layout), c.line) for c in m.consumers)
        )
        for m in mutations
    ]


def go_module(files: Mapping[str, bytes]) -> str:
    """The Go module path of the tree, from its go.mod."""
    found = re.search(rb"^module\s+(\S+)", files.get(GO_MOD, b""), re.MULTILINE)
    if found is None:
        raise RelocationError(f"no module line in {GO_MOD}: the Go imports cannot be rewritten")
    return found.group(1).decode()


def go_imports(text: str) -> list[tuple[int, str]]:
    """The import paths of a Go file, with the line each is on."""
    found = [(text.count("\n", 0, m.start("path")) + 1, m["path"]) for m in _GO_IMPORT_LINE.finditer(text)]
    for block in _GO_IMPORT_BLOCK.finditer(text):
        start = block.start("specs")
        found += [
            (text.count("\n", 0, start + m.start("path")) + 1, m["path"])
            for m in _GO_IMPORT_SPEC.finditer(block["specs"])
        ]
    return sorted(found)


def _directory(path: str) -> str:
    """A moved directory as a path (a Go package relative to the module, a CMake source directory)."""
    return path.rstrip("/")


def _rewrite_module_paths(text: str, module: str, layout: Layout) -> str:
    """Go package paths of moved directories (imports, and `-X` link flags) at their new place."""
    for move in layout.moves:
        old = re.compile(re.escape(f"{module}/{_directory(move.old)}") + r"(?![\w-])")
        text = old.sub(f"{module}/{_directory(move.new)}", text)
    return text


def _rewrite_own_directory_paths(text: str, old_path: str, new_path: str, layout: Layout) -> str:
    """Paths relative to the file's own directory (`${CMAKE_CURRENT_SOURCE_DIR}/../x`) that would name
    another file from the new directory, made to name the same file (at its new place if it moved too)."""
    old_dir, new_dir = posixpath.dirname(old_path), posixpath.dirname(new_path)

    def rewrite(m: re.Match) -> str:
        relative = m["relative"]
        target = posixpath.normpath(posixpath.join(old_dir, relative))
        if target.startswith("../"):
            return m[0]
        target = moved_path(target, layout)
        if posixpath.normpath(posixpath.join(new_dir, relative)) == target:
            return m[0]
        trailing = "/" if relative.endswith("/") else ""
        return m["anchor"] + posixpath.relpath(target, new_dir or ".") + trailing

    return _OWN_DIRECTORY.sub(rewrite, text)


def _root_path_pattern(move: Move) -> re.Pattern[str]:
    """A mention of a moved directory relative to the repository's root, with '/' or '\\' between its
    components: at the start of a path (not inside a longer one, a URL or a home directory) or after a
    variable naming the root. A one-component directory is a mention only followed by a separator (`llm/`,
    not the word llm); a longer one also alone (`cmake -S llama/server`)."""
    parts = _directory(move.old).split("/")
    after_root = "|".join(rf"(?<={re.escape(v)}[/\\])" for v in _ROOT_VARIABLES)
    path = r"[/\\]".join(re.escape(p) for p in parts)
    end = r"(?=[/\\])" if len(parts) == 1 else r"(?=[/\\]|(?![\w.-]))"
    return re.compile(rf"(?:{after_root}|(?<![\w.~@:$/\\-])){path}{end}")


def _rewrite_root_paths(text: str, layout: Layout) -> str:
    """Mentions of the moved directories (commands, CMake paths, path filters, comments, docs) at their new
    place, written with the separator the mention uses."""
    for move in layout.moves:
        new = _directory(move.new)

        def rewrite(m: re.Match, new: str = new) -> str:
            return new.replace("/", "\\") if "\\" in m[0] else new

        text = _root_path_pattern(move).sub(rewrite, text)
    return text


def _docker_ignore_exceptions(text: str, layout: Layout) -> str:
    """The .dockerignore with an exception for each moved directory that now lies under an ignored one
    (`build`), so the Dockerfile's COPY of it still finds it; appended, so no line moves."""
    ignored = {
        line.strip().strip("/") for line in text.split("\n") if line.strip() and line.strip()[0] not in "#!"
    }
    exceptions = [
        f"!{_directory(m.new)}\n"
        for m in layout.moves
        if _ancestors(_directory(m.new)) & ignored and not _ancestors(_directory(m.old)) & ignored
    ]
    if exceptions and not text.endswith("\n"):
        text += "\n"
    return text + "".join(exceptions)


def _ancestors(path: str) -> set[str]:
    """The directories `path` lies in, itself included: a/b -> {a, a/b}."""
    parts = path.split("/")
    return {"/".join(parts[: i + 1]) for i in range(len(parts))}
