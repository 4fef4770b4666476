"""Calls in the carried patches whose arguments an upstream parameter inserted before them shifts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import callshifts
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("compat.call-arguments", area="models", inputs=("diff", "patches"))
def call_arguments(run: Run) -> list[Draft]:
    return callshifts.shift_drafts(run.c_changes, run.ctx.patches)
