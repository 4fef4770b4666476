"""Lines Ollama matches that the bump still prints, but at another verbosity or under other conditions.

A line one of Ollama's patterns matches is printed by a call (`LOG_TRC(...)`, or a print of what a helper of
the same file builds) inside the `if`s of its function. The bump can keep the text and change either: a call
of another level (`LOG_DBG`) is filtered out at the verbosity Ollama starts the program with, written to
the other stream, or after the prefix the logger puts before that level's lines; and a print
moved under an `if` it was not under is not printed when Ollama's start does not meet the condition (a test
it already had, refined, is left alone: an error's test is refined often, and its line printed as before).
Neither changes a line of text, so the log-line check sees nothing: this names the line, both levels or both
conditions, Ollama's pattern and the verbosity flag it passes.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial

from tree_sitter import Node

from bot.lang import cpp, syntax
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.argvalues import constants
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.flags import Flag
from bot.review.gopatterns import LogPattern, distinct_refs, program_of, streams_of
from bot.review.logformats import Needles, Program, needles_of
from bot.review.printguards import function_node
from bot.review.producers import SourceFile, Template
from bot.review.samplelines import samples

_CALLS = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"\n]+)"', re.MULTILINE)
_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?[ \t]+([^\n]*)$", re.MULTILINE)
_INTEGER = re.compile(r"^\s*\(?\s*(-?\d+)\s*\)?\s*(?://.*)?$")
INCLUDE_DEPTH = 3  # headers included by headers followed for the macros a call expands through
MACRO_DEPTH = 4  # macros expanded to find a call's verbosity
# a logger's mapping of a library's level to its own verbosity: `case GGML_LOG_LEVEL_INFO: return LOG_LEVEL_TRACE;`
MAPS_LEVEL = re.compile(r"\bcase\s+(\w*LEVEL\w*)\s*:\s*return\s+(\w+)\s*;")
VERBOSITY = "verbosity"  # what a flag's handler sets when it sets the threshold of what is printed
STREAMS = ("stdout", "stderr")
# a logger's choice of stream by level: `fcur = stdout; if (level != GGML_LOG_LEVEL_NONE) { fcur = stderr; }`
_STREAM_BY_LEVEL = re.compile(
    r"\b(?P<stream>\w+)\s*=\s*(?P<default>stdout|stderr)\s*;\s*if\s*\(\s*(?P<by>\w+)\s*(?P<test>==|!=)\s*"
    r"(?P<level>\w+)\s*\)\s*\{?\s*(?P=stream)\s*=\s*(?P<other>stdout|stderr)\s*;"
)
# what the logger writes to that stream before some lines: `if (level != GGML_LOG_LEVEL_NONE && prefix) {
# ... fprintf(fcur, "%sI %s", ...)`, the first conditional write after the choice of stream
_DECORATION = r"\bif\s*\(([^{{}};]*)\)\s*\{{[^}}]*?\b(?:fprintf|fputs)\s*\(\s*{stream}\b"
PLAIN_PRINTS = frozenset({"printf", "fprintf", "puts", "fputs"})  # calls that write their text as it is
# a pattern that matches at the start of a line alone: `^...`, `(?m)^...`, or a prefix test
_ANCHORED = re.compile(r"^(?:\(\?[a-zA-Z]+\))?\^")


def _no_levels() -> Mapping[str, int]:
    return {}


@dataclass(frozen=True)
class StreamRule:
    """The stream the program's logger writes each library level to: `other` for the levels its test holds
    for (`level != GGML_LOG_LEVEL_NONE`), `default` for the rest."""

    default: str
    test: str  # == or !=
    level: str
    other: str
    # the levels the logger writes without the text it puts before a line (`level != GGML_LOG_LEVEL_NONE &&
    # prefix`), all others may get it; None where it puts none before any, or its test is not read
    undecorated: frozenset[str] | None = None

    def of(self, level: str) -> str:
        return self.other if (level == self.level) == (self.test == "==") else self.default

    def decorates(self, level: str) -> bool:
        return self.undecorated is not None and level not in self.undecorated


def _no_streams() -> StreamRule | None:
    return None


@dataclass(frozen=True)
class Upstream:
    """What the detector reads of upstream beyond the changed files, each asked only when needed."""

    read: Callable[[str], str | None]  # a file's comment-free code at the new ref
    flags: Callable[[], Mapping[str, Flag]]  # the argument table at the new ref
    # a library's log levels (`GGML_LOG_LEVEL_INFO`) -> the verbosity the program's logger prints them at
    levels: Callable[[], Mapping[str, int]] = _no_levels
    streams: Callable[[], StreamRule | None] = _no_streams  # the logger's stream by level


@dataclass(frozen=True)
class Reprinted:
    """A line a pattern matches, printed by the same code before and after with another call or under
    other conditions."""

    change: FileChange
    pattern: LogPattern
    function: str
    before: Template
    after: Template
    sample: str  # the line, as the pattern matches it
    before_when: tuple[str, ...]  # the conditions around the print, outermost first
    after_when: tuple[str, ...]


def when_drafts(
    changes: list[FileChange],
    program: Program,
    launches: Callable[[], Sequence[LaunchSetting]],
    upstream: Upstream,
) -> list[Draft]:
    """One medium draft per line Ollama matches that the bump prints at a verbosity Ollama's start filters
    out, or under other conditions, in code of a program whose output Ollama reads."""
    patterns = cache(program.patterns)
    drafts: dict[tuple[str, int | None, str], Draft] = {}
    for change in changes:
        if not _may_change(change, program):
            continue
        for item in _reprinted(change, patterns()):
            if program.reads(change.path, item.pattern):
                for draft in _drafts(item, launches(), upstream):
                    drafts.setdefault((draft.path, draft.line, draft.title), draft)
    return list(drafts.values())


def _may_change(change: FileChange, program: Program) -> bool:
    return bool(
        change.old_path
        and change.new_path
        and cpp.is_c_family(change.path)
        and change.significant
        and program.runs(change.old_path)
    )


def _reprinted(change: FileChange, patterns: list[LogPattern]) -> list[Reprinted]:
    """The prints of the functions the change touches whose line a pattern matches, paired old to new by
    what they print, whose call or conditions changed."""
    needles = needles_of(patterns)
    if not (needles.in_text(change.old_text.lower()) or needles.in_text(change.new_text.lower())):
        return []  # the file spells no line Ollama matches, neither itself nor through a helper of its own
    sources = SourceFile(change.old_text, change.path), SourceFile(change.new_text, change.path)
    found: list[Reprinted] = []
    for name in _touched(change, sources):
        old, new = sources[0].function_span(name=name), sources[1].function_span(name=name)
        if old is None or new is None:
            continue
        if _text(sources[0], old) == _text(sources[1], new):
            continue
        near = _near_changes(change, sources, (old, new))  # a print the change reaches is near it
        if needles.in_text(near) or _calls_a_printing_helper(near, sources[0], needles):
            found += _pairs(change, sources, (old, new), name, patterns)
    return found


NEAR = 12  # lines around a changed line where a print whose call or conditions it changes is


def _near_changes(
    change: FileChange, sources: tuple[SourceFile, SourceFile], spans: tuple[tuple[int, int], tuple[int, int]]
) -> str:
    """The function's text around the change's significant hunks at both refs, lower-case."""
    parts = []
    for hunk in change.significant:
        for source, span, start, count in (
            (sources[0], spans[0], hunk.old_start, hunk.old_count),
            (sources[1], spans[1], hunk.new_start, hunk.new_count),
        ):
            near = (max(span[0], start - NEAR), min(span[1], start + count + NEAR))
            if near[0] <= near[1]:
                parts.append(_text(source, near))
    return "\n".join(parts)


def _text(source: SourceFile, span: tuple[int, int]) -> str:
    return "\n".join(source.lines[span[0] - 1 : span[1]]).lower()


def _touched(change: FileChange, sources: tuple[SourceFile, SourceFile]) -> set[str]:
    """The names of the functions a significant hunk of the change is in, at either ref."""
    names = set()
    for span in change.significant:
        names.add(sources[0].function_at(max(span.old_start, 1)))
        names.add(sources[1].function_at(max(span.new_start, 1)))
    return {n for n in names if n}


def _calls_a_printing_helper(text: str, source: SourceFile, needles: Needles) -> bool:
    """Whether the function's text calls another function the file defines whose text holds a needle of
    Ollama's patterns (a helper that builds a line Ollama matches)."""
    for name in {m[1] for m in _CALLS.finditer(text)} & source.function_names:
        span = source.function_span(name=name)
        if span is not None and needles.in_text(_text(source, span)):
            return True
    return False


