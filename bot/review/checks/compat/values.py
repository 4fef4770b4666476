"""Enum values Ollama's compatibility code names or produces, and names it writes, that the built code
stops handling or reading."""

from __future__ import annotations

from functools import cache, partial
from typing import TYPE_CHECKING

from bot.review import compat, compatvalues
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("compat.values", area="models", inputs=("diff", "ollama-build"), applies=lambda run: run.compat_used)
def values(run: Run) -> list[Draft]:
    uses = run.consumers.names
    strings_of = compatvalues.value_strings(c for c in run.c_changes if c.path.endswith(compat.HEADERS))
    strings = run.consumers.strings
    elsewhere = cache(partial(compatvalues.Elsewhere, run.changes, strings))
    return [
        draft
        for change in run.built_c_changes()
        for draft in compatvalues.value_drafts(change, uses, strings, strings_of, elsewhere)
    ]
