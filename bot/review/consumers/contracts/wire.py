"""The JSON Ollama sends to an upstream program and reads back: the fields of each request body (the struct tags
or map keys of the value marshalled into it, nested values included, with the Go type and the values the code
can put there) and of each response or stream chunk (the struct tags of the value it is decoded into)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.contracts.flow import Flow, _State
from bot.review.consumers.contracts.gocode import (
    STRING_LITERALS,
    Binding,
    arguments,
    callee_parts,
    go_string,
    named,
    unwrap,
)
from bot.review.consumers.contracts.launches import Request, assigned_name, branchy
from bot.review.consumers.contracts.model import WireField
from bot.review.consumers.contracts.resolve import Resolver, Where, kind_of_type, where_of
from bot.review.consumers.shared import JSON_TAG

_IDENTIFIERS = syntax.pattern("go", "(identifier) @i")

DEPTH = 16  # names, calls and nesting followed into one body


def request_fields(requests: list[Request], resolver: Resolver) -> list[WireField]:
    """Every field of every request body, in the order the code writes them."""
    found: dict[tuple[str, str], WireField] = {}
    for request in requests:
        shapes = _Shapes(resolver, request.label, "request")
        for value in _marshalled(request, resolver):
            shapes.walk(value, where_of(request.func), "", False, DEPTH)
        for entry in shapes.out:
            _keep(found, entry)
    return list(found.values())


def response_fields(flow: Flow, requests: list[Request]) -> list[WireField]:
    """Every field Ollama decodes from a response or a stream chunk of a request it sent."""
    labels = {r.label for r in requests}
    found: dict[tuple[str, str], WireField] = {}
    for key, env in flow.envs.items():
        func = flow.funcs[key]
        state = _State(func, env, {})
        for target, label in _decoded(flow, state, labels):
            endpoint, _, direction = label.rpartition(" ")
            shapes = _Shapes(flow.resolver, endpoint, direction)
            shapes.walk_declared(target, where_of(func), DEPTH)
            for entry in shapes.out:
                _keep(found, entry)
    return sorted(found.values(), key=lambda f: (f.endpoint, f.direction, f.ref.path, f.ref.line, f.path))


def _keep(found: dict, entry: WireField) -> None:
    key = (entry.endpoint, entry.direction, entry.path)
    old = found.get(key)
    if old is None:
        found[key] = entry
    else:
        values = tuple(dict.fromkeys(old.values + entry.values))
        found[key] = WireField(
            old.endpoint,
            old.direction,
            old.path,
            old.go_type or entry.go_type,
            values,
            old.optional and entry.optional,
            old.ref,
            tuple(dict.fromkeys(old.forwards + entry.forwards)),
        )


def _marshalled(request: Request, resolver: Resolver) -> Iterator[Node]:
    """The values a request's body is encoded from: `json.Marshal(x)` or an encoder's `Encode(x)` whose output
    the body argument reads."""
    if request.body is None:
        return
    read = {node_text(n) for n in syntax.captures(_IDENTIFIERS, request.body).get("i", [])}
    read.add(node_text(request.body))
    where = where_of(request.func)
    for call in request.func.calls:
        qualifier, name = callee_parts(call)
        args = arguments(call)
        if not args:
            continue
        if (
            (
                name in ("Marshal", "MarshalIndent")
                and _json(resolver, where, qualifier)
                and assigned_name(call) in read
            )
            or name == "Encode"
            and _encoder_of(call, where, resolver) & read
        ):
            yield args[0]


def _json(resolver: Resolver, where: Where, alias: str) -> bool:
    return resolver.program.import_path(where.path, alias) == "encoding/json"


def _encoder_of(call: Node, where: Where, resolver: Resolver) -> set[str]:
    """The names an encoder `enc.Encode(...)` writes to: the argument of the `json.NewEncoder(w)` it is."""
    function = named(call, "function")
    operand = unwrap(named(function, "operand")) if function is not None else None
    if operand is None or operand.type != "identifier":
        return set()
    out: set[str] = set()
    for binding in resolver.bindings(node_text(operand), where):
        value = unwrap(binding.value)
        if value is not None and value.type == "call_expression" and callee_parts(value)[1] == "NewEncoder":
            out |= {node_text(a) for a in arguments(value)}
    return out


def _decoded(flow: Flow, state: _State, requests: set[str]) -> Iterator[tuple[Node, str]]:
    """(the value filled, the request label + response/stream) of each decode of a request's answer."""
    for call in state.func.calls:
        found = _decode_parts(call)
        if found is None:
            continue
        source, target = found
        for label in sorted(flow.labels(source, state)):
            if label.rpartition(" ")[0] in requests:
                yield target, label