def _pairs(
    change: FileChange,
    sources: tuple[SourceFile, SourceFile],
    spans: tuple[tuple[int, int], tuple[int, int]],
    name: str,
    patterns: list[LogPattern],
) -> Iterator[Reprinted]:
    """The prints of one function at both refs that print a line a pattern matches, the n-th print of a
    text before paired with the n-th after, that changed their call or conditions."""
    printing = [_printing(sources[0], spans[0], patterns)]
    if printing[0]:
        printing.append(_printing(sources[1], spans[1], patterns))
    if len(printing) < 2 or not printing[0].keys() & printing[1].keys():
        return  # no matched print at both refs: nothing to parse the function for
    old = function_node(change.old_code_lines, spans[0])
    new = function_node(change.new_code_lines, spans[1])
    if old is None or new is None:
        return
    for key, olds in printing[0].items():
        for (before, pattern, sample), (after, _, _) in zip(olds, printing[1].get(key, []), strict=False):
            when = _around(old, before.line), _around(new, after.line)
            if before.call != after.call or _narrowed(*when):
                yield Reprinted(change, pattern, name, before, after, sample, *when)


def _printing(
    source: SourceFile, span: tuple[int, int], patterns: list[LogPattern]
) -> dict[tuple[str, str], list[tuple[Template, LogPattern, str]]]:
    """The function's prints of a line a pattern matches (written by the print, or built by a helper the
    file defines that the print calls), by what they print and the pattern, in order."""
    found: dict[tuple[str, str], list[tuple[Template, LogPattern, str]]] = {}
    needles = needles_of(patterns)
    for template in source.templates(*span):
        if template.kind != "format" or not _may_print_a_match(template, needles):
            continue
        helpers = cache(partial(_helper_templates, source, template))
        for pattern in patterns:
            line = _printed_line(template, helpers, pattern)
            if line is not None:
                found.setdefault((template.code, pattern.source), []).append((template, pattern, line))
    return found


