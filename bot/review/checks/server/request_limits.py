"""New checks upstream's request parsing makes that reject values of a field Ollama sends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.request-limits", area="server", inputs=("diff", "inventory"))
def request_limits(run: Run) -> list[Draft]:
    return run.request_limits()
