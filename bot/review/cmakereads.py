"""CMake variables Ollama sets that a CMake file of its build stops reading: the setting no longer reaches
what it configured there (a backend's CMake that stops forwarding an option as a compile definition), while
the option itself, still declared elsewhere, looks untouched."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import lru_cache

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange

_EXPANDED = re.compile(r"\$\{(\w+)\}")
_CONDITION = re.compile(r"^[ \t]*(?:if|elseif|while)[ \t]*\((.*)\)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_NAME = re.compile(r"(?<![\w${])([A-Za-z_]\w*)(?![\w}])")


@lru_cache(maxsize=64)
def reads(code: str) -> Counter[str]:
    """The variables a comment-free CMake text reads, with how often: `${X}` anywhere, and the bare names
    an `if`, `elseif` or `while` tests (keywords among them are never a name Ollama sets)."""
    found: Counter[str] = Counter(_EXPANDED.findall(code))
    for condition in _CONDITION.findall(code):
        found.update(_NAME.findall(re.sub(r'"[^"]*"', "", condition)))
    return found


def dropped_read_drafts(
    changes: Iterable[FileChange],
    set_by_ollama: Mapping[str, Sequence[LocalRef]],
    built: Callable[[str], bool],
) -> list[Draft]:
    """An item per changed CMake file of Ollama's build that read a variable Ollama sets and no longer does,
    unless another changed file reads it more now (the read moved)."""
    changed = list(changes)
    gained = {name for c in changed for name, n in _after(c).items() if n > _before(c)[name]}
    built_both = [c for c in changed if c.old_path and c.new_path and built(c.path)]
    return [
        _dropped(c, name, set_by_ollama[name])
        for c in built_both
        for name in _unread(c, set_by_ollama.keys() - gained)
    ]


def _unread(change: FileChange, names: Collection[str]) -> list[str]:
    """The names the change's file read at the old ref and does not at the new one."""
    after = _after(change)
    return [name for name in _before(change) if name in names and not after[name]]


def _before(change: FileChange) -> Counter[str]:
    return reads(change.old_code) if change.old_path else Counter()


def _after(change: FileChange) -> Counter[str]:
    return reads(change.new_code) if change.new_path else Counter()


def _dropped(change: FileChange, name: str, refs: Sequence[LocalRef]) -> Draft:
    return Draft(
        "build",
        "medium",
        f"{code_span(change.path)} no longer reads {code_span(name)}, which Ollama's build sets",
        f"At the old ref {code_span(change.path)} read {code_span(name)}; at the new ref it does not, and no other changed CMake "
        "file reads it more. What Ollama's setting configured there (a definition, a flag, a branch) no longer "
        "happens in that part of the build: check whether the setting still has an effect.",
        change.path,
        None,
        removed=(change.path, name),
        local_refs=tuple(refs),
        cause=f"cmake-read:{name}",
    )
