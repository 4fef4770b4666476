"""The fields Ollama decodes from llama-server's answers, checked function by function at both refs.

The contract inventory says which fields Ollama decodes from each endpoint's response or stream chunk. A
function of the server writes one when the keys around its entry end as the field's path does (`choices` >
`delta` > `content`), when it writes two or more of the field's siblings in one object, or when the
endpoint's handler writes the top-level field itself; code only the handlers of endpoints Ollama never calls
reach is left out. Per such function: the field no longer written (high: Ollama decodes its zero value), or
written only under a new condition (medium). A function that hands the writing to a new helper it calls
still writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.servercode import ServerCode, Unit
from bot.review.serverjson import Emission, unwrapped

# calls followed from a route's handler to the code that writes its answer's top-level fields
HANDLER_REACH = 1
ROUTE_REACH = 4  # calls followed from every route's handler to tell the code of endpoints Ollama never calls
_ZERO = {"bool": "false", "string": '""', "int": "0", "float64": "0", "float32": "0"}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fFlLuU]*")
_NUMERIC = (
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
)
_ZERO_LITERALS: dict[str, Callable[[str], bool]] = {
    "bool": lambda v: v == "false",
    "string": lambda v: v in ('""', "std::string()", "std::string{}", "std::string ()"),
    **dict.fromkeys(_NUMERIC, lambda v: bool(_NUMBER.fullmatch(v)) and float(v.rstrip("fFlLuU")) == 0),
}
# what JSON's null is written as: what Ollama decodes into a pointer, a slice or a map as nil
_NULLS = frozenset(
    {"nullptr", "NULL", "json()", "json(nullptr)", "json{}", "nlohmann::json()", "json::value_t::null"}
)
# an empty object or array, written as such (whitespace out)
_EMPTY = frozenset(
    {
        "json::object()",
        "json::array()",
        "nlohmann::json::object()",
        "nlohmann::json::array()",
        "ordered_json::object()",
        "json::object({})",
    }
)
# the JSON a value expression writes, by its form: nlohmann::json makes an object of a braced list of pairs
_SHAPES = (
    ("an array", re.compile(r"(?:nlohmann::(?:ordered_)?)?json::array\(")),
    ("an object", re.compile(r"(?:nlohmann::(?:ordered_)?)?json(?:::object\(|\s*\{\s*\{\s*\")")),
    ("a string", re.compile(r'"(?:[^"\\]|\\.)*"$')),
    ("a boolean", re.compile(r"(?:true|false)$")),
    ("a number", re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fFlLuU]*$")),
)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\w+|\S')


@dataclass(frozen=True)
class Decoded:
    """A field Ollama decodes from what an endpoint answers."""

    source: str  # "POST /completion stream"
    keys: tuple[str, ...]  # the path, `[]` left out
    go_type: str
    ref: LocalRef

    @property
    def route(self) -> str:
        return self.source.split(" ")[1]

    @property
    def name(self) -> str:
        return ".".join(self.keys)


def decoded_fields(fields: Iterable) -> list[Decoded]:
    """The inventory's response and stream fields (contracts.WireField) as paths of keys."""
    out = []
    for f in fields:
        keys = tuple(k for k in f.path.replace("[]", "").split(".") if k)
        if keys and f.direction in ("response", "stream"):
            out.append(Decoded(f"{f.endpoint} {f.direction}", keys, f.go_type, f.ref))
    return out


