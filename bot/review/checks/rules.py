"""The rules of `bot/rules.toml` and the repository's `.github/llama-bot.toml`: each item carries its rule's
id (`rule.<id>`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.rules import rule_drafts

if TYPE_CHECKING:
    from bot.review.run import Run


@check("rules", area="any", inputs=("diff", "ollama-code", "ollama-build"))
def rules(run: Run) -> list[Draft]:
    return rule_drafts(run.rules, run.changes, run.local, run.consumers.builds)
