"""Upstream cache options added, removed, renamed or re-defaulted, against what Ollama's build sets (the
option names are the profile's)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from bot.review import cmake
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.settings import builds_leaving_default
from bot.review.run import gathered
from bot.review.upstream import optioneffect

if TYPE_CHECKING:
    from bot.review.run import Run


@check("build.options", area="build", inputs=("cmake", "ollama-build"), applies=lambda run: run.cmake_changed)
def options(run: Run) -> list[Draft]:
    old_texts, new_texts = run.cmake_texts
    names = run.option_names.pattern
    return cmake.option_drafts(
        gathered(old_texts, partial(cmake.options, names=names)),
        gathered(new_texts, partial(cmake.options, names=names)),
        cmake.ollama_mentions(run.local, run.option_names),
        run.where_now,
        partial(_built, run),
        run.pin_build_dirs,
        builds_leaving_default(run.local, list(run.local), names, run.consumers.options),
        partial(optioneffect.text_only, new_texts),
        partial(optioneffect.optional_package, new_texts),
    )


def _built(run: Run, option: cmake.Option) -> bool:
    """Whether Ollama's build reads an option's file and can reach it: asked of llama.cpp's consumer model;
    any option of another upstream."""
    if run.ctx.pin.review != "llama.cpp":
        return True
    model = run.consumers
    return model.builds(option.path) and model.built_option(option.name)