def _decode_parts(call: Node) -> tuple[Node, Node] | None:
    """(what is decoded, what it fills) of `json.Unmarshal(data, &x)` or `dec.Decode(&x)`."""
    function = named(call, "function")
    method = node_text(named(function, "field")) if function is not None else ""
    args = arguments(call)
    if method == "Unmarshal" and len(args) == 2:
        return args[0], args[1]
    operand = named(function, "operand") if function is not None else None
    if method == "Decode" and len(args) == 1 and operand is not None:
        return operand, args[0]
    return None


@dataclass
class _Shapes:
    """Walks a value encoded or decoded as JSON, field by field."""

    resolver: Resolver
    endpoint: str
    direction: str
    out: list[WireField] = field(default_factory=list)
    seen: set = field(default_factory=set)

    def emit(
        self,
        path: str,
        go_type: str,
        values: tuple[str, ...],
        optional: bool,
        ref: LocalRef,
        forwards: tuple[str, ...] = (),
    ) -> None:
        if self.direction != "request":
            values, optional, forwards = (), False, ()
        self.out.append(
            WireField(self.endpoint, self.direction, path, go_type, values, optional, ref, forwards)
        )

    def forwarded(self, given: list[Node], where: Where) -> tuple[str, ...]:
        """The JSON names of the struct fields the given values read (`req.Options.Seed` of a field tagged
        `json:"seed"`): the options whose documented values reach the field."""
        names = []
        for given_value in given:
            value = unwrap(given_value)
            declared = (
                self.resolver.field_declaration(value, where)
                if value is not None and value.type == "selector_expression"
                else None
            )
            if declared is not None and JSON_TAG.search(node_text(named(declared[0], "tag"))):
                names += [key for _, key, _ in _json_fields(declared[0])]
        return tuple(dict.fromkeys(names))

    # ---- values ------------------------------------------------------------------------------------------------

    def walk(self, expr: Node | None, where: Where, path: str, optional: bool, depth: int) -> None:
        """The fields of a value: a composite literal, a name's values, what a function returns."""
        expr = unwrap(expr)
        if expr is None or depth <= 0:
            return
        if expr.type == "unary_expression":
            return self.walk(named(expr, "operand"), where, path, optional, depth)
        key = (where.path, expr.start_byte, path, optional)
        if key in self.seen:
            return
        self.seen.add(key)
        walker = _WALKERS.get(expr.type)
        if walker is not None:
            walker(self, expr, where, path, optional, depth - 1)

    def _composite(self, expr: Node, where: Where, path: str, optional: bool, depth: int) -> None:
        kind = named(expr, "type")
        body = named(expr, "body")
        if kind is None or body is None:
            return
        if kind.type == "map_type":
            self._map_entries(_literal_entries(body), where, path, optional, depth)
        elif kind.type in ("slice_type", "array_type"):
            for element in body.named_children:
                self.walk(element, where, f"{path}[]", optional, depth)
        else:
            self._struct_value(kind, where, path, optional, depth, _literal_fields(body))

    def _identifier(self, expr: Node, where: Where, path: str, optional: bool, depth: int) -> None:
        """A name's fields: those of each value it is given, of the elements stored into it (`x[k] = v`),
        of its declared type with the values stored into its fields (`x.F = v`)."""
        name = node_text(expr)
        stores = _stores_into(self.resolver, where, name)
        entries = [(k, v, site) for k, v, site in stores if k is not None]
        fields = [(node_text(t), v, t) for k, v, t in stores if k is None]
        if entries:
            self._map_entries(entries, where, path, optional, depth)
        for binding in self.resolver.bindings(name, where):
            self._bound(binding, where, path, optional, depth, fields)

    def _bound(
        self, binding: Binding, where: Where, path: str, optional: bool, depth: int, fields: list
    ) -> None:
        value = unwrap(binding.value)
        if binding.kind != "range" and value is not None and binding.index == 0:
            self.walk(value, where, path, optional, depth)
        kind = self._type_of_binding(binding, where)
        if kind is not None and (fields or value is None):
            self._struct_value(kind, where, path, optional, depth, fields)

    def _type_of_binding(self, binding: Binding, where: Where) -> Node | None:
        if binding.declared is not None:
            return binding.declared
        value = unwrap(binding.value)
        return named(value, "type") if value is not None and value.type == "composite_literal" else None

    def _call(self, expr: Node, where: Where, path: str, optional: bool, depth: int) -> None:
        qualifier, name = callee_parts(expr)
        args = arguments(expr)
        if (qualifier, name) == ("", "append"):
            for element in args[1:]:
                self.walk(element, where, f"{path}[]", optional, depth)
            return
        if (qualifier, name) == ("", "make") and args:
            self._nested(args[0], where, path, optional, depth, [], where)
            return
        for func in self.resolver.callees(expr, where):
            for value, at in self.resolver.returned(func):
                self.walk(value, at, path, optional, depth)

    # ---- maps and structs --------------------------------------------------------------------------------------

    def _map_entries(
        self, entries: list[tuple[Node, Node, Node]], where: Where, path: str, optional: bool, depth: int
    ) -> None:
        """A map's string keys as fields: (key, value, where it is set)."""
        for key, value, site in entries:
            if key.type not in STRING_LITERALS:
                continue
            child = _join(path, go_string(key))
            sometimes = optional or branchy(site, where)
            found = list(self.resolver.values(value, where, 3))
            kind = _kind_of_value(value, readable(found, ""))
            values = readable(found, kind)
            ref = LocalRef(where.path, key.start_point[0] + 1)
            self.emit(child, kind, values, sometimes, ref, self.forwarded([value], where))
            self.walk(value, where, child, sometimes, depth)

    def _struct_value(
        self, kind: Node, where: Where, path: str, optional: bool, depth: int, given: list
    ) -> None:
        """A struct's tagged fields, with the values a literal or assignments give them: (field, value, node)."""
        declared = self._struct_type(kind, where)
        if declared is None:
            return
        assigned: dict[str, list[Node]] = {}
        for name, value, _ in given:
            assigned.setdefault(name, []).append(value)
        self._fields(declared[0], declared[1], path, optional, depth, assigned, where)

    def _struct_type(self, kind: Node, where: Where) -> tuple[Node, Where] | None:
        kind = unwrap(kind) or kind
        while kind.type in ("pointer_type", "slice_type", "array_type"):
            kind = named(kind, "element") or (kind.named_children or [kind])[-1]
        if kind.type == "struct_type":
            return kind, where
        ref = self.resolver.type_ref(kind, where)
        declared = self.resolver.program.type_decl(*ref) if ref is not None else None
        if declared is None or declared[0].type != "struct_type":
            return None
        return declared[0], Where(None, declared[1])

    def _fields(
        self, struct: Node, at: Where, path: str, optional: bool, depth: int, assigned: dict, where: Where
    ) -> None:
        body = next((c for c in struct.named_children if c.type == "field_declaration_list"), None)
        for declaration in body.named_children if body is not None else []:
            for name, key, omitted in _json_fields(declaration):
                values = assigned.get(name, [])
                sometimes = optional or omitted
                child = _join(path, key)
                self._field(declaration, at, child, sometimes, values, where)
                self._nested(named(declaration, "type"), at, child, sometimes, depth, values, where)

    def _field(
        self, declaration: Node, at: Where, path: str, optional: bool, given: list, where: Where
    ) -> None:
        kind = named(declaration, "type")
        found = [v for value in given for v in self.resolver.values(value, where, 3)]
        values = readable(found, kind_of_type(node_text(kind)))
        ref = LocalRef(at.path, declaration.start_point[0] + 1)
        self.emit(path, _type_text(kind), values, optional, ref, self.forwarded(given, where))

    def _nested(
        self, kind: Node | None, at: Where, path: str, optional: bool, depth: int, values: list, where: Where
    ) -> None:
        """A field's own fields: its struct type's, and those of the values the code gives it."""
        if kind is None or depth <= 0:
            return
        element = kind
        suffix = ""
        while element.type in ("pointer_type", "slice_type", "array_type"):
            suffix += "[]" if element.type != "pointer_type" else ""
            element = named(element, "element") or (element.named_children or [element])[-1]
        declared = self._struct_type(element, at)
        if declared is not None and (declared[1].path, declared[0].start_byte) not in self.seen:
            self.seen.add((declared[1].path, declared[0].start_byte))
            self._fields(declared[0], declared[1], path + suffix, optional, depth - 1, {}, at)
            self.seen.discard((declared[1].path, declared[0].start_byte))
        for value in values:
            self.walk(value, where, path, optional, depth - 1)

    def walk_declared(self, target: Node, where: Where, depth: int) -> None:
        """The fields of the value a decode fills: its declared type's."""
        target = unwrap(target) or target
        if target.type == "unary_expression":
            target = unwrap(named(target, "operand")) or target
        if target.type != "identifier":
            return
        for binding in self.resolver.bindings(node_text(target), where):
            kind = self._type_of_binding(binding, where)
            if kind is not None:
                self._nested(kind, where, "", False, depth, [], where)
                return


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path and not path.endswith(".") else key if not path else path + key


