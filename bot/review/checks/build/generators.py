"""Build-time generators: the steps upstream's CMake runs and the in-tree generators' sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.generators", area="build", inputs=("cmake", "ollama-build"), applies=lambda run: run.cmake_changed
)
def generators(run: Run) -> list[Draft]:
    return [run.weighed_by_build(d) for d in run.generators()]