class Writers:
    """Which functions of one ref write each field Ollama decodes."""

    def __init__(self, code: ServerCode, fields: Sequence[Decoded], routes: Iterable[str]):
        self.code = code
        self.fields = fields
        self.siblings: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        for f in fields:
            self.siblings.setdefault((f.source, f.keys[:-1]), set()).add(f.keys[-1])
        self.handlers = {
            route: {u.qualified for u in code.reached(code.handlers(route), HANDLER_REACH)}
            for route in {f.route for f in fields}
        }
        self.foreign = code.foreign(routes, ROUTE_REACH)
        self.by_qualified: dict[str, list[Unit]] = {}
        for unit in code.units:
            self.by_qualified.setdefault(unit.qualified, []).append(unit)

    def entries(self) -> Iterator[tuple[Unit, Emission]]:
        """Every entry of the code that endpoints Ollama calls may reach, with its function."""
        for unit in self.code.units:
            if id(unit) not in self.foreign:
                yield from ((unit, e) for e in unit.emissions)

    def writes(self, f: Decoded) -> dict[str, list[Emission]]:
        """Function (qualified name) -> its entries that write the field."""
        found: dict[str, list[Emission]] = {}
        for unit, e in self.entries():
            if e.key == f.keys[-1] and self._writes(unit, e, f):
                found.setdefault(unit.qualified, []).append(e)
        return found

    def writes_into(self, unit: Unit, e: Emission, f: Decoded) -> bool:
        """Whether the entry writes the field, something inside it, or the whole of it at an answer's top
        (`{"choices", json::array()}` in an object of its own)."""
        path = (*e.parents, e.key)
        if path[: len(f.keys)] == f.keys:
            return True
        return e.key == f.keys[-1] and self._writes(unit, e, f)

    def _writes(self, unit: Unit, e: Emission, f: Decoded) -> bool:
        local = (*e.parents, e.key)
        if len(local) >= 2:
            n = min(len(local), len(f.keys))
            return n >= 2 and local[-n:] == f.keys[-n:]
        together = {x.key for x in unit.emissions if x.beside(e)}
        if len(together & self.siblings.get((f.source, f.keys[:-1]), set())) >= 2:
            return True
        return len(f.keys) == 1 and unit.qualified in self.handlers.get(f.route, set())

    def delegates(self, qualified: str, f: Decoded, before: Mapping[str, list[Emission]]) -> bool:
        """Whether the function calls one that writes the field and did not before (the writing moved into
        a helper): a method of the same name on another class that always wrote it is no helper."""
        calls = {name for unit in self.by_qualified.get(qualified, []) for name in unit.calls}
        return any(
            u.qualified not in before and e.key == f.keys[-1] and self._writes(u, e, f)
            for name in calls
            for u in self.code.by_name.get(name, [])
            for e in u.emissions
        )

    def like(self, qualified: str, hits: list[Emission]) -> list[Emission]:
        """The function's entries of the same key, with the same keys around it, as the old entries (a field
        its object's other fields no longer vouch for is the same field)."""
        where = {(e.key, e.parents) for e in hits}
        return [
            e
            for u in self.by_qualified.get(qualified, [])
            for e in u.emissions
            if (e.key, e.parents) in where
        ]

    def unit(self, qualified: str) -> Unit | None:
        units = self.by_qualified.get(qualified)
        return units[0] if units else None

    def keys_at(self, qualified: str, parents: tuple[str, ...]) -> set[str]:
        return {
            e.key for u in self.by_qualified.get(qualified, []) for e in u.emissions if e.parents == parents
        }


def flag_refs(
    new: Writers, writers: Iterable[tuple[str, Emission]], f: Decoded, fields: Sequence[Decoded]
) -> tuple[LocalRef, ...]:
    """Where Ollama declares the boolean fields the writers' objects set true beside the field (`stop` in a
    final chunk): what tells Ollama which answer or frame it reads."""
    set_true = {e.key for qualified, entry in writers for e in _set_true(new, qualified, entry)}
    return tuple(
        g.ref
        for g in fields
        if g.source == f.source
        and g.go_type == "bool"
        and g.keys[:-1] == f.keys[:-1]
        and g.keys[-1] in set_true
    )


def _set_true(new: Writers, qualified: str, entry: Emission) -> list[Emission]:
    """The entries written `true` into the entry's object."""
    return [
        e
        for u in new.by_qualified.get(qualified, [])
        for e in u.emissions
        if e.beside(entry) and _expression(e.value) == "true"
    ]


