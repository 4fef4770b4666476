"""CMake: the GGML_*/LLAMA_* cache options, find_package() and find_program() of every upstream
CMakeLists.txt/*.cmake, compared between the refs against what Ollama's build sets.

Ollama configures upstream through these names from its own CMake files,
presets, Dockerfile, workflows and scripts; an option it sets that vanished
is silently ignored, and a new one it does not set takes upstream's default.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from bot import cmakelang
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.source import refs_by_name

CMAKE_FILES = ("**/CMakeLists.txt", "**/*.cmake")
OLLAMA_SETTERS = (
    "llama/server/CMakeLists.txt",
    "llama/server/CMakePresets.json",
    "CMakePresets.json",
    "CMakeLists.txt",
    "cmake/*.cmake",
    "Dockerfile",
    ".github/workflows/*",
    "scripts/*",
)


@dataclass(frozen=True)
class OptionNames:
    """One upstream's cache options: their names, where Ollama sets them, where a new one is set."""

    pattern: re.Pattern[str]
    setters: tuple[str, ...]  # Ollama's files that set or pass them
    anchor: str  # the directory of Ollama's build where a new option would be set

    @property
    def mention(self) -> re.Pattern[str]:
        return re.compile(rf"(?:(?<=-D)|(?<![A-Za-z0-9_]))({self.pattern.pattern})\b")


LLAMA_OPTIONS = OptionNames(re.compile(r"(?:GGML|LLAMA)_[A-Z0-9_]+"), OLLAMA_SETTERS, "llama/server/")
MLX_OPTIONS = OptionNames(
    re.compile(r"MLX_[A-Z0-9_]+"),
    ("CMakePresets.json", "CMakeLists.txt", "cmake/**", "Dockerfile", ".github/workflows/*", "scripts/*"),
    "cmake/",
)
_BOOL = {
    "ON": "ON",
    "TRUE": "ON",
    "YES": "ON",
    "Y": "ON",
    "1": "ON",
    "OFF": "OFF",
    "FALSE": "OFF",
    "NO": "OFF",
    "N": "OFF",
    "0": "OFF",
    "": "OFF",
}

WhereNow = Callable[[str, int], "int | None"]  # (old path, old line) -> line at the new ref


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    args: tuple[str, ...]
    line: int


@lru_cache(maxsize=1024)
def commands(code: str) -> tuple[Command, ...]:
    """CMake command invocations of comment-free text, with their arguments as CMake splits them: parsed
    once per text, since options, packages and generators each walk every CMake file at both refs."""
    return tuple(
        Command(cmakelang.name(node), tuple(cmakelang.arguments(node)), cmakelang.line(node))
        for node in cmakelang.commands(cmakelang.parse(code))
    )


@dataclass(frozen=True)
class Option:
    name: str
    doc: str
    default: str
    path: str
    line: int


def _default(value: str) -> str:
    return _BOOL.get(value.upper(), value)


def options(code: str, path: str, names: re.Pattern[str] = LLAMA_OPTIONS.pattern) -> list[Option]:
    """`option()`, `cmake_dependent_option()` and `set(... CACHE ...)` of the names (GGML_*/LLAMA_*)."""
    found = []
    for c in commands(code):
        if not c.args or not names.fullmatch(c.args[0]):
            continue
        if c.name == "option":
            found.append(
                Option(
                    c.args[0],
                    c.args[1] if len(c.args) > 1 else "",
                    _default(c.args[2] if len(c.args) > 2 else "OFF"),
                    path,
                    c.line,
                )
            )
        elif c.name == "cmake_dependent_option" and len(c.args) >= 3:
            found.append(Option(c.args[0], c.args[1], _default(c.args[2]), path, c.line))
        elif c.name == "set" and "CACHE" in c.args:
            at = c.args.index("CACHE")
            value = ";".join(c.args[1:at])
            doc = c.args[at + 2] if len(c.args) > at + 2 else ""
            found.append(
                Option(
                    c.args[0],
                    doc,
                    _default(value) if c.args[at + 1 : at + 2] == ("BOOL",) else value,
                    path,
                    c.line,
                )
            )
    return found


def packages_and_tools(code: str, path: str) -> dict[str, tuple[str, int]]:
    """{'package X' | 'tool X': (path, line)} for find_package() and find_program() calls."""
    found: dict[str, tuple[str, int]] = {}
    for c in commands(code):
        if c.name == "find_package" and c.args:
            found.setdefault(f"package {c.args[0]}", (path, c.line))
        elif c.name == "find_program" and len(c.args) > 1:
            names = c.args[2:] if c.args[1] == "NAMES" else c.args[1:2]
            for name in names:
                if name.isupper() and name not in ("NAMES",):
                    break
                found.setdefault(f"tool {name}", (path, c.line))
    return found


def ollama_mentions(
    files: Mapping[str, str], names: OptionNames = LLAMA_OPTIONS
) -> dict[str, list[LocalRef]]:
    """Where Ollama's build sets or passes each option name (GGML_*/LLAMA_*)."""
    return refs_by_name(files, names.setters, names.mention)


