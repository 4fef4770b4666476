"""Ollama's Go code and llama-server: the endpoints, request and response fields and flags it sends and reads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.shared import (
    BARE_PATH,
    FLAG_HINT,
    FLAG_IN_STRING,
    JSON_TAG,
    OLLAMA_SERVER_CLIENTS,
    REQUEST_CALL,
    URL_PATH,
    Refs,
    add_ref,
    frozen_refs,
    go_string,
    text_of,
)
from bot.review.flags import OLLAMA_CALLERS
from bot.review.source import glob_match

_CALLS = syntax.pattern("go", "(call_expression) @c")
_DECLARED_NAMES = syntax.pattern("go", "(var_spec) @d (parameter_declaration) @d")
_MAP_KEYS = syntax.pattern("go", "(keyed_element . (literal_element (interpreted_string_literal) @k))")
_SHORT_VARIABLES = syntax.pattern("go", "(short_var_declaration) @s")
_TYPE_NAMES = syntax.pattern("go", "(type_identifier) @t")

_GO_STRINGS = syntax.pattern(
    "go",
    """
(interpreted_string_literal) @s
(raw_string_literal) @s
""",
)


def _go_sources(paths: list[str], patterns: tuple[str, ...]) -> list[str]:
    """The Go files among `paths` that match `patterns`, tests left out, sorted."""
    return sorted(p for p in paths if glob_match(p, patterns) and not p.endswith("_test.go"))


def go_flags(ollama: Mapping[str, str], paths: list[str]) -> dict[str, tuple[LocalRef, ...]]:
    """Flags (`--xxx`, `-x`) in the string literals of Ollama's Go code that starts and probes llama-server."""
    found: Refs = {}
    for path in _go_sources(paths, OLLAMA_CALLERS):
        text = text_of(ollama, path)
        if text and FLAG_HINT.search(text):
            _add_flags(found, path, text)
    return frozen_refs(found)


def _add_flags(found: Refs, path: str, text: str) -> None:
    """Record the flags in one Go file's string literals, in the order they come."""
    root = syntax.root("go", text)
    for node in sorted(syntax.captures(_GO_STRINGS, root).get("s", []), key=lambda n: n.start_byte):
        for m in FLAG_IN_STRING.finditer(node_text(node)[1:-1]):
            add_ref(found, m[1].split("=", 1)[0], LocalRef(path, node.start_point[0] + 1))


@dataclass(frozen=True)
class ServerInterface:
    endpoints: dict[str, tuple[LocalRef, ...]]
    request_fields: dict[str, tuple[LocalRef, ...]]
    response_fields: dict[str, tuple[LocalRef, ...]]


_GO_INTERFACE = syntax.pattern(
    "go",
    """
(type_spec name: (type_identifier) type: (struct_type)) @spec
(call_expression) @call
(function_declaration) @function
(method_declaration) @function
(func_literal) @function
""",
)


def _struct_fields(struct: Node, path: str) -> tuple[list[tuple[str, LocalRef]], set[str]]:
    """The JSON names of a struct's tagged fields (nested anonymous structs included) and the named types
    its fields hold."""
    fields: list[tuple[str, LocalRef]] = []
    types: set[str] = set()
    stack = [struct]
    while stack:
        node = stack.pop()
        if node.type == "field_declaration" and (key := _json_key(node)):
            fields.append((key, LocalRef(path, node.start_point[0] + 1)))
        if node.type == "type_identifier":
            types.add(node_text(node))
        stack.extend(node.children)
    return fields, types


def _json_key(field: Node) -> str | None:
    """The name encoding/json gives a field: its tag's name, else (untagged) the field's own name; None
    for a field the tag leaves out (`json:"-"`) or that has neither."""
    tag = JSON_TAG.search(node_text(field.child_by_field_name("tag")))
    key = tag[1] if tag else node_text(next(iter(field.children_by_field_name("name")), None))
    return key if key not in ("", "-") else None


_Captured = dict[str, list[Node]]


