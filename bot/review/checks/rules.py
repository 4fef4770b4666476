"""The rules of `bot/rules.toml` and the repository's `.github/llama-bot.toml`: each item carries its rule's
id (`rule.<id>`). A rule's `@scope` names Ollama's files as the contract inventory and the build model find
them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.cmake import CMAKE_FILES
from bot.review.rules import rule_drafts
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run

_HTTP = re.compile(r"[A-Z]+ /")  # a source read from an HTTP exchange ("POST /completion stream")


REFS_SHOWN = 10


@check("rules", area="any", inputs=("diff", "ollama-code", "ollama-build", "inventory"))
def rules(run: Run) -> list[Draft]:
    drafts = rule_drafts(
        run.rules, run.changes, run.local, run.consumers.builds, lambda name: scope(run, name)
    )
    settings = {r for s in run.contracts.launch for r in s.refs} if drafts else set()
    return [_ranked(d, settings) for d in drafts]


def _ranked(draft: Draft, first: set[LocalRef]) -> Draft:
    """The item with its Ollama lines where Ollama gives a program a flag or variable first (the inventory's
    launch settings: how Ollama configures what the rule's code reads), REFS_SHOWN of them."""
    refs = sorted(draft.local_refs, key=lambda r: r not in first)[:REFS_SHOWN]
    return draft if tuple(refs) == draft.local_refs else replace(draft, local_refs=tuple(refs))


def scope(run: Run, name: str) -> tuple[LocalRef, ...]:
    """The Ollama lines a rule's `@name` stands for (ruleset.SCOPES)."""
    return _SCOPES[name](run)


def _compat(run: Run) -> tuple[LocalRef, ...]:
    """The compat sources (their first lines)."""
    return tuple(LocalRef(path, 1) for path in run.consumers.compat_sources)


def _callers(run: Run) -> tuple[LocalRef, ...]:
    """Where Ollama starts an upstream program, and where it calls one."""
    k = run.contracts
    return tuple(r for s in k.launch for r in s.refs) + tuple(
        r for refs in k.endpoints.values() for r in refs
    )


def _readers(kind: str) -> Callable[[Run], tuple[LocalRef, ...]]:
    """Where Ollama compares what it read from an upstream program's HTTP stream ("stream") or output
    ("output")."""

    def lines(run: Run) -> tuple[LocalRef, ...]:
        read = [p for p in run.contracts.output_patterns if any(_kind(s) == kind for s in p.sources)]
        return tuple(r for p in read for r in (p.used_at or (p.ref,)))

    return lines


def _kind(source: str) -> str:
    """What a pattern's source is: an HTTP "stream", another HTTP "answer", or a program's "output"."""
    if not _HTTP.match(source):
        return "output"
    return "stream" if source.endswith(" stream") else "answer"


def _pin_build(run: Run) -> tuple[LocalRef, ...]:
    """The CMake files in the directories where Ollama's build fetches and configures the pin."""
    return tuple(
        LocalRef(path, 1)
        for path in run.local
        if glob_match(path, CMAKE_FILES) and any(path.startswith(d) for d in run.pin_build_dirs)
    )


_SCOPES: dict[str, Callable[[Run], tuple[LocalRef, ...]]] = {
    "compat": _compat,
    "pin-build": _pin_build,
    "upstream-callers": _callers,
    "stream-readers": _readers("stream"),
    "output-readers": _readers("output"),
}
