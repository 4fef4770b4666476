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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from bot.review.source import LineIndex, c_unescape, split_args

# A call that prints or formats a line: LOG*, *printf, and logging macros named *_INF, *_ERR, ..., *_TRC.
_CALL = re.compile(r"(?:LOG\w*|printf|_(?:INF|WRN|ERR|DBG|CNT|TRC))\s*\(")
READ_PAST = 8  # lines below the last one asked for that a call starting on it may reach
FORMAT_ARGS = 3  # the format string is one of a call's first arguments (after a level, a stream, a buffer)
_SPEC = re.compile(r"%(%|[-+ #0']*(\*|\d+)?(?:\.(\*|\d+))?(?:hh|h|ll|l|j|z|t|L|q)?([diouxXeEfFgGaAcspn]))")
_KIND = {
    **dict.fromkeys("diou", "d"),
    **dict.fromkeys("xX", "x"),
    **dict.fromkeys("eEfFgGaA", "f"),
    "c": "c",
    "s": "s",
    "p": "p",
    "n": "",
}
# One piece of a string expression: a literal, a raw literal, a `PRI*` conversion macro, another macro.
_PIECE = re.compile(
    r'\s*(?:"((?:\\.|[^"\\\n])*)"|R"([^()\\\s"]{0,16})\((.*?)\)\2"|(PRI([diouxX])\w*)|([A-Z][A-Z0-9_]{2,})\b)',
    re.DOTALL,
)
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+"((?:\\.|[^"\\\n])*)"[ \t]*$', re.MULTILINE)
FUNCTION_NAMES = ("__func__", "__FUNCTION__")
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
class Slot:
    """A value a template prints but the code does not spell: a conversion or an expression."""

    kind: str  # printf kind: d (integer), x (hex), f (float), c, s (string or any expression), p, "" (%n)
    expr: str = ""  # the argument's code, when known


Piece = str | Slot


@dataclass(frozen=True)
class Template:
    """Text a piece of code prints (or names, for an entry), with slots for the values it does not spell."""

    kind: str  # format (a printf-style call), stream (`<<`/`+=` statements), entry (`{ "NAME", value }`)
    pieces: tuple[Piece, ...]
    line: int  # 1-based, first line of the call or statement
    last_line: int
    branch: tuple[str, ...]  # the preprocessor branches around it, outermost first
    code: str  # what the code writes: the format string, the statement, the entry

    @cached_property
    def literal(self) -> str:
        """The text the template spells, slots left out (lower case): whatever it prints holds these."""
        return "\x00".join(p for p in self.pieces if isinstance(p, str)).lower()


