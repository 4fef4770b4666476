"""The relocations of Ollama's excerpt tree (tests/mutations/relocate.py) are pure moves: nothing is left at
the old place, every Go import and every path naming a moved directory follows it, the Dockerfile still
finds what it copies, and every line the mutation suite cites reads as it did. What the review makes of the
relocated trees is measured, not tested: python -m bench.mutations --relocated.

Each check runs on the original tree too, so it is known to hold there and to find what it looks for.
"""

from __future__ import annotations

import posixpath
import re

import pytest

from tests.mutations.relocate import (
    LAYOUTS,
    Layout,
    go_imports,
    go_module,
    moved_path,
    relocate,
    relocate_mutations,
)
from tests.mutations.suite import DATA, excerpt_files
from tests.mutations.table import check_citations, load

ORIGINAL = excerpt_files(DATA / "ollama")
MODULE = go_module(ORIGINAL)
MUTATIONS = load()
UNMOVED = Layout("original", ())
TREES = {UNMOVED: ORIGINAL} | {layout: relocate(ORIGINAL, layout) for layout in LAYOUTS}
EVERY_TREE = pytest.mark.parametrize("layout", list(TREES), ids=lambda layout: layout.name)
RELOCATED = pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)

# A path relative to a CMake source directory or a preset's: (variable, path)
_ANCHORED_PATH = re.compile(r"\$\{(CMAKE_SOURCE_DIR|CMAKE_CURRENT_SOURCE_DIR|sourceDir)\}/([\w./-]+)")


def _text(tree: dict[str, bytes], path: str) -> str:
    return tree[path].decode("utf-8", errors="replace")


def _go_imports(tree: dict[str, bytes]) -> set[tuple[str, int, str]]:
    """(file, line, import path) of every import of the module's own packages."""
    return {
        (path, line, imported)
        for path in tree
        if path.endswith(".go")
        for line, imported in go_imports(_text(tree, path))
        if imported == MODULE or imported.startswith(f"{MODULE}/")
    }


def _old_mentions(tree: dict[str, bytes], layout: Layout) -> list[str]:
    """file:line of each line naming a moved directory by its old path from the repository's root: at the
    start of a path or after a CMake root variable, with either separator."""
    found = []
    for move in layout.moves:
        old = move.old.rstrip("/")
        separated = r"[/\\]".join(map(re.escape, old.split("/")))
        end = r"[/\\]" if "/" not in old else r"(?:[/\\]|(?![\w.-]))"
        mention = re.compile(rf"(?:(?<![\w.~/\\-])|(?<=\}}/)){separated}{end}")
        found += [
            f"{path}:{number}"
            for path in tree
            for number, line in enumerate(_text(tree, path).split("\n"), 1)
            if mention.search(line)
        ]
    return found


@RELOCATED
def test_every_file_is_moved_and_none_is_left_under_a_moved_directory(layout):
    tree = TREES[layout]
    assert set(tree) == {moved_path(p, layout) for p in ORIGINAL}
    assert [p for p in tree for m in layout.moves if p.startswith(m.old)] == []
    assert all(any(p.startswith(m.new) for p in tree) for m in layout.moves)


@RELOCATED
def test_no_line_moves(layout):
    """Lines are only rewritten in place (or appended), so a cited line keeps its number."""
    tree = TREES[layout]
    counts = {
        p: (len(_text(ORIGINAL, p).split("\n")), len(_text(tree, moved_path(p, layout)).split("\n")))
        for p in ORIGINAL
    }
    assert {p: n for p, n in counts.items() if n[0] != n[1] and p != ".dockerignore"} == {}
    assert counts[".dockerignore"][1] >= counts[".dockerignore"][0]


@RELOCATED
def test_every_go_import_of_a_moved_package_names_its_new_place(layout):
    moved = [m for m in layout.moves if any(p.startswith(m.old) and p.endswith(".go") for p in ORIGINAL)]
    expected = {
        (moved_path(path, layout), line, _moved_import(imported, layout))
        for path, line, imported in _go_imports(ORIGINAL)
    }
    assert _go_imports(TREES[layout]) == expected
    assert not moved or expected != _go_imports(ORIGINAL), "a moved package is imported"


def _moved_import(imported: str, layout: Layout) -> str:
    package = imported.removeprefix(f"{MODULE}/")
    return imported if package == imported else f"{MODULE}/{moved_path(package, layout)}"


