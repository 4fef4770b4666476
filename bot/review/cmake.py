"""CMake: the GGML_*/LLAMA_* cache options, find_package() and find_program() of every upstream
CMakeLists.txt/*.cmake, compared between the refs against what Ollama's build sets.

Ollama configures upstream through these names from its own CMake files,
presets, Dockerfile, workflows and scripts; an option it sets that vanished
is silently ignored, and a new one it does not set takes upstream's default.
"""

from __future__ import annotations

import difflib
import itertools
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cmakelang
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.settings import setting_anchor
from bot.review.consumers.shared import COMMAND_LINE_KINDS
from bot.review.source import globs, refs_by_name

CMAKE_FILES = globs("**/CMakeLists.txt", "**/*.cmake")
# Wherever Ollama's build sets upstream's options: its CMake and presets files, and the files that run build
# commands (bot/review/consumers/shared.py)
OLLAMA_SETTERS = globs(
    "CMakePresets.json",
    "**/CMakePresets.json",
    "CMakeLists.txt",
    "**/CMakeLists.txt",
    "**/*.cmake",
    *COMMAND_LINE_KINDS,
    *(f"**/{kind}" for kind in COMMAND_LINE_KINDS),
)
_FETCHES = ("externalproject_add", "fetchcontent_declare")


@dataclass(frozen=True)
class OptionNames:
    """One upstream's cache options: the pattern of their names."""

    pattern: re.Pattern[str]

    @property
    def mention(self) -> re.Pattern[str]:
        # led by a look-ahead of the names: a pattern that starts with a look-behind is tried at every
        # offset of every file, one that starts with the names' letters only where they stand (3x faster)
        names = self.pattern.pattern
        return re.compile(rf"(?={names})(?:(?<=-D)|(?<![A-Za-z0-9_]))({names})\b")


LLAMA_OPTIONS = OptionNames(re.compile(r"(?:GGML|LLAMA)_[A-Z0-9_]+"))
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


COMMANDS = facts.Extractor("cmake-commands", 1, __name__)


@lru_cache(maxsize=1024)
@facts.by_content(COMMANDS)
def commands(code: str) -> tuple[Command, ...]:
    """CMake command invocations of comment-free text, with their arguments as CMake splits them: parsed
    once per text, since options, packages and generators each walk every CMake file at both refs (and
    kept in the facts store, since most CMake files are the same at the next review)."""
    return tuple(
        Command(cmakelang.name(node), tuple(cmakelang.arguments(node)), cmakelang.line(node))
        for node in cmakelang.commands(cmakelang.parse(code))
    )


@dataclass(frozen=True)
class Option:
    name: str
    doc: str
    default: str  # resolved: `${X}` given as the values the file sets X to, joined by " or "
    path: str
    line: int
    expression: str = ""  # the default as written, when it names a variable, and each value's condition


def _default(value: str) -> str:
    return _BOOL.get(value.upper(), value)


def options(code: str, path: str, names: re.Pattern[str] = LLAMA_OPTIONS.pattern) -> list[Option]:
    """`option()`, `cmake_dependent_option()` and `set(... CACHE ...)` of the names (GGML_*/LLAMA_*), a
    default that is a variable given as the values the file sets it to."""
    found = []
    for c in commands(code):
        read = _OPTION_COMMANDS.get(c.name)
        option = read(c, path) if read is not None and c.args and names.fullmatch(c.args[0]) else None
        if option is not None:
            found.append(_resolved(option, code, boolean=c.name != "set" or "BOOL" in c.args))
    return found


def _resolved(option: Option, code: str, boolean: bool) -> Option:
    """The option with a default `${X}` replaced by the values the file's plain `set(X ...)`s give X, and
    `expression` saying under which of the file's conditions X takes each."""
    m = re.fullmatch(r"\$\{(\w+)\}", option.default)
    branches = _set_values(code, m[1]) if m else None
    if not branches:
        return option
    values = [_default(v) if boolean else v for v, _ in branches]
    decided = "; ".join(
        f"{code_span(value)} {f'where {code_span(_clipped(cond))}' if cond else 'otherwise'}"
        for value, (_, cond) in zip(values, branches, strict=True)
    )
    shown = f"{code_span(option.default)}, which is {decided}"
    return replace(option, default=" or ".join(dict.fromkeys(values)), expression=shown)


MAX_CONDITION_CHARS = 120  # of a condition shown beside a default


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_CONDITION_CHARS else text[: MAX_CONDITION_CHARS - 1] + "…"


