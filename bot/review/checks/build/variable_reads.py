"""CMake variables Ollama's build sets that a CMake file of its build stops reading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import cmake, cmakereads
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.shared import OLLAMA_CMAKE, OLLAMA_COMMAND_LINES
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.variable-reads",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def variable_reads(run: Run) -> list[Draft]:
    changed = [c for c in run.changes if glob_match(c.path, cmake.CMAKE_FILES) and c.significant]
    return cmakereads.dropped_read_drafts(changed, run.ollama_settings, run.build_reads(), _installed(run))


def _installed(run: Run) -> frozenset[str] | None:
    """The install components Ollama's build and command lines run, when they name them."""
    paths = [p for p in run.local if glob_match(p, OLLAMA_CMAKE) or glob_match(p, OLLAMA_COMMAND_LINES)]
    return cmakereads.installed_components(
        text for p in paths if (text := run.local.get(p)) is not None and "--install" in text
    )
