"""An option Ollama's build sets that upstream now forces to another value: `set(NAME VALUE CACHE ... FORCE)`
added where Ollama's option values may take the build. The cache entry Ollama's preset or `-D` wrote is
overwritten there, silently, and what Ollama asked for is not what it gets. A CMake variable Ollama's CMake
files set for the build (`set(CMAKE_INSTALL_RPATH "$ORIGIN")`) that upstream's top CMake file now sets
itself, a plain `set()`, is overwritten the same way for every target: upstream's files are read in a scope
below Ollama's (a subdirectory's set reaches only its own targets, a toolchain file is Ollama's choice)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review import cmake
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.consumers.shared import OLLAMA_CMAKE, OptionSetting, text_of, truth_of
from bot.review.consumers.upstream_build import unbuilt_commands
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run

REFS_SHOWN = 4
MIN_PATH = 6  # a shorter old value (`bin`, `lib`) is spelled by too many lines to point at
_FORCED = re.compile(r"^\s*set\s*\(\s*([A-Za-z_]\w*)\s+(\S+)\s+CACHE\b[^)]*\bFORCE\s*\)", re.IGNORECASE)
# a plain `set()` of one of CMake's own variables, one value (a list, a cache entry or a parent's is not read)
_PLAIN = re.compile(r"^\s*set\s*\(\s*(CMAKE_[A-Z0-9_]+)\s+(\"[^\"\n]*\"|[^\s\")]+)\s*\)", re.IGNORECASE)
_IF = re.compile(r"^(\s*)(?:else)?if\s*\((.*)\)\s*$", re.IGNORECASE)


@check(
    "build.forced-options",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def forced_options(run: Run) -> list[Draft]:
    options = {**_plain_sets(run.local), **run.consumers.options}
    found = [(c, f) for c in _cmake_changes(run) for f in _forced(c) if f[1][1] in options]
    if not found:
        return []
    _, new_texts = run.cmake_texts
    unbuilt = unbuilt_commands(new_texts, list(new_texts), options)
    drafts = []
    for change, (line, m, was) in found:
        differ = [s for s in options[m[1]] if not _same(s.value, m[2])]
        if differ and not _unbuilt(unbuilt.get(change.path, ()), line):
            drafts.append(_draft(change, line, m, differ, _spelling(run.local, was)))
    return drafts


def _spelling(ollama: Mapping[str, str], value: str | None) -> tuple[LocalRef, ...]:
    """The lines of Ollama's CMake files that spell a path the variable held before (`${CMAKE_BINARY_DIR}/bin`
    in a glob of the build's outputs): what Ollama finds there moves with the new value."""
    if value is None or "/" not in value or len(value) < MIN_PATH:
        return ()
    found = []
    for path in ollama:
        if glob_match(path, OLLAMA_CMAKE) and value in (text := text_of(ollama, path) or ""):
            found += [LocalRef(path, n) for n, line in enumerate(text.split("\n"), start=1) if value in line]
    return tuple(found[:REFS_SHOWN])


def _same(value: str, other: str) -> bool:
    """Whether two values a variable is set to are the same: as truth values, or as texts."""
    truth = truth_of(value)
    return truth == truth_of(other) if truth is not None else value.strip('"') == other.strip('"')


def _plain_sets(ollama: Mapping[str, str]) -> dict[str, tuple[OptionSetting, ...]]:
    """The plain `set()`s of CMake's own variables in Ollama's CMake files, with where."""
    found: dict[str, list[OptionSetting]] = {}
    for path in ollama:
        if glob_match(path, OLLAMA_CMAKE) and "CMAKE_" in (text := text_of(ollama, path) or ""):
            for n, line in enumerate(text.split("\n"), start=1):
                if (m := _PLAIN.match(line)) is not None:
                    found.setdefault(m[1], []).append(OptionSetting(m[2].strip('"'), LocalRef(path, n)))
    return {name: tuple(settings) for name, settings in found.items()}


def _cmake_changes(run: Run) -> list[FileChange]:
    return [c for c in run.changes if glob_match(c.path, cmake.CMAKE_FILES) and c.new_path and c.significant]


def _unbuilt(ranges: Sequence[tuple[int, int]], line: int) -> bool:
    """Whether the line is in a branch Ollama's build never takes."""
    return any(first <= line <= last for first, last in ranges)


def _forced(change: FileChange) -> list[tuple[int, re.Match, str | None]]:
    """The added `set(... CACHE ... FORCE)` lines of a change, and the top file's plain `set()`s of CMake's
    variables, each with the value a removed line of its hunk set the variable to, if one did."""
    found = []
    for span in change.significant:
        removed = [
            m for _, code in change.removed_code(span) if (m := _FORCED.match(code) or _PLAIN.match(code))
        ]
        was = {m[1]: m[2].strip('"') for m in removed}
        for line, code in change.added_code(span):
            if (m := _FORCED.match(code) or _plain(change.path, code)) is not None:
                found.append((line, m, was.get(m[1])))
    return found


def _plain(path: str, code: str) -> re.Match | None:
    """A plain `set()` of one of CMake's variables in upstream's top CMake file, whose scope every target is
    in, to a value that does not build on the old one (`${CMAKE_HIP_FLAGS} -O3` adds to it)."""
    m = _PLAIN.match(code) if path == "CMakeLists.txt" else None
    return m if m is not None and f"${{{m[1]}}}" not in m[2] else None


def _condition(lines: list[str], line: int) -> str:
    """The condition of the innermost `if`/`elseif` the line stands in (by indentation), "" at the top."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for n in range(line - 1, 0, -1):
        m = _IF.match(lines[n - 1])
        if m and len(m[1]) < indent:
            return " ".join(m[2].split())
    return ""


def _draft(
    change: FileChange, line: int, m: re.Match, differ: list[OptionSetting], spelling: tuple[LocalRef, ...]
) -> Draft:
    name, value = m[1], m[2].strip('"')
    sets = "forces" if "FORCE" in m[0].upper() else "sets"
    condition = _condition(change.new_code_lines, line)
    where = f" where {code_span(condition)} holds" if condition else ""
    ollamas = ", ".join(
        f"{code_span(s.value)} ({code_span(f'{s.ref.path}:{s.ref.line}')})" for s in differ[:3]
    )
    detail = (
        f"At the new ref upstream's build {sets} {code_span(name)} to {code_span(value)}{where} "
        f"({code_span(f'{change.path}:{line}')}). Ollama's build sets it to {ollamas}: the value it gives "
        f"is overwritten there, and the build Ollama configures is not the one it asked for. Check which of "
        "Ollama's builds meet the condition, and what they need instead."
    )
    if spelling:
        detail += (
            f" Ollama's build also spells the old value where it looks for what the build makes "
            f"({', '.join(code_span(f'{r.path}:{r.line}') for r in spelling[:3])}): it is not found there now."
        )
    refs = tuple(dict.fromkeys([*spelling, *(s.ref for s in differ)]))[: 2 * REFS_SHOWN]
    return Draft(
        "build",
        "medium",
        f"Upstream now {sets} {code_span(name)} to {code_span(value)}, which Ollama's build sets otherwise",
        detail,
        change.path,
        line,
        ((line, line),),
        local_refs=refs,
        cause=f"forced-option:{name}",
    )
