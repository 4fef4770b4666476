"""llama-server's C++ sources as the wire sees them, one function at a time: the JSON keys each function (or
each handler lambda bound to a name) writes, where they nest and the conditions they are written under; the
request keys it reads; the fields of a declarative request schema with their aliases and limits; the string
constants it writes (stream frames among them); and the functions it calls.

Read with tree-sitter from comment-free texts; a string constant may be a literal, a named constant of the
function or of its file, or what a called function returns (followed a bounded number of steps).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

from tree_sitter import Node

from bot.cache import facts
from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.review.serverjson import (
    STRINGS,
    callee_name,
    declared_name,
    emissions,
    function_declarator,
    literal,
    read_defaults,
    reader_functions,
    reads,
)

FRAME = re.compile(r"(?:data|event|id|retry):(?: |$|\n)|:[^\n]*\n|.*\[DONE\]", re.DOTALL)
_NAME = re.compile(r"~?[A-Za-z_]\w*")
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_TRAILING = re.compile(r"[^\w:.>-]+$")
DEPTH = 3  # constants, locals and returned values followed from one expression

_QUERY = syntax.pattern(
    "cpp",
    """
(function_definition) @unit
(assignment_expression left: (_) right: (lambda_expression) @unit)
(initializer_list) @list
(assignment_expression left: (subscript_expression) right: (_)) @store
(call_expression) @call
(new_expression) @new
(init_declarator) @local
(assignment_expression left: (identifier) right: (_)) @local
(return_statement) @return
(string_literal) @string
(raw_string_literal) @string
(concatenated_string) @string
""",
)


@dataclass(eq=False)
class Unit:
    """One function, or one lambda bound to a name (a route handler), of one file, with its nodes by kind."""

    name: str  # the last name of its declarator, or of what the lambda is bound to
    qualified: (
        str  # with its class (`server_task_result_cmpl_final::to_json`): the same function at both refs
    )
    path: str
    line: int
    node: Node | None  # its syntax, while the sources are read (None once they are)
    nodes: dict[str, list[Node]] = field(default_factory=dict)  # the query's captures inside it, by kind
    strings: dict[str, int] = field(default_factory=dict)  # string constant -> first line
    locals: dict[str, list[Node]] = field(default_factory=dict)  # name -> values given to it
    reads: dict[str, int] = field(default_factory=dict)  # request key -> first line reading it
    defaults: dict[str, str] = field(default_factory=dict)  # request key -> the default it is read with
    validated: frozenset[str] = frozenset()  # the keys it reads only to reject a request with
    schema: list = field(default_factory=list)  # serverjson.SchemaField
    emissions: list = field(default_factory=list)  # serverjson.Emission
    calls: tuple[str, ...] = ()  # the names it calls, in order

    def frames(self) -> dict[str, int]:
        """The stream frames among its string constants (`data: `, `:\\n\\n`, `data: [DONE]\\n\\n`)."""
        return {s: n for s, n in self.strings.items() if FRAME.match(s)}


# What is kept of a reading of the server sources: the functions without their syntax, and each route's
# handlers by name. It depends on the texts alone, so a re-check of the same refs finds it in the store.
SERVER_CODE = facts.Extractor("server-code", 6, __name__)


def read_server(texts: Mapping[str, str]) -> ServerCode:
    """The server sources (path -> comment-free text) read, or found in the facts store."""
    key = tuple(part for path in sorted(texts) for part in (path, facts.text_id(texts[path])))
    units, routes = facts.remembered(SERVER_CODE, key, lambda: ServerReading(texts).plain())
    return ServerCode(texts, units, routes)


def _by_name(units: Iterable[Unit]) -> dict[str, list[Unit]]:
    """The units by their (last) name, in order."""
    found: dict[str, list[Unit]] = {}
    for unit in units:
        found.setdefault(unit.name, []).append(unit)
    return found


class ServerCode:
    """The functions of a set of server sources (path -> comment-free text), as plain data, and the
    questions the wire checks ask of them."""

    def __init__(self, texts: Mapping[str, str], units: list[Unit], route_names: Mapping[str, list[str]]):
        self.texts = texts
        self.units = units
        self.route_names = route_names  # route -> the names of its handlers
        self.by_name = _by_name(units)

    def line_text(self, path: str, line: int) -> str:
        lines = self.texts.get(path, "").split("\n")
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    # ---- reachability -----------------------------------------------------------------------------------------

    @cached_property
    def routes(self) -> dict[str, list[Unit]]:
        """Every route a call registers -> its handlers."""
        return {
            r: [u for n in names for u in self.by_name.get(n, [])] for r, names in self.route_names.items()
        }

    def foreign(self, routes: Iterable[str], depth: int) -> set[int]:
        """The units (by id) that only handlers of routes other than `routes` reach, `depth` calls deep: code
        of endpoints Ollama never calls."""
        wanted = set(routes)
        mine = {id(u) for route in wanted for u in self.reached(self.routes.get(route, []), depth)}
        theirs = {
            id(u)
            for route, handlers in self.routes.items()
            if route not in wanted
            for u in self.reached(handlers, depth)
        }
        return theirs - mine

    def handlers(self, route: str) -> list[Unit]:
        """The units a route (`/completion`) is registered with: the names in the call that names it."""
        return self.routes.get(route, [])

    def reached(self, start: Iterable[Unit], depth: int) -> list[Unit]:
        """`start` and the units it calls by name, `depth` calls deep."""
        seen: dict[int, Unit] = {id(u): u for u in start}
        frontier = list(seen.values())
        for _ in range(depth):
            called = [c for u in frontier for name in u.calls for c in self.by_name.get(name, ())]
            frontier = [c for c in dict.fromkeys(called) if id(c) not in seen]
            seen.update((id(c), c) for c in frontier)
        return list(seen.values())


class ServerReading:
    """One reading of the server sources with tree-sitter: the units, their nodes, the string constants they
    name, what they read and write."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self.units: list[Unit] = []
        self.constants: dict[str, list[str]] = {}  # named string constants outside functions
        self._indexes: list[tuple[bytes, _UnitIndex]] = []
        for path, text in texts.items():
            self._read(path, text)
        self._name_constants()
        self.by_name = _by_name(self.units)
        readers = reader_functions(self.units)
        for unit in self.units:
            unit.reads, unit.schema, unit.validated = reads(unit, self, readers)
            unit.defaults = read_defaults(unit, self, readers)
            unit.emissions = emissions(unit, self)
            unit.calls = tuple(dict.fromkeys(callee_name(c) for c in unit.nodes.get("call", [])))

    def plain(self) -> tuple[list[Unit], dict[str, list[str]]]:
        """The units without their syntax, and the handlers' names of every route a call registers (a
        `"/path"` argument beside a handler's name)."""
        found: dict[str, set[str]] = {}
        for unit in self.units:
            if not any(s.startswith("/") for s in unit.strings):
                continue
            for call in unit.nodes.get("call", []):
                route = _route_of(call)
                if route is not None:
                    found.setdefault(route, set()).update(_handler_names(call, route))
        routes = {r: sorted(names) for r, names in found.items() if names}
        return [replace(u, node=None, nodes={}, locals={}) for u in self.units], routes

    def _read(self, path: str, text: str) -> None:
        found = _captures(text)
        index = _UnitIndex([(_unit(node, path), node) for node in found.get("unit", [])])
        for kind, nodes in found.items():
            for node in nodes if kind != "unit" else []:
                holder = index.at(node.start_byte)
                if holder is not None:
                    holder.nodes.setdefault(kind, []).append(node)
                elif kind == "local":
                    self._file_constant(node)
        for unit in index.units:
            _file_locals(unit)
        self.units += index.units
        self._indexes.append((text.encode(), index))

    def _file_constant(self, node: Node) -> None:
        """A string constant declared outside functions (`const char X[] = "..."`)."""
        value = node.child_by_field_name("value")
        if node.type == "init_declarator" and value is not None and value.type in STRINGS:
            self.constants.setdefault(declared_name(node), []).append(literal(value))

    def _name_constants(self) -> None:
        """Each unit's strings, with those of the file constants it names (where no local hides them)."""
        if not self.constants:
            return
        names = re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in self.constants) + rb")\b")
        for data, index in self._indexes:
            for m in names.finditer(data):
                unit = index.at(m.start())
                name = m[1].decode()
                if unit is not None and name not in unit.locals:
                    line = data.count(b"\n", 0, m.start()) + 1
                    for value in self.constants[name]:
                        unit.strings.setdefault(value, line)

    # ---- constants --------------------------------------------------------------------------------------------

    def strings(self, node: Node | None, unit: Unit, depth: int = DEPTH) -> list[str]:
        """The string constants an expression can be: a literal, either side of `?:`, a named constant of
        the unit or its file, what a called server function returns."""
        while node is not None and node.type in ("parenthesized_expression", "compound_literal_expression"):
            node = node.named_children[-1] if node.named_children else None
        if node is None or depth <= 0:
            return []
        if node.type in STRINGS:
            return [literal(node)]
        if node.type == "conditional_expression":
            return self.strings(node.child_by_field_name("consequence"), unit, depth) + self.strings(
                node.child_by_field_name("alternative"), unit, depth
            )
        if node.type == "identifier":
            return self._named(node_text(node), unit, depth - 1)
        if node.type == "call_expression":
            return self._returned(node, depth - 1)
        return []

    def _named(self, name: str, unit: Unit, depth: int) -> list[str]:
        local = [s for value in unit.locals.get(name, []) for s in self.strings(value, unit, depth)]
        return local or list(self.constants.get(name, []))

    def _returned(self, call: Node, depth: int) -> list[str]:
        return [
            s
            for unit in self.by_name.get(callee_name(call), [])
            for value in unit.nodes.get("return", [])
            for s in self.strings(value.named_children[0] if value.named_children else None, unit, depth)
        ]

    def keys(self, node: Node | None, unit: Unit) -> list[str]:
        """The JSON keys a key expression can be (its short, non-blank constants)."""
        return [s for s in self.strings(node, unit, 2) if s.strip() and len(s) <= 64]


