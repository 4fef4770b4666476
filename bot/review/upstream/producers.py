"""What upstream's tree at one ref produces, as plain data with file and line: the HTTP routes llama-server
registers, the JSON fields its sources read from a request and emit in a response or stream chunk, the flags
and environment variables each program takes (its argument table, else the `"--flag"` literals its own
sources compare), the names upstream's CMake declares, reads, defines and looks for, and its presets.

What a program prints is matched on demand (`printed`), over the print templates `bot.review.producers`
extracts: a pattern names a few lines worth reading, the templates of the whole tree are many.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

from bot.review.cmake import commands
from bot.review.flags import Flag as ArgFlag
from bot.review.flags import flag_table
from bot.review.producers import CALL_LOOKBEHIND, SourceFile, Template
from bot.review.source import c_unescape, code_text, split_args
from bot.review.upstream.anchors import ROUTE, SERVER, Anchors, find_anchors
from bot.review.upstream.tree import UpstreamTree, is_cmake

_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
_LITERALS = re.compile(r'"(?:\\.|[^"\\\n])*"(?:\s*"(?:\\.|[^"\\\n])*")*')  # adjacent literals: one string
FLAG_LITERAL = re.compile(r'"(--?[A-Za-z][\w-]*)"')
_GETENV = re.compile(r'\b(?:getenv|_wgetenv|secure_getenv|GetEnvironmentVariable\w*)\s*\(\s*L?"(\w+)"')
_JSON_VALUE = re.compile(r"\bjson_value\s*\(")
_READ = re.compile(
    r'(?:\.|->)\s*(?:at|contains|find|count|value|get|erase)\s*\(\s*"(\w+)"|\[\s*"(\w+)"\s*\](?!\s*=[^=])'
)
_SCHEMA = re.compile(r'\bnew\s+\w+\s*\(\s*"(\w+)"')  # a schema entry: `new field_num("top_k", params.top_k)`
_EMIT = re.compile(
    r'\{\s*(?:[\w.!]+\s*\?\s*"(\w+)"\s*:\s*)?"(\w+)"\s*,|\[\s*"(\w+)"\s*\]\s*=[^=]|\b(?:emplace|push_back|set)\s*\(\s*"(\w+)"\s*,'
)
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+"((?:\\.|[^"\\\n])*)"[ \t]*$', re.MULTILINE)
# A named string constant: `constexpr char KEY[] = "x";`, `static const char * KEY = "x";`
_NAMED = re.compile(r'\bconst(?:expr)?\b[\w\s*]*?\b(\w+)\s*(?:\[\s*\])?\s*=\s*"(\w+)"\s*;')
_READ_NAMED = re.compile(
    r"(?:(?:\.|->)\s*(?:at|contains|find|count|value|get)\s*\(|\bjson_value\s*\(\s*\w+\s*,|\[)\s*(\w+)\s*[,)\]]"
)
_FUNC_PREFIX = re.compile(r"([A-Za-z_]\w*):")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DECLARING = frozenset(["option", "cmake_dependent_option"])
_DEFINING = re.compile(r"^\w*add_\w*(?:library|executable|target)\w*$")
MAX_ARG_CHARS = 2_000  # a route registration or a json_value call is read this far


@dataclass(frozen=True)
class Place:
    path: str
    line: int

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line}

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Route:
    method: str  # upper case
    path: str
    handler: str  # the registration's handler expression
    place: Place

    @property
    def endpoint(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class FieldUse:
    """A JSON field a source reads (with the default the code writes, if any) or emits."""

    name: str
    default: str
    place: Place


@dataclass(frozen=True)
class Producers:
    """Everything the join looks up, at one ref."""

    tree: UpstreamTree
    anchors: Anchors
    routes: tuple[Route, ...]
    reads: Mapping[str, tuple[FieldUse, ...]]  # field name -> reads by llama-server's sources, own first
    emits: Mapping[str, tuple[FieldUse, ...]]  # field name -> emits by llama-server's sources, own first
    flags: Mapping[str, Mapping[str, Place]]  # program -> flag -> where it is taken
    env: Mapping[str, Mapping[str, Place]]  # program -> environment variable -> where it is read
    declared: Mapping[str, Place]  # CMake option or cache variable -> where declared
    cmake_words: Mapping[str, Place]  # every name a CMake file spells -> its first place
    targets: Mapping[str, Place]  # target -> where defined
    packages: Mapping[str, Place]  # find_package names
    programs: Mapping[str, Place]  # find_program names
    presets: Mapping[str, Place]
    defines: Mapping[str, tuple[str, ...]]  # string macros -> their values

    @property
    def ref(self) -> str:
        return self.tree.ref


def read_producers(
    tree: UpstreamTree, programs: Iterable[str], hints: Mapping[str, str] | None = None
) -> Producers:
    """The producer model of one tree, for llama-server and the other programs named."""
    anchors = find_anchors(tree, programs, hints)
    texts = tree.texts
    server_paths = _server_paths(anchors)
    return Producers(
        tree=tree,
        anchors=anchors,
        routes=tuple(r for p in anchors.routes.paths for r in routes(p, texts[p])),
        reads=_index(f for p in server_paths for f in field_reads(p, texts[p])),
        emits=_index(f for p in server_paths for f in field_emits(p, texts[p])),
        flags={name: _program_flags(tree, anchors, name) for name in anchors.programs},
        env={name: _program_env(tree, anchors, name) for name in anchors.programs},
        **_build_names(tree, anchors),
        defines=string_defines(tree),
    )


def _build_names(tree: UpstreamTree, anchors: Anchors) -> dict[str, dict[str, Place]]:
    """What upstream's CMake declares, spells, defines and looks for, and the presets it has."""
    cmake = {p: t for p, t in tree.texts.items() if is_cmake(p) and not p.endswith(".json")}
    defined = [(t.name, Place(t.path, t.line)) for t in anchors.targets.values()]
    return {
        "declared": _first(_declared(cmake)),
        "cmake_words": _first(_spelled(cmake)),
        "targets": _first([*_defined(cmake), *defined]),
        "packages": _first(_looked_for(cmake, "find_package")),
        "programs": _first(_programs(cmake)),
        "presets": _first(_presets(tree)),
    }