def field_drafts(old: Writers, new: Writers, fields: Sequence[Decoded]) -> list[Draft]:
    """Fields Ollama decodes that a function stopped writing, or writes under a new condition: one item per
    function and field name, with every Ollama line that decodes it."""
    drafts: dict[str | None, Draft] = {}
    refs: dict[str | None, list[LocalRef]] = {}
    for f in fields:
        for draft in _field_changes(f, old.writes(f), new.writes(f), old, new):
            drafts.setdefault(draft.cause, draft)
            refs.setdefault(draft.cause, []).append(f.ref)
    return [replace(d, local_refs=tuple(dict.fromkeys(refs[cause]))) for cause, d in drafts.items()]


def _field_changes(
    f: Decoded,
    before: Mapping[str, list[Emission]],
    after: Mapping[str, list[Emission]],
    old: Writers,
    new: Writers,
) -> Iterator[Draft]:
    """Per function that wrote the field and is still there: gone, or under a new condition; and, when no
    function writes it any more and none said so, the field gone."""
    judged = list(_judged(f, before, after, new))
    moved = sorted(set(after) - set(before))
    for qualified, hits, kept in judged:
        if kept:
            draft = _still_written_draft(f, old, new, qualified, hits, kept)
        else:
            draft = None if _only_zero(f, hits) else _gone_draft(f, old, new, qualified, hits[0], moved)
        if draft is not None:
            yield draft
    if before and not after and not judged:
        qualified, hits = next(iter(before.items()))
        if not _only_zero(f, hits):
            yield _gone_draft(f, old, new, qualified, hits[0], [])