def _set_values(code: str, variable: str) -> list[tuple[str, str]] | None:
    """The values plain `set(variable ...)`s of a file give a variable, each with the condition of the
    `if()` branch it is in ("" at the top or in an `else()`, said as "otherwise"); None when another command
    may write it too (`ProcessorCount(X)`, a cache entry), or read it before it is known."""
    values = []
    conditions = _branch_conditions(code)
    for c in commands(code):
        plain_set = c.name == "set" and c.args[:1] == (variable,)
        if plain_set and "CACHE" not in c.args and "PARENT_SCOPE" not in c.args:
            values.append((";".join(c.args[1:]), conditions.get(c.line, "")))
        elif variable in c.args:
            return None
    return values


# Which `if()` branch each command of a file is in: asked once per option whose default is a variable, at
# both refs; kept like the commands themselves.
BRANCHES = facts.Extractor("cmake-branch-conditions", 1, __name__)


@lru_cache(maxsize=256)
@facts.by_content(BRANCHES)
def _branch_conditions(code: str) -> dict[int, str]:
    """The condition of the innermost `if()`/`elseif()` branch each command's line is in; a line at the
    top or in an `else()` is not listed."""
    found: dict[int, str] = {}
    stack: list[tuple[Node, str]] = [(cmakelang.parse(code), "")]
    while stack:
        node, condition = stack.pop()
        if node.type == "normal_command":
            if condition:
                found[cmakelang.line(node)] = condition
            continue
        for child in node.children:
            if child.type in ("if_command", "elseif_command"):
                condition = " ".join(cmakelang.arguments(child))
            elif child.type == "else_command":
                condition = ""
            stack.append((child, condition))
    return found


def _plain_option(c: Command, path: str) -> Option | None:
    """`option(NAME "doc" [default])`: OFF when no default is given."""
    doc = c.args[1] if len(c.args) > 1 else ""
    return Option(c.args[0], doc, _default(c.args[2] if len(c.args) > 2 else "OFF"), path, c.line)


def _dependent_option(c: Command, path: str) -> Option | None:
    """`cmake_dependent_option(NAME "doc" default ...)`."""
    return Option(c.args[0], c.args[1], _default(c.args[2]), path, c.line) if len(c.args) >= 3 else None


def _cache_option(c: Command, path: str) -> Option | None:
    """`set(NAME value... CACHE TYPE "doc")`: a BOOL's value read as ON/OFF."""
    if "CACHE" not in c.args:
        return None
    at = c.args.index("CACHE")
    value = ";".join(c.args[1:at])
    doc = c.args[at + 2] if len(c.args) > at + 2 else ""
    default = _default(value) if c.args[at + 1 : at + 2] == ("BOOL",) else value
    return Option(c.args[0], doc, default, path, c.line)


_OPTION_COMMANDS: dict[str, Callable[[Command, str], Option | None]] = {
    "option": _plain_option,
    "cmake_dependent_option": _dependent_option,
    "set": _cache_option,
}


def packages_and_tools(code: str, path: str) -> dict[str, tuple[str, int]]:
    """{'package X' | 'tool X': (path, line)} for find_package() and find_program() calls."""
    found: dict[str, tuple[str, int]] = {}
    for c in commands(code):
        if c.name == "find_package" and c.args:
            found.setdefault(f"package {c.args[0]}", (path, c.line))
        elif c.name == "find_program" and len(c.args) > 1:
            for name in _program_names(c.args):
                found.setdefault(f"tool {name}", (path, c.line))
    return found


def _program_names(args: tuple[str, ...]) -> list[str]:
    """The programs a find_program(<var> ...) call looks for: the names after NAMES up to the next keyword,
    else its one name."""
    names = args[2:] if args[1] == "NAMES" else args[1:2]
    return list(itertools.takewhile(lambda name: not name.isupper() or name == "NAMES", names))


def ollama_mentions(
    files: Mapping[str, str], names: OptionNames = LLAMA_OPTIONS
) -> dict[str, list[LocalRef]]:
    """Where Ollama's build sets or passes each option name (GGML_*/LLAMA_*)."""
    return refs_by_name(files, OLLAMA_SETTERS, names.mention)