def _type_text(kind: Node | None) -> str:
    """A field's Go type as a reader wants it: an inline struct is an object."""
    text = " ".join(node_text(kind).split())
    struct = text.find("struct {")
    return (text[:struct] + "object") if struct >= 0 else text


def _json_fields(declaration: Node) -> Iterator[tuple[str, str, bool]]:
    """(Go name, JSON name, omitempty) of each field a declaration declares (none for an embedded field or
    `json:"-"`, nor for an unexported field without a tag)."""
    if declaration.type != "field_declaration":
        return
    tag = node_text(named(declaration, "tag"))
    m = JSON_TAG.search(tag)
    omitted = bool(m) and ",omitempty" in tag[m.start() :].split('"', 2)[1] if m else False
    for name in declaration.children_by_field_name("name"):
        key = m[1] if m and m[1] else node_text(name)
        if key != "-" and (m or node_text(name)[:1].isupper()):
            yield node_text(name), key, omitted


def _literal_entries(body: Node) -> list[tuple[Node, Node, Node]]:
    """(key, value, element) of a map literal's keyed elements."""
    out = []
    for element in body.named_children:
        if element.type == "keyed_element":
            key, value = unwrap(named(element, "key")), named(element, "value")
            if key is not None and value is not None:
                out.append((key, value, element))
    return out