def _captures(text: str) -> dict[str, list[Node]]:
    """The query's captures of a text (its syntax tree lives as long as the reading that asked)."""
    return syntax.captures(_QUERY, syntax.root("cpp", text))


class _UnitIndex:
    """The innermost unit holding a byte offset (units nest: handler lambdas inside an init function, each
    named after it)."""

    def __init__(self, units: list[tuple[Unit, Node]]):
        ordered = sorted(units, key=lambda pair: pair[1].start_byte)
        self.units = [unit for unit, _ in ordered]
        self.starts = [node.start_byte for _, node in ordered]
        self.ends = [node.end_byte for _, node in ordered]
        self.outer: list[int] = []
        stack: list[int] = []
        for i, (unit, node) in enumerate(ordered):
            while stack and self.ends[stack[-1]] <= node.start_byte:
                stack.pop()
            self.outer.append(stack[-1] if stack else -1)
            stack.append(i)
            if node.type == "lambda_expression" and stack[:-1]:  # known by its function's name too
                unit.qualified = f"{self.units[stack[-2]].qualified}/{unit.name}"

    def at(self, offset: int) -> Unit | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        while i >= 0 and self.ends[i] <= offset:
            i = self.outer[i]
        return self.units[i] if i >= 0 else None


def _unit(node: Node, path: str) -> Unit:
    if node.type == "lambda_expression":
        target = node.parent.child_by_field_name("left") if node.parent is not None else None
        name = _last_name(node_text(target))
        return Unit(name, name, path, node.start_point[0] + 1, node)
    inner = function_declarator(node)
    declared = "".join(node_text(inner.child_by_field_name("declarator")).split()) if inner else ""
    classes = [node_text(c.child_by_field_name("name")) for c in _enclosing_classes(node)]
    qualified = "::".join([*classes, _without_template_arguments(declared)])
    return Unit(_last_name(declared), qualified, path, node.start_point[0] + 1, node)


