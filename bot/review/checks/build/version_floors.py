"""Raised minimum CMake and version floors of the upstream files Ollama's build reads."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from bot.review import mlxfloors
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.upstream_build import backend_cmake

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "build.version-floors",
    area="build",
    inputs=("cmake", "mlx-build"),
    applies=lambda run: run.cmake_changed,
)
def version_floors(run: Run) -> list[Draft]:
    """Against the versions Ollama's build files declare or install; the CMake files of the backends Ollama
    builds count as read (upstream adds them through a function, by a name no reading of the files computes)."""
    ollama, upstream = run.mlx_reading
    backends = {p for p in run.cmake_texts[1] if backend_cmake(p) and run.consumers.builds(p)}
    upstream = replace(upstream, built=upstream.built | backends, old_built=upstream.old_built | backends)
    return mlxfloors.version_drafts(upstream, ollama, run.ctx.ollama)