def _still_written_draft(
    f: Decoded, old: Writers, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    """The item for a field a function still writes: under a new condition, null where it was not (or the
    reverse), or with another value."""
    return (
        _shape_draft(f, new, qualified, hits, kept)
        or _kept_draft(f, new, qualified, hits, kept)
        or _nullness_draft(f, new, qualified, hits, kept)
        or _value_draft(f, old, new, qualified, hits, kept)
        or _filled_draft(f, new, qualified, hits, kept)
    )


def _only_zero(f: Decoded, hits: list[Emission]) -> bool:
    """Whether every entry that wrote the field wrote the zero value of the Go type Ollama decodes it into
    (`false` into a bool): left out, it decodes the same."""
    zero = _ZERO_LITERALS.get(f.go_type)
    return zero is not None and all(zero(_expression(h.value)) for h in hits)


def _judged(
    f: Decoded, before: Mapping[str, list[Emission]], after: Mapping[str, list[Emission]], new: Writers
) -> Iterator[tuple[str, list[Emission], list[Emission]]]:
    """(function, its old entries, its new ones) of the functions still there that write the field or no
    longer do (a function that hands the field to a new helper is left out)."""
    for qualified, hits in before.items():
        if new.unit(qualified) is None:
            continue
        kept = after.get(qualified) or new.like(qualified, hits)
        if kept or not new.delegates(qualified, f, before):
            yield qualified, hits, kept


def _kept_draft(
    f: Decoded, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    added = _new_guards(hits, kept)
    if not added or all(_leaves_out_only_zero(f, e, added) for e in kept):
        return None  # the field left out only where it held what Ollama decodes a missing one as
    return _condition_draft(f, new, qualified, kept[0], hits, added)


def _leaves_out_only_zero(f: Decoded, entry: Emission, guards: list[str]) -> bool:
    """Whether the new conditions only leave the field out when its value is the zero value of the Go type
    Ollama decodes it into (`if (n > 0)` around a count it decodes as an int): missing, it decodes the
    same."""
    value = "".join(_expression(entry.value).split())
    if f.go_type in _NUMERIC:
        zero_tests = {f"{value}>0", f"{value}!=0", f"0<{value}", f"0!={value}"}
    elif f.go_type == "bool":
        zero_tests = {value}
    elif f.go_type == "string":
        zero_tests = {f"!{value}.empty()"}
    else:
        return False
    return all("".join(_expression(g).split()) in zero_tests for g in guards)


def _new_guards(before: list[Emission], after: list[Emission]) -> list[str]:
    """The conditions added to every new entry: each new entry keeps all the conditions of an old one and
    has more (a condition rewritten, not added, is no new condition)."""
    known = set().union(*(e.guards for e in before))
    added = [sorted(e.guards - known) for e in after if any(b.guards < e.guards for b in before)]
    return added[0] if added and len(added) == len(after) and all(added) else []


def _zero(go_type: str) -> str:
    bare = go_type.lstrip("*")
    if go_type.startswith(("*", "[]", "map[")) or bare not in _ZERO:
        return "nothing (nil or empty)" if not bare.startswith("[]") else "an empty list"
    return _ZERO[bare]


def _gone_draft(
    f: Decoded, old: Writers, new: Writers, qualified: str, hit: Emission, elsewhere: list[str]
) -> Draft:
    """The item for a field a function (or, `new` lacking it, every function) no longer writes."""
    was = old.unit(qualified)
    assert was is not None
    now = new.unit(qualified)
    detail = (
        f"Ollama decodes {code_span(f.name)} ({f.go_type or 'a value'}) from llama-server's {f.source} "
        f"({f.ref.path}:{f.ref.line}). At the old ref {code_span(qualified)} ({was.path}:{hit.line}) wrote it; at the "
        f"new ref {_what_now(old, new, qualified, hit, elsewhere)}. Ollama will decode {_zero(f.go_type)} there "
        "instead and carry on as if llama-server had sent it."
    )
    text = old.code.line_text(was.path, hit.line)
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "high",
        f"{code_span(f.name)} of llama-server's {f.source} is no longer written by {code_span(qualified)}",
        detail,
        now.path if now is not None else was.path,
        now.line if now is not None else None,
        removed=(was.path, text) if text else None,
        cause=f"wire-field:{qualified}:{f.keys[-1]}",
    )


def _what_now(old: Writers, new: Writers, qualified: str, hit: Emission, elsewhere: list[str]) -> str:
    """What the function writes instead (new keys beside the field's siblings), and who writes the field."""
    if new.unit(qualified) is None:
        return "no function of llama-server writes it where Ollama reads it"
    said = "it no longer does"
    replaced = sorted(new.keys_at(qualified, hit.parents) - old.keys_at(qualified, hit.parents))
    if replaced:
        said += f" (it now writes {', '.join(f'{code_span(k)}' for k in replaced[:4])} beside the other keys)"
    if elsewhere:
        said += f"; it is written by {', '.join(f'{code_span(q)}' for q in elsewhere[:3])} instead"
    return said


def _condition_draft(
    f: Decoded, new: Writers, qualified: str, hit: Emission, before: list[Emission], added: list[str]
) -> Draft:
    """The item for a field a function now writes only under a condition it did not have."""
    unit = new.unit(qualified)
    assert unit is not None
    old_guards = sorted(set().union(*(e.guards for e in before)))
    was = " and ".join(code_span(g) for g in old_guards) if old_guards else "always"
    detail = (
        f"Ollama decodes {code_span(f.name)} from llama-server's {f.source} ({f.ref.path}:{f.ref.line}). "
        f"{code_span(qualified)} wrote it {'when ' + was if old_guards else was}; at the new ref it writes it only when "
        f"{' and '.join(f'{code_span(g)}' for g in added)} ({unit.path}:{hit.line}). When that does not hold, Ollama "
        f"decodes {_zero(f.go_type)} instead: check that every request Ollama sends meets the condition."
    )
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "medium",
        f"{code_span(f.name)} of llama-server's {f.source} is written under a new condition in {code_span(qualified)}",
        detail,
        unit.path,
        hit.line,
        blame=((hit.line, hit.line),),
        cause=f"wire-field:{qualified}:{f.keys[-1]}",
    )


