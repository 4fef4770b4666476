"""MLX's build against Ollama's build of it: version guards, linked libraries, installed and generated
files, and the packages upstream looks for (information where the build never reads the file)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from bot.review import mlxbuild
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.checks.build.dependencies import looked_for
from bot.review.checks.build.version_floors import version_floors

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.mlx",
    area="build",
    inputs=("cmake", "ollama-build", "mlx-build"),
    applies=lambda run: run.cmake_changed,
)
def mlx_build(run: Run) -> list[Draft]:
    ollama, upstream = run.mlx_reading
    found = looked_for(run)
    read = [d for d in found if d.path in upstream.built]
    unread = [replace(d, severity="info") for d in found if d.path not in upstream.built]
    return [*mlxbuild.build_drafts(upstream, ollama), *version_floors(run), *read, *unread]
