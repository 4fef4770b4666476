"""Build-time generators: the steps upstream's CMake runs and the in-tree generators' sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import generators as steps
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.run import SignificantPaths, gathered, merged

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.generators", area="build", inputs=("cmake", "ollama-build"), applies=lambda run: run.cmake_changed
)
def generators(run: Run) -> list[Draft]:
    old_texts, new_texts = run.cmake_texts
    drafts = steps.generator_drafts(
        gathered(old_texts, steps.steps),
        gathered(new_texts, steps.steps),
        merged(new_texts, steps.target_sources),
        SignificantPaths(run.by_path),
    )
    return [run.weighed_by_build(d) for d in drafts]