def server_interface(ollama: Mapping[str, str], paths: list[str]) -> ServerInterface:
    """The llama-server endpoints Ollama's Go code requests, and the JSON fields of what it encodes for and
    decodes from them (a struct marshalled is a request, one unmarshalled into a response; a tagged struct
    whose use is not clear counts as both)."""
    endpoints, files = _requests(ollama, paths)
    sent: set[str] = set()
    received: set[str] = set()
    request: Refs = {}
    response: Refs = {}
    for path, captured in files:
        for function in captured.get("function", []):
            _json_uses(function, path, sent, received, request, response)
    structs = _wire_structs(files)
    sent_all, received_all = _reachable(sent, structs), _reachable(received, structs)
    unsure = set(structs) - sent_all - received_all
    _add_fields(request, structs, sent_all | unsure)
    _add_fields(response, structs, received_all | unsure)
    return ServerInterface(frozen_refs(endpoints), frozen_refs(request), frozen_refs(response))


def _requests(ollama: Mapping[str, str], paths: list[str]) -> tuple[Refs, list[tuple[str, _Captured]]]:
    """The endpoints Ollama's server clients request, and the files that request one (with their captures)."""
    endpoints: Refs = {}
    files: list[tuple[str, _Captured]] = []
    for path in _go_sources(paths, OLLAMA_SERVER_CLIENTS):
        text = text_of(ollama, path)
        if not text or ("://" not in text and "json" not in text):
            continue
        captured = syntax.captures(_GO_INTERFACE, syntax.root("go", text))
        if _add_endpoints(captured, path, endpoints):
            files.append((path, captured))
    return endpoints, files


def _add_endpoints(captured: _Captured, path: str, endpoints: Refs) -> bool:
    """Record the endpoints the file's calls request (a URL's path, or a bare path given to a request
    call); whether there were any."""
    found = False
    for node in captured.get("call", []):
        callee = node_text(node.child_by_field_name("function"))
        arguments = node.child_by_field_name("arguments") or node
        for literal in syntax.captures(_GO_STRINGS, arguments).get("s", []):
            endpoint = _endpoint(go_string(literal), callee)
            if endpoint is not None:
                add_ref(endpoints, endpoint, LocalRef(path, literal.start_point[0] + 1))
                found = True
    return found


def _endpoint(value: str, callee: str) -> str | None:
    """The endpoint a string literal passed to `callee` names, with `%s`-style holes as `{}`; None when it
    names none."""
    m = URL_PATH.match(value)
    if m is not None:
        endpoint = m[1]
    elif BARE_PATH.match(value) and REQUEST_CALL.search(callee):
        endpoint = value
    else:
        return None
    return re.sub(r"%[a-z]", "{}", endpoint.rstrip("/")) or "/"


_Struct = tuple[list[tuple[str, LocalRef]], set[str]]  # its JSON fields, and the named types they hold


def _wire_structs(files: list[tuple[str, _Captured]]) -> dict[str, _Struct]:
    """The files' struct types with JSON tags, by name: a struct without tags is no wire format."""
    structs: dict[str, _Struct] = {}
    for path, captured in files:
        for spec in captured.get("spec", []):
            struct = spec.child_by_field_name("type")
            if struct is not None and "json:" in node_text(struct):
                structs[node_text(spec.child_by_field_name("name"))] = _struct_fields(struct, path)
    return structs


def _reachable(names: set[str], structs: Mapping[str, _Struct]) -> set[str]:
    """The wire structs among `names` and every wire struct their fields hold, transitively."""
    out, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in out or name not in structs:
            continue
        out.add(name)
        todo += structs[name][1]
    return out


def _add_fields(fields: Refs, structs: Mapping[str, _Struct], names: set[str]) -> None:
    for name in names:
        for key, ref in structs[name][0]:
            add_ref(fields, key, ref)


def _local_types(function: Node) -> dict[str, Node]:
    """The type each variable and parameter of a Go function is declared with, or the composite literal a
    `:=` gives it."""
    types = _declared_types(function)
    types.update(_literal_types(function))
    return types


