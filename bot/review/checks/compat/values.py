"""Enum values Ollama's compatibility code names or produces, and names it writes, that the built code
stops handling or reading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("compat.values", area="models", inputs=("diff", "ollama-build"), applies=lambda run: run.compat_used)
def values(run: Run) -> list[Draft]:
    return run.value_drafts()