def _similar(a: Option, b: Option) -> bool:
    """A removed and an added option that are probably one option renamed."""

    def stem(name: str) -> str:
        return name.split("_", 1)[1]

    name_ratio = difflib.SequenceMatcher(None, stem(a.name), stem(b.name)).ratio()
    doc_ratio = (
        difflib.SequenceMatcher(None, a.doc.lower(), b.doc.lower()).ratio() if len(a.doc) >= 10 else 0.0
    )
    return name_ratio >= 0.8 or doc_ratio >= 0.85


def _index(opts: list[Option]) -> dict[str, list[Option]]:
    by_name: dict[str, list[Option]] = {}
    for o in opts:
        by_name.setdefault(o.name, []).append(o)
    return by_name


def _describe(o: Option) -> str:
    return f"`{o.name}` ({o.doc or 'no description'}; default `{o.default}`), declared in `{o.path}`"


def _off(default: str) -> bool:
    return default in ("OFF", "") or default.upper() in ("0", "N", "NO", "FALSE", "IGNORE", "NOTFOUND")


def _renamed(gone: Option, twin: Option, sets_it: tuple[LocalRef, ...], severity: str) -> Draft:
    return Draft(
        "build",
        severity,
        f"CMake option {gone.name} renamed to {twin.name}"
        + ("; Ollama still sets the old name" if sets_it else ""),
        f"Upstream replaced {_describe(gone)} by {_describe(twin)}."
        + (" Ollama sets the old name, which CMake now ignores: set the new one." if sets_it else ""),
        twin.path,
        twin.line,
        local_refs=sets_it,
    )


def _removed(gone: Option, sets_it: tuple[LocalRef, ...], severity: str, where_now: WhereNow) -> Draft:
    return Draft(
        "build",
        severity,
        f"CMake option {gone.name} was removed" + ("; Ollama still sets it" if sets_it else ""),
        f"Upstream no longer declares {_describe(gone)}."
        + (" Ollama still sets it, so the setting is silently ignored now." if sets_it else ""),
        gone.path,
        where_now(gone.path, gone.line),
        removed=(gone.path, gone.name),
        local_refs=sets_it,
    )


def _unset(option: Option, severity: str, title: str, detail: str, anchor: LocalRef | None) -> Draft:
    """A new or re-defaulted option Ollama leaves to upstream's default; `anchor` is where it would set it."""
    return Draft(
        "build", severity, title, detail, option.path, option.line, local_refs=(anchor,) if anchor else ()
    )


def option_drafts(
    old: list[Option],
    new: list[Option],
    mentions: Mapping[str, list[LocalRef]],
    where_now: WhereNow,
    built: Callable[[Option], bool] = lambda option: True,
    anchor_dir: str = LLAMA_OPTIONS.anchor,
) -> list[Draft]:
    """Added, removed, renamed and re-defaulted options, weighed by whether Ollama sets them. An option of
    code Ollama does not build (`built`), or a new one that defaults off, is information."""

    def weigh(option: Option, severity: str) -> str:
        return severity if built(option) else "info"

    before, after = _index(old), _index(new)
    removed = [before[n][0] for n in before if n not in after]
    added = [after[n][0] for n in after if n not in before]
    anchor = next(
        (refs[0] for name, refs in sorted(mentions.items()) if refs and refs[0].path.startswith(anchor_dir)),
        None,
    )
    drafts = []
    for gone in removed:
        twin = next((a for a in added if _similar(gone, a)), None)
        sets_it = tuple(mentions.get(gone.name, ()))
        if twin is not None:
            added.remove(twin)
            drafts.append(_renamed(gone, twin, sets_it, weigh(twin, "high" if sets_it else "info")))
        else:
            drafts.append(_removed(gone, sets_it, weigh(gone, "high" if sets_it else "info"), where_now))
    for option in (o for o in added if o.name not in mentions):  # one Ollama sets it decided on
        detail = (
            f"Upstream added {_describe(option)}. Ollama does not set it, so its build now takes the "
            f"default `{option.default}`; set it explicitly where Ollama configures the build."
        )
        severity = weigh(option, "info" if _off(option.default) else "medium")
        drafts.append(
            _unset(option, severity, f"New CMake option {option.name}: decide its value", detail, anchor)
        )
    for name in sorted(set(before) & set(after) - set(mentions)):
        old_defaults = sorted({o.default for o in before[name]})
        new_defaults = sorted({o.default for o in after[name]})
        if old_defaults != new_defaults:
            option = after[name][0]
            detail = (
                f"The default of {_describe(option)} changed from `{', '.join(old_defaults)}` to "
                f"`{', '.join(new_defaults)}`. Ollama does not set it and so relies on the default."
            )
            title = f"Default of CMake option {name} changed"
            drafts.append(_unset(option, weigh(option, "medium"), title, detail, anchor))
    return drafts


def dependency_drafts(old: Mapping[str, tuple[str, int]], new: Mapping[str, tuple[str, int]]) -> list[Draft]:
    """New find_package() packages and find_program() tools: every builder of Ollama needs them now."""
    drafts = []
    for key in sorted(set(new) - set(old)):
        kind, name = key.split(" ", 1)
        path, line = new[key]
        what = f"`find_package({name})`" if kind == "package" else f"the tool `{name}` (`find_program`)"
        drafts.append(
            Draft(
                "build",
                "medium",
                f"New build dependency: {key}",
                f"Upstream's build now looks for {what}. Ollama's build images and CI may need it "
                "installed, or the feature that needs it switched off.",
                path,
                line,
            )
        )
    return drafts
