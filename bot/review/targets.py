"""The CMake targets upstream's build defines, at both refs, against the ones Ollama's build names (installs,
links, adds sources to, tests with `if(TARGET ...)`).

A target Ollama names that upstream no longer defines breaks its build quietly: under `if(TARGET ...)` or an
OPTIONAL install the step is skipped without an error, and what Ollama ships or compiles into it goes missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.cmake import commands

_DEFINING = ("add_library", "add_executable", "add_custom_target")
_VARIABLE = re.compile(r"\$\{(\w+)\}")


def definitions(code: str) -> dict[str, int]:
    """The targets a CMake file defines (its `set(VAR name)` variables expanded, in order), with their line."""
    variables: dict[str, str] = {}
    found: dict[str, int] = {}
    for c in commands(code):
        if c.name == "set" and len(c.args) == 2:
            variables[c.args[0]] = c.args[1]
        elif c.name in _DEFINING and c.args:
            name = _VARIABLE.sub(lambda m: variables.get(m[1], m[0]), c.args[0])
            if "${" not in name and "$<" not in name:
                found.setdefault(name, c.line)
    return found


def defined(texts: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """Every target the CMake files define, with where (the first definition)."""
    found: dict[str, tuple[str, int]] = {}
    for path, code in texts.items():
        if "add_" in code:
            for name, line in definitions(code).items():
                found.setdefault(name, (path, line))
    return found


def lost_targets(old: Mapping[str, tuple[str, int]], new: Mapping[str, tuple[str, int]]) -> list[str]:
    return sorted(old.keys() - new.keys())


def target_drafts(
    lost: Iterable[str],
    old: Mapping[str, tuple[str, int]],
    new: Mapping[str, tuple[str, int]],
    used: Mapping[str, Sequence[LocalRef]],
    where_now: Callable[[str, int], int | None],
) -> list[Draft]:
    """A high item for each target Ollama's build names that upstream defined and no longer does."""
    drafts = []
    for name in lost:
        refs = tuple(sorted(used.get(name, ()), key=lambda r: (r.path, r.line)))
        if not refs:
            continue
        path, line = old[name]
        successors = sorted(n for n, (p, _) in new.items() if p == path and n not in old)
        at = new.get(successors[0]) if successors else None
        drafts.append(_draft(name, path, line, successors, refs, at or (path, where_now(path, line))))
    return drafts


def _draft(
    name: str,
    path: str,
    line: int,
    successors: list[str],
    refs: tuple[LocalRef, ...],
    at: tuple[str, int | None],
) -> Draft:
    instead = (
        f" (the same file now defines {', '.join(f'{code_span(s)}' for s in successors[:3])})"
        if successors
        else ""
    )
    where = ", ".join(f"{r.path}:{r.line}" for r in refs[:4])
    detail = (
        f"At the old ref {code_span(f'{path}:{line}')} defined the target {code_span(name)}; at the new ref no CMake file of "
        f"upstream's defines it{instead}. Ollama's build names it ({where}): under `if(TARGET ...)` or an "
        "OPTIONAL install the step is skipped without an error, so what Ollama installs from it or compiles "
        "into it silently goes missing (elsewhere, the configure fails). Use the target's new name."
    )
    return Draft(
        "build",
        "high",
        f"Upstream's build no longer defines target {name}; Ollama's build uses it",
        detail,
        at[0],
        at[1],
        removed=(path, name),
        local_refs=refs,
        cause=f"target:{name}",
    )
