"""What upstream's C/C++ code prints, as line templates: the format strings of printf-style calls (with
`PRIu32`-style macros and `#define`d strings spliced in), the `<<` and `+=` chains that build a line on one
stream or string, and the name/value entries (`{ "NAME", value }`) that tables feed into such lines.

A template is literal text and slots (a conversion, or an expression whose value is unknown). Each knows the
lines of its call and the preprocessor branch it sits in (a line printed under `#else` is not printed by
the `#if` branch), and a `__func__` slot is the name of the function around it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from bot.review.cpieces import (
    Piece,
    Slot,
    conversions,
    joined,
    operands,
    statement_end,
    string_pieces,
)
from bot.review.source import LineIndex, c_unescape, region_code, split_args

# A call that prints or formats a line: LOG*, *printf, and logging macros named *_INF, *_ERR, ..., *_TRC; or
# that makes the text of an error a program answers or throws: string_format, send_error, exceptions.
_CALL = re.compile(
    r"(?:LOG\w*|printf|_(?:INF|WRN|ERR|DBG|CNT|TRC)|string_format|send_error|runtime_error|invalid_argument)\s*\("
)
CALL_LOOKBEHIND = 5  # lines above a line where a call reaching onto it may start
READ_PAST = 8  # lines below the last one asked for that a call starting on it may reach
MAX_CALL = 20_000  # characters of one call's arguments read
MAX_FUNCTION_LINES = 5_000  # lines looked up for the definition of the function around a line
FORMAT_ARGS = 3  # the format string is one of a call's first arguments (after a level, a stream, a buffer)
_DEFINE = re.compile(
    r'^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+"((?:\\.|[^"\\\n])*)"[ \t]*(?://[^\n]*)?$', re.MULTILINE
)
# A statement that writes to a stream or appends to a string: `os << ...;`, `s += ...;`
_STREAM = re.compile(
    r"(?:^|(?<=[;{}]))[ \t]*([A-Za-z_][\w:]*(?:(?:\.|->)\w+)*)\s*(<<(?!=)|\+=)", re.MULTILINE
)
_STREAM_GAP = 3  # lines between two statements on one stream that still write one line
_ENTRY = re.compile(r'\{\s*"((?:\\.|[^"\\\n])*)"\s*,')
# A line that starts a function definition: at column 0, a name and its open parenthesis, no `;` after.
_DEFINITION_LINE = re.compile(
    r"^(?![ \t#{}/*])(?!(?:if|for|while|switch|return|else|case|do)\b)[^;(=\n]*?(~?\w+)\s*\([^;\n]*$",
    re.MULTILINE,
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)$")


@dataclass(frozen=True)
class Template:
    """Text a piece of code prints (or names, for an entry), with slots for the values it does not spell."""

    kind: str  # format (a printf-style call), stream (`<<`/`+=` statements), entry (`{ "NAME", value }`)
    pieces: tuple[Piece, ...]
    line: int  # 1-based, first line of the call or statement
    last_line: int
    branch: tuple[str, ...]  # the preprocessor branches around it, outermost first
    code: str  # what the code writes: the format string, the statement, the entry
    call: str = ""  # a format's: the function or macro called (`LOG_TRC`, `fprintf`)

    @cached_property
    def literal(self) -> str:
        """The text the template spells, slots left out (lower case): whatever it prints holds these."""
        return "\x00".join(p for p in self.pieces if isinstance(p, str)).lower()


class SourceFile:
    """One C/C++ file, with what its templates need from the whole of it: the strings it `#define`s, the
    function around a line, the preprocessor branch of a line. Only the lines asked for are read as code
    (comments out): a file is large, the lines that may print a given text are few."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self.lines = text.split("\n")
        self._templates: dict[tuple[int, int], list[Template]] = {}

    @cached_property
    def defines(self) -> dict[str, str]:
        return {m[1]: c_unescape(m[2]) for m in _DEFINE.finditer(self.text)} if "define" in self.text else {}

    @cached_property
    def _definitions(self) -> tuple[list[int], list[str]]:
        return definitions(self.text)

    @cached_property
    def function_names(self) -> frozenset[str]:
        """The names of the functions the file defines."""
        return frozenset(self._definitions[1])

    def function_at(self, line: int) -> str | None:
        """The name of the function whose definition starts nearest above `line`."""
        rows, names = self._definitions
        at = bisect.bisect_right(rows, line) - 1
        return names[at] if at >= 0 else None

    def function_span(self, line: int | None = None, name: str | None = None) -> tuple[int, int] | None:
        """The lines (first, last) from the definition of the function starting nearest above `line`, or of
        the first function named `name`, to the line before the next definition."""
        rows, names = self._definitions
        if line is not None:
            at = bisect.bisect_right(rows, line) - 1
        else:
            at = names.index(name) if name in names else -1
        if at < 0:
            return None
        return rows[at], (rows[at + 1] - 1 if at + 1 < len(rows) else len(self.lines))

    @cached_property
    def _branches(self) -> tuple[list[int], list[tuple[str, ...]]]:
        """(first line, branch stack) of each run of lines between preprocessor conditionals."""
        starts: list[int] = [1]
        stacks: list[tuple[str, ...]] = [()]
        chains: list[list[str]] = []
        if "#" not in self.text:
            return starts, stacks
        for number, text in enumerate(self.lines, start=1):
            m = _DIRECTIVE.match(text) if "#" in text else None
            if m is None:
                continue
            _follow(chains, m[1], " ".join(m[2].split("//")[0].split()))
            starts.append(number + 1)
            stacks.append(tuple(" / ".join(chain) for chain in chains))
        return starts, stacks

    def branch_at(self, line: int) -> tuple[str, ...]:
        """The conditionals (each as its chain so far: `#if A / #else`) around `line`, outermost first."""
        starts, stacks = self._branches
        return stacks[bisect.bisect_right(starts, line) - 1]

    @cached_property
    def branches(self) -> frozenset[tuple[str, ...]]:
        return frozenset(self._branches[1])

    def templates(self, first: int = 1, last: int | None = None) -> list[Template]:
        """The templates whose code starts on lines `first`..`last` (default: to the end) of the file, read
        once per range (a function's prints are asked for once per pattern)."""
        key = (first, len(self.lines) if last is None else last)
        if key not in self._templates:
            self._templates[key] = self.templates_in([key])
        return self._templates[key]

    def templates_in(self, ranges: list[tuple[int, int]]) -> list[Template]:
        """The templates whose code starts in one of the (first, last) line ranges, comments read out of
        all of them at once."""
        ranges = [(first, min(last, len(self.lines))) for first, last in ranges]
        regions = region_code([self.lines[first - 1 : last + READ_PAST] for first, last in ranges], self.path)
        return [
            t for (first, last), region in zip(ranges, regions) for t in self._parsed(region, first, last)
        ]

    def _parsed(self, region: list[str], first: int, last: int) -> list[Template]:
        code = "\n".join(region)
        if '"' not in code:
            return []
        index = LineIndex(code)
        found = [*self._formats(code, first, index), *self._streams(code, first, index)]
        if "{" in code:
            found += self._entries(code, first, index)
        return sorted((t for t in found if t.line <= last), key=lambda t: t.line)

    def templates_for(
        self, needles: Collection[str], skeletons: Collection[re.Pattern] = ()
    ) -> list[Template]:
        """The templates that may print a line holding one of the (lower-case) needles, or spelling one of
        the skeletons: those on or just below such a line, and those in a function a needle names
        (`__func__` prints it)."""
        rows = [
            n
            for n, line in enumerate(self.lines, start=1)
            if any(x in line.lower() for x in needles) or any(s.search(line.lower()) for s in skeletons)
        ]
        def_rows, names = self._definitions
        for at, name in enumerate(names):
            if any(name.lower() in x for x in needles):
                end = def_rows[at + 1] if at + 1 < len(def_rows) else len(self.lines) + 1
                rows += range(def_rows[at], end)
        return self.templates_in(windows(sorted(set(rows))))

    def _formats(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        for m in _CALL.finditer(code):
            args, end = _arguments(code, m.end() - 1)
            for position, arg in enumerate(args[:FORMAT_ARGS]):
                pieces = string_pieces(arg, self.defines)
                if pieces is not None:
                    line = index.line(m.start()) + first - 1
                    spliced = conversions(pieces, args[position + 1 :], partial(self._func, line))
                    yield Template(
                        "format",
                        spliced,
                        line,
                        index.line(end) + first - 1,
                        self.branch_at(line),
                        arg,
                        _called(code, m.end() - 1),
                    )
                    break

    def _func(self, line: int) -> str:
        return self.function_at(line) or "main"

    def _streams(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        """One template per run of `<<`/`+=` statements on one stream or string (a line built in steps)."""
        if "<<" not in code and "+=" not in code:
            return
        run: list[_Statement] = []
        end = -1
        for m in _STREAM.finditer(code):
            if m.start() < end:
                continue  # inside the statement just read
            end = statement_end(code, m.end())
            line = index.line(m.start()) + first - 1
            if run and (m[1] != run[-1].target or line - run[-1].last_line > _STREAM_GAP):
                yield from self._stream_template(run)
                run = []
            pieces = operands(code[m.end() : end], m[2], partial(self._func, line))
            text = " ".join(code[m.start() : end + 1].split())
            run.append(_Statement(m[1], line, index.line(end) + first - 1, pieces, text))
        if run:
            yield from self._stream_template(run)

    def _stream_template(self, run: list[_Statement]) -> Iterator[Template]:
        pieces = joined([p for statement in run for p in statement.pieces])
        if any(isinstance(p, str) and p.strip() for p in pieces):
            written = " ".join(s.text for s in run)
            yield Template(
                "stream", pieces, run[0].line, run[-1].last_line, self.branch_at(run[0].line), written
            )

    def _entries(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        """`{ "NAME", value }`: a name a table hands to whatever prints its entries."""
        for m in _ENTRY.finditer(code):
            args, end = _arguments(code, m.start())
            if len(args) == 2:
                line = index.line(m.start()) + first - 1
                pieces = (c_unescape(m[1]), Slot("s", args[1]))
                text = code[m.start() : end]
                yield Template("entry", pieces, line, index.line(end) + first - 1, self.branch_at(line), text)


@dataclass(frozen=True)
class _Statement:
    target: str  # the stream or string written to
    line: int
    last_line: int
    pieces: list[Piece]
    text: str


def definitions(text: str) -> tuple[list[int], list[str]]:
    """(line, name) of every line of a file that starts a function definition, in order."""
    index = LineIndex(text)
    found = [(index.line(m.start()), m[1]) for m in _DEFINITION_LINE.finditer(text)]
    return [row for row, _ in found], [name for _, name in found]


def _called(code: str, open_at: int) -> str:
    """The name a call's open parenthesis follows (`COM_TRC` of `COM_TRC(`, `std::runtime_error`)."""
    m = _CALLED.search(code, max(0, open_at - 80), open_at)
    return m[1] if m else ""


_CALLED = re.compile(r"([\w:]+)\s*$")


def windows(numbers: list[int]) -> list[tuple[int, int]]:
    """(first, last) line ranges covering each of the sorted `numbers` and CALL_LOOKBEHIND lines above it
    (where a call reaching onto it may start), ranges that touch or overlap merged."""
    found: list[list[int]] = []
    for n in numbers:
        if found and n - CALL_LOOKBEHIND <= found[-1][1] + 1:
            found[-1][1] = n
        else:
            found.append([max(1, n - CALL_LOOKBEHIND), n])
    return [(first, last) for first, last in found]


def _arguments(code: str, open_at: int) -> tuple[list[str], int]:
    """`split_args` over at most MAX_CALL characters: a bracket left open does not make every call after it
    read to the end of the file."""
    args, end = split_args(code[open_at : open_at + MAX_CALL], 0)
    return args, open_at + end


def function_above(lines: list[str], line: int, limit: int = MAX_FUNCTION_LINES) -> str | None:
    """The name of the function whose definition starts nearest above `line` (1-based) of a file's lines as
    written, `limit` lines up at most: a cheap look, before the file's code is read."""
    found = definition_above(lines, line, limit)
    return found[1] if found else None


def definition_above(lines: list[str], line: int, limit: int = MAX_FUNCTION_LINES) -> tuple[int, str] | None:
    """The line (1-based) where that definition starts, and the function's name."""
    for number in range(min(line, len(lines)), max(line - limit, 0), -1):
        text = lines[number - 1]
        if text[:1] not in _INDENTED and "(" in text:
            m = _DEFINITION_LINE.match(text)
            if m:
                return number, m[1]
    return None


_INDENTED = frozenset(" \t#{}/*")


def _follow(chains: list[list[str]], directive: str, condition: str) -> None:
    """The open conditionals after one directive: `#if` opens a chain, `#elif`/`#else` extend the innermost
    one, `#endif` closes it."""
    if directive.startswith("if"):
        chains.append([f"#{directive} {condition}".strip()])
    elif directive == "endif":
        if chains:
            chains.pop()
    elif chains:
        chains[-1] = [*chains[-1], f"#{directive} {condition}".strip()]