def _value_draft(
    f: Decoded, old: Writers, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    """The item for a field Ollama decodes into a scalar (bool, number, string) that a function still
    writes, with another value."""
    was, now = old.unit(qualified), new.unit(qualified)
    assert was is not None and now is not None
    if f.go_type not in _ZERO_LITERALS or not _other_value(hits, kept, old.code.texts, new.code.texts):
        return None  # an object's meaning is its fields', each compared itself
    before = {_tokens(h.value) for h in hits}
    hit = next(k for k in kept if _tokens(k.value) not in before)
    quoted = ", ".join(dict.fromkeys(code_span(h.value) for h in hits))
    detail = (
        f"Ollama decodes {code_span(f.name)} ({f.go_type or 'a value'}) from llama-server's {f.source} "
        f"({f.ref.path}:{f.ref.line}). {code_span(qualified)} wrote it as {quoted} ({was.path}); at the new ref "
        f"it writes {code_span(hit.value)} ({now.path}:{hit.line}). Check that the value still has the type, "
        "unit and meaning Ollama reads it with."
    )
    return _written_draft(
        f, qualified, f"is written with another value by {code_span(qualified)}", detail, now.path, hit.line
    )


def _written_draft(f: Decoded, qualified: str, what: str, detail: str, path: str, line: int) -> Draft:
    """A medium item on what a function now writes into a field Ollama decodes."""
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "medium",
        f"{code_span(f.name)} of llama-server's {f.source} {what}",
        detail,
        path,
        line,
        blame=((line, line),),
        cause=f"wire-value:{qualified}:{f.keys[-1]}",
    )


def _shape(value: str) -> str | None:
    """What JSON a value expression writes, when the expression says (`json { {"k", v} }`: an object)."""
    expression = _expression(value)
    for shape, pattern in _SHAPES:
        if pattern.match(expression):
            return shape
    return None


def _expected_shape(go_type: str) -> str | None:
    """What JSON a Go type decodes without an error (null aside); None when it takes more than one."""
    bare = go_type.lstrip("*")
    if bare.startswith("[]"):
        return "an array"
    if bare.startswith("map[") or bare == "object":
        return "an object"
    return {"string": "a string", "bool": "a boolean", **dict.fromkeys(_NUMERIC, "a number")}.get(bare)


