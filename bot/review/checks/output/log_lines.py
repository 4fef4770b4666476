"""Lines upstream printed that a pattern of Ollama matches, with nothing printing them now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import logformats
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("output.log-lines", area="server", inputs=("diff", "inventory", "ollama-build", "prints"))
def log_lines(run: Run) -> list[Draft]:
    return logformats.log_line_drafts(run.c_changes, run.local, run.printing)