def _spelled(cmake: Mapping[str, str]) -> Iterator[tuple[str, Place]]:
    for path, text in cmake.items():
        for number, word in _words(text):
            yield word, Place(path, number)


def _presets(tree: UpstreamTree) -> Iterator[tuple[str, Place]]:
    for path, text in tree.texts.items():
        if path.endswith("CMakePresets.json"):
            yield from ((name, Place(path, line)) for name, line in preset_names(text))


def _server_paths(anchors: Anchors) -> list[str]:
    """llama-server's sources, its own directory's first: a field read there is read by a handler."""
    own = anchors.server.paths
    return [*own, *(p for p in anchors.programs[SERVER].paths if p not in own)]


def _index(uses: Iterable[FieldUse]) -> dict[str, tuple[FieldUse, ...]]:
    found: dict[str, list[FieldUse]] = {}
    for use in uses:
        found.setdefault(use.name, []).append(use)
    return {name: tuple(found_uses) for name, found_uses in found.items()}


def _first(pairs: Iterable[tuple[str, Place]]) -> dict[str, Place]:
    found: dict[str, Place] = {}
    for name, place in pairs:
        found.setdefault(name, place)
    return found


class Lines:
    """Line numbers of offsets in one text."""

    def __init__(self, text: str):
        self.starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]

    def line(self, offset: int) -> int:
        from bisect import bisect_right

        return bisect_right(self.starts, offset)


def routes(path: str, text: str) -> Iterator[Route]:
    """The routes a source registers: `.post("/x", handler)`, `->Get("/x", ...)`, with the handler
    expression (spaces squeezed)."""
    lines = Lines(text)
    for m in ROUTE.finditer(text):
        args, _ = split_args(text[m.start(2) : m.start(2) + MAX_ARG_CHARS], 0)
        handler = " ".join(args[1].split()) if len(args) > 1 else ""
        yield Route(m[1].upper(), m[3], handler, Place(path, lines.line(m.start())))