@EVERY_TREE
def test_no_go_file_imports_a_package_the_tree_lacks(layout):
    tree = TREES[layout]
    packages = {posixpath.dirname(p) for p in tree if p.endswith(".go")}
    missing = [
        f"{path}:{line} imports {imported}"
        for path, line, imported in _go_imports(tree)
        if imported.removeprefix(MODULE).lstrip("/") not in packages
    ]
    assert missing == []
    assert len(_go_imports(tree)) > 100


@EVERY_TREE
def test_no_file_names_a_moved_directory_by_its_old_path(layout):
    for relocated in LAYOUTS:
        mentions = _old_mentions(TREES[layout], relocated)
        if layout == relocated:
            assert mentions == []
        elif layout == UNMOVED:
            assert mentions, f"the original tree names {relocated}'s directories"


@EVERY_TREE
def test_every_path_relative_to_a_cmake_directory_names_the_same_file_as_before(layout):
    """${CMAKE_CURRENT_SOURCE_DIR}/../compat/compat.cmake in a moved CMakeLists.txt still finds compat.cmake."""
    tree = TREES[layout]
    directories = {d for p in ORIGINAL for d in _ancestors(posixpath.dirname(p))}
    checked = 0
    for path in ORIGINAL:
        new_path = moved_path(path, layout)
        old_targets = _anchored_targets(path, _text(ORIGINAL, path))
        new_targets = _anchored_targets(new_path, _text(tree, new_path))
        assert len(new_targets) == len(old_targets), path
        for old, new in zip(old_targets, new_targets):
            if old in ORIGINAL or old in directories:
                assert new == moved_path(old, layout), f"{new_path}: names {new}, not {old} moved"
                checked += 1
    assert checked >= 5


def _anchored_targets(path: str, text: str) -> list[str]:
    """The repository paths a file names relative to the root or to its own directory, in order."""
    here = posixpath.dirname(path)
    return [
        posixpath.normpath(posixpath.join("" if m[1] == "CMAKE_SOURCE_DIR" else here, m[2])).removeprefix(
            "./"
        )
        for m in _ANCHORED_PATH.finditer(text)
    ]


@EVERY_TREE
def test_the_dockerfile_copies_what_it_did_moved_and_docker_does_not_ignore_it(layout):
    tree = TREES[layout]
    directories = {d for p in tree for d in _ancestors(posixpath.dirname(p))}
    ignore = [line.strip() for line in _text(tree, ".dockerignore").split("\n") if line.strip()]
    sources = _copied(tree)
    assert sources == [moved_path(s, layout) for s in _copied(ORIGINAL)]
    assert [s for s in sources if s not in tree and s not in directories] == []
    assert [s for s in sources if _ignored(s, ignore)] == []


def _copied(tree: dict[str, bytes]) -> list[str]:
    """The paths the Dockerfile copies from the build context."""
    return [
        source
        for line in _text(tree, "Dockerfile").split("\n")
        if line.startswith("COPY ") and "--from=" not in line
        for source in line.split()[1:-1]
        if source != "."
    ]


def _ancestors(path: str) -> set[str]:
    parts = path.split("/") if path else []
    return {"/".join(parts[: i + 1]) for i in range(len(parts))}


def _ignored(path: str, patterns: list[str]) -> bool:
    """Whether .dockerignore leaves `path` out of the build context: the last pattern naming it or a
    directory it lies in decides (a '!' pattern takes it back)."""
    decided = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        if pattern.lstrip("!").strip("/") in _ancestors(path):
            decided = not negated
    return decided


@RELOCATED
def test_every_cited_line_reads_as_before_the_move(layout):
    tree = TREES[layout]
    relocated = relocate_mutations(MUTATIONS, layout)
    before = [(m.id, _line(ORIGINAL, c.path, c.line)) for m in MUTATIONS for c in m.consumers]
    after = [(m.id, _line(tree, c.path, c.line)) for m in relocated for c in m.consumers]
    assert after == before
    cited = {c.path for m in relocated for c in m.consumers}
    assert cited - {c.path for m in MUTATIONS for c in m.consumers}, "the layout moves no cited file"
    check_citations(relocated, {p: _text(tree, p) for p in cited})


def _line(tree: dict[str, bytes], path: str, number: int) -> str:
    lines = _text(tree, path).split("\n") if path in tree else []
    return lines[number - 1] if 0 < number <= len(lines) else f"(no line {number} in {path})"
