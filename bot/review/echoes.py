"""Request text a server now prints where Ollama scans its output.

Ollama starts llama-server at a verbosity (`--log-verbosity 4`) and scans every line it prints for its own
markers (an error prefix, an out-of-memory phrase). A print the bump adds, at a level that verbosity shows, of
a string the server read from a request (`SRV_TRC("prompt: %s\\n", text.c_str())` with `text` from
`data.at("prompt")`) puts a user's text on those lines: a prompt holding `error:` or a pasted out-of-memory
trace reads as the server's own failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.limits import fields_in, traced
from bot.review.printwhen import Threshold
from bot.review.source import c_unescape, split_args

_CALL = re.compile(r"\b([A-Z][A-Z0-9_]*)\s*\(")  # a logging macro's call
_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"|\b(PRI\w+)')
# a printf conversion: flags, width, precision, length, conversion
_CONVERSION = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?(?:hh|h|ll|l|z|j|t|L)?([a-zA-Z%])")
CALL_LINES = 6  # lines a print's arguments may span
TRACE_REACH = 200  # lines above a print where a local it prints may be given its value, within its function
TRACE_DEPTH = 3  # locals followed back to the request field they were read from
REFS_SHOWN = 3  # of Ollama's patterns


@dataclass(frozen=True)
class Echo:
    """An added print of text read from a request."""

    path: str
    line: int
    call: str
    level: int  # the verbosity it prints at
    fields: tuple[str, ...]  # the request fields the printed strings were read from
    code: str


def echoes(
    change: FileChange, level_of: Callable[[str], int | None], start_of: Callable[[int], int]
) -> list[Echo]:
    """The prints the change adds, of a logging call with a known verbosity (`level_of`), whose string
    conversions (`%s`) print a value read from a request, followed back in the function (`start_of`: its
    first line) through the locals it is given from."""
    lines = change.new_code_lines
    found = []
    for span in change.significant:
        for line, _ in change.added_code(span):
            code = lines[line - 1] if 0 < line <= len(lines) else ""  # the file's own code: offsets agree
            for m in _CALL.finditer(code):
                level = level_of(m[1])
                if level is None:
                    continue
                text = "\n".join(lines[line - 1 : line - 1 + CALL_LINES])
                args, _ = split_args(text, m.end() - 1)
                fields = _printed_fields(args, lines, line, start_of(line))
                if fields:
                    found.append(Echo(change.path, line, m[1], level, fields, code.strip()))
    return found


def _printed_fields(args: list[str], lines: list[str], line: int, start: int) -> tuple[str, ...]:
    """The request fields the string conversions of a print's arguments come from."""
    if not args:
        return ()
    found: dict[str, None] = {}
    for index in string_arguments(_format(args[0])):
        if index + 1 < len(args):
            value = args[index + 1]
            read = traced(lines, set(), line, value, TRACE_DEPTH, TRACE_REACH, start)
            found.update(dict.fromkeys(sorted(fields_in(value) | read)))
    return tuple(found)


def _format(argument: str) -> str:
    """The format a print's first argument spells: its string literals joined, a `PRId64` as `d`."""
    return "".join(c_unescape(m[1]) if m[1] is not None else "d" for m in _STRING.finditer(argument))


def string_arguments(fmt: str) -> Iterator[int]:
    """The indexes (0-based, after the format) of the arguments a printf format prints as strings."""
    index = 0
    for m in _CONVERSION.finditer(fmt):
        if m[3] == "%":
            continue
        index += (m[1] == "*") + (m[2] == "*")
        if m[3] == "s":
            yield index
        index += 1


def echo_drafts(
    found: Sequence[Echo], starts: Sequence[Threshold], sent: set[str], patterns: Sequence[OutputPattern]
) -> list[Draft]:
    """One medium draft per print of a field Ollama sends (`sent`) at a verbosity one of Ollama's starts
    shows, where Ollama scans the program's output with patterns."""
    drafts = []
    for echo in found:
        fields = [f for f in echo.fields if f in sent]
        shown = [s for s in starts if echo.level <= s.value]
        if fields and shown and patterns:
            drafts.append(_draft(echo, fields, shown, patterns))
    return drafts


def _draft(echo: Echo, fields: list[str], shown: list[Threshold], patterns: Sequence[OutputPattern]) -> Draft:
    names = ", ".join(map(code_span, fields))
    flags = "; ".join(
        f"{code_span(s.flag)} ({'everything' if s.value == float('inf') else int(s.value)})" for s in shown
    )
    markers = ", ".join(code_span(p.value[:40]) for p in patterns[:REFS_SHOWN])
    refs = tuple(
        dict.fromkeys((*(r for s in shown for r in s.refs), *(p.ref for p in patterns[:REFS_SHOWN])))
    )
    return Draft(
        "server",
        "medium",
        f"llama-server now prints request text ({names}) at a verbosity Ollama starts it with",
        f"{code_span(echo.code[:160])} prints what a request's {names} holds with {code_span(echo.call)} "
        f"(verbosity {echo.level}), and Ollama starts the program with {flags}. Ollama scans each line it "
        f"prints for its own markers ({markers}, ...): text a user sends, a prompt holding one of them, now "
        "reads as the server's own line. Check the markers cannot match request text, or lower the verbosity.",
        echo.path,
        echo.line,
        ((echo.line, echo.line),),
        local_refs=refs,
        cause=f"request text printed: {','.join(fields)}",
    )
