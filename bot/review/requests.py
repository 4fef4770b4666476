"""The request fields Ollama sends, checked against the request parsing of the endpoints it calls at both refs.

Only the functions an endpoint's handler reaches (by name, a few calls deep) count: the keys they read
(`x.at(key)`, `x.contains(key)`, a reader function's key argument, a named constant for the key) and the fields
of a declarative request schema they declare (with its other names and bounds). A field Ollama sends that the
endpoint read at the old ref and reads no more is high: the value is ignored. A bound the new ref puts on a
field that rejects a value Ollama sends (a constant of its code, a default, a value its documentation
promises for the option it forwards) is high, naming the value; one that clamps it is medium; a narrower
bound on a value Ollama only forwards from its user is information.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from bot.markup import code_span
from bot.model import LocalRef
from bot.review import bounds
from bot.review.changes import Draft
from bot.review.consumers.contracts.model import WireField
from bot.review.servercode import ServerCode, Unit
from bot.review.serverjson import SchemaField
from bot.review.source import LineIndex, non_test_paths

REQUEST_REACH = 3  # calls followed from an endpoint's handler to the functions that parse its request
DOCUMENTS = ("**/*.md", "**/*.mdx")
_DOC_VALUE = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*=\s*([^,;)|]+)")
_DOC_DEFAULT = re.compile(r"[Dd]efault:?\s*(-?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Documented:
    """A value Ollama's documentation promises for an option."""

    value: str
    says: str  # "-1 = num_ctx", "default 64"
    ref: LocalRef


class Documentation:
    """The rows of the markdown tables of Ollama's tree, by the option their first cell names."""

    def __init__(self, ollama: Mapping[str, str]):
        self.ollama = ollama

    @cached_property
    def _rows(self) -> dict[str, list[tuple[str, LocalRef]]]:
        rows: dict[str, list[tuple[str, LocalRef]]] = {}
        for path in non_test_paths(self.ollama, DOCUMENTS):
            text = self.ollama.get(path) or ""
            if "|" not in text:
                continue
            index = LineIndex(text)
            for m in re.finditer(r"(?m)^\|\s*`?([\w.-]+)`?\s*\|(.*)$", text):
                rows.setdefault(m[1], []).append((m[2], LocalRef(path, index.line(m.start()))))
        return rows

    def values(self, options: Sequence[str]) -> list[Documented]:
        found = []
        for option in options:
            for row, ref in self._rows.get(option, []):
                found += [Documented(m[1], f"{m[1]} = {m[2].strip()}", ref) for m in _DOC_VALUE.finditer(row)]
                found += [Documented(m[1], f"default {m[1]}", ref) for m in _DOC_DEFAULT.finditer(row)]
        return found


@dataclass
class Parsing:
    """What the functions an endpoint's handler reaches read of a request, at one ref."""

    reads: dict[str, list[tuple[Unit, int]]]  # key -> (function, line) of each function reading it
    schema: dict[str, tuple[SchemaField, Unit]]  # every name of a schema field -> (field, function)

    def readers(self, keys: tuple[str, ...], siblings: set[str]) -> list[tuple[Unit, int]]:
        """The functions that read a field by its path: any reading a top-level key; for a nested one, those
        that read another of its siblings too (`id` of a tool call is not `id` of a LoRA entry)."""
        found = self.reads.get(keys[-1], [])
        if len(keys) == 1:
            return found
        return [(u, n) for u, n in found if len(u.reads.keys() & siblings) >= 2]


def parsing(code: ServerCode, route: str) -> Parsing | None:
    """The request parsing of one endpoint; None when no handler is registered for it."""
    handlers = code.handlers(route)
    if not handlers:
        return None
    reads: dict[str, list[tuple[Unit, int]]] = {}
    schema: dict[str, tuple[SchemaField, Unit]] = {}
    for unit in code.reached(handlers, REQUEST_REACH):
        for key, line in unit.reads.items():
            reads.setdefault(key, []).append((unit, line))
        for declared in unit.schema:
            for name in declared.names:
                schema.setdefault(name, (declared, unit))
    return Parsing(reads, schema)