class SourceFile:
    """One C/C++ file's comment-free code, with what its templates need from the whole file: the strings it
    `#define`s, the function around a line, the preprocessor branch of a line."""

    def __init__(self, code: str):
        self.code = code
        self.lines = code.split("\n")

    @cached_property
    def defines(self) -> dict[str, str]:
        return {m[1]: c_unescape(m[2]) for m in _DEFINE.finditer(self.code)} if "define" in self.code else {}

    @cached_property
    def _definitions(self) -> tuple[list[int], list[str]]:
        return definitions(self.code)

    def function_at(self, line: int) -> str | None:
        """The name of the function whose definition starts nearest above `line`."""
        rows, names = self._definitions
        at = bisect.bisect_right(rows, line) - 1
        return names[at] if at >= 0 else None

    @cached_property
    def _branches(self) -> tuple[list[int], list[tuple[str, ...]]]:
        """(first line, branch stack) of each run of lines between preprocessor conditionals."""
        starts: list[int] = [1]
        stacks: list[tuple[str, ...]] = [()]
        chains: list[list[str]] = []
        if "#" not in self.code:
            return starts, stacks
        for number, text in enumerate(self.lines, start=1):
            m = _DIRECTIVE.match(text) if "#" in text else None
            if m is None:
                continue
            _follow(chains, m[1], " ".join(m[2].split()))
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
        """The templates whose code starts on lines `first`..`last` (default: to the end) of the file."""
        last = len(self.lines) if last is None else min(last, len(self.lines))
        code = "\n".join(self.lines[first - 1 : min(last + READ_PAST, len(self.lines))])
        if '"' not in code:
            return []
        index = LineIndex(code)
        found = [*self._formats(code, first, index), *self._streams(code, first, index)]
        if "{" in code:
            found += self._entries(code, first, index)
        return sorted((t for t in found if t.line <= last), key=lambda t: t.line)

    def _formats(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        for m in _CALL.finditer(code):
            args, end = split_args(code, m.end() - 1)
            for position, arg in enumerate(args[:FORMAT_ARGS]):
                pieces = self._string_pieces(arg)
                if pieces is not None:
                    line = index.line(m.start()) + first - 1
                    spliced = _conversions(pieces, args[position + 1 :], partial(self._func, line))
                    yield Template(
                        "format", spliced, line, index.line(end) + first - 1, self.branch_at(line), arg
                    )
                    break

    def _func(self, line: int) -> str:
        return self.function_at(line) or "main"

    def _string_pieces(self, expr: str) -> list[Piece] | None:
        """Adjacent string pieces at the start of `expr` (literals, `PRIu64`, macros), when they are the
        whole expression and hold a literal; else None."""
        pos, pieces, literal = 0, [], False
        for m in _PIECE.finditer(expr):
            if m.start() != pos:
                break
            pos = m.end()
            if m[1] is not None or m[3] is not None:
                pieces.append(c_unescape(m[1]) if m[1] is not None else m[3])
                literal = True
            elif m[4] is not None:
                pieces.append(f"ll{m[5]}")  # the `%` and width are in the literal before it
            else:
                pieces.append(self.defines.get(m[6], Slot("s", m[6])))
        return list(_joined(pieces)) if literal and not expr[pos:].strip() else None

    def _streams(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        """One template per run of `<<`/`+=` statements on one stream or string (a line built in steps)."""
        if "<<" not in code and "+=" not in code:
            return
        run: list[_Statement] = []
        end = -1
        for m in _STREAM.finditer(code):
            if m.start() < end:
                continue  # inside the statement just read
            end = _statement_end(code, m.end())
            line = index.line(m.start()) + first - 1
            if run and (m[1] != run[-1].target or line - run[-1].last_line > _STREAM_GAP):
                yield from self._stream_template(run)
                run = []
            pieces = _operands(code[m.end() : end], m[2], partial(self._func, line))
            text = " ".join(code[m.start() : end + 1].split())
            run.append(_Statement(m[1], line, index.line(end) + first - 1, pieces, text))
        if run:
            yield from self._stream_template(run)

    def _stream_template(self, run: list[_Statement]) -> Iterator[Template]:
        pieces = _joined([p for statement in run for p in statement.pieces])
        if any(isinstance(p, str) and p.strip() for p in pieces):
            written = " ".join(s.text for s in run)
            yield Template(
                "stream", pieces, run[0].line, run[-1].last_line, self.branch_at(run[0].line), written
            )

    def _entries(self, code: str, first: int, index: LineIndex) -> Iterator[Template]:
        """`{ "NAME", value }`: a name a table hands to whatever prints its entries."""
        for m in _ENTRY.finditer(code):
            args, end = split_args(code, m.start())
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
    """(line, name) of every line of a file's code that starts a function definition, in order."""
    index = LineIndex(text)
    found = [(index.line(m.start()), m[1]) for m in _DEFINITION_LINE.finditer(text)]
    return [row for row, _ in found], [name for _, name in found]


def function_above(lines: list[str], line: int) -> str | None:
    """The name of the function whose definition starts nearest above `line` (1-based) of a file's lines as
    written: a cheap look, before the file's code is read."""
    for number in range(min(line, len(lines)), 0, -1):
        text = lines[number - 1]
        if text[:1] not in _INDENTED and "(" in text:
            m = _DEFINITION_LINE.match(text)
            if m:
                return m[1]
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


def _statement_end(code: str, at: int) -> int:
    """The offset of the `;` that ends the statement going on at `at` (strings and brackets skipped)."""
    depth = 0
    for m in _TOKEN.finditer(code, at):
        t = m[0]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth < 0:
                return m.start()
        elif t == ";" and depth == 0:
            return m.start()
    return len(code)


_TOKEN = re.compile(
    r"""R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[()\[\]{};]""", re.DOTALL
)
_CHAR = re.compile(r"'((?:\\.|[^'\\\n])+)'")
_ENDL = re.compile(r"(?:std::)?endl")


def _operands(text: str, operator: str, func: Callable[[], str]) -> list[Piece]:
    """The pieces one statement writes: `a << "b" << c` (or `+= "b" + c`), literals as text."""
    pieces: list[Piece] = []
    for operand in _split_top(text, "<<" if operator == "<<" else "+"):
        operand = operand.strip()
        value = _literal_text(operand)
        if value is not None:
            pieces.append(value)
        elif _ENDL.fullmatch(operand):
            pieces.append("\n")
        elif operand:
            pieces.append(func() if operand in FUNCTION_NAMES else Slot("s", operand))
    return pieces


def _literal_text(operand: str) -> str | None:
    m = _CHAR.fullmatch(operand)
    if m:
        return c_unescape(m[1])
    pieces = re.fullmatch(r'(?:\s*"(?:\\.|[^"\\\n])*")+\s*', operand)
    if pieces is None:
        return None
    return "".join(c_unescape(body) for body in re.findall(r'"((?:\\.|[^"\\\n])*)"', operand))


def _split_top(text: str, operator: str) -> list[str]:
    """`text` split on `operator` outside brackets and strings."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(
        r"""R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|<<|[+()\[\]{}]""",
        text,
        re.DOTALL,
    ):
        t = m[0]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == operator and depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def _conversions(pieces: list[Piece], args: list[str], func: Callable[[], str]) -> tuple[Piece, ...]:
    """A format's pieces with each conversion a slot holding its argument (`__func__`: the function's name),
    adjacent text joined."""
    out: list[Piece] = []
    remaining = iter(args)
    for piece in pieces:
        if isinstance(piece, Slot):
            out.append(piece)
            continue
        at = 0
        for m in _SPEC.finditer(piece):
            out.append(piece[at : m.start()])
            at = m.end()
            if m[1] == "%":
                out.append("%")
                continue
            for width in (m[2], m[3]):
                if width == "*":
                    next(remaining, "")
            arg = next(remaining, "").strip()
            out.append(func() if arg in FUNCTION_NAMES else Slot(_KIND[m[4]], arg))
        out.append(piece[at:])
    return _joined(out)


def _joined(pieces: list[Piece]) -> tuple[Piece, ...]:
    joined: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str) and joined and isinstance(joined[-1], str):
            joined[-1] += piece
        elif piece != "":
            joined.append(piece)
    return tuple(joined)
