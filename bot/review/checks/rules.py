"""The rules of `bot/rules.toml` and the repository's `.github/llama-bot.toml`: each item carries its rule's
id (`rule.<id>`). A rule's `@scope` names Ollama's files as the contract inventory and the build model find
them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.rules import rule_drafts

if TYPE_CHECKING:
    from bot.review.run import Run

_HTTP = re.compile(r"[A-Z]+ /")  # a source read from an HTTP exchange ("POST /completion stream")


@check("rules", area="any", inputs=("diff", "ollama-code", "ollama-build", "inventory"))
def rules(run: Run) -> list[Draft]:
    return rule_drafts(run.rules, run.changes, run.local, run.consumers.builds, lambda name: scope(run, name))


def scope(run: Run, name: str) -> tuple[LocalRef, ...]:
    """The Ollama lines a rule's `@name` stands for (ruleset.SCOPES): the compat sources (their first
    lines), where Ollama starts or calls an upstream program, or where it compares what one printed or
    streamed."""
    if name == "compat":
        return tuple(LocalRef(path, 1) for path in run.consumers.compat_sources)
    k = run.contracts
    if name == "upstream-callers":
        return tuple(r for s in k.launch for r in s.refs) + tuple(
            r for refs in k.endpoints.values() for r in refs
        )
    stream = name == "stream-readers"
    return tuple(
        r
        for p in k.output_patterns
        if any(s.endswith(" stream") == stream and bool(_HTTP.match(s)) == stream for s in p.sources)
        for r in (p.used_at or (p.ref,))
    )
