"""A parameter of an upstream function a carried patch's code names bare that the function no longer
takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import hookparams
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("compat.hook-parameters", area="models", inputs=("diff", "patches"))
def hook_parameters(run: Run) -> list[Draft]:
    return hookparams.parameter_drafts(run.hook_names, run.by_old_path)
