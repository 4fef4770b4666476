"""Upstream cache options added, removed, renamed or re-defaulted, against what Ollama's build sets (the
option names are the profile's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("build.options", area="build", inputs=("cmake", "ollama-build"), applies=lambda run: run.cmake_changed)
def options(run: Run) -> list[Draft]:
    return run.options(run.option_names, run.option_built)
