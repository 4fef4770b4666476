"""Errors that now end the configure step of a build Ollama makes: a `message(FATAL_ERROR ...)` upstream's
CMake reaches through branches Ollama's settings surely take (`if (NOT LLAMA_SUBPROCESS)` where Ollama sets it
OFF; `if (ARCH MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS 61)` for an item of the CUDA architectures a preset
lists), which the old ref did not have for that build. Each of Ollama's presets is one build, walked with
its own variables."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.settings import preset_builds
from bot.review.consumers.upstream_build import Stop, configure_stops

if TYPE_CHECKING:
    from bot.review.run import Run

MAX_MESSAGE_SHOWN = 160
MAX_BUILDS = 64  # presets walked one by one (the first in their files' order)
MAX_BUILDS_SHOWN = 6
_NAME = re.compile(r"[A-Za-z_]\w*")


@check(
    "build.configure-errors",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def configure_errors(run: Run) -> list[Draft]:
    old_texts, new_texts = run.cmake_texts
    options = run.consumers.options
    builds = dict(
        list(preset_builds(run.local, list(run.local), run.option_names.pattern).items())[:MAX_BUILDS]
    )
    before = {
        (s.path, s.message, build)
        for s in configure_stops(old_texts, list(old_texts), options, builds)
        for build in s.builds or ("",)
    }
    new: dict[tuple[str, int, str], Stop] = {}
    for stop in configure_stops(new_texts, list(new_texts), options, builds):
        reached = tuple(b for b in stop.builds or ("",) if (stop.path, stop.message, b) not in before)
        if reached:
            key = (stop.path, stop.line, stop.message)
            known = new.setdefault(key, replace(stop, builds=()))
            new[key] = replace(known, builds=tuple(dict.fromkeys((*known.builds, *reached))))
    return [run.weighed_by_build(_draft(run, stop, len(builds))) for stop in new.values()]


def _draft(run: Run, stop: Stop, builds: int) -> Draft:
    names = dict.fromkeys(_NAME.findall(" ".join(stop.conditions)))
    set_here = {
        name: _presets_first(run.ollama_settings[name]) for name in names if name in run.ollama_settings
    }
    where = "; ".join(f"{code_span(name)} at {_places(refs)}" for name, refs in set_here.items())
    conditions = " and ".join(code_span(c) for c in stop.conditions) or "no condition"
    detail = (
        f"At the new ref {code_span(f'{stop.path}:{stop.line}')} ends CMake's configure step with "
        f"{code_span(_shortened(stop.message))}, under {conditions}, which {_meeting(stop.builds, builds)}"
        + (f" (Ollama's build sets {where})" if where else "")
        + ". The old ref had no such error there: that build now fails before it compiles anything. Change "
        "the setting, or carry a patch."
    )
    return Draft(
        "build",
        "high",
        f"Ollama's build now stops configuring upstream: a `FATAL_ERROR` in {code_span(stop.path)}",
        detail,
        stop.path,
        stop.line,
        local_refs=tuple(r for refs in set_here.values() for r in refs),
        cause=f"configure-stop:{stop.path}:{stop.message}",
    )


def _meeting(reached: tuple[str, ...], builds: int) -> str:
    """Which builds of Ollama's meet an error: every one, or the presets named."""
    named = [b for b in reached if b]
    if not named or len(named) == builds:
        return "every build Ollama makes meets"
    shown = ", ".join(code_span(b) for b in named[:MAX_BUILDS_SHOWN])
    more = f" and {len(named) - MAX_BUILDS_SHOWN} more" if len(named) > MAX_BUILDS_SHOWN else ""
    if len(named) == 1:
        return f"the build of Ollama's preset {shown} meets"
    return f"the builds of Ollama's presets {shown}{more} meet"


def _presets_first(refs: Sequence[LocalRef]) -> list[LocalRef]:
    """Where Ollama sets a variable, its presets (the builds walked) first."""
    return sorted(refs, key=lambda r: not r.path.endswith("CMakePresets.json"))


def _places(refs: Sequence[LocalRef]) -> str:
    return ", ".join(code_span(f"{r.path}:{r.line}") for r in refs[:2])


def _shortened(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_SHOWN else message[:MAX_MESSAGE_SHOWN] + "…"
