"""The patterns Ollama applies to what an upstream program prints, as the contract inventory finds them.

The inventory (`bot/review/consumers/contracts/`) follows each value Ollama's code searches back to the program
whose output it was read from, wherever in the tree the code lives; its output contracts that search a
program's printed output with a regular expression or a literal are the patterns a line upstream prints may
have to match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.consumers.contracts.model import OutputPattern

MIN_LITERAL = 5  # shorter literals are not evidence of parsing output
_HTTP = re.compile(r"^(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) ")  # a source that is an HTTP answer
_LITERAL_SEARCHES = ("substring", "prefix", "suffix")
_GO_FUNC = re.compile(r"^func\s+(?:\(\s*(?:\w+\s+)?\*?(\w+)[^)]*\)\s*)?(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class LogPattern:
    source: str  # as Ollama wrote it (decoded)
    regex: re.Pattern
    contract: OutputPattern  # the inventory's: where Ollama writes and applies it, and to which output

    @property
    def extracts(self) -> bool:
        """Whether Ollama reads values out of the line (capture groups): it needs that very line; a
        pattern that only tests for text is served by any line holding it."""
        return self.regex.groups > 0


def output_searches(contracts: Iterable[OutputPattern]) -> list[LogPattern]:
    """The regular expressions and literals Ollama's Go code applies to a program's printed output."""
    found = []
    for contract in contracts:
        if not is_program_output(contract):
            continue
        if contract.kind == "regexp":
            regex = _compiled(contract.value)
        elif contract.kind in _LITERAL_SEARCHES and _telling(contract.value):
            regex = re.compile(re.escape(contract.value))
        else:
            continue
        if regex is not None:
            found.append(LogPattern(contract.value, regex, contract))
    return found


def _compiled(source: str) -> re.Pattern | None:
    """A Go regular expression as Python's; None for a Go-only construct: it cannot be judged."""
    try:
        return re.compile(source.replace(r"\z", r"\Z"))
    except re.error:
        return None


def _telling(literal: str) -> bool:
    """Whether a literal is long enough, and holds a letter, to be evidence of parsing output."""
    return len(literal.strip()) >= MIN_LITERAL and re.search(r"[A-Za-z]", literal) is not None


def is_program_output(contract: OutputPattern) -> bool:
    """Whether the contract compares a program's printed output (not an HTTP answer)."""
    return any(not _HTTP.match(source) for source in contract.sources)


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
