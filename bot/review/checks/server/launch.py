"""The values, environment and defaults of the programs Ollama starts: named values their handlers stop
accepting, environment variables no longer read, defaults Ollama relies on by leaving a flag or field out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.launch import launch_drafts

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.launch", area="server", inputs=("diff", "inventory", "ollama-build"))
def launch(run: Run) -> list[Draft]:
    return launch_drafts(run)