def _enclosing_classes(node: Node) -> list[Node]:
    found: list[Node] = []
    parent = node.parent
    while parent is not None:
        if parent.type in ("class_specifier", "struct_specifier"):
            found.insert(0, parent)
        parent = parent.parent
    return found


def _last_name(text: str) -> str:
    names = _NAME.findall(_without_template_arguments(text))
    return names[-1] if names else ""


def _without_template_arguments(text: str) -> str:
    for _ in range(4 if "<" in text else 0):
        text = _TEMPLATE_ARGUMENTS.sub("", text)
    return text


def _file_locals(unit: Unit) -> None:
    """The unit's locals (name -> values) and string literals, from its captures."""
    for node in unit.nodes.get("local", []):
        value = node.child_by_field_name("value") or node.child_by_field_name("right")
        name = (
            declared_name(node)
            if node.type == "init_declarator"
            else node_text(node.child_by_field_name("left"))
        )
        if name and value is not None:
            unit.locals.setdefault(name, []).append(value)
    for node in unit.nodes.get("string", []):
        if node.parent is None or node.parent.type != "concatenated_string":
            unit.strings.setdefault(literal(node), node.start_point[0] + 1)


def _route_of(call: Node) -> str | None:
    """The route a call's string argument names (`"/completion"`), if it has one and another argument."""
    args = call.child_by_field_name("arguments")
    if args is None or len(args.named_children) < 2:
        return None
    for arg in args.named_children:
        if arg.type == "string_literal" and (text := literal(arg)).startswith("/") and " " not in text:
            return text
    return None


def _handler_names(call: Node, route: str) -> Iterator[str]:
    """The last names in the arguments of a route's registration, the route aside."""
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else []:
        if arg.type != "string_literal":
            name = _last_name(_TRAILING.sub("", node_text(arg)))
            if name:
                yield name
