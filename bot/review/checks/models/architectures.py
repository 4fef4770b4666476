"""Model architectures: names the carried patches add or Ollama's compatibility code uses, renamed or
removed in upstream's architecture table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import archs
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("models.architectures", area="models", inputs=("diff", "patches", "ollama-code"))
def architectures(run: Run) -> list[Draft]:
    change = run.anchored("arch_table")
    if change is None or not change.significant:
        return []
    return archs.arch_drafts(
        archs.architectures(change.old_code),
        archs.architectures(change.new_code),
        archs.patch_architectures(run.ctx.patches),
        change.new_line,
        change.path,
        lambda arch: archs.renamed_model_names(
            arch,
            {p: run.local[p] for p in run.consumers.compat_sources if p in run.local},
            archs.patch_added_lines(run.ctx.patches),
            change.new_code,
        ),
    )
