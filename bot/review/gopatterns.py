"""The patterns Ollama's Go code applies to text, read fast, and the output contracts that confirm them.

A first, fast read (regular expressions over the Go sources) finds every regular expression, every literal
given to a `strings`/`bytes` search and every literal of a `[]string` a loop searches with: a superset of
what Ollama compares with an upstream program's output. Only when an upstream change removes a line one of
them matches does the review ask the contract inventory (`bot/review/consumers/contracts/`, which follows
the values to the program they come from) whether Ollama compares it with a program's output, and where.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.source import LineIndex, globs, non_test_paths

OLLAMA_PARSERS = globs("llm/**/*.go", "discover/**/*.go", "server/**/*.go", "ml/**/*.go")
MIN_LITERAL = 5  # shorter literals are not evidence of parsing output
_GO_STRING = r'(`[^`]*`|"(?:\\.|[^"\\\n])*")'
_GO_REGEX = re.compile(
    r"regexp\.(?:(?:MustCompile|Compile)(?:POSIX)?|Match(?:String|Reader)?)\(\s*" + _GO_STRING + r"\s*[,)]"
)
_GO_LITERAL = re.compile(
    r"(?:strings|bytes)\.(?:Contains|HasPrefix|HasSuffix|Index|Cut|CutPrefix|TrimPrefix)\(\s*"
    r"[^,()]*(?:\([^()]*\))?[^,()]*,\s*(?:\[\]byte\(\s*)?" + _GO_STRING
)
_GO_SLICE = re.compile(r"\[\]string\s*\{([^{}]*)\}")
_ASSIGNED = re.compile(r"(\w+)\s*:?=\s*$")  # the name a slice literal is given, just before it
_MATCHING_CALLS = ("regexp.", "Contains(", "Prefix(")  # a file with none applies no pattern: never scanned
_HTTP = re.compile(r"^(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) ")  # a source that is an HTTP answer
_SEARCHES = {"regexp": ("regexp",), "literal": ("substring", "prefix", "suffix")}
_GO_FUNC = re.compile(r"^func\s+(?:\(\s*(?:\w+\s+)?\*?(\w+)[^)]*\)\s*)?(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class LogPattern:
    source: str  # as Ollama wrote it (decoded)
    regex: re.Pattern
    ref: LocalRef  # the line of the literal
    kind: str  # regexp, literal

    @property
    def extracts(self) -> bool:
        """Whether Ollama reads values out of the line (capture groups): it needs that very line; a
        pattern that only tests for text is served by any line holding it."""
        return self.regex.groups > 0


def _go_value(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return re.sub(
        r"\\(.)", lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m[1], "\\" + m[1]), literal[1:-1]
    )


def ollama_patterns(files: Mapping[str, str]) -> list[LogPattern]:
    """The regular expressions and literals Ollama's Go code may apply to a program's output."""
    found = []
    for path in non_test_paths(files, OLLAMA_PARSERS):
        text = files[path]
        if not any(call in text for call in _MATCHING_CALLS):
            continue
        index = LineIndex(text)
        found += _regex_patterns(text, path, index)
        found += _literal_patterns(text, path, index)
        found += _slice_patterns(text, path, index)
    return found


def _regex_patterns(text: str, path: str, index: LineIndex) -> list[LogPattern]:
    """The regular expressions (written on one line or several) that Python's `re` can compile."""
    found = []
    for m in _GO_REGEX.finditer(text):
        source = _go_value(m[1])
        regex = _compiled(source)
        if regex is not None:
            found.append(LogPattern(source, regex, LocalRef(path, index.line(m.start(1))), "regexp"))
    return found


def _compiled(source: str) -> re.Pattern | None:
    """A Go regular expression as Python's; None for a Go-only construct: it cannot be judged."""
    try:
        return re.compile(source.replace(r"\z", r"\Z"))
    except re.error:
        return None


def _literal(source: str, path: str, line: int) -> list[LogPattern]:
    if len(source.strip()) < MIN_LITERAL or not re.search(r"[A-Za-z]", source):
        return []
    return [LogPattern(source, re.compile(re.escape(source)), LocalRef(path, line), "literal")]


def _literal_patterns(text: str, path: str, index: LineIndex) -> list[LogPattern]:
    """The literals given to `strings.Contains(x, "...")`-style searches."""
    return [
        p for m in _GO_LITERAL.finditer(text) for p in _literal(_go_value(m[1]), path, index.line(m.start(1)))
    ]


def _slice_patterns(text: str, path: str, index: LineIndex) -> list[LogPattern]:
    """The literals of a `[]string{...}` that the file loops over (`range name`): a list of markers."""
    found = []
    for m in _GO_SLICE.finditer(text):
        named = _ASSIGNED.search(text, max(0, m.start() - 80), m.start())
        if named and re.search(rf"\brange\s+{re.escape(named[1])}\b", text):
            for s in re.finditer(_GO_STRING, m[1]):
                found += _literal(_go_value(s[1]), path, index.line(m.start(1) + s.start(1)))
    return found


def is_program_output(contract: OutputPattern) -> bool:
    """Whether the contract compares a program's printed output (not an HTTP answer)."""
    return any(not _HTTP.match(source) for source in contract.sources)


def contract_of(pattern: LogPattern, contracts: Sequence[OutputPattern]) -> OutputPattern | None:
    """The inventory's contract for a pattern found fast: the same text, compared with a program's output."""
    kinds = _SEARCHES[pattern.kind]
    same = [c for c in contracts if c.value == pattern.source and c.kind in kinds and is_program_output(c)]
    return next((c for c in same if c.ref == pattern.ref), same[0] if same else None)


def program_of(contract: OutputPattern) -> str:
    """The program whose output the contract reads (the first word of its source)."""
    source = next((s for s in contract.sources if not _HTTP.match(s)), contract.sources[0])
    return source.split()[0]


def streams_of(contract: OutputPattern) -> str:
    """What of the program the contract reads, as the inventory names it: `llama-server's stderr and
    stdout`, `llama-server's `--list-devices` stdout+stderr`."""
    program = program_of(contract)
    parts = [s.removeprefix(program).strip() for s in contract.sources if not _HTTP.match(s)]
    parts = [f"{code_span(p.rsplit(' ', 1)[0])} {p.rsplit(' ', 1)[1]}" if " " in p else p for p in parts]
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"{program}'s {listed}"


def go_function_at(files: Mapping[str, str], ref: LocalRef) -> str | None:
    """The Go function around an Ollama line (`Type.Method` for a method)."""
    text = files.get(ref.path)
    if text is None:
        return None
    before = "\n".join(text.split("\n")[: ref.line])
    found = _GO_FUNC.findall(before)
    if not found:
        return None
    receiver, name = found[-1]
    return f"{receiver}.{name}" if receiver else name


def distinct_refs(refs: Iterable[LocalRef]) -> tuple[LocalRef, ...]:
    return tuple(dict.fromkeys(refs))
