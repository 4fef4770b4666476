"""The environment variables upstream's code reads, by the string constant that names them (`getenv("X")`,
`.set_env("X")`), at both refs, against the ones Ollama sets for the programs it starts.

A variable Ollama sets that no upstream code Ollama builds names any more is silently ignored: whatever Ollama
chose with it (a backend library, a device list, a workaround, a flag's value) falls back to upstream's default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.source import LineIndex

ENV_CONSTANT = re.compile(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"')


def env_constants(code: str) -> dict[str, int]:
    """Each constant of a comment-free text that can name an environment variable, with its first offset."""
    found: dict[str, int] = {}
    for m in ENV_CONSTANT.finditer(code):
        found.setdefault(m[1], m.start())
    return found


@dataclass(frozen=True)
class Lost:
    """An environment-variable name a changed file wrote at the old ref and no changed file writes now."""

    name: str
    change: FileChange
    line: int  # where the old ref wrote it
    successors: tuple[str, ...]  # names the same change writes that the old file did not


def lost_names(
    changes: Iterable[FileChange], wanted: Callable[[str], bool] = lambda name: True
) -> list[Lost]:
    """The `wanted` names that leave a changed file and that no other changed file adds (read from the
    hunks first: a name that leaves a file is on one of its removed lines)."""
    changes = list(changes)
    added = {n for c in changes for n in _on_lines(c.added_raw)}
    found = []
    for change in changes:
        removed = {n for n in _on_lines(change.removed_raw) if wanted(n)} - added
        if removed and change.old_path:
            found += _left(change, removed)
    return found


def _on_lines(lines: list[str]) -> list[str]:
    return ENV_CONSTANT.findall("\n".join(lines))


def _left(change: FileChange, removed: set[str]) -> list[Lost]:
    """The removed names the file no longer writes anywhere, with where the old ref wrote them."""
    before = env_constants(change.old_code)
    after = env_constants(change.new_code) if change.new_path else {}
    gone = sorted(n for n in removed if n in before and n not in after)
    if not gone:
        return []
    index = LineIndex(change.old_code)
    successors = tuple(n for n in after if n not in before)
    return [Lost(n, change, index.line(before[n]), successors) for n in gone]


def lost_drafts(
    lost: Sequence[Lost],
    settings: Mapping[str, tuple[tuple[LocalRef, ...], bool]],
    flags_of: Callable[[str], Sequence[str]],
) -> list[Draft]:
    """A high item for each name Ollama sets (name -> (where, whether on every start)); `flags_of` names the
    flags an `LLAMA_ARG_*`-style variable belonged to at the old ref."""
    return [_draft(item, *settings[item.name], flags_of(item.name)) for item in lost if item.name in settings]


def _draft(item: Lost, refs: tuple[LocalRef, ...], always: bool, flags: Sequence[str]) -> Draft:
    change = item.change
    old_path = change.old_path or change.path
    successor = _nearest(item)
    what = f"{code_span(flags[0])}'s environment variable" if flags else "an environment variable"
    detail = (
        f"At the old ref {code_span(f'{old_path}:{item.line}')} read {code_span(item.name)} ({what}); at the new ref no upstream "
        "code Ollama builds names it"
        + (f" (the same change reads {code_span(successor)})" if successor else "")
        + f". Ollama sets it ({_where(refs)})"
        + ("" if always else " on some starts")
        + ": the setting is now silently ignored, and what Ollama chose with it falls back to upstream's "
        "default. Set the variable upstream reads now, or drop the setting."
    )
    return Draft(
        "discovery" if old_path.startswith("ggml/") else "server",
        "high",
        f"Upstream no longer reads environment variable {item.name}; Ollama sets it",
        detail,
        change.path,
        change.new_line(item.line),
        removed=(old_path, f'"{item.name}"'),
        local_refs=refs,
        cause=f"env:{item.name}",
    )


def _nearest(item: Lost) -> str | None:
    """The name the change writes nearest the old one's place: what upstream reads instead, most likely."""
    if not item.successors or not item.change.new_path:
        return None
    near = item.change.new_line(item.line) or 0
    index = LineIndex(item.change.new_code)
    at = env_constants(item.change.new_code)
    return min(item.successors, key=lambda n: abs(index.line(at[n]) - near))


def _where(refs: Sequence[LocalRef], shown: int = 4) -> str:
    listed = ", ".join(f"{r.path}:{r.line}" for r in refs[:shown])
    return listed + (f" and {len(refs) - shown} more" if len(refs) > shown else "")