def field_reads(path: str, text: str) -> Iterator[FieldUse]:
    """The JSON fields a source reads: `json_value(body, "x", default)` (with its default), `.at("x")`,
    `.contains("x")`, `.find("x")`, `.value("x", ...)`, `body["x"]` not assigned to, and the entries of a
    request schema (`new field_num("x", params.x)`, the member whose value is the default)."""
    if '"' not in text:
        return
    lines = Lines(text)
    for m in _JSON_VALUE.finditer(text):
        args, _ = split_args(text[m.end() - 1 : m.end() - 1 + MAX_ARG_CHARS], 0)
        name = args[1].strip() if len(args) > 1 else ""
        if _STRING.fullmatch(name):
            yield FieldUse(
                name[1:-1], args[2].strip() if len(args) > 2 else "", Place(path, lines.line(m.start()))
            )
    for m in _SCHEMA.finditer(text):
        args, _ = split_args(text[m.end() - 1 : m.end() - 1 + MAX_ARG_CHARS], 0)
        default = args[1].strip() if len(args) > 1 else ""
        yield FieldUse(m[1], default, Place(path, lines.line(m.start())))
    for m in _READ.finditer(text):
        yield FieldUse(m[1] or m[2], "", Place(path, lines.line(m.start())))
    yield from _named_reads(path, text, lines)


def _named_reads(path: str, text: str, lines: Lines) -> Iterator[FieldUse]:
    """Reads through a named string constant: `body.contains(JSON_KEY)` after `constexpr char JSON_KEY[] = "x"`."""
    named = dict(_NAMED.findall(text)) if "const" in text else {}
    if not named:
        return
    for m in _READ_NAMED.finditer(text):
        if m[1] in named:
            yield FieldUse(named[m[1]], "", Place(path, lines.line(m.start())))


def field_emits(path: str, text: str) -> Iterator[FieldUse]:
    """The JSON fields a source writes: `{"x", value}` in an initializer, `res["x"] = ...`, `.emplace("x", ...)`."""
    if '"' not in text:
        return
    lines = Lines(text)
    for m in _EMIT.finditer(text):
        place = Place(path, lines.line(m.start()))
        yield from (FieldUse(name, "", place) for name in m.groups() if name)


def _program_flags(tree: UpstreamTree, anchors: Anchors, program: str) -> dict[str, Place]:
    """The flags a program takes: the argument table's when the program is built with it, and the `"--flag"`
    literals of its own sources."""
    found: dict[str, Place] = {}
    scope = set(anchors.programs[program].paths)
    for path in anchors.arg_table.paths:
        if path in scope:
            found.update((name, Place(path, f.line)) for name, f in _arg_table(tree, path).items())
    for path in anchors.own.get(program, ()):
        found.update(_literal_flags(path, tree.texts[path], found))
    return found


def _arg_table(tree: UpstreamTree, path: str) -> Mapping[str, ArgFlag]:
    """An argument table file's flags by spelling, read as the flag checks read it."""
    return flag_table(code_text(tree.texts[path], path))


def _literal_flags(path: str, text: str, known: Mapping[str, Place]) -> Iterator[tuple[str, Place]]:
    lines = Lines(text)
    for m in FLAG_LITERAL.finditer(text):
        if m[1] not in known:
            yield m[1], Place(path, lines.line(m.start()))


def _program_env(tree: UpstreamTree, anchors: Anchors, program: str) -> dict[str, Place]:
    """The environment a program reads: `getenv("X")` in any of its sources, and its argument table's
    environment names."""
    found: dict[str, Place] = {}
    scope = anchors.programs[program].paths
    for path in anchors.arg_table.paths:
        if path in scope:
            found.update((env, Place(path, f.line)) for f in _arg_table(tree, path).values() for env in f.env)
    for path in scope:
        text = tree.texts[path]
        if "getenv" in text or "GetEnvironmentVariable" in text:
            lines = Lines(text)
            for m in _GETENV.finditer(text):
                found.setdefault(m[1], Place(path, lines.line(m.start())))
    return found


