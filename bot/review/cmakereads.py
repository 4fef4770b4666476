"""CMake variables Ollama sets that a CMake file of its build stops reading: the setting no longer reaches
what it configured there (a backend's CMake that stops forwarding an option as a compile definition), while
the option itself, still declared elsewhere, looks untouched."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from bot.model import LocalRef
from bot.review.changes import Draft, FileChange

_EXPANDED = re.compile(r"\$\{(\w+)\}")
_CONDITION = re.compile(r"^[ \t]*(?:if|elseif|while)[ \t]*\((.*)\)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_NAME = re.compile(r"(?<![\w${])([A-Za-z_]\w*)(?![\w}])")


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
    dropped: list[tuple[FileChange, str]] = []
    gained: set[str] = set()
    for c in changes:
        before = reads(c.old_code) if c.old_path else Counter()
        after = reads(c.new_code) if c.new_path else Counter()
        gained |= {name for name, n in after.items() if n > before[name]}
        if c.old_path and c.new_path and built(c.path):
            dropped += [(c, name) for name in before if name in set_by_ollama and not after[name]]
    return [_dropped(c, name, set_by_ollama[name]) for c, name in dropped if name not in gained]


def _dropped(change: FileChange, name: str, refs: Sequence[LocalRef]) -> Draft:
    return Draft(
        "build",
        "medium",
        f"{change.path} no longer reads {name}, which Ollama's build sets",
        f"At the old ref `{change.path}` read `{name}`; at the new ref it does not, and no other changed CMake "
        "file reads it more. What Ollama's setting configured there (a definition, a flag, a branch) no longer "
        "happens in that part of the build: check whether the setting still has an effect.",
        change.path,
        None,
        removed=(change.path, name),
        local_refs=tuple(refs),
        cause=f"cmake-read:{name}",
    )
