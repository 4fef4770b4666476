"""Upstream changes near a carried patch's hunks that the patch section says nothing more of."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.patchcontext import patch_context_drafts

if TYPE_CHECKING:
    from bot.review.run import Run


@check("patches.context", area="patch-context", inputs=("diff", "patches"))
def patch_context(run: Run) -> list[Draft]:
    return patch_context_drafts(run.ctx.patches, run.by_old_path, run.ctx.explained)
