"""llama-server's flags Ollama passes, removed or renamed in the argument table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.flags", area="server", inputs=("diff", "inventory"))
def server_flags(run: Run) -> list[Draft]:
    return run.server_flags()
