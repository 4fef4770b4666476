"""Upstream declarations Ollama's compatibility code uses (in the headers it includes) that the diff
removes, re-kinds or changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "compat.declarations", area="models", inputs=("diff", "ollama-build"), applies=lambda run: run.compat_used
)
def declarations(run: Run) -> list[Draft]:
    return run.declaration_drafts()
