"""The defaults llama-server's request parsing gives the fields Ollama leaves out, at both refs.

A handler reads a field with a default (`json_value(body, "parse_special", true)`, a schema field declared
with a struct member whose initializer is the default: `new field_bool("return_progress",
params.return_progress)`). Where Ollama's requests to that endpoint leave the field out (never send it, or
only sometimes), the default is what Ollama gets; a default that changed changes what every such request
does, with nothing to see on Ollama's side. A field Ollama's code names and sends only sometimes is one it
relies on the default of where it leaves it out (medium); one it never names is information: most such
defaults switch on something Ollama does not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.contracts.model import WireField
from bot.review.cppreach import structs
from bot.review.paramdefaults import declared_at, same_value
from bot.review.payloads import Decoded
from bot.review.requests import REQUEST_REACH
from bot.review.servercode import ServerCode, Unit
from bot.review.serverjson import Emission

_LITERAL = re.compile(
    r'^(?:[-+]?[\d.]+[fFuUlL]*|true|false|nullptr|"(?:\\.|[^"\\])*"|(?:[\w]+::)*[A-Z][A-Z0-9_]+)$'
)
_MEMBER = re.compile(r"^[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)+$")
REFS_SHOWN = 3


@dataclass(frozen=True)
class Default:
    """A field's default at one ref: its value, and where that value is written."""

    value: str
    path: str
    line: int
    member: str = ""  # `struct::member` when the value is a member's initializer


def default_drafts(
    old: ServerCode,
    new: ServerCode,
    fields: Sequence[WireField],
    ollama: Mapping[str, str],
    decoded: Sequence[Decoded] = (),
) -> list[Draft]:
    """One item per field of an endpoint Ollama sends requests to, left out of them, whose default the bump
    changes; `decoded` are the fields Ollama decodes from the answers."""
    sent: dict[str, list[WireField]] = {}
    for f in fields:
        if f.direction == "request":
            sent.setdefault(f.endpoint, []).append(f)
    drafts = []
    members = _member_defaults(old.texts), _member_defaults(new.texts)
    for endpoint, bodies in sent.items():
        route = endpoint.split(" ", 1)[-1]
        before, after = _defaults(old, route, members[0]), _defaults(new, route, members[1])
        answered = [f for f in decoded if f.source.startswith(f"{endpoint} ")]
        for key in sorted(before.keys() & after.keys()):
            was, now = before[key], after[key]
            leaving = left_out(key, bodies, ollama)
            if leaving is not None and not same_value(was.value, now.value):
                decides = _decided_field(new, route, key, answered)
                drafts.append(_draft(endpoint, key, was, now, *leaving, decides))
    return drafts


def _decided_field(code: ServerCode, route: str, key: str, decoded: Sequence[Decoded]) -> Decoded | None:
    """A field Ollama decodes from the endpoint whose content the key's value decides: the handler reads the
    key into a local (`const bool with_pieces = json_value(body, "with_pieces", false);`) and writes that
    field, or something inside it, under a condition on the local."""
    for unit in code.reached(code.handlers(route), REQUEST_REACH):
        local = _local_of(code, unit, key)
        guarded = _guarded_by(unit, local) if local else []
        found = next((f for e in guarded for f in decoded if _inside((*e.parents, e.key), f.keys)), None)
        if found is not None:
            return found
    return None


def _local_of(code: ServerCode, unit: Unit, key: str) -> str | None:
    """The local a unit reads the key into, if the line reading it assigns one."""
    m = _READ_INTO.search(code.line_text(unit.path, unit.reads[key])) if key in unit.reads else None
    return m[1] if m is not None and m[2] == key else None


def _guarded_by(unit: Unit, local: str) -> list[Emission]:
    """The unit's keys written under a condition on the local."""
    named = re.compile(rf"\b{re.escape(local)}\b")
    return [e for e in unit.emissions if any(named.search(g) for g in e.guards)]


def _inside(written: tuple[str, ...], keys: tuple[str, ...]) -> bool:
    return bool(keys) and written[: len(keys)] == keys


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
    decides: Decoded | None = None,
) -> Draft:
    where = ", ".join(code_span(f"{r.path}:{r.line}") for r in refs[:REFS_SHOWN])
    sends = "never send it" if how == "never" else "leave it out on some requests"
    detail = (
        f"Ollama's requests to {code_span(endpoint)} {sends} ({where}), so llama-server's default applies: "
        f"before {code_span(was.value)} ({code_span(f'{was.path}:{was.line}')}), now {code_span(now.value)}. "
        "Every such request now behaves differently: send the value Ollama wants, or check that the new "
        "default is right."
    )
    if decides is not None:
        detail += (
            f" The value decides what llama-server writes into {code_span(decides.name)}, which Ollama decodes "
            f"({code_span(f'{decides.ref.path}:{decides.ref.line}')}) as {code_span(decides.go_type)}."
        )
        refs = (*refs, decides.ref)
    return Draft(
        "server",
        "info" if how == "never" and decides is None else "medium",
        f"Default of {code_span(key)} on {code_span(endpoint)} changed; Ollama leaves it out of its requests",
        detail,
        now.path,
        now.line,
        local_refs=refs,
        cause=f"default:{now.member}" if now.member else f"default:{endpoint} {key}",
    )