def build_dirs(fetches: Sequence[tuple[str, int]], files: Mapping[str, str]) -> tuple[str, ...]:
    """The directories of Ollama's build where a new option of a pin would be set, from its fetches of the
    pin (CMake file, line): those of the fetches that configure it (one whose CONFIGURE_COMMAND is empty
    only downloads the source), else of every fetch; the whole tree ("") when none was found."""
    configuring = [path for path, line in fetches if _configures(files.get(path), line)]
    dirs = {posixpath.dirname(path) for path in configuring or [path for path, _ in fetches]}
    return tuple(sorted(d + "/" if d else "" for d in dirs)) or ("",)


def _configures(code: str | None, line: int) -> bool:
    """Whether the fetch command at or above `line` of an Ollama CMake file configures what it fetches."""
    fetch = next((c for c in reversed(commands(code or "")) if c.name in _FETCHES and c.line <= line), None)
    if fetch is None or "CONFIGURE_COMMAND" not in fetch.args:
        return True
    return fetch.args[fetch.args.index("CONFIGURE_COMMAND") + 1 :][:1] != ("",)


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
    return f"{code_span(o.name)} ({o.doc or 'no description'}; default {shown_default(o)}), declared in {code_span(o.path)}"


def shown_default(o: Option) -> str:
    """A default as a person reads it: its values, and when it is a variable, which value holds where; an
    empty one as what CMake makes of it."""
    if not o.default:
        return "empty (false where the build tests it)"
    if o.expression:
        return o.expression
    return " or ".join(code_span(v) for v in o.default.split(" or "))


def _off(default: str) -> bool:
    return all(
        v in ("OFF", "") or v.upper() in ("0", "N", "NO", "FALSE", "IGNORE", "NOTFOUND")
        for v in default.split(" or ")
    )


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
    anchor_dirs: Sequence[str] = ("",),
    unset_in: Callable[[str], Sequence[str]] = lambda name: (),
    chooses_text: Callable[[str], tuple[str, ...]] = lambda name: (),
    permits: Callable[[str], str | None] = lambda name: None,
) -> list[Draft]:
    """Added, removed, renamed and re-defaulted options, weighed by whether Ollama sets them (`unset_in`
    names the builds of Ollama's that leave an option it sets elsewhere to upstream's default; one it does
    not set is asked for under `anchor_dirs`). A new or re-defaulted option of code Ollama does not build
    (`built`) says nothing; a removed or renamed one of such code, a new one that defaults off, or one that
    only chooses text (`chooses_text` names the variables whose text it picks) is information, and so is a
    re-defaulted one that only lets a build use a package when the builder has it (`permits` names it)."""
    before, after = _index(old), _index(new)
    added = [after[n][0] for n in after if n not in before]
    return [
        *_removal_drafts([before[n][0] for n in before if n not in after], added, mentions, where_now, built),
        *(
            _new_option_draft(o, built, setting_anchor(mentions, anchor_dirs, o.name), chooses_text(o.name))
            for o in added
            if o.name not in mentions and built(o)
        ),  # one Ollama sets it decided on; one of code Ollama never builds cannot concern it
        *_default_drafts(
            before,
            after,
            mentions,
            built,
            partial(setting_anchor, mentions, anchor_dirs),
            unset_in,
            chooses_text,
            permits,
        ),
    ]


def _weighed(option: Option, severity: str, built: Callable[[Option], bool]) -> str:
    """The severity for an option of code Ollama builds; information otherwise."""
    return severity if built(option) else "info"


def _removal_drafts(
    removed: list[Option],
    added: list[Option],
    mentions: Mapping[str, list[LocalRef]],
    where_now: WhereNow,
    built: Callable[[Option], bool],
) -> list[Draft]:
    """Each removed option, renamed (to an added one like it, taken out of `added`) or removed outright;
    high when Ollama sets it, weighed by the name Ollama sets (the new one is what its build leaves off)."""
    drafts = []
    for gone in removed:
        twin = next((a for a in added if _similar(gone, a)), None)
        sets_it = tuple(mentions.get(gone.name, ()))
        severity = "high" if sets_it else "info"
        if twin is not None:
            added.remove(twin)
            drafts.append(_renamed(gone, twin, sets_it, _weighed(gone if sets_it else twin, severity, built)))
        else:
            drafts.append(_removed(gone, sets_it, _weighed(gone, severity, built), where_now))
    return drafts


