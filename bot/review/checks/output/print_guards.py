"""A line Ollama matches, printed once per item of a collection the bump now fills under other conditions or
puts in another order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import printguards
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("output.print-guards", area="discovery", inputs=("diff", "inventory", "ollama-build"))
def print_guards(run: Run) -> list[Draft]:
    return printguards.guard_drafts(
        run.c_changes, run.printing, lambda: run.contracts.launch, run.named_programs, run.local
    )