def _words(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), start=1):
        for word in _WORD.findall(line):
            yield number, word


def _declared(cmake: Mapping[str, str]) -> Iterator[tuple[str, Place]]:
    """`option(NAME`, `cmake_dependent_option(NAME`, `set(NAME ... CACHE ...)`."""
    for path, text in cmake.items():
        for c in commands(text):
            if c.args and (c.name in _DECLARING or (c.name == "set" and "CACHE" in c.args[1:])):
                yield c.args[0], Place(path, c.line)


def _defined(cmake: Mapping[str, str]) -> Iterator[tuple[str, Place]]:
    """Targets: the first argument of `add_library`, `add_executable`, `add_custom_target` and of the
    project's own functions named like them (`ggml_add_backend_library(ggml-cuda ...)`), and the names
    `install(TARGETS ...)` installs."""
    for path, text in cmake.items():
        for c in commands(text):
            if c.args and "$" not in c.args[0] and _DEFINING.match(c.name):
                yield c.args[0], Place(path, c.line)
            elif c.name == "install" and c.args[:1] == ("TARGETS",):
                yield from ((a, Place(path, c.line)) for a in c.args[1:] if "$" not in a)


def _looked_for(cmake: Mapping[str, str], command: str) -> Iterator[tuple[str, Place]]:
    for path, text in cmake.items():
        for c in commands(text):
            if c.name == command and c.args:
                yield c.args[0], Place(path, c.line)


def _programs(cmake: Mapping[str, str]) -> Iterator[tuple[str, Place]]:
    """The programs `find_program(VAR NAMES a b ...)` (or `find_program(VAR a)`) looks for."""
    for path, text in cmake.items():
        for c in commands(text):
            if c.name == "find_program" and len(c.args) > 1:
                names = c.args[2:] if c.args[1] == "NAMES" else c.args[1:2]
                for name in names:
                    if name.isupper() and name != name.lower():
                        break
                    yield name, Place(path, c.line)


def preset_names(text: str) -> list[tuple[str, int]]:
    """The presets a CMakePresets.json defines, each with the line of its name; none when it is no JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    names = (
        [
            p["name"]
            for key, value in data.items()
            if key.endswith("Presets") and isinstance(value, list)
            for p in value
            if isinstance(p, dict) and isinstance(p.get("name"), str)
        ]
        if isinstance(data, dict)
        else []
    )
    lines = text.split("\n")
    return [(name, _line_naming(lines, name)) for name in names]


def _line_naming(lines: list[str], name: str) -> int:
    needle = f'"{name}"'
    return next((n for n, line in enumerate(lines, start=1) if needle in line and '"name"' in line), 1)


# --- what a program prints, matched on demand ---------------------------------------------------------


@dataclass(frozen=True)
class Needles:
    """What a pattern asks of a text: literal runs, in order, all of them in one template or literal."""

    runs: tuple[str, ...]
    any_case: bool
    whole_literal: bool  # a constant: one string literal holds it; a regexp: one print template, in order


def constant_needles(value: str, any_case: bool) -> Needles:
    return Needles((value.lower() if any_case else value,), any_case, True)


def regexp_needles(pattern: str) -> Needles | None:
    """The literal text a regular expression spells outside its groups, as runs split at whitespace and
    wildcards; None when it does not parse. What a group captures may come from a printed value."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError):
        return None
    any_case = bool(parsed.state.flags & re.IGNORECASE)
    runs: list[str] = []
    current: list[str] = []
    for op, arg in parsed:
        if op is sre_constants.LITERAL and not chr(arg).isspace():
            current.append(chr(arg))
            continue
        runs.append("".join(current))
        current = []
    runs.append("".join(current))
    runs = [r.lower() if any_case else r for r in runs if r]
    return Needles(tuple(runs), any_case, False)


