"""Build-time generators: the programs upstream's CMake runs during the build, and what they generate.

Ollama builds upstream with its own CMake; a generator that takes new
arguments, whose script or sources changed, or that writes new or moved
assets (shaders, the embedded server UI) can break that build or change
what ends up in the binary.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.cmake import commands

KEYWORDS = frozenset(
    [
        "OUTPUT",
        "COMMAND",
        "DEPENDS",
        "BYPRODUCTS",
        "WORKING_DIRECTORY",
        "COMMENT",
        "VERBATIM",
        "MAIN_DEPENDENCY",
        "IMPLICIT_DEPENDS",
        "DEPFILE",
        "JOB_POOL",
        "JOB_SERVER_AWARE",
        "USES_TERMINAL",
        "COMMAND_EXPAND_LISTS",
        "APPEND",
        "SOURCES",
        "ALL",
        "RESULT_VARIABLE",
        "RESULTS_VARIABLE",
        "OUTPUT_VARIABLE",
        "ERROR_VARIABLE",
        "INPUT_FILE",
        "OUTPUT_FILE",
        "ERROR_FILE",
        "OUTPUT_QUIET",
        "ERROR_QUIET",
        "OUTPUT_STRIP_TRAILING_WHITESPACE",
        "ERROR_STRIP_TRAILING_WHITESPACE",
        "TIMEOUT",
        "COMMAND_ECHO",
        "ENCODING",
        "ECHO_OUTPUT_VARIABLE",
        "ECHO_ERROR_VARIABLE",
        "COMMAND_ERROR_IS_FATAL",
        "TARGET",
        "PRE_BUILD",
        "PRE_LINK",
        "POST_BUILD",
        "CODEGEN",
        "DEPENDS_EXPLICIT_ONLY",
    ]
)
_ROOT_VARS = ("${PROJECT_SOURCE_DIR}", "${CMAKE_SOURCE_DIR}", "${CMAKE_HOME_DIRECTORY}")
_HERE_VARS = ("${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}")
_OUT_VARS = re.compile(r"\$\{(?:CMAKE_CURRENT_BINARY_DIR|CMAKE_BINARY_DIR|PROJECT_BINARY_DIR)\}/?")
_TARGET_FILE = re.compile(r"\$<TARGET_FILE:([\w.-]+)>")


@dataclass(frozen=True)
class Step:
    """One COMMAND of add_custom_command/add_custom_target/execute_process."""

    program: str  # what runs: a script path, an in-tree target, or a tool name
    args: tuple[str, ...]
    outputs: tuple[str, ...]
    path: str
    line: int


def _resolve(arg: str, directory: str) -> str:
    """A source path in the repository for `${CMAKE_CURRENT_SOURCE_DIR}/x`-style arguments."""
    for var in _ROOT_VARS:
        if arg.startswith(var):
            return posixpath.normpath(arg[len(var) :].lstrip("/"))
    for var in _HERE_VARS:
        if arg.startswith(var):
            return posixpath.normpath(posixpath.join(directory, arg[len(var) :].lstrip("/")))
    return arg


def _program(argv: list[str], directory: str) -> str:
    """What a COMMAND really runs: `cmake -P script` and `python script.py` are their scripts."""
    first = argv[0]
    if m := _TARGET_FILE.fullmatch(first):
        return m[1]
    if first in ("${CMAKE_COMMAND}", "cmake") and "-P" in argv[:-1]:
        return _resolve(argv[argv.index("-P") + 1], directory)
    if re.search(r"python", first, re.IGNORECASE) and len(argv) > 1:
        return _resolve(argv[1], directory)
    if first in ("${CMAKE_COMMAND}", "cmake") and len(argv) > 2 and argv[1] == "-E":
        return f"cmake -E {argv[2]}"
    return _resolve(first, directory)


_STEP_COMMANDS = ("add_custom_command", "add_custom_target", "execute_process")


def steps(code: str, path: str) -> list[Step]:
    directory = posixpath.dirname(path)
    found = []
    for c in commands(code):
        if c.name not in _STEP_COMMANDS:
            continue
        outputs, argvs = _outputs_and_commands(c.args)
        found += [
            Step(_program(argv, directory), tuple(argv[1:]), tuple(outputs), path, c.line)
            for argv in argvs
            if argv
        ]
    return found


def _outputs_and_commands(args: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """A command's OUTPUT and BYPRODUCTS paths (binary-dir prefix dropped) and the argv of each COMMAND."""
    outputs: list[str] = []
    argvs: list[list[str]] = []
    mode = None
    for arg in args:
        if arg in KEYWORDS:
            mode = arg
            if arg == "COMMAND":
                argvs.append([])
        elif mode in ("OUTPUT", "BYPRODUCTS"):
            outputs.append(_OUT_VARS.sub("", arg))
        elif mode == "COMMAND":
            argvs[-1].append(arg)
    return outputs, argvs


