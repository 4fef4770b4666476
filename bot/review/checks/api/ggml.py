"""ggml's public declarations that Ollama's code calls, removed or changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("api.ggml", area="discovery", inputs=("diff", "ollama-code"))
def ggml_api(run: Run) -> list[Draft]:
    return run.ggml_api()
