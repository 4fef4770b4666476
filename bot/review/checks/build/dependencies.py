"""Packages and tools upstream's CMake looks for that it did not before (information where Ollama's build
never reads the file)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import cmake
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.run import merged

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.dependencies",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def dependencies(run: Run) -> list[Draft]:
    return [run.weighed_by_build(d) for d in looked_for(run)]


def looked_for(run: Run) -> list[Draft]:
    """Packages and tools upstream's CMake files look for that they did not before."""
    old_texts, new_texts = run.cmake_texts
    return cmake.dependency_drafts(
        merged(old_texts, cmake.packages_and_tools), merged(new_texts, cmake.packages_and_tools)
    )
