"""The defaults llama-server's request parsing gives the fields Ollama leaves out, at both refs.

A handler reads a field with a default (`json_value(body, "parse_special", true)`, a schema field declared
with a struct member whose initializer is the default: `new field_bool("return_progress",
params.return_progress)`). Where Ollama's requests to that endpoint leave the field out (never send it, or
only sometimes), the default is what Ollama gets; a default that changed changes what every such request
does, with nothing to see on Ollama's side. A field Ollama's code names and sends only sometimes is one it
relies on the default of where it leaves it out (medium); one it never names is information (most such
defaults switch on something Ollama does not read), except where the default decides a field Ollama decodes,
or on an endpoint that does a tokenizer's or template's work for Ollama, whose whole answer Ollama uses: medium.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.contracts.behaviours import area_of
from bot.review.consumers.contracts.model import WireField
from bot.review.consumers.gofields import field_lines, reading
from bot.review.cppreach import structs
from bot.review.paramdefaults import declared_at, same_value
from bot.review.payloads import Decoded, Writers
from bot.review.requests import REQUEST_REACH
from bot.review.servercode import ServerCode, Unit
from bot.review.serverjson import Emission

_LITERAL = re.compile(
    r'^(?:[-+]?[\d.]+[fFuUlL]*|true|false|nullptr|"(?:\\.|[^"\\])*"|(?:[\w]+::)*[A-Z][A-Z0-9_]+)$'
)
_MEMBER = re.compile(r"^[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)+$")
REFS_SHOWN = 3
MIN_NAME = 3  # a shorter name read into (`n`, `ok`) is too common to follow


@dataclass(frozen=True)
class Default:
    """A field's default at one ref: its value, and where that value is written."""

    value: str
    path: str
    line: int
    # `struct::member` when the value is a member's initializer; the local's name when it is a local's
    member: str = ""

    @property
    def shown(self) -> str:
        """The value as an item quotes it: a local's with its name (`use_base64 = false`)."""
        return f"{self.member} = {self.value}" if self.member and "::" not in self.member else self.value


def default_drafts(
    old: ServerCode,
    new: ServerCode,
    fields: Sequence[WireField],
    ollama: Mapping[str, str],
    writers: Writers | None = None,
    called_at: Mapping[str, tuple[LocalRef, ...]] | None = None,
) -> list[Draft]:
    """One item per field of an endpoint Ollama sends requests to, left out of them, whose default the bump
    changes; `writers` of the fields Ollama decodes from the answers, at the new ref; `called_at`, where
    Ollama calls each endpoint."""
    drafts = []
    members = _member_defaults(old.texts), _member_defaults(new.texts)
    for endpoint, bodies in _sent(fields).items():
        route = endpoint.split(" ", 1)[-1]
        before, after = _defaults(old, route, members[0]), _defaults(new, route, members[1])
        for key in sorted(before.keys() & after.keys()):
            was, now = before[key], after[key]
            leaving = left_out(key, bodies, ollama)
            if leaving is not None and not same_value(was.value, now.value):
                decides = (
                    _decided_field(writers, endpoint, _read_into(new, route, key, now)) if writers else None
                )
                read_at = (
                    tuple(field_lines(decides.field.ref, ollama, reading))
                    if decides
                    else (called_at or {}).get(endpoint, ())
                    if _does_work(route)
                    else ()
                )
                drafts.append(_draft(endpoint, key, was, now, *leaving, decides, read_at))
    return drafts


def _sent(fields: Sequence[WireField]) -> dict[str, list[WireField]]:
    """Endpoint -> the fields of Ollama's requests to it."""
    sent: dict[str, list[WireField]] = {}
    for f in fields:
        if f.direction == "request":
            sent.setdefault(f.endpoint, []).append(f)
    return sent


@dataclass(frozen=True)
class Decides:
    """A field Ollama decodes, and the entry of the new ref that writes it under, or from, the key's value."""

    field: Decoded
    path: str
    line: int


def _does_work(route: str) -> bool:
    """Whether an endpoint does a tokenizer's or a template's work (`/detokenize`, `/apply-template`): its
    answer is the result Ollama uses."""
    return area_of(route) in ("tokenizer", "template")


def _read_into(code: ServerCode, route: str, key: str, default: Default) -> set[str]:
    """The names the key's value is read into: the locals the endpoint's handling assigns it to
    (`const bool with_pieces = json_value(body, "with_pieces", false);`), the member whose initializer is its
    default (`params.post_sampling_probs`)."""
    names = {_local_of(code, unit, key) for unit in code.reached(code.handlers(route), REQUEST_REACH)}
    names.add(default.member.rsplit("::", 1)[-1])
    return {n for n in names if n and len(n) >= MIN_NAME}


def _decided_field(writers: Writers, endpoint: str, names: set[str]) -> Decides | None:
    """A field Ollama decodes from the endpoint whose content the key's value decides: an entry that writes the
    field, or something inside it, under a condition that names one of the names the value is read into, or
    with a value computed from one (`post_sampling_probs ? p.prob : logarithm(p.prob)`)."""
    if not names:
        return None
    named = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    answered = [f for f in writers.fields if f.source.startswith(f"{endpoint} ")]
    for unit, e in writers.entries():
        found = (
            next((f for f in answered if writers.writes_into(unit, e, f)), None) if _names(e, named) else None
        )
        if found is not None:
            return Decides(found, unit.path, e.line)
    return None


