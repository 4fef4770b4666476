"""Lines Ollama reads values from that other code of the program now prints as well."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import logformats
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("output.second-printers", area="server", inputs=("diff", "inventory", "ollama-build", "prints"))
def second_printers(run: Run) -> list[Draft]:
    return logformats.new_printer_drafts(run.c_changes, run.local, run.printing)