def request_drafts(
    old: ServerCode,
    new: ServerCode,
    fields: Sequence,
    documented: Callable[[Sequence[str]], list[Documented]],
) -> list[Draft]:
    """Fields Ollama sends (contracts.WireField of requests) that the new ref stops reading or bounds: one
    item per field name, with every Ollama line that sends it."""
    drafts: dict[str | None, Draft] = {}
    refs: dict[str | None, list[LocalRef]] = {}
    for endpoint in dict.fromkeys(f.endpoint for f in fields):
        sent = [f for f in fields if f.endpoint == endpoint]
        for f, draft in _endpoint_drafts(endpoint, sent, old, new, documented):
            drafts.setdefault(draft.cause, draft)
            refs.setdefault(draft.cause, []).append(f.ref)
    return [replace(d, local_refs=tuple(dict.fromkeys([*refs[c], *d.local_refs]))) for c, d in drafts.items()]


def _endpoint_drafts(
    endpoint: str, sent: Sequence, old: ServerCode, new: ServerCode, documented
) -> Iterator[tuple[WireField, Draft]]:
    """(field, item) of the fields sent to one endpoint, when both refs register a handler for it."""
    route = endpoint.split(" ", 1)[-1]
    before, after = parsing(old, route), parsing(new, route)
    if before is None or after is None:
        return
    siblings = _siblings(sent)
    for f in sent:
        for draft in _field_drafts(f, endpoint, (before, after), new, documented, siblings[_keys(f)[:-1]]):
            yield f, draft


def _keys(f) -> tuple[str, ...]:
    return tuple(k for k in f.path.replace("[]", "").split(".") if k)


def _siblings(fields: Sequence) -> dict[tuple[str, ...], set[str]]:
    """Path of an object -> the keys of it that Ollama sends."""
    found: dict[tuple[str, ...], set[str]] = {}
    for f in fields:
        found.setdefault(_keys(f)[:-1], set()).add(_keys(f)[-1])
    return found


def _field_drafts(
    f, endpoint: str, parsed: tuple[Parsing, Parsing], new: ServerCode, documented, siblings: set[str]
) -> Iterator[Draft]:
    before, after = parsed
    keys = _keys(f)
    # a field the old ref read only to reject a request with: not reading it rejects less, and does nothing
    read = [(unit, line) for unit, line in before.readers(keys, siblings) if keys[-1] not in unit.validated]
    if read and not after.reads.get(keys[-1]):
        yield _unread_draft(f, keys[-1], endpoint, read[0], parsed, new)
    elif keys[-1] in after.schema and after.schema[keys[-1]][0].bounds is not None:
        draft = _bound_draft(
            f, keys[-1], endpoint, before.schema.get(keys[-1]), after.schema[keys[-1]], documented
        )
        if draft is not None:
            yield draft


def _unread_draft(
    f, key: str, endpoint: str, read: tuple[Unit, int], parsed: tuple[Parsing, Parsing], new: ServerCode
) -> Draft:
    unit, line = read
    still = next(iter(new.by_name.get(unit.name, [])), None)
    return Draft(
        "server",
        "high",
        f"llama-server no longer reads request field {code_span(key)} of {endpoint}, which Ollama sends",
        (
            f"Ollama sends {code_span(f.path)} to llama-server's {endpoint} ({f.ref.path}:{f.ref.line}). At the old ref "
            f"{code_span(unit.qualified)} read it ({unit.path}:{line}){_renamed(key, *parsed)}. llama-server ignores "
            "the value: what Ollama asks for with it no longer happens."
        ),
        still.path if still is not None else unit.path,
        still.line if still is not None else None,
        removed=(unit.path, f'"{key}"'),
        cause=f"request-field:{key}",
    )


def _renamed(key: str, before: Parsing, after: Parsing) -> str:
    """The other names of the old schema field, and the schema field that has one of them now."""
    old = before.schema.get(key)
    others = [n for n in old[0].names if n != key] if old is not None else []
    said = f" (also as {', '.join(f'{code_span(n)}' for n in others)})" if others else ""
    said += "; at the new ref no function the endpoint's handler reaches reads it"
    now = next((after.schema[n][0].names[0] for n in others if n in after.schema), None)
    return said + (f"; the schema field there is now {code_span(now)}" if now else "")