def _new_option_draft(
    option: Option, built: Callable[[Option], bool], anchor: LocalRef | None, text: tuple[str, ...]
) -> Draft:
    """A new option Ollama does not set: medium unless it defaults off or only chooses `text`."""
    detail = (
        f"Upstream added {_describe(option)}. Ollama does not set it, so its build now takes the "
        f"default {shown_default(option)}; set it explicitly where Ollama configures the build."
    )
    if text:
        detail = f"Upstream added {_describe(option)}. {_only_text(text)} Ollama's build takes the default."
        return _unset(option, "info", f"New CMake option {option.name} only chooses text", detail, anchor)
    severity = _weighed(option, "info" if _off(option.default) else "medium", built)
    return _unset(option, severity, f"New CMake option {option.name}: decide its value", detail, anchor)


def _only_text(variables: tuple[str, ...]) -> str:
    names = ", ".join(code_span(v) for v in variables)
    return (
        f"All it chooses is the text of {names} (messages, version or description arguments, string "
        "definitions), not what is compiled, linked or found; it matters only where Ollama reads that text."
    )


def _default_drafts(
    before: Mapping[str, list[Option]],
    after: Mapping[str, list[Option]],
    mentions: Mapping[str, list[LocalRef]],
    built: Callable[[Option], bool],
    anchor_of: Callable[[str], LocalRef | None],
    unset_in: Callable[[str], Sequence[str]],
    chooses_text: Callable[[str], tuple[str, ...]],
    permits: Callable[[str], str | None],
) -> list[Draft]:
    """Each option kept whose default changed while some build of Ollama's relies on it: Ollama never sets
    it, or sets it only for some builds (`unset_in` names the others); information when it only chooses
    text."""
    drafts = []
    for name in sorted(set(before) & set(after)):
        relying = unset_in(name) if name in mentions else ("every build",)
        option = after[name][0]
        if _same_defaults(before[name], after[name]) or not relying or not built(option):
            continue  # a default no build of Ollama's reads cannot change what it builds
        old_defaults = ", ".join(sorted({shown_default(o) for o in before[name]}))
        new_defaults = ", ".join(sorted({shown_default(o) for o in after[name]}))
        change = f"The default of {_describe(option)} changed from {old_defaults} to {new_defaults}."
        title = f"Default of CMake option {name} changed"
        if name not in mentions:
            detail = f"{change} Ollama does not set it and so relies on the default."
            draft = _unset(option, "medium", title, detail, anchor_of(name))
        else:
            sets = ", ".join(f"{r.path}:{r.line}" for r in mentions[name][:4])
            detail = (
                f"{change} Ollama sets it only in some builds ({sets}); {_listed(relying)} leave it to the "
                "default, so what they build changes: set it there too, or check that the new default is right."
            )
            draft = Draft(
                "build", "medium", title, detail, option.path, option.line, local_refs=tuple(mentions[name])
            )
        drafts.append(_weighed_by_package(_weighed_by_text(draft, chooses_text(name)), permits(name)))
    return drafts


def _weighed_by_package(draft: Draft, package: str | None) -> Draft:
    """A re-default of an option that only lets a build use an optional `package`: information, saying so
    (a build without the package is the same either way; one that links it anew is the runtime-dependency
    check's)."""
    if package is None:
        return draft
    detail = (
        f"{draft.detail} All it decides is whether a build uses {code_span(package)} when the builder has it "
        f"(`find_package({package})` without REQUIRED, the rest under `if({package}_FOUND)`): a build "
        "without it is the same."
    )
    return replace(draft, severity="info", detail=detail)


def _weighed_by_text(draft: Draft, text: tuple[str, ...]) -> Draft:
    """A draft about an option that only chooses `text`: information, saying so."""
    return replace(draft, severity="info", detail=f"{draft.detail} {_only_text(text)}") if text else draft


def _same_defaults(old: Sequence[Option], new: Sequence[Option]) -> bool:
    """Whether the option takes the same values at both refs (how a condition reads aside)."""
    return {o.default for o in old} == {o.default for o in new}


def _listed(names: Sequence[str], shown: int = 6) -> str:
    listed = ", ".join(code_span(n) for n in names[:shown])
    return (
        ("the builds " if len(names) > 1 else "the build ")
        + listed
        + (f" and {len(names) - shown} more" if len(names) > shown else "")
    )


def dependency_drafts(old: Mapping[str, tuple[str, int]], new: Mapping[str, tuple[str, int]]) -> list[Draft]:
    """New find_package() packages and find_program() tools: every builder of Ollama needs them now."""
    drafts = []
    for key in sorted(set(new) - set(old)):
        kind, name = key.split(" ", 1)
        path, line = new[key]
        what = (
            code_span(f"find_package({name})")
            if kind == "package"
            else f"the tool {code_span(name)} (`find_program`)"
        )
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