def target_sources(code: str, path: str) -> dict[str, set[str]]:
    """In-tree executables (generators like vulkan-shaders-gen) and their source files."""
    directory = posixpath.dirname(path)
    found: dict[str, set[str]] = {}
    for c in commands(code):
        if c.name == "add_executable" and c.args:
            found.setdefault(c.args[0], set()).update(
                _source_path(a, directory)
                for a in c.args[1:]
                if a not in ("WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL")
            )
    return found


def _source_path(arg: str, directory: str) -> str:
    """A source argument as a path in the tree; as written when a variable stays unexpanded in it."""
    resolved = _resolve(arg, directory)
    return arg if "$" in resolved else posixpath.normpath(posixpath.join(directory, resolved))


def generator_drafts(
    old: list[Step], new: list[Step], sources: dict[str, set[str]], changed: Container[str]
) -> list[Draft]:
    """Changed arguments, changed generator code, new generators, and new or moved generated assets.

    `sources` are the in-tree generator targets at the new ref; `changed` the upstream
    paths whose code changed between the refs.
    """
    return [*_program_drafts(old, new, sources, changed), *_asset_drafts(old, new)]


def _program_drafts(
    old: list[Step], new: list[Step], sources: dict[str, set[str]], changed: Container[str]
) -> list[Draft]:
    """One item per program the new build runs: the first of new, re-argued, or its code changed."""
    old_by_program: dict[str, set[tuple[str, ...]]] = {}
    for s in old:
        old_by_program.setdefault(s.program, set()).add(s.args)
    drafts: list[Draft] = []
    reported: set[str] = set()
    for s in new:
        if s.program in reported:
            continue
        draft = _call_draft(s, old_by_program.get(s.program)) or _code_draft(s, sources, changed)
        if draft is not None:
            reported.add(s.program)
            drafts.append(draft)
    return drafts


def _call_draft(s: Step, old_args: set[tuple[str, ...]] | None) -> Draft | None:
    """A program the old build did not run (`old_args` None), or one it ran with other arguments."""
    if old_args is None:
        return Draft(
            "build",
            "medium",
            f"New build-time tool or generator: {s.program}",
            f"Upstream's build now runs `{s.program} {' '.join(s.args)}`. Ollama's build "
            "environment must provide it, or the step must be switched off.",
            s.path,
            s.line,
        )
    if s.args in old_args:
        return None
    before = " ".join(min(old_args))
    return Draft(
        "build",
        "medium",
        f"Arguments of build-time generator {s.program} changed",
        f"Was: {code_span(f'{s.program} {before}')}\n\nNow: `{s.program} {' '.join(s.args)}`",
        s.path,
        s.line,
    )


def changed_code(s: Step, sources: Mapping[str, set[str]], changed: Container[str]) -> list[str]:
    """The paths of the step's program (its script, or an in-tree target's sources) that are in `changed`."""
    code = {s.program} | sources.get(s.program, set())
    return sorted(p for p in code if p in changed)


def _code_draft(s: Step, sources: dict[str, set[str]], changed: Container[str]) -> Draft | None:
    """A program whose script or in-tree sources changed upstream: what it generates may differ."""
    touched = changed_code(s, sources, changed)
    if not touched:
        return None
    return Draft(
        "build",
        "medium",
        f"Build-time generator {s.program} changed behaviour",
        f"The build runs {code_span(s.program)}, whose code changed upstream: "
        + ", ".join(code_span(p) for p in touched)
        + ". Check what it generates now.",
        s.path,
        s.line,
    )


def _asset_drafts(old: list[Step], new: list[Step]) -> list[Draft]:
    """Each output new to the build (not one with an unexpanded variable): moved, when the old build
    generated a file of that name elsewhere, else new."""
    old_outputs = {o for s in old for o in s.outputs}
    old_by_name = {posixpath.basename(o): o for o in old_outputs}
    return [
        _asset_draft(s, out, old_by_name.get(posixpath.basename(out)))
        for s in new
        for out in s.outputs
        if out not in old_outputs and "$" not in out
    ]


def _asset_draft(s: Step, out: str, was: str | None) -> Draft:
    name = posixpath.basename(out)
    if was is not None:
        return Draft(
            "build",
            "medium",
            f"Generated asset {name} moved",
            f"{code_span(was)} is now generated as {code_span(out)} (by {code_span(s.program)}).",
            s.path,
            s.line,
        )
    return Draft(
        "build",
        "medium",
        f"New generated asset {name}",
        f"The build now generates {code_span(out)} (by {code_span(s.program)}).",
        s.path,
        s.line,
    )
