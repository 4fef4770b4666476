"""Raised minimum CMake and version floors of the upstream files Ollama's build reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import mlxfloors
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.version-floors",
    area="build",
    inputs=("cmake", "mlx-build"),
    applies=lambda run: run.cmake_changed,
)
def version_floors(run: Run) -> list[Draft]:
    """Against the versions Ollama's build files declare or install."""
    ollama, upstream = run.mlx_reading
    return mlxfloors.version_drafts(upstream, ollama, run.ctx.ollama)