def _may_print_a_match(template: Template, needles: Needles) -> bool:
    """Whether a print can write a line a pattern matches: its literal text holds a needle, or it prints
    what a call builds (a helper's line)."""
    literal = "".join(p for p in template.pieces if isinstance(p, str)).lower()
    return needles.in_text(literal) or any(not isinstance(p, str) and "(" in p.expr for p in template.pieces)


def _printed_line(
    template: Template, helpers: Callable[[], list[Template]], pattern: LogPattern
) -> str | None:
    """A line the print writes that the pattern matches, its own or one a helper it calls builds."""
    own = samples(template, pattern.regex)
    if own:
        return own[0].line
    for built in helpers():
        lines = samples(built, pattern.regex)
        if lines:
            return lines[0].line
    return None


def _helper_templates(source: SourceFile, template: Template) -> list[Template]:
    """The templates of the functions the file defines that the print calls for a value it prints."""
    called = {
        m[1] for piece in template.pieces if not isinstance(piece, str) for m in _CALLS.finditer(piece.expr)
    }
    spans = (source.function_span(name=helper) for helper in sorted(called - {template.call}))
    return [built for span in spans if span for built in source.templates(*span)]


def _around(function: tuple[Node, int], line: int) -> tuple[str, ...]:
    """The conditions of the `if`s whose body holds a line (1-based, of the file) in its function,
    outermost first, spaces squeezed; an `else` branch adds none (a new `else if` before the print leaves
    the print as it was)."""
    node, first = function
    child = node.descendant_for_point_range((line - first, 0), (line - first, 0))
    found = []
    while child is not None and child.parent is not None and child != node:
        parent = child.parent
        alternative = parent.child_by_field_name("alternative") if parent.type == "if_statement" else None
        if parent.type == "if_statement" and (
            alternative is None or child.start_byte < alternative.start_byte
        ):
            found.append(_condition(parent))
        child = parent
    return tuple(reversed(found))


def _condition(statement: Node) -> str:
    text = " ".join(syntax.node_text(statement.child_by_field_name("condition")).split())
    return text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text


# ------------------------------------------------------------------------------------------ verbosity


def call_level(
    call: str,
    path: str,
    read: Callable[[str], str | None],
    levels: Mapping[str, int] | None = None,
    include_dirs: tuple[str, ...] = (),
) -> int | None:
    """The verbosity a logging call prints at: the first name its macro's expansion passes that the file's
    headers define as a number (`LOG_TRC` -> `LOG_TMPL(..., LOG_LEVEL_TRACE, ...)` -> 4), or that is a
    library's level the program's logger maps to one (`LLAMA_LOG_INFO` -> `GGML_LOG_LEVEL_INFO`, `levels`);
    None if none. A header not beside the file including it is looked for in `include_dirs`."""
    macros = _macros(path, read, include_dirs)
    return _level(call, macros, MACRO_DEPTH, levels or {})


