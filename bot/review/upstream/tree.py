"""The upstream tree at one ref as the producer model reads it: the comment-free text of every C/C++ source and CMake file,
read once from git objects. A file larger than MAX_FILE_BYTES, or whose blob a partial clone lacks, is left
out with the reason, never a crash: the model then says what it could not read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import pygit2

from bot.review.source import code_text, extension

MAX_FILE_BYTES = 4 << 20  # a larger file is generated data or a vendored amalgamation, not a producer
SOURCE_EXTENSIONS = frozenset(
    [".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".cu", ".cuh"]
)
SOURCE_EXTENSIONS |= frozenset([".m", ".mm"])
CMAKE_NAMES = ("CMakeLists.txt", "CMakePresets.json")


@dataclass(frozen=True)
class UpstreamTree:
    """The texts the producer model reads (path -> text), and the files it could not read (path -> why)."""

    ref: str
    commit: str
    texts: Mapping[str, str]
    skipped: Mapping[str, str] = field(default_factory=dict)


def is_cmake(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in CMAKE_NAMES or path.endswith(".cmake")


def is_source(path: str) -> bool:
    return extension(path) in SOURCE_EXTENSIONS


def wanted(path: str) -> bool:
    """Whether the producer model may read the file: a C/C++ source or a CMake file, by its name alone."""
    return is_source(path) or is_cmake(path)


def read_tree(repo: pygit2.Repository, commit: pygit2.Commit, ref: str) -> UpstreamTree:
    """The one reader of git: every wanted file's text at `commit`, each blob's size checked before reading."""
    texts: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for path, oid in _blobs(commit.tree):
        if not wanted(path):
            continue
        try:
            size = repo.odb.read_header(oid)[1]
            if size > MAX_FILE_BYTES:
                skipped[path] = f"{size} bytes, over the {MAX_FILE_BYTES} bytes read per file"
                continue
            texts[path] = code_text(repo.odb.read(oid)[1].decode("utf-8", "replace"), path)
        except KeyError:
            skipped[path] = "its blob is missing from the repository (a partial clone)"
    return UpstreamTree(ref, str(commit.id), texts, skipped)


def _blobs(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid]]:
    """(path, blob id) of every file below the tree, depth first."""
    for entry in tree:
        path = prefix + (entry.name or "")
        if isinstance(entry, pygit2.Tree):
            yield from _blobs(entry, path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id
