"""MLX's build against Ollama's build of it: version guards, linked libraries, installed and generated
files, and the packages upstream looks for (information where the build never reads the file)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.mlx",
    area="build",
    inputs=("cmake", "ollama-build", "mlx-build"),
    applies=lambda run: run.cmake_changed,
)
def mlx_build(run: Run) -> list[Draft]:
    return run.mlx_build()