def _level(name: str, macros: Mapping[str, str], depth: int, levels: Mapping[str, int]) -> int | None:
    if name in levels:
        return levels[name]
    body = macros.get(name)
    if body is None or depth == 0:
        return None
    number = _INTEGER.match(body)
    if number:
        return int(number[1])
    for word in re.findall(r"\b[A-Za-z_]\w*\b", body):
        if word != name:
            level = _level(word, macros, depth - 1, levels)
            if level is not None:
                return level
    return None


def logger_levels(read: Callable[[str], str | None], path: str) -> dict[str, int]:
    """A library's log levels mapped to the verbosity of the program's logger: the `case LEVEL: return
    VERBOSITY;` of the logger's source beside a header the file (the argument table) includes, each verbosity
    resolved through that source's macros (`GGML_LOG_LEVEL_DEBUG` -> `LOG_LEVEL_DEBUG` -> 5)."""
    found: dict[str, int] = {}
    for source, code in _logger_sources(read, path):
        pairs = MAPS_LEVEL.findall(code)
        macros = _macros(source, read) if pairs else {}
        for name, value in pairs:
            level = _level(value, macros, MACRO_DEPTH, {})
            if level is not None:
                found.setdefault(name, level)
    return found


def logger_streams(read: Callable[[str], str | None], path: str) -> StreamRule | None:
    """The stream the logger beside a header the file includes writes each library level to, where its
    source picks one by a test of the level (`fcur = stdout; if (level != GGML_LOG_LEVEL_NONE) { fcur =
    stderr; }`)."""
    for _source, code in _logger_sources(read, path):
        m = _STREAM_BY_LEVEL.search(code)
        if m is not None and m["default"] != m["other"]:
            undecorated = _undecorated(code[m.end() :], m["stream"], m["by"])
            return StreamRule(m["default"], m["test"], m["level"], m["other"], undecorated)
    return None


def _undecorated(code: str, stream: str, by: str) -> frozenset[str] | None:
    """The levels the logger's first conditional write to the stream leaves out, where its test is a
    conjunction of `by != LEVEL` and switches that name no level (`prefix`); None otherwise."""
    m = re.search(_DECORATION.format(stream=re.escape(stream)), code)
    if m is None or "||" in m[1]:
        return None
    left_out = set()
    for term in m[1].split("&&"):
        test = re.fullmatch(rf"\s*{re.escape(by)}\s*!=\s*(\w+)\s*", term)
        if test is not None:
            left_out.add(test[1])
        elif re.search(rf"\b{re.escape(by)}\b", term):
            return None  # another test of the level: not read
    return frozenset(left_out) if left_out else None


def _logger_sources(read: Callable[[str], str | None], path: str) -> Iterator[tuple[str, str]]:
    """The sources beside the headers the file includes (`log.cpp` beside `log.h`), with their code."""
    for header in _INCLUDE.findall(read(path) or ""):
        stem = posixpath.splitext(posixpath.normpath(posixpath.join(posixpath.dirname(path), header)))[0]
        for source in (f"{stem}.cpp", f"{stem}.c"):
            code = read(source)
            if code:
                yield source, code


def call_library_level(
    call: str, path: str, read: Callable[[str], str | None], wanted: Callable[[str], bool]
) -> str | None:
    """The library level a logging call passes: the first name its macro's expansion passes that `wanted`
    takes for one (`LOG` -> `LOG_TMPL(GGML_LOG_LEVEL_NONE, ...)`)."""
    return _first_wanted(call, _macros(path, read), MACRO_DEPTH, wanted)


def _first_wanted(
    name: str, macros: Mapping[str, str], depth: int, wanted: Callable[[str], bool]
) -> str | None:
    body = macros.get(name)
    if body is None or depth == 0:
        return None
    for word in re.findall(r"\b[A-Za-z_]\w*\b", body):
        if wanted(word):
            return word
        found = _first_wanted(word, macros, depth - 1, wanted) if word != name else None
        if found is not None:
            return found
    return None


