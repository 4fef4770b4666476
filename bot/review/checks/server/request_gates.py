"""A request field Ollama sends that llama-server now reads only under a new condition Ollama's requests never
meet, around a reading the old code made anyway, so that Ollama's value is silently ignored:
- the request must set another key, which Ollama never sends: `if (json_value(w, "strict", false)) { schema =
  json_value(w, "schema", ...); }`;
- a parameter of the function, which the handler of the endpoint Ollama sends the field to passes as a constant,
  must differ from it: `if (res_type != TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize"))` where
  `/v1/embeddings` calls `handle_embeddings_impl(req, TASK_RESPONSE_TYPE_OAI_EMBD)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.checks.server.wire import new_server_code
from bot.review.consumers.contracts.model import WireField
from bot.review.consumers.gofields import with_field_lines, writing
from bot.review.producers import definition_above, function_above
from bot.review.servercode import ServerCode
from bot.review.source import split_args

if TYPE_CHECKING:
    from bot.review.run import Run

BODY_REACH = 40  # lines of a new block read for the fields it reads
HANDLER_LINES = 30  # lines of a route's handler read for the calls it makes
SIGNATURE_LINES = 6  # lines a function's parameter list may span
MAX_CALL_CHARS = 4_000  # characters of a call's arguments read
# a test of a parameter against a constant: `res_type != TASK_RESPONSE_TYPE_OAI_EMBD`
_COMPARED = re.compile(r"\b([a-z_]\w*)\s*(!=|==)\s*((?:\w+::)*[A-Z][A-Z0-9_]+)\b")
_CONSTANT = re.compile(r"(?:\w+::)*[A-Z][A-Z0-9_]+")
_PRESENCE = re.compile(r'\.\s*(?:count|contains|find)\s*\(\s*"(\w+)"\s*\)')
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


@dataclass(frozen=True)
class EndpointGate:
    """A reading now made only when a parameter differs from (or equals) a constant that the handler of an
    endpoint Ollama sends the field to passes otherwise."""

    field: str
    condition: str  # `res_type != TASK_RESPONSE_TYPE_OAI_EMBD`
    endpoint: str
    passed: str  # what the endpoint's handler passes for the parameter
    line: int
    read_at: int


@check("server.request-gates", area="server", inputs=("diff", "inventory"))
def request_gates(run: Run) -> list[Draft]:
    sent = _sent(run)
    changes = [
        c for c in run.c_changes if c.new_path and run.parses_requests(c.path) and "if" in c.changed_raw[0]
    ]
    drafts = _key_drafts(changes, sent) + _endpoint_drafts(
        changes, sent, _HandlerArguments(lambda: new_server_code(run))
    )
    return [with_field_lines(d, run.local, writing) for d in drafts]


def _key_drafts(changes: list[FileChange], sent: Callable[[str], tuple[WireField, ...]]) -> list[Draft]:
    return [
        _draft(c.path, g, _refs(sent(g.field)))
        for c in changes
        for g in new_gates(c, lambda k: bool(sent(k)))
    ]


def _endpoint_drafts(
    changes: list[FileChange], sent: Callable[[str], tuple[WireField, ...]], passing: _HandlerArguments
) -> list[Draft]:
    def endpoints(name: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.endpoint for f in sent(name)))

    return [
        _endpoint_draft(c.path, g, _refs(sent(g.field)))
        for c in changes
        for g in endpoint_gates(c, endpoints, passing)
    ]


def _sent(run: Run) -> Callable[[str], tuple[WireField, ...]]:
    """The request fields of that name, at any depth, that Ollama sends (the inventory's)."""
    where: dict[str, list[WireField]] = {}
    for f in run.contracts.request_fields:
        if f.direction == "request":
            where.setdefault(f.path.rsplit(".", 1)[-1].removesuffix("[]"), []).append(f)
    return lambda name: tuple(where.get(name, ()))


def _refs(fields: tuple[WireField, ...]) -> tuple[LocalRef, ...]:
    return tuple(dict.fromkeys(f.ref for f in fields))


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


class _HandlerArguments:
    """What the handlers of a route pass to a function they call, by the argument's position."""

    def __init__(self, read: Callable[[], ServerCode]):
        self.read = read

    @cached_property
    def code(self) -> ServerCode:
        """The new ref's server code, read once a condition asks."""
        return self.read()

    def passed(self, route: str, function: str, index: int) -> set[str]:
        call = re.compile(rf"\b{re.escape(function)}\s*\(")
        found = set()
        for unit in self.code.handlers(route):
            text = _block(self.code.texts[unit.path].split("\n"), unit.line)
            for m in call.finditer(text):
                args, _ = split_args(text[m.end() - 1 : m.end() - 1 + MAX_CALL_CHARS], 0)
                if index < len(args):
                    found.add(" ".join(args[index].split()))
        return found


@dataclass(frozen=True)
class _ParameterTest:
    """A conjunct of a condition comparing a parameter of the function around it with a constant."""

    function: str
    name: str
    index: int  # the parameter's position
    op: str  # `!=` or `==`
    constant: str

    @property
    def condition(self) -> str:
        return f"{self.name} {self.op} {self.constant}"

    def never_holds(self, passed: set[str]) -> bool:
        """Whether the test is false for every value passed (constants all)."""
        return all(_CONSTANT.fullmatch(v) and (v == self.constant) == (self.op == "!=") for v in passed)


def _block(lines: list[str], line: int) -> str:
    """The lines of the function or lambda starting at `line`, up to the brace that closes it at its own
    indentation (HANDLER_LINES at most)."""
    first = lines[line - 1] if 0 < line <= len(lines) else ""
    indent = len(first) - len(first.lstrip())
    taken = [first]
    for text in lines[line : line + HANDLER_LINES]:
        taken.append(text)
        if text.lstrip().startswith("}") and len(text) - len(text.lstrip()) <= indent:
            break
    return "\n".join(taken)


def endpoint_gates(
    change: FileChange, endpoints: Callable[[str], tuple[str, ...]], passing: _HandlerArguments
) -> list[EndpointGate]:
    """The added conditions comparing a parameter of the function with a constant, around (or holding) a
    reading of a field Ollama sends that the old code read in that function too, false for what the handler
    of an endpoint Ollama sends the field to passes."""
    lines = change.new_code_lines
    old_reads = _reads_by_function(change.old_code_lines)
    return [
        gate
        for span in change.significant
        for line, code in change.added_code(span)
        for gate in _endpoint_gates_at(lines, line, code, old_reads, endpoints, passing)
    ]


def _endpoint_gates_at(
    lines: list[str],
    line: int,
    code: str,
    old_reads: dict[str | None, set[str]],
    endpoints: Callable[[str], tuple[str, ...]],
    passing: _HandlerArguments,
) -> list[EndpointGate]:
    tests = _parameter_tests(lines, line, code)
    if not tests:
        return []
    read_before = old_reads.get(tests[0].function, set())
    pairs = [(line, f) for f in _condition_reads(code)] + _body_reads(lines, line)
    first = {field: n for n, field in reversed(pairs) if field in read_before}
    return [
        EndpointGate(field, t.condition, endpoint, min(passed), line, n)
        for field, n in first.items()
        for t in tests
        for endpoint, passed in _passing(t, endpoints(field), passing)
    ]


def _passing(
    test: _ParameterTest, endpoints: tuple[str, ...], passing: _HandlerArguments
) -> list[tuple[str, set[str]]]:
    """The endpoints whose handlers pass only values the test is false for, with those values."""
    found = []
    for endpoint in endpoints:
        passed = passing.passed(endpoint.split(" ", 1)[-1], test.function, test.index)
        if passed and test.never_holds(passed):
            found.append((endpoint, passed))
    return found


def _parameter_tests(lines: list[str], line: int, code: str) -> list[_ParameterTest]:
    """The conjuncts of an `if` on the line that compare a parameter of the function with a constant."""
    compared = _COMPARED.findall(code.split("{", 1)[0]) if "if" in code else []
    signature = _signature(lines, line) if compared else None
    if signature is None:
        return []
    function, parameters = signature
    return [
        _ParameterTest(function, name, parameters.index(name), op, constant)
        for name, op, constant in compared
        if name in parameters
    ]


def _condition_reads(code: str) -> set[str]:
    """The fields a condition reads, by a presence test too (`body.count("k")`)."""
    condition = code.split("{", 1)[0]
    return {g for m in _READ.finditer(condition) for g in m.groups() if g} | set(_PRESENCE.findall(condition))


def _signature(lines: list[str], line: int) -> tuple[str, list[str]] | None:
    """The name and parameter names of the function whose definition starts nearest above the line."""
    found = definition_above(lines, line)
    if found is None:
        return None
    number, name = found
    head = "\n".join(lines[number - 1 : number + SIGNATURE_LINES])
    args, _ = split_args(head, head.index("(", head.index(name)))
    return name, [n[-1] for a in args if (n := re.findall(r"[A-Za-z_]\w*", a))]


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


def _endpoint_draft(path: str, gate: EndpointGate, refs: tuple[LocalRef, ...]) -> Draft:
    field, endpoint = code_span(gate.field), code_span(gate.endpoint)
    return _gated(
        path,
        (gate.line, gate.read_at),
        f"llama-server now reads {field} only under a condition that {endpoint}, where Ollama sends it, never meets",
        f"{_put_under(path, field, gate.read_at)}, {code_span(gate.condition)} "
        f"({code_span(f'{path}:{gate.line}')}). The handler of {endpoint} passes "
        f"{code_span(gate.passed)} there, so the condition never holds for it. The old code read {field} there "
        f"without it. Ollama sends {field} to {endpoint}, so the value it sends is now ignored, silently.",
        refs,
        f"request-gate:{gate.field}:{gate.endpoint}",
    )


def _draft(path: str, gate: Gate, refs: tuple[LocalRef, ...]) -> Draft:
    field, key = code_span(gate.field), code_span(gate.key)
    return _gated(
        path,
        (gate.line, gate.read_at),
        f"llama-server now reads {field} only when the request sets {key}, which Ollama never sends",
        f"{_put_under(path, field, gate.read_at)} on {key} ({code_span(f'{path}:{gate.line}')}). The old code read {field} there without it. Ollama "
        f"sends {field} and never {key}, so the value it sends is now ignored, silently. Send {key} where "
        "Ollama sends the field, or keep upstream's old reading.",
        refs,
        f"request-gate:{gate.field}:{gate.key}",
    )


def _put_under(path: str, field: str, read_at: int) -> str:
    return f"Upstream put the reading of {field} ({code_span(f'{path}:{read_at}')}) under a new condition"


def _gated(
    path: str, lines: tuple[int, int], title: str, detail: str, refs: tuple[LocalRef, ...], cause: str
) -> Draft:
    """A high item at the new condition, blaming it and the reading under it."""
    return Draft("server", "high", title, detail, path, lines[0], (lines,), local_refs=refs[:10], cause=cause)
