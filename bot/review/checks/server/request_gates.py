"""A request field Ollama sends that llama-server now reads only when the request sets another one, which
Ollama never sends: `if (json_value(w, "strict", false)) { schema = json_value(w, "schema", ...); }` added
around a reading of `schema` the old code made anyway. Ollama's value is then silently ignored."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.consumers.gofields import with_field_lines, writing
from bot.review.producers import function_above

if TYPE_CHECKING:
    from bot.review.run import Run

BODY_REACH = 40  # lines of a new block read for the fields it reads
# a condition true only when the request sets the key: its presence, or its value with a false default
_SET_ONLY = re.compile(
    r'(?<!!)\b(?:\w+\s*\.\s*contains\s*\(\s*"(\w+)"\s*\)'
    r'|json_value\s*\(\s*\w+\s*,\s*"(\w+)"\s*,\s*(?:false|0|""|json\(\)|nullptr)\s*\)'
    r'|\w+\s*\.\s*value\s*\(\s*"(\w+)"\s*,\s*(?:false|0|"")\s*\))'
)
# a reading of a key (`x["k"] = ...` writes one)
_READ = re.compile(
    r'\.\s*at\s*\(\s*"(\w+)"\s*\)|\[\s*"(\w+)"\s*\](?!\s*=(?!=))|json_value\s*\(\s*\w+\s*,\s*"(\w+)"'
)


@dataclass(frozen=True)
class Gate:
    key: str  # what the request must set
    field: str  # what is read only then
    line: int  # of the condition, at the new ref
    read_at: int


@check("server.request-gates", area="server", inputs=("diff", "inventory"))
def request_gates(run: Run) -> list[Draft]:
    sent = _sent(run)
    drafts = [
        _draft(c.path, gate, sent(gate.field))
        for c in run.c_changes
        if c.new_path and run.parses_requests(c.path) and "if" in c.changed_raw[0]
        for gate in new_gates(c, lambda key: bool(sent(key)))
    ]
    return [with_field_lines(d, run.local, writing) for d in drafts]


def _sent(run: Run) -> Callable[[str], tuple[LocalRef, ...]]:
    """Where Ollama puts a JSON field of that name, at any depth, into a request (the inventory's)."""
    where: dict[str, dict[LocalRef, None]] = {}
    for f in run.contracts.request_fields:
        if f.direction == "request":
            where.setdefault(f.path.rsplit(".", 1)[-1].removesuffix("[]"), {})[f.ref] = None
    return lambda name: tuple(where.get(name, ()))


def new_gates(change: FileChange, sent: Callable[[str], bool]) -> list[Gate]:
    """The added conditions on a key Ollama never sends around a reading, in a function of the old code, of a
    field Ollama sends that the old code read there too."""
    lines = change.new_code_lines
    old_reads = _reads_by_function(change.old_code_lines)
    return [
        gate
        for span in change.significant
        for line, code in change.added_code(span)
        for gate in _gates_at(lines, line, _unsent_keys(code, sent), old_reads, sent)
    ]


def _unsent_keys(code: str, sent: Callable[[str], bool]) -> list[str]:
    """The keys a condition on this line needs the request to set, when Ollama sends none of them."""
    if "if" not in code:
        return []
    keys = [k for m in _SET_ONLY.finditer(code.split("{", 1)[0]) for k in m.groups() if k]
    return [] if any(sent(k) for k in keys) else keys


def _gates_at(
    lines: list[str],
    line: int,
    keys: list[str],
    old_reads: dict[str | None, set[str]],
    sent: Callable[[str], bool],
) -> list[Gate]:
    if not keys:
        return []
    read_before = old_reads.get(function_above(lines, line), set())
    first = {field: n for n, field in reversed(_body_reads(lines, line))}
    return [Gate(keys[0], f, line, n) for f, n in first.items() if sent(f) and f in read_before]


def _reads_by_function(lines: list[str]) -> dict[str | None, set[str]]:
    reads: dict[str | None, set[str]] = {}
    for n, code in enumerate(lines, 1):
        found = {g for m in _READ.finditer(code) for g in m.groups() if g}
        if found:
            reads.setdefault(function_above(lines, n), set()).update(found)
    return reads


def _body_reads(lines: list[str], line: int) -> list[tuple[int, str]]:
    """The fields read in the block a condition at `line` opens, up to its closing brace."""
    depth = 0
    found = []
    for n in range(line, min(len(lines), line + BODY_REACH) + 1):
        code = lines[n - 1]
        if n > line:
            found += [(n, g) for m in _READ.finditer(code) for g in m.groups() if g]
        depth += code.count("{") - code.count("}")
        if depth <= 0 and n > line:
            break
    return found


def _draft(path: str, gate: Gate, refs: tuple[LocalRef, ...]) -> Draft:
    field, key = code_span(gate.field), code_span(gate.key)
    return Draft(
        "server",
        "high",
        f"llama-server now reads {field} only when the request sets {key}, which Ollama never sends",
        f"Upstream put the reading of {field} ({code_span(f'{path}:{gate.read_at}')}) under a new condition "
        f"on {key} ({code_span(f'{path}:{gate.line}')}). The old code read {field} there without it. Ollama "
        f"sends {field} and never {key}, so the value it sends is now ignored, silently. Send {key} where "
        "Ollama sends the field, or keep upstream's old reading.",
        path,
        gate.line,
        ((gate.line, gate.read_at),),
        local_refs=refs[:10],
        cause=f"request-gate:{gate.field}:{gate.key}",
    )
