"""A constant a request's handling passed that is now read from the request, with a default other than the
constant: `tokenize(..., true)` becomes `tokenize(..., parse_special)` with `parse_special =
json_value(data, "parse_special", false)`. Ollama's requests that leave the key out now get the default, not
the old constant, with nothing to see on Ollama's side."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.callshifts import argument_spans
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.checks.server.error_status import called_endpoints, unit_at
from bot.review.checks.server.wire import new_server_code
from bot.review.consumers.contracts.model import WireField
from bot.review.consumers.gofields import with_field_lines, writing
from bot.review.limits import fields_in
from bot.review.requestdefaults import left_out
from bot.review.servercode import ServerCode

if TYPE_CHECKING:
    from bot.review.run import Run

ASSIGNMENT_REACH = 8  # added lines above a call where the local it passes may be given its value
READ_REACH = 60  # lines above a call where the locals of its other arguments may be read from the request
_CONSTANT = re.compile(r"^(?:true|false|nullptr|[-+]?\d+(?:\.\d+)?[fFuUlL]*)$")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_READ = re.compile(r'json_value\s*\(\s*\w+\s*,\s*"(\w+)"\s*,\s*([^(),]+?)\s*\)')


@dataclass(frozen=True)
class Switch:
    """A call's argument that was a constant and is now a local read from the request."""

    path: str
    line: int
    function: str  # the function called
    was: str
    now: str  # the local passed now
    key: str
    default: str
    keys_applied_to: tuple[str, ...] = ()  # the request keys the call's other arguments are read from


@check(
    "server.request-switches",
    area="server",
    inputs=("server-sources", "wire-groups"),
    applies=lambda run: bool(run.server_changes),
)
def request_switches(run: Run) -> list[Draft]:
    changes = [c for c in run.server_changes if c.path.endswith(".cpp")]
    if not any("json_value" in c.changed_raw[0] for c in changes):
        return []
    code = new_server_code(run)
    return switch_drafts(changes, code, run.contracts.endpoints, run.contracts.request_fields, run.local)


def switch_drafts(
    changes: Sequence[FileChange],
    code: ServerCode,
    endpoints: Mapping[str, tuple[LocalRef, ...]],
    fields: Sequence[WireField],
    ollama: Mapping[str, str],
) -> list[Draft]:
    """One medium item per switch in code an endpoint Ollama calls reaches, whose key Ollama's requests to it
    leave out, at Ollama's request and the fields the call handles."""
    bodies: dict[str, list[WireField]] = {}
    for f in fields:
        if f.direction == "request":
            bodies.setdefault(f.endpoint, []).append(f)
    drafts = []
    for s in (s for c in changes for s in switches(c)):
        unit = unit_at(code, s.path, s.line)
        called = sorted(called_endpoints(code, unit, endpoints)) if unit else []
        draft = next(filter(None, (_endpoint_draft(s, e, bodies.get(e, []), ollama) for e in called)), None)
        drafts += [draft] if draft else []
    return drafts


def _endpoint_draft(
    s: Switch, endpoint: str, bodies: list[WireField], ollama: Mapping[str, str]
) -> Draft | None:
    left = left_out(s.key, bodies, ollama) if bodies else None
    if left is None:
        return None
    applied = tuple(f.ref for f in bodies if f.path in s.keys_applied_to)
    return with_field_lines(_draft(s, endpoint, left[0], (*applied, *left[1])), ollama, writing)


def switches(change: FileChange) -> Iterator[Switch]:
    """The calls a change rewrites to pass, where a constant stood, a local the added lines above read from
    the request with a default other than that constant."""
    for span in change.significant:
        removed = [code for _, code in change.removed_code(span)]
        added = change.added_code(span)
        for i, (line, code) in enumerate(added):
            for name, position, local, others in _locals_passed(code):
                was = _constant_at(removed, name, position)
                read = _read_into(local, [c for _, c in added[max(0, i - ASSIGNMENT_REACH) : i]])
                if was is not None and read is not None and read[1] != was:
                    keys = _keys_read(change.new_code_lines, line, others)
                    yield Switch(change.path, line, name, was, local, *read, keys)


def _arguments(code: str) -> Iterator[tuple[str, list[str]]]:
    """Each call on the line, with its arguments' texts."""
    for m in _CALL.finditer(code):
        spans = argument_spans(code, m.end())
        if spans is not None:
            yield m[1], [code[a:b] for a, b in spans]


def _locals_passed(code: str) -> Iterator[tuple[str, int, str, tuple[str, ...]]]:
    """Each local a call on the line passes: the call, its position, and the call's other locals."""
    for name, args in _arguments(code):
        passed = [(n, a) for n, a in enumerate(args) if a.isidentifier() and not _CONSTANT.match(a)]
        for position, arg in passed:
            yield name, position, arg, tuple(a for _, a in passed if a != arg)


def _keys_read(lines: list[str], line: int, locals_: tuple[str, ...]) -> tuple[str, ...]:
    """The request keys the locals are read from, on the nearest line above giving each its value."""
    keys: list[str] = []
    for local in locals_:
        given = re.compile(rf"\b{re.escape(local)}\s*=(?!=)(.*)")
        for n in range(line - 1, max(0, line - READ_REACH), -1):
            m = given.search(lines[n - 1]) if n <= len(lines) else None
            if m:
                keys += sorted(fields_in(m[1]))
                break
    return tuple(dict.fromkeys(keys))


def _constant_at(removed: Sequence[str], name: str, position: int) -> str | None:
    """The constant a removed call of the function passed at that position, if one did."""
    for code in removed:
        for called, args in _arguments(code):
            if called == name and position < len(args) and _CONSTANT.match(args[position]):
                return args[position]
    return None


def _read_into(local: str, above: Sequence[str]) -> tuple[str, str] | None:
    """(key, default) of the one request key the local's value is read from, on the lines above."""
    given = re.compile(rf"\b{re.escape(local)}\s*=(?!=)\s*(.*)")
    for code in reversed(above):
        m = given.search(code)
        if m:
            reads = _READ.findall(m[1])
            return (
                (reads[0][0], reads[0][1].strip())
                if len(reads) == 1 and _CONSTANT.match(reads[0][1].strip())
                else None
            )
    return None


def _draft(s: Switch, endpoint: str, how: str, refs: tuple[LocalRef, ...]) -> Draft:
    sends = "never send it" if how == "never" else "leave it out on some requests"
    detail = (
        f"At the old ref the handling of {code_span(endpoint)} passed {code_span(s.was)} to "
        f"{code_span(s.function)}; at the new ref it passes {code_span(s.now)} "
        f"({code_span(f'{s.path}:{s.line}')}), read from the request's {code_span(s.key)} with the default "
        f"{code_span(s.default)}. Ollama's requests to {code_span(endpoint)} {sends}, so they now get "
        f"{code_span(s.default)} where they got {code_span(s.was)}"
        + (
            f", in how llama-server handles their {', '.join(map(code_span, s.keys_applied_to))}"
            if s.keys_applied_to
            else ""
        )
        + f". Send {code_span(s.key)}, or check that the new default is right for Ollama."
    )
    return Draft(
        "server",
        "medium",
        f"llama-server now takes {code_span(s.key)} from the request where it passed {code_span(s.was)}; "
        f"Ollama leaves it out of {code_span(endpoint)}",
        detail,
        s.path,
        s.line,
        ((s.line, s.line),),
        local_refs=refs,
        cause=f"request-switch:{s.key}:{s.function}",
    )
