"""The checklist's CPU build box: whether the bump changes what Ollama's build does, and which change.

Reading the diff cannot tell how upstream's CMake or the tools it runs behave in Ollama's configuration; a
build can. The box names the upstream build files the bump changes (with the commits that changed them),
the rebuilt patches and Ollama's own build files, and what became of the `auto` platforms.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from bot.decisions.validation import AutoValidation, check_name
from bot.model import REBUILT, BuildChange, Report
from bot.render.items import Item
from bot.render.markdown import code
from bot.render.words import plural

# Ollama's files whose edit is worth a build, by kind wherever they are (fnmatch's `*` crosses directories):
# its CMake and presets files, the carried patches, and the C and C++ sources it compiles with upstream
BUILD_TRIGGERS = (
    "*CMakeLists.txt",
    "*.cmake",
    "*CMakePresets.json",
    "*.patch",
    "*.c",
    "*.cc",
    "*.cpp",
    "*.h",
    "*.hpp",
)
BUILD_COMMAND = "Build the CPU target (`cmake --build build/llama-server-cpu --target llama-server`)"
NAMED_FILES = 3  # files named in the box; the rest are counted
_HELD = {
    "fork": "not started for a fork's commit: comment {command}",
    "approval": "not started, as nobody with write access pushed or approved this commit: comment {command}",
    "failed": "the dispatch failed (see {checks}): comment {command} to try again",
    "patches": "{checks} {starts} once the committed patches apply",
}


def _joined(parts: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _listed(names: list[str]) -> str:
    """The names joined; past NAMED_FILES, the first ones and how many more."""
    more = len(names) - NAMED_FILES
    return _joined(names[:NAMED_FILES] + ([plural(more, "more file")] if more > 0 else []))


def _named(change: BuildChange) -> str:
    """An upstream build file with the commits that changed it, linked."""
    commits = ", ".join(f"[`{c.sha[:10]}`]({c.url})" for c in change.commits)
    return code(change.path) + (f" ({commits})" if commits else "")


def _build_reasons(report: Report, changed: Iterable[str]) -> list[str]:
    """What makes a build worth running: upstream build files Ollama's build uses, rebuilt patches, or this
    change's own edits to Ollama's build files and compat sources."""
    upstream, local = report.build_changes, _build_edits(changed)
    reasons = [f"upstream changed {_listed([_named(c) for c in upstream])}"] if upstream else []
    if any(p.status in REBUILT for pin in report.pins for p in pin.patches):
        reasons.append("the patches are rebuilt")
    if local:
        reasons.append(f"this change edits {_listed([code(path) for path in local])}")
    return reasons


def _build_edits(changed: Iterable[str]) -> list[str]:
    """The changed paths that are Ollama's build files or compat sources, in path order (the pull request's
    paths may come as a set: the box must read the same on every run)."""
    return sorted(path for path in changed if any(fnmatchcase(path, p) for p in BUILD_TRIGGERS))


def _auto_notes(auto: AutoValidation | None, prefix: str | None) -> list[str]:
    """What became of the `auto` platforms: dispatched, or not started and why (with the command)."""
    if auto is None:
        return []
    notes = []
    if auto.dispatched:
        notes.append("dispatched as " + ", ".join(f"`{check_name(p)}`" for p in auto.dispatched))
    if auto.held:
        checks = ", ".join(f"`{check_name(p)}`" for p in auto.held)
        command = f"`{prefix} validate {' '.join(auto.held)}`"
        starts = "starts" if len(auto.held) == 1 else "start"
        notes.append(_HELD[auto.why].format(checks=checks, command=command, starts=starts))
    return notes


def build_item(
    report: Report, changed: Iterable[str], auto: AutoValidation | None, prefix: str | None
) -> Item:
    """The CPU build's box: why a build is worth running and what the `auto` platforms did, or that
    nothing of Ollama's build changed upstream."""
    reasons = _build_reasons(report, changed)
    notes = "".join(f"; {note}" for note in _auto_notes(auto, prefix))  # a "bump" platform runs either way
    if not reasons:
        return Item(
            "build-cpu",
            f"{BUILD_COMMAND}: upstream changed no CMake file or build tool Ollama's build uses{notes}",
        )
    return Item("build-cpu", f"{BUILD_COMMAND}: worth running, as {_joined(reasons)}{notes}")
