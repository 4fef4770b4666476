"""ggml's public declarations that Ollama's code calls, removed or changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import symbols
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.run import merged

if TYPE_CHECKING:
    from bot.review.run import Run


@check("api.ggml", area="discovery", inputs=("diff", "ollama-code"))
def ggml_api(run: Run) -> list[Draft]:
    headers = run.significant_changes(symbols.HEADERS)
    if not headers:
        return []
    old_code = {c.old_path: c.old_code for c in headers if c.old_path}
    new_code = {c.new_path: c.new_code for c in headers if c.new_path}
    return symbols.symbol_drafts(
        merged(old_code, symbols.declarations),
        merged(new_code, symbols.declarations),
        symbols.ollama_uses(run.local),
        run.where_now,
    )
