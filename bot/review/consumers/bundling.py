"""Which of a target's runtime dependencies Ollama's install carries: `install(TARGETS t RUNTIME_DEPENDENCIES
...)` or `RUNTIME_DEPENDENCY_SET s` with its `install(RUNTIME_DEPENDENCY_SET s ...)`, filtered by
`PRE_INCLUDE_REGEXES` and `PRE_EXCLUDE_REGEXES`. A library the target links that the filter drops is not in
Ollama's payload: the user's machine has to provide it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from bot.lang import cmakelang
from bot.model import LocalRef
from bot.review.consumers.shared import OLLAMA_CMAKE, text_of
from bot.review.source import glob_match, searchable

MAX_PATTERN = 200  # characters of one regular expression read (a longer or a backtracking one is not judged)
MAX_NAME = 64  # characters of a library file name a pattern is tried on
_FILTERS = ("PRE_INCLUDE_REGEXES", "PRE_EXCLUDE_REGEXES")
_SET_WORDS = frozenset(
    {
        "DIRECTORIES",
        "PRE_INCLUDE_REGEXES",
        "PRE_EXCLUDE_REGEXES",
        "POST_INCLUDE_REGEXES",
        "POST_EXCLUDE_REGEXES",
        "POST_INCLUDE_FILES",
        "POST_EXCLUDE_FILES",
        *cmakelang.INSTALL_TARGETS_END,
    }
)


@dataclass(frozen=True)
class Bundling:
    """The runtime dependencies Ollama's install carries beside one target."""

    target: str
    installed: LocalRef  # where the install names the target's dependencies
    filtered: LocalRef  # where the filter is written
    include: tuple[str, ...]
    exclude: tuple[str, ...]

    def carries(self, library: str) -> bool | None:
        """Whether a library the target links (`roc::rccl`, `cublas`) is carried, in CMake's order: a
        pre-include match keeps it, else a pre-exclude match drops it; None when a pattern cannot be read."""
        files = _file_names(library)
        kept = _matches(self.include, files)
        if kept is not False:
            return kept
        dropped = _matches(self.exclude, files)
        return None if dropped is None else not dropped

    def kept_by(self, library: str) -> str | None:
        """The pre-include pattern that keeps a library the target links, None when none does."""
        files = _file_names(library)
        return next((p for p in self.include if _matches((p,), files)), None)


def _file_names(library: str) -> tuple[str, ...]:
    """The file names a linked library goes by on the platforms: `roc::rccl` -> librccl.so, rccl.dll."""
    name = library.rsplit("::", 1)[-1].lower()
    return (f"lib{name}.so"[:MAX_NAME], f"{name}.dll"[:MAX_NAME], f"lib{name}.dylib"[:MAX_NAME])


def _matches(patterns: tuple[str, ...], files: tuple[str, ...]) -> bool | None:
    """Whether a pattern finds one of the file names; None when none does and one cannot be read."""
    unread = False
    for pattern in patterns:
        compiled = searchable(pattern, MAX_PATTERN)
        if compiled is None:
            unread = True
        elif any(compiled.search(f) for f in files):
            return True
    return None if unread else False


def bundlings(ollama: Mapping[str, str], paths: list[str]) -> dict[str, Bundling]:
    """Each target Ollama's CMake files install with a filtered set of runtime dependencies."""
    found: dict[str, Bundling] = {}
    for path in paths:
        if glob_match(path, OLLAMA_CMAKE) and "RUNTIME_DEPENDENC" in (text := text_of(ollama, path) or ""):
            found.update(_file_bundlings(path, cmakelang.parse(text)))
    return found


def _file_bundlings(path: str, root: Node) -> Iterator[tuple[str, Bundling]]:
    installs = [c for c in cmakelang.commands(root) if cmakelang.name(c) == "install"]
    sets = {}
    for command in installs:
        words = _words(command)
        if words[:1] and words[0][0] == "RUNTIME_DEPENDENCY_SET" and len(words) > 1:
            sets[words[1][0]] = words
    for command in installs:
        words = _words(command)
        if words[:1] and words[0][0] == "TARGETS":
            yield from _target_bundlings(path, words, sets)


def _target_bundlings(
    path: str, words: list[tuple[str, int]], sets: Mapping[str, list[tuple[str, int]]]
) -> Iterator[tuple[str, Bundling]]:
    """The targets of one `install(TARGETS ...)`, each with the filter of its runtime dependencies."""
    values = [w for w, _ in words]
    targets = []
    for word in values[1:]:
        if word in cmakelang.INSTALL_TARGETS_END:
            break
        targets.append(word)
    if "RUNTIME_DEPENDENCIES" in values:
        at = values.index("RUNTIME_DEPENDENCIES")
        filter_words = words[at:]
    elif "RUNTIME_DEPENDENCY_SET" in values[:-1]:
        at = values.index("RUNTIME_DEPENDENCY_SET")
        filter_words = list(sets.get(values[at + 1], ()))
    else:
        return
    include, exclude = (_listed(filter_words, key) for key in _FILTERS)
    if not exclude[0]:
        return  # nothing is left out
    filtered = include[1] or exclude[1]
    for target in targets:
        yield (
            target,
            Bundling(target, LocalRef(path, words[at][1]), LocalRef(path, filtered), include[0], exclude[0]),
        )


def _listed(words: list[tuple[str, int]], key: str) -> tuple[tuple[str, ...], int]:
    """The values after a keyword up to the next keyword, and the keyword's line (0 when absent)."""
    values = [w for w, _ in words]
    if key not in values:
        return (), 0
    at = values.index(key)
    taken = []
    for value in values[at + 1 :]:
        if value in _SET_WORDS:
            break
        taken.append(value)
    return tuple(taken), words[at][1]


def _words(command: Node) -> list[tuple[str, int]]:
    """A command's arguments as written (variables not expanded), each with its line."""
    return [
        (value, cmakelang.line(argument))
        for arg_list in cmakelang.children(command, "argument_list")
        for argument in cmakelang.children(arg_list, "argument")
        for value in cmakelang.values(argument)
    ]