def _literal_fields(body: Node) -> list[tuple[str, Node, Node]]:
    """(field name, value, element) of a struct literal's keyed elements."""
    return [(node_text(k), v, e) for k, v, e in _literal_entries(body) if k.type == "identifier"]


def _stores_into(resolver: Resolver, where: Where, name: str) -> list[tuple[Node | None, Node, Node]]:
    """The assignments into a local: `name[key] = value` as (key, value, target), `name.F = value` as (None,
    value, F)."""
    if where.func is None:
        return []
    out: list[tuple[Node | None, Node, Node]] = []
    for target, value in resolver.program.scope(where.func).stores:
        operand = named(target, "operand")
        if operand is None or node_text(operand) != name:
            continue
        if target.type == "index_expression":
            key = unwrap(named(target, "index"))
            if key is not None:
                out.append((key, value, target))
        elif target.type == "selector_expression":
            out.append((None, value, named(target, "field") or target))
    return out


def readable(values: list[str], kind: str) -> tuple[str, ...]:
    """The values worth showing: constants and value kinds; any other expression stands for the field's kind."""
    kept = [v for v in values if (_constant(v) or v in _KINDS) and v != "nil"]
    if len(kept) < len(values) and kind in _KINDS:
        kept.append(kind)
    return tuple(dict.fromkeys(kept))


_KINDS = ("integer", "number", "bool", "string")


def _constant(value: str) -> bool:
    return (
        value.startswith('"')
        or value in ("true", "false", "nil")
        or _value_kind(value) in ("integer", "number")
    )


def _value_kind(value: str) -> str:
    if value.startswith('"'):
        return "string"
    if value in ("true", "false"):
        return "bool"
    try:
        float(value)
    except ValueError:
        return value if value in _KINDS else ""
    return "integer" if value.lstrip("-").isdigit() else "number"


def _kind_of_value(value: Node, values: tuple[str, ...]) -> str:
    """A map entry's JSON kind, as its value or its values say."""
    value = unwrap(value) or value
    if value.type == "composite_literal":
        kind = named(value, "type")
        return {"map_type": "object", "slice_type": "array"}.get(kind.type if kind is not None else "", "")
    kinds = {_value_kind(v) for v in values}
    return kinds.pop() if len(kinds) == 1 else ""


_WALKERS = {
    "composite_literal": _Shapes._composite,
    "identifier": _Shapes._identifier,
    "call_expression": _Shapes._call,
}