def _shape_draft(
    f: Decoded, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    """The item for a field a function now writes as JSON of another kind than the Go type Ollama decodes it
    into takes (an object where Ollama decodes a slice): Go's decoder fails on the whole answer."""
    now, expected = new.unit(qualified), _expected_shape(f.go_type)
    if now is None or expected is None or any(_shape(h.value) not in (None, expected) for h in hits):
        return None
    hit = next((k for k in kept if _shape(k.value) not in (None, expected)), None)
    if hit is None:
        return None
    detail = (
        f"Ollama decodes {code_span(f.name)} into {code_span(f.go_type)} from llama-server's {f.source} "
        f"({code_span(f'{f.ref.path}:{f.ref.line}')}), which takes {expected}. {code_span(qualified)} now writes "
        f"{_shape(hit.value)} there ({code_span(f'{now.path}:{hit.line}')}: {code_span(hit.value)}): Go's JSON decoder fails on "
        "the whole answer, and Ollama with it."
    )
    return replace(
        _written_draft(
            f, qualified, f"is now {_shape(hit.value)}, not {expected}", detail, now.path, hit.line
        ),
        severity="high",
    )


def _empty(entry: Emission) -> bool:
    return "".join(_expression(entry.value).split()) in _EMPTY


def _filled_draft(
    f: Decoded, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    """The item for an object or array Ollama decodes that a function wrote empty in one entry (a closing
    frame's `{"delta", json::object()}`) and now fills there: Ollama reads that frame as it reads the
    others, so what it now carries is taken in again."""
    now = new.unit(qualified)
    filled = _filled(hits, kept)
    if now is None or f.go_type in _ZERO_LITERALS or not filled:
        return None  # a scalar's other value is `_value_draft`'s
    hit = filled[0]
    was = next(h for h in hits if _empty(h))
    detail = (
        f"Ollama decodes {code_span(f.name)} ({f.go_type}) from llama-server's {f.source} "
        f"({code_span(f'{f.ref.path}:{f.ref.line}')}). {code_span(qualified)} wrote it empty in one entry "
        f"({code_span(was.value)}) and now writes {code_span(hit.value)} there "
        f"({code_span(f'{now.path}:{hit.line}')}). Ollama reads that answer or frame as it reads the others: what "
        "it now carries is taken in as well, once more where it repeats what other frames said."
    )
    return _written_draft(
        f, qualified, f"is no longer written empty by {code_span(qualified)}", detail, now.path, hit.line
    )


def _filled(hits: list[Emission], kept: list[Emission]) -> list[Emission]:
    """The new entries of a new value, when fewer entries than before write the field empty."""
    if sum(map(_empty, hits)) <= sum(map(_empty, kept)):
        return []
    before = {_tokens(h.value) for h in hits}
    return [k for k in kept if not _empty(k) and _tokens(k.value) not in before]


def _nil_decoded(go_type: str) -> bool:
    """Whether Go decodes JSON's null into this type as nil, told apart from any value."""
    return go_type.startswith(("*", "[]", "map["))


def _null(entries: list[Emission]) -> bool:
    """Whether every entry writes JSON's null."""
    return all(_expression(e.value) in _NULLS for e in entries)


def _nullness_draft(
    f: Decoded, new: Writers, qualified: str, hits: list[Emission], kept: list[Emission]
) -> Draft | None:
    """The item for a field Ollama decodes into a pointer (nil for null) that a function now writes as a value
    where it wrote null, or as null where it wrote a value."""
    now = new.unit(qualified)
    if now is None or not _nil_decoded(f.go_type) or _null(hits) == _null(kept):
        return None
    path = now.path
    hit = next((k for k in kept if _expression(k.value) not in _NULLS), kept[0])
    was = ", ".join(dict.fromkeys(code_span(h.value) for h in hits))
    detail = (
        f"Ollama decodes {code_span(f.name)} into {code_span(f.go_type)} from llama-server's {f.source} "
        f"({f.ref.path}:{f.ref.line}): null is nil there, any value is not. {code_span(qualified)} wrote it as "
        f"{was}; at the new ref it writes {code_span(hit.value)} ({path}:{hit.line}), so every check Ollama "
        "makes of it against nil now goes the other way."
    )
    what = ("is no longer null" if _null(hits) else "is now null") + f" in {code_span(qualified)}"
    return _written_draft(f, qualified, what, detail, path, hit.line)


def _other_value(
    hits: list[Emission], kept: list[Emission], old_texts: Mapping[str, str], new_texts: Mapping[str, str]
) -> bool:
    """Whether the entries' value expressions differ beyond their spacing, their outer parentheses and the
    names the bump renames; the string constants a value can be are the compared values' concern."""
    before = {_tokens(e.value) for e in hits}
    after = {_tokens(e.value) for e in kept}
    if not all(before) or not all(after) or all(e.values for e in [*hits, *kept]):
        return False
    return not _renamed(before, after, old_texts, new_texts)


def _tokens(value: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(_expression(value)))


def _expression(value: str) -> str:
    """A value's expression, without parentheses around all of it."""
    return unwrapped(" ".join(value.split()))


def _renamed(
    before: set[tuple[str, ...]],
    after: set[tuple[str, ...]],
    old_texts: Mapping[str, str],
    new_texts: Mapping[str, str],
) -> bool:
    """Whether the new values are the old ones, or the old ones with names that the bump renames in the
    server sources (the old name gone from them, the new one not in them before) put in."""
    pairs = _replaced(sorted(before - after), sorted(after - before))
    if pairs is None:
        return False
    old_words, new_words = _words(old_texts), _words(new_texts)
    return all(
        a.isidentifier() and b.isidentifier() and a not in new_words and b not in old_words for a, b in pairs
    )


def _replaced(gone: list[tuple[str, ...]], came: list[tuple[str, ...]]) -> set[tuple[str, str]] | None:
    """The tokens put in for others, position by position; None when the values differ in shape."""
    if len(gone) != len(came) or any(len(x) != len(y) for x, y in zip(gone, came)):
        return None
    return {(a, b) for x, y in zip(gone, came) for a, b in zip(x, y) if a != b}


def _words(texts: Mapping[str, str]) -> set[str]:
    """The names the code uses, its strings aside (a key spelled like a variable is not one)."""
    return set().union(*map(_code_words, texts.values()))


@lru_cache(maxsize=64)
def _code_words(text: str) -> frozenset[str]:
    """One text's names; each server source is asked for them once per field compared."""
    return frozenset(re.findall(r"\w+", _STRING.sub('""', text)))
