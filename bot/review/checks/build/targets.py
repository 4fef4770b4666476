"""What Ollama's build names of upstream's: targets it installs, links or tests for, lookups its settings
reach, files and assets it relies on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.buildcontracts import build_contract_drafts
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("build.targets", area="build", inputs=("cmake", "ollama-build"), applies=lambda run: run.cmake_changed)
def targets(run: Run) -> list[Draft]:
    return build_contract_drafts(run)
