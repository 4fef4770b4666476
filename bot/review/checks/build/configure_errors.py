"""Errors that now end the configure step of every build Ollama makes: a `message(FATAL_ERROR ...)` upstream's
CMake reaches through branches Ollama's settings surely take (`if (NOT LLAMA_SUBPROCESS)` where Ollama sets it
OFF), which the old ref did not have."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.upstream_build import Stop, configure_stops

if TYPE_CHECKING:
    from bot.review.run import Run

MAX_MESSAGE_SHOWN = 160
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
    before = {(s.path, s.message) for s in configure_stops(old_texts, list(old_texts), options)}
    return [
        run.weighed_by_build(_draft(run, stop))
        for stop in configure_stops(new_texts, list(new_texts), options)
        if (stop.path, stop.message) not in before
    ]


def _draft(run: Run, stop: Stop) -> Draft:
    names = dict.fromkeys(_NAME.findall(" ".join(stop.conditions)))
    set_here = {name: run.ollama_settings[name] for name in names if name in run.ollama_settings}
    where = "; ".join(f"{code_span(name)} at {_places(refs)}" for name, refs in set_here.items())
    conditions = " and ".join(code_span(c) for c in stop.conditions) or "no condition"
    detail = (
        f"At the new ref {code_span(f'{stop.path}:{stop.line}')} ends CMake's configure step with "
        f"{code_span(_shortened(stop.message))}, under {conditions}, which every build Ollama makes meets"
        + (f" (Ollama's build sets {where})" if where else "")
        + ". The old ref had no such error there: Ollama's build now fails before it compiles anything. Change "
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


def _places(refs: Sequence[LocalRef]) -> str:
    return ", ".join(code_span(f"{r.path}:{r.line}") for r in refs[:2])


def _shortened(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_SHOWN else message[:MAX_MESSAGE_SHOWN] + "…"
