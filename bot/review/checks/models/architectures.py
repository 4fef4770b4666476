"""Model architectures: names the carried patches add or Ollama's compatibility code uses, renamed or
removed in upstream's architecture table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("models.architectures", area="models", inputs=("diff", "patches", "ollama-code"))
def architectures(run: Run) -> list[Draft]:
    return run.architectures()