def _macros(
    path: str, read: Callable[[str], str | None], include_dirs: tuple[str, ...] = ()
) -> dict[str, str]:
    """The macros the file and the headers it includes (by a relative path, or in `include_dirs`, a few
    levels deep) define, by name: a function-like one's body, an object-like one's value."""
    macros: dict[str, str] = {}
    seen, todo = set(), [(path, 0)]
    while todo:
        at, depth = todo.pop()
        text = read(at) if at not in seen else None
        seen.add(at)
        if text is None:
            continue
        for m in _MACRO.finditer(text):
            macros.setdefault(m[1], m[3].strip())
        if depth < INCLUDE_DEPTH:
            todo += [(_header(at, h, read, include_dirs), depth + 1) for h in _INCLUDE.findall(text)]
    return macros


def _header(at: str, name: str, read: Callable[[str], str | None], include_dirs: tuple[str, ...]) -> str:
    """The path of a header a file includes: beside it, else the first of `include_dirs` holding it."""
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(at), name))
    if not include_dirs or read(beside):
        return beside
    found = (posixpath.normpath(posixpath.join(d, name)) for d in include_dirs)
    return next((p for p in found if read(p)), beside)


@dataclass(frozen=True)
class Threshold:
    """The verbosity a start of Ollama's prints up to (math.inf: everything), and where it passes it."""

    value: float
    flag: str
    refs: tuple[LocalRef, ...]


def thresholds(
    pattern: LogPattern, launches: Sequence[LaunchSetting], flags: Mapping[str, Flag]
) -> list[Threshold]:
    """The verbosity thresholds of the starts whose output the pattern reads: the verbosity flags Ollama
    passes to its program from the Go package that applies the pattern."""
    contract = pattern.contract
    packages = {posixpath.dirname(r.path) for r in (contract.ref, *contract.used_at)}
    found = []
    for name, value, refs in verbosity_flags(launches, flags, program_of(contract)):
        near = tuple(r for r in refs if posixpath.dirname(r.path) in packages)
        if near:
            found.append(Threshold(value, name, near))
    return found


def verbosity_flags(
    launches: Sequence[LaunchSetting], flags: Mapping[str, Flag], program: str | None = None
) -> list[tuple[str, float, tuple[LocalRef, ...]]]:
    """(flag, threshold, where) of each verbosity flag Ollama passes (to `program`, or any): a flag whose
    handler sets the verbosity, to everything when it names INT_MAX, else to the value Ollama passes."""
    found = []
    for setting in launches:
        flag = flags.get(setting.name) if setting.kind == "flag" else None
        if flag is None or VERBOSITY not in flag.handler or program not in (None, setting.program):
            continue
        found += [(setting.name, v, setting.refs) for v in _values(flag, setting)]
    return found


def _values(flag: Flag, setting: LaunchSetting) -> list[float]:
    if "INT_MAX" in flag.handler:
        return [math.inf]
    return [int(v) for v in constants(setting.values) if v.lstrip("-").isdigit()]


# ------------------------------------------------------------------------------------------ the findings


def _drafts(item: Reprinted, launches: Sequence[LaunchSetting], upstream: Upstream) -> list[Draft]:
    drafts = []
    if item.before.call != item.after.call:
        for draft in (
            _level_draft(item, launches, upstream),
            _stream_draft(item, upstream),
            _decoration_draft(item, upstream),
        ):
            if draft is not None:
                drafts.append(draft)
    if _narrowed(item.before_when, item.after_when):
        drafts.append(_when_draft(item))
    return drafts


def _level_draft(item: Reprinted, launches: Sequence[LaunchSetting], upstream: Upstream) -> Draft | None:
    """Medium when the print's new level is filtered out at a verbosity Ollama starts the program with
    that printed the old one (a start with no verbosity flag is not judged: the default is not read)."""
    path = item.change.path
    levels = upstream.levels()
    before = call_level(item.before.call, path, upstream.read, levels)
    after = call_level(item.after.call, path, upstream.read, levels)
    if before is None or after is None or before == after:
        return None
    starts = thresholds(item.pattern, launches, upstream.flags())
    lost = [t for t in starts if before <= t.value < after]
    if not lost:
        return None
    detail = (
        f"{_printed(item)} is now printed with {code_span(item.after.call)} (verbosity {after}) instead of "
        f"{code_span(item.before.call)} (verbosity {before}). Ollama starts it with {_started(lost)}: "
        "check that the line is still printed at that verbosity."
    )
    refs = tuple(r for t in lost for r in t.refs)
    return _draft(item, "printed at another verbosity", detail, refs)