def _declared_types(function: Node) -> dict[str, Node]:
    """The type each `var` and parameter of a Go function is declared with."""
    types: dict[str, Node] = {}
    for declarations in syntax.captures(_DECLARED_NAMES, function).values():
        for node in declarations:
            declared = node.child_by_field_name("type")
            for name in node.children_by_field_name("name"):
                if declared is not None:
                    types[node_text(name)] = declared
    return types


def _literal_types(function: Node) -> dict[str, Node]:
    """The type of the composite literal (or its address) each `:=` of a Go function gives a variable."""
    types: dict[str, Node] = {}
    for node in syntax.captures(_SHORT_VARIABLES, function).get("s", []):
        for name, value in _assignments(node):
            value = _without_address(value)
            if value.type == "composite_literal":
                types[node_text(name)] = value.child_by_field_name("type") or value
    return types


def _assignments(declaration: Node) -> list[tuple[Node, Node]]:
    """The (variable, value) pairs of a `:=`, in order."""
    left, right = declaration.child_by_field_name("left"), declaration.child_by_field_name("right")
    if left is None or right is None:
        return []
    return list(zip(left.named_children, right.named_children))


_SENDS = {"Marshal": 0, "MarshalIndent": 0, "Encode": 0}  # method -> the argument that is sent


_RECEIVES = {"Unmarshal": 1, "Decode": 0}  # method -> the argument that is filled


def _json_value(call: Node) -> tuple[Node, bool] | None:
    """(the value a json call sends or fills, whether it sends) for Marshal/Encode/Unmarshal/Decode."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "selector_expression":
        return None
    method = node_text(callee.child_by_field_name("field"))
    args = call.child_by_field_name("arguments")
    values = list(args.named_children) if args is not None else []
    at = _SENDS.get(method, _RECEIVES.get(method))
    if at is None or len(values) <= at:
        return None
    return _without_address(values[at]), method in _SENDS


def _without_address(node: Node) -> Node:
    """The operand of a unary expression (`&T{...}`, `&v`): the value whose type and fields matter."""
    if node.type == "unary_expression":
        return node.child_by_field_name("operand") or node
    return node


def _map_literal_keys(target: Node, path: str, fields: Refs) -> None:
    body = target.child_by_field_name("body")
    if body is None:
        return
    for literal in syntax.captures(_MAP_KEYS, body).get("k", []):
        add_ref(fields, go_string(literal), LocalRef(path, literal.start_point[0] + 1))


def _json_uses(
    function: Node,
    path: str,
    sent: set[str],
    received: set[str],
    request: Refs,
    response: Refs,
) -> None:
    """Classify the values one function hands to json.Marshal/Encode (sent) and Unmarshal/Decode
    (received): named struct types by name, anonymous structs and map literals field by field."""
    types = _local_types(function)
    for call in syntax.captures(_CALLS, function).get("c", []):
        found = _json_value(call)
        if found is None:
            continue
        target, sends = found
        into, fields = (sent, request) if sends else (received, response)
        kind = _value_type(target, types)
        if kind is None:
            continue
        if target.type == "composite_literal" and kind.type == "map_type":
            _map_literal_keys(target, path, fields)
        else:
            _add_type(kind, path, into, fields)


def _value_type(target: Node, types: Mapping[str, Node]) -> Node | None:
    """The type of a value a json call sends or fills: a composite literal's, or a local variable's."""
    if target.type == "composite_literal":
        return target.child_by_field_name("type")
    return types.get(node_text(target)) if target.type == "identifier" else None


def _add_type(kind: Node, path: str, into: set[str], fields: Refs) -> None:
    """An anonymous struct's fields into `fields` and the named types they hold into `into`; any other
    type's names into `into`."""
    if kind.type == "struct_type":
        keys, named = _struct_fields(kind, path)
        for key, ref in keys:
            add_ref(fields, key, ref)
        into.update(named)
        return
    into.update(node_text(n) for n in syntax.captures(_TYPE_NAMES, kind).get("t", []))
    if kind.type == "type_identifier":
        into.add(node_text(kind))
