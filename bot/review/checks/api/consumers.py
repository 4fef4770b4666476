"""Declarations the bump changes in its headers that the code of another pin, at its own pin, still uses
the old way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("api.consumers", area="build", inputs=("diff", "consumer-pins"))
def consumer_breaks(run: Run) -> list[Draft]:
    return run.consumer_breaks()