def printed(
    tree: UpstreamTree, paths: Iterable[str], needles: Needles, defines: Mapping[str, tuple[str, ...]]
) -> list[Place]:
    """Where a source of `paths` can print the needles: a string literal holding a constant, else a print
    template holding the runs in order, a `__func__` slot read as the function around it and a macro any
    source `#define`s as a string (`GGML_CUDA_NAME " error: %s"`) as its value the needles name."""
    if not needles.runs:
        return []
    longest = max(needles.runs, key=len)
    probe = max(longest.split(), key=len) if longest.strip() else longest  # a literal may be split at a space
    macros = _relevant_macros(defines, needles)
    keys = [*macros, _function_named(longest)]
    found: list[Place] = []
    for path in paths:
        text = tree.texts[path]
        if probe in _cased(text, needles.any_case) or any(k in text for k in keys):
            found += _matches(path, text, needles, longest, macros)
            if len(found) >= 3:
                break
    return found


def _relevant_macros(defines: Mapping[str, tuple[str, ...]], needles: Needles) -> dict[str, str]:
    """The string macros with a value some run holds (the first such value of each)."""
    chosen: dict[str, str] = {}
    for name, values in defines.items():
        value = next(
            (v for v in values if len(v) > 1 and any(_cased(v, needles.any_case) in r for r in needles.runs)),
            None,
        )
        if value is not None:
            chosen[name] = value
    return chosen


def string_defines(tree: UpstreamTree) -> dict[str, tuple[str, ...]]:
    """Every string macro of the tree's sources with its values (one per `#if` branch that defines it)."""
    found: dict[str, dict[str, None]] = {}
    for text in tree.texts.values():
        if "define" in text:
            for m in _DEFINE.finditer(text):
                found.setdefault(m[1], {})[c_unescape(m[2])] = None
    return {name: tuple(values) for name, values in found.items()}


def _leading_function(run: str) -> str | None:
    """The function a run like `common_params_fit_impl: ...` may name through `__func__`."""
    m = _FUNC_PREFIX.match(run)
    return m[1] if m else None


def _function_named(run: str) -> str:
    name = _leading_function(run)
    return f"{name}(" if name else "\x00"


def _matches(path: str, text: str, needles: Needles, longest: str, macros: Mapping[str, str]) -> list[Place]:
    if needles.whole_literal:
        literal = _literals_holding(path, text, longest, needles.any_case)
        if literal:
            return literal
    source = SourceFile(text, path)
    source.__dict__["defines"] = {**macros, **source.defines}  # the cached property, with the tree's macros
    ranges = _candidate_ranges(source, longest, needles.any_case, macros)
    return [Place(path, t.line) for t in source.templates_in(ranges) if _in_order(t, needles)][:3]


def _literals_holding(path: str, text: str, value: str, any_case: bool) -> list[Place]:
    """Where a string literal holds the value, adjacent literals joined as C joins them."""
    lines = Lines(text)
    found = []
    for m in _LITERALS.finditer(text):
        joined = "".join(c_unescape(body) for body in _STRING.findall(m[0]))
        if value in _cased(joined, any_case):
            found.append(Place(path, lines.line(m.start())))
            if len(found) >= 3:
                break
    return found


def _cased(text: str, any_case: bool) -> str:
    return text.lower() if any_case else text


def _candidate_ranges(
    source: SourceFile, run: str, any_case: bool, macros: Mapping[str, str]
) -> list[tuple[int, int]]:
    """The lines around each line holding the run or a macro whose value it holds, and the whole function
    the run may name."""
    ranges = []
    for number, line in enumerate(source.lines, start=1):
        if run in _cased(line, any_case) or any(m in line for m in macros):
            ranges.append((max(1, number - CALL_LOOKBEHIND), number))
    name = _leading_function(run)
    span = source.function_span(name=name) if name else None
    return ranges + ([span] if span else [])


def _in_order(template: Template, needles: Needles) -> bool:
    """Whether the template's literal text holds every run, in order, none across a slot."""
    pieces = [p if isinstance(p, str) else "\x00" for p in template.pieces]
    text = _cased("".join(pieces), needles.any_case)
    at = 0
    for run in needles.runs:
        at = text.find(run, at)
        if at < 0:
            return False
        at += len(run)
    return True
