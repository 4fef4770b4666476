"""Flags Ollama passes to any upstream program it runs (llama-server, llama-quantize, ...) that upstream's
sources stop spelling: the program then refuses the command line (or ignores the flag). Read as string
literals (`"--allow-requantize"`), which is how both an argument table and a hand-written `argv` loop name
their flags, so it needs no anchor file."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from bot.markup import code_span
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.upstream.producers import FLAG_LITERAL


def spelled(code: str) -> set[str]:
    """The flags a source spells as string literals."""
    return set(FLAG_LITERAL.findall(code))


def gone_flag_drafts(
    changes: Iterable[FileChange], launch: Iterable[LaunchSetting], spelled_elsewhere: Callable[[str], bool]
) -> list[Draft]:
    """An item for each flag Ollama passes that a changed source spelled at the old ref and that no source
    spells at the new one (`spelled_elsewhere` asks the files the bump leaves alone)."""
    passed = {s.name: s for s in launch if s.kind == "flag"}
    changed = list(changes)
    before: dict[str, FileChange] = {}
    for c in changed:
        for name in sorted(_spelled_at(c, "old", passed.keys())):
            before.setdefault(name, c)
    after = set().union(*(_spelled_at(c, "new", before.keys()) for c in changed))
    gone = [name for name in sorted(before) if name not in after and not spelled_elsewhere(name)]
    return [_gone(name, passed[name], before[name]) for name in gone]


def _spelled_at(change: FileChange, side: str, names: Collection[str]) -> set[str]:
    """Which of `names` a changed source spells at one ref ("old" or "new"); only a text that holds one
    has its comments read out."""
    path = change.old_path if side == "old" else change.new_path
    raw = change.old_text if side == "old" else change.new_text
    candidates = {n for n in names if f'"{n}"' in raw} if path else set()
    if not candidates:
        return set()
    return spelled(change.old_code if side == "old" else change.new_code) & candidates


def _gone(name: str, setting: LaunchSetting, change: FileChange) -> Draft:
    return Draft(
        "server",
        "high",
        f"{code_span(setting.program)} no longer takes {name}; Ollama passes it",
        f"At the old ref {code_span(change.old_path or '')} spelled {code_span(name)}; no source of the new ref "
        f"does. Ollama starts {code_span(setting.program)} with it: an unknown flag stops the program (or is "
        "ignored), and what Ollama asked for with it no longer happens.",
        change.old_path or "",
        None,
        removed=(change.old_path or "", f'"{name}"'),
        local_refs=setting.refs,
        cause=f"flag:{name}",
    )