def _stream_draft(item: Reprinted, upstream: Upstream) -> Draft | None:
    """Medium when the print's new call passes a level the logger writes to a stream Ollama does not read
    the line from, where the old one went to the stream it reads."""
    rule = upstream.streams()
    if rule is None:
        return None
    levels = upstream.levels()
    wanted = lambda word: word in levels or word == rule.level
    before, after = (
        call_library_level(call, item.change.path, upstream.read, wanted)
        for call in (item.before.call, item.after.call)
    )
    if before is None or after is None:
        return None
    was, now = rule.of(before), rule.of(after)
    read = {s.rsplit(" ", 1)[-1] for s in item.pattern.contract.sources} & set(STREAMS)
    if was == now or was not in read or now in read:
        return None
    detail = (
        f"{_printed(item)} is now printed with {code_span(item.after.call)}, a level the logger writes to "
        f"{now}, instead of {code_span(item.before.call)} ({was}). Ollama reads the line from {was} alone: "
        "check where it is printed now, or Ollama waits for a line that never comes."
    )
    return _draft(item, f"now written to {now}", detail, ())


def _decoration_draft(item: Reprinted, upstream: Upstream) -> Draft | None:
    """Medium when a line a pattern anchored at the line's start matches, written as it was (a plain print,
    or a level the logger puts nothing before), is now logged at a level the logger may put text before."""
    rule = upstream.streams()
    if rule is None or not _anchored(item.pattern) or not _newly_decorated(item, upstream, rule):
        return None
    detail = (
        f"{_printed(item)} is now printed with {code_span(item.after.call)} instead of "
        f"{code_span(item.before.call)}: the logger may put text (a level letter, a time) before lines of "
        f"that level, and Ollama's pattern matches at the start of the line: check the line Ollama reads "
        "still starts as the pattern wants."
    )
    return _draft(item, "written after the logger's prefix", detail, ())


def _newly_decorated(item: Reprinted, upstream: Upstream, rule: StreamRule) -> bool:
    levels = upstream.levels()
    wanted = lambda word: word in levels or word == rule.level or word in (rule.undecorated or ())
    before, after = (
        call_library_level(call, item.change.path, upstream.read, wanted)
        for call in (item.before.call, item.after.call)
    )
    plain = item.before.call in PLAIN_PRINTS or (before is not None and not rule.decorates(before))
    return plain and after is not None and rule.decorates(after)


def _anchored(pattern: LogPattern) -> bool:
    return pattern.contract.kind == "prefix" or bool(_ANCHORED.match(pattern.source))


def _started(lost: list[Threshold]) -> str:
    return "; ".join(
        f"{code_span(t.flag)} {'(everything)' if t.value == math.inf else int(t.value)}" for t in lost
    )


def _narrowed(before: tuple[str, ...], after: tuple[str, ...]) -> bool:
    """Whether the print is now under a condition it was not under, every one it was under kept: a line
    printed on every run now needs more (one that changed a test it already had, the way an error's test
    is refined, is left alone)."""
    return set(before) < set(after)


def _when_draft(item: Reprinted) -> Draft:
    detail = (
        f"{_printed(item)} is printed under other conditions: before {code_span(_conditions(item.before_when))}, "
        f"now {code_span(_conditions(item.after_when))}. Check that Ollama's start of the program still "
        "meets them, or it waits for a line that never comes."
    )
    return _draft(item, "emitted under other conditions", detail, ())


def _conditions(when: tuple[str, ...]) -> str:
    return " && ".join(when) if when else "always"


def _printed(item: Reprinted) -> str:
    contract = item.pattern.contract
    return (
        f"{code_span(item.function)} prints {code_span(item.sample.rstrip()[:120])} "
        f"({code_span(item.after.code.strip()[:120])}), a line Ollama's pattern {code_span(item.pattern.source)} "
        f"({code_span(f'{contract.ref.path}:{contract.ref.line}')}) matches in {streams_of(contract)}. It"
    )


def _draft(item: Reprinted, how: str, detail: str, started: tuple[LocalRef, ...]) -> Draft:
    contract = item.pattern.contract
    line = item.after.line
    return Draft(
        "server",
        "medium",
        f"A line {program_of(contract)} prints that Ollama parses is {how}: {code_span(item.pattern.source[:70])}",
        detail,
        item.change.path,
        line,
        ((line, item.after.last_line),),
        None,
        distinct_refs((contract.ref, *contract.used_at, *started)),
        cause=f"output pattern {contract.ref.path}:{contract.ref.line}",
    )