def _bound_draft(
    f,
    key: str,
    endpoint: str,
    old: tuple[SchemaField, Unit] | None,
    new: tuple[SchemaField, Unit],
    documented,
) -> Draft | None:
    """The item for a bound the new ref puts on a field Ollama sends, when it bites on a value Ollama sends
    (or, on values Ollama only forwards, when it is narrower than the old one); None otherwise."""
    field, unit = new
    before = old[0] if old is not None else None
    if before is not None and (before.bounds, before.rejects) == (field.bounds, field.rejects):
        return None
    promised = documented(f.forwards)
    failing = bounds.failing(_values(f, promised), before, field)
    severity = _bound_severity(f, failing, before, field)
    if severity is None:
        return None
    return Draft(
        "server",
        severity,
        _bound_title(key, endpoint, failing, before, field),
        _bound_detail(f, endpoint, before, field, unit, failing),
        unit.path,
        field.line,
        blame=((field.line, field.line + 2),),
        local_refs=tuple(d.ref for d in promised if (d.value, d.says) in failing),
        cause=f"request-bound:{key}",
    )


def _bound_severity(f, failing: list, before: SchemaField | None, field: SchemaField) -> str | None:
    """high: a value Ollama sends now fails the request; medium: it is now clamped, or rejected beyond a bound
    only the running server knows; info: the bound only narrows what Ollama forwards of its user's; None:
    nothing Ollama sends changes."""
    if failing:
        return "high" if field.rejects else "medium"
    if bounds.runtime_bound(before, field) is not None:
        return "medium"
    forwarded = any(v in ("integer", "number") for v in f.values)
    return "info" if forwarded and bounds.narrower(before, field) else None


def _values(f, promised: list[Documented]) -> list[tuple[str, str]]:
    """The values Ollama sends in a field that are numbers: (value, what its documentation says of it)."""
    own = [(v, "") for v in f.values if bounds.number(v) is not None]
    return list(dict.fromkeys(own + [(d.value, d.says) for d in promised]))


def _bound_title(key: str, endpoint: str, failing, before: SchemaField | None, field: SchemaField) -> str:
    verb = "rejects" if field.rejects else "clamps"
    runtime = bounds.runtime_bound(before, field) if not failing else None
    if runtime is not None:
        return (
            f"llama-server now {verb} request field {code_span(key)} of {endpoint}, which Ollama sends, beyond "
            f"a bound its own settings give: {code_span(_shortened(runtime))}"
        )
    if not failing:
        return f"llama-server now {verb} some values of request field {code_span(key)} of {endpoint}, which Ollama forwards"
    shown = ", ".join(v for v, _ in failing[:3])
    return f"llama-server now {verb} {code_span(key)} {shown} of {endpoint}, which Ollama sends"


MAX_BOUND_SHOWN = 60


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_BOUND_SHOWN else text[:MAX_BOUND_SHOWN] + "…"


def _bound_detail(
    f, endpoint: str, before: SchemaField | None, field: SchemaField, unit: Unit, failing
) -> str:
    was = f"{before.bounds[0]}..{before.bounds[1]}" if before is not None and before.bounds else "no bound"
    now = f"{field.bounds[0]}..{field.bounds[1]}" if field.bounds else "no bound"
    sent = "; ".join(f"{v} ({says}, in Ollama's documentation)" if says else v for v, says in failing)
    what = (
        "the request fails with llama-server's error"
        if field.rejects
        else "llama-server uses the nearest bound"
    )
    values = f"Ollama sends {sent} there" if failing else "Ollama forwards its user's value unchecked"
    runtime = bounds.runtime_bound(before, field) if not failing else None
    if runtime is not None:
        values = f"the bound {code_span(runtime)} is only known to the running server, so a value Ollama sends may now be out of it"
    return (
        f"Ollama sends {code_span(f.path)} to llama-server's {endpoint} ({f.ref.path}:{f.ref.line}). Its schema field "
        f"({code_span(unit.qualified)}, {unit.path}:{field.line}) took {was} at the old ref and takes {now} at the new "
        f"ref; {values}: {what}. Validate or map the value in Ollama, or document the new range."
    )