def _names(entry: Emission, named: re.Pattern[str]) -> bool:
    """Whether the entry's value, or a condition it is written under, names one of the names."""
    return bool(named.search(entry.value)) or any(named.search(g) for g in entry.guards)


def _local_of(code: ServerCode, unit: Unit, key: str) -> str | None:
    """The local a unit reads the key into, if the line reading it assigns one."""
    m = _READ_INTO.search(code.line_text(unit.path, unit.reads[key])) if key in unit.reads else None
    return m[1] if m is not None and m[2] == key else None


_READ_INTO = re.compile(r'\b([A-Za-z_]\w*)\s*=\s*[^;"]*"([^"]+)"')  # `name = json_value(body, "key", ...)`


def _defaults(code: ServerCode, route: str, members: Mapping[str, list[Default]]) -> dict[str, Default]:
    """The request keys an endpoint's handlers (and what they call) read with a default whose value is
    known: a literal, or a member whose initializer one struct of the sources gives (`members`)."""
    found: dict[str, Default] = {}
    for unit in code.reached(code.handlers(route), REQUEST_REACH):
        for key, written in unit.defaults.items():
            if key not in found:
                default = _valued(written, unit.path, unit.reads.get(key, unit.line), members)
                if default is not None:
                    found[key] = default
    return found


def _valued(written: str, path: str, line: int, members: Mapping[str, list[Default]]) -> Default | None:
    if _LITERAL.match(written):
        return Default(written, path, line)
    local, _, value = written.partition(" = ")
    if value and _LITERAL.match(value):
        return Default(value, path, line, local)
    if _MEMBER.match(written):
        name = re.split(r"\.|->", written)[-1].strip()
        known = members.get(name, [])
        if len({d.value for d in known}) == 1:
            return known[0]
    return None


def _member_defaults(texts: Mapping[str, str]) -> dict[str, list[Default]]:
    """Member name -> each initializer the sources' structs give it."""
    found: dict[str, list[Default]] = {}
    for path, text in texts.items():
        if "struct" not in text:
            continue
        for struct, members in structs(text).items():
            for name, m in members.items():
                if m.default:
                    found.setdefault(name, []).append(Default(m.default, path, m.line, f"{struct}::{name}"))
    return found


def left_out(
    key: str, bodies: Sequence[WireField], ollama: Mapping[str, str]
) -> tuple[str, tuple[LocalRef, ...]] | None:
    """How Ollama's requests leave a field out ("never", with where the body is declared; "only sometimes",
    with where the field is), or None when they always send it."""
    named = [f for f in bodies if _last_name(f.path) == key]
    if not named:
        return "never", (declared_at(ollama, _first_field(bodies)),)
    if all(f.optional for f in named):
        return "only sometimes", tuple(dict.fromkeys(f.ref for f in named))
    return None


def _last_name(path: str) -> str:
    return path.replace("[]", "").rsplit(".", 1)[-1]


def _first_field(bodies: Sequence[WireField]) -> LocalRef:
    """The first line of a body's top-level fields (of any field, when it has none)."""
    top = [f for f in bodies if "." not in f.path and "[" not in f.path] or list(bodies)
    return min((f.ref for f in top), key=lambda r: (r.path, r.line))


def _draft(
    endpoint: str,
    key: str,
    was: Default,
    now: Default,
    how: str,
    refs: tuple[LocalRef, ...],
    decides: Decides | None = None,
    read_at: tuple[LocalRef, ...] = (),
) -> Draft:
    """The item; `read_at`, the Ollama lines that read the decided field, or that call an endpoint doing
    work."""
    route = endpoint.split(" ", 1)[-1]
    detail = _opening(endpoint, how, refs, was, now)
    if decides is not None:
        f = decides.field
        detail += (
            f" The value decides what llama-server writes into {code_span(f.name)} "
            f"({code_span(f'{decides.path}:{decides.line}')}), which Ollama decodes "
            f"({code_span(f'{f.ref.path}:{f.ref.line}')}) as {code_span(f.go_type)}."
        )
        refs = (*refs, f.ref)
    elif _does_work(route):
        detail += f" Ollama has llama-server do this {area_of(route)} work and uses its answer as it is"
        detail += f" ({_places(read_at)})." if read_at else "."
    refs = (*refs, *read_at)
    return Draft(
        "server",
        "info" if how == "never" and decides is None and not _does_work(route) else "medium",
        f"Default of {code_span(key)} on {code_span(endpoint)} changed; Ollama leaves it out of its requests",
        detail,
        now.path,
        now.line,
        local_refs=refs,
        cause=f"default:{now.member}" if now.member else f"default:{endpoint} {key}",
    )


def _opening(endpoint: str, how: str, refs: tuple[LocalRef, ...], was: Default, now: Default) -> str:
    """What Ollama's requests leave out, and the default they get before and after."""
    sends = "never send it" if how == "never" else "leave it out on some requests"
    return (
        f"Ollama's requests to {code_span(endpoint)} {sends} ({_places(refs)}), so llama-server's default "
        f"applies: before {code_span(was.shown)} ({code_span(f'{was.path}:{was.line}')}), now "
        f"{code_span(now.shown)}. Every such request now behaves differently: send the value Ollama wants, or "
        "check that the new default is right."
    )


def _places(refs: Sequence[LocalRef]) -> str:
    return ", ".join(code_span(f"{r.path}:{r.line}") for r in refs[:REFS_SHOWN])
