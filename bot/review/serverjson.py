"""What one function of llama-server reads of a request, declares of a request schema and writes into JSON.

A key is read with `x.at(key)`, `x.contains(key)`, `x.find(key)`, `x.value(key, ...)` or handed to a reader
function (one that does that with a parameter: `json_value(body, key, default)`).

A key is written as `{"key", value}` (an object's entry, in place or pushed into an object) or as
`object["key"] = value`; the keys around it in the same function (an entry whose value holds the object, a
variable stored under a key) are its parents, and the `if` and `?:` conditions around it its guards. A schema
field is `new field_x("name", ...)` with its method chain: the methods that add another name, and those that
bound its value (a "hard" bound rejects the request, another clamps the value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.review.source import c_unescape, squash

_IDENTIFIERS = syntax.pattern("cpp", "(identifier) @i")

if TYPE_CHECKING:
    from bot.review.servercode import ServerReading, Unit

_RAW = re.compile(r'\w*R"([^(]*)\((.*)\)\1"$', re.DOTALL)
STRINGS = ("string_literal", "concatenated_string", "raw_string_literal")
READ_METHODS = frozenset({"at", "contains", "find", "value", "count"})  # json members that read a key
PRESENCE_METHODS = frozenset({"contains", "find", "count"})  # those that test whether the request has it
# a test that the key is missing: `!x.contains(k)`, `x.count(k) == 0`, `x.find(k) == x.end()`
_ABSENCE = re.compile(r"!\s*[\w.>-]*(?:contains|count|find)\s*\(|==\s*0\b|==\s*[\w.>-]*end\s*\(")

_ALIAS = re.compile(r"alias", re.IGNORECASE)  # a schema method that adds another name for the field
_BOUNDS = re.compile(r"limits?$|range$|bounds?$", re.IGNORECASE)  # ... that bounds its value
_PASS_THROUGH = (
    "initializer_list",
    "argument_list",
    "compound_literal_expression",
    "parenthesized_expression",
    "call_expression",
    "conditional_expression",
)
_ACCESSORS = frozenset({"at", "back", "front"})  # methods of nlohmann::json that give part of an object
_ELEMENT_INDICES = frozenset({"number_literal", "binary_expression"})  # `x[0]`, `x[x.size() - 1]`
MAX_UP = 16  # syntax levels walked up from an entry to the object it belongs to


def literal(node: Node) -> str:
    """A C++ string literal's value (adjacent literals joined; a raw literal as written)."""
    if node.type == "concatenated_string":
        return "".join(literal(c) for c in node.named_children if c.type in STRINGS)
    text = node_text(node)
    if node.type == "raw_string_literal":
        m = _RAW.match(text)
        return m[2] if m else ""
    body = text[text.find('"') + 1 : -1] if text.endswith('"') else ""
    return c_unescape(body) if "\\" in body else body


def callee_name(call: Node) -> str:
    """The last name of what a call calls: `f`, `ns::f`, `x.f`, `x->f`, `f<T>`."""
    function = call.child_by_field_name("function")
    while function is not None and function.type in ("qualified_identifier", "template_function"):
        function = function.child_by_field_name("name")
    if function is not None and function.type == "field_expression":
        function = function.child_by_field_name("field")
    return node_text(function) if function is not None and function.type.endswith("identifier") else ""


def function_declarator(node: Node) -> Node | None:
    """The declarator of a function definition that holds its name and parameters."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def declared_name(node: Node) -> str:
    """The name an (init) declarator declares, through pointer, array and reference declarators."""
    inner = node.child_by_field_name("declarator")
    while inner is not None and inner.type not in ("identifier", "field_identifier"):
        inner = inner.child_by_field_name("declarator") or next(iter(inner.named_children), None)
    return node_text(inner)


@dataclass(eq=False)
class Emission:
    """A JSON key a function writes, as plain data (kept in the facts store with its function)."""

    key: str
    parents: tuple[str, ...]  # the keys of the objects around it in its function, outermost first
    owner: str  # the variable it is written into, "" for an object written in place
    line: int
    guards: frozenset[str]  # the conditions it is written under, whitespace out (`!(c)` for an else branch)
    values: tuple[str, ...]  # the string constants its value can be
    value: str = ""  # its value's expression as written, whitespace runs as one space
    written_in: int = 0  # the offset of the object literal an entry without an owner is written in place in

    def beside(self, other: Emission) -> bool:
        """Whether the two keys are written into one object."""
        return (
            self.owner == other.owner
            and self.parents == other.parents
            and (bool(self.owner) or self.written_in == other.written_in)
        )


@dataclass(eq=False)
class _Written:
    """An entry or assignment that writes a key, read off the syntax tree."""

    key: str
    parents: tuple[str, ...]
    value: Node | None
    node: Node  # the entry or the assignment
    owner: str = ""


@dataclass(frozen=True)
class SchemaField:
    """A field of a declarative request schema."""

    names: tuple[str, ...]  # its name, then the other names it is read under
    bounds: tuple[str, str] | None  # the lowest and highest value, as written
    rejects: bool  # a value out of bounds fails the request (else it is clamped)
    line: int


def emissions(unit: Unit, code: ServerReading) -> list[Emission]:
    """Every key the unit writes, with its parents through the variables it stores objects in."""
    found = [e for node in unit.nodes.get("list", []) for e in _entries(node, unit, code)]
    found += [e for node in unit.nodes.get("store", []) for e in _stored(node, unit, code)]
    found = _through_aliases(found, unit, code)
    above = _variable_parents(found)
    return [
        Emission(
            e.key,
            _chain(e.owner, above, set()) + e.parents,
            e.owner,
            e.node.start_point[0] + 1,
            _guards(e.node, unit.node),
            tuple(code.strings(e.value, unit)),
            " ".join(node_text(e.value).split()) if e.value is not None else "",
            e.node.parent.start_byte if not e.owner and e.node.parent is not None else 0,
        )
        for e in found
    ]


def _entries(node: Node, unit: Unit, code: ServerReading) -> list[_Written]:
    """`{"key", value}`: an initializer list of two whose first element is a key."""
    children = node.named_children
    if len(children) != 2 or children[0].type not in (
        "string_literal",
        "identifier",
        "conditional_expression",
    ):
        return []
    keys = code.keys(children[0], unit)
    if not keys:
        return []
    parents, owner = _context(node, unit, code)
    return [_Written(k, parents, children[1], node, owner) for k in keys]


def _stored(node: Node, unit: Unit, code: ServerReading) -> list[_Written]:
    """`object["a"]["key"] = value`."""
    chain, target = _subscripts(node.child_by_field_name("left"), unit, code)
    if not chain or not chain[-1] or not all(chain[:-1]):
        return []
    parents = tuple(keys[0] for keys in chain[:-1])
    value = node.child_by_field_name("right")
    owner = _root_name(target)
    return [_Written(k, parents, value, node, owner) for k in chain[-1]]


def _subscripts(target: Node | None, unit: Unit, code: ServerReading) -> tuple[list[list[str]], Node | None]:
    """(the keys of each subscript of `x["a"].at("b")[0]`, outermost first, an array's element left out as the
    paths of decoded fields leave out `[]`; what they subscript)."""
    chain: list[list[str]] = []
    while target is not None:
        if target.type == "subscript_expression":
            indices = target.child_by_field_name("indices")
            index = next(iter(indices.named_children), None) if indices is not None else None
            inner = target.child_by_field_name("argument")
        elif target.type == "call_expression" and _method_name(target) in _ACCESSORS:
            index = _first_argument(target)
            inner = _method_object(target)
        else:
            break
        if index is not None and index.type not in _ELEMENT_INDICES:
            chain.insert(0, code.keys(index, unit))
        target = inner
    return chain, target


def _method_name(call: Node) -> str:
    function = call.child_by_field_name("function")
    if function is None or function.type != "field_expression":
        return ""
    field = function.child_by_field_name("field")
    return node_text(field) if field is not None else ""


def _through_aliases(found: list[_Written], unit: Unit, code: ServerReading) -> list[_Written]:
    """The entries written through a reference to part of another variable's object (`auto & last =
    deltas.back();`, `json & usage = res.at("usage");`) as entries of that variable, under the keys the
    reference goes through."""
    aliases = {
        name: alias for name in {e.owner for e in found if e.owner} if (alias := _alias(name, unit, code))
    }
    out = []
    for e in found:
        owner, parents, seen = e.owner, e.parents, set()
        while owner in aliases and owner not in seen:
            seen.add(owner)
            owner, keys = aliases[owner]
            parents = keys + parents
        out.append(replace(e, owner=owner, parents=parents) if owner != e.owner else e)
    return out


def _alias(name: str, unit: Unit, code: ServerReading) -> tuple[str, tuple[str, ...]] | None:
    """(the variable, the keys) a local is a reference into, when its one value is part of another's."""
    values = unit.locals.get(name, [])
    if len(values) != 1 or values[0].type not in ("subscript_expression", "call_expression"):
        return None
    chain, root = _subscripts(values[0], unit, code)
    if root is values[0] or root is None or root.type != "identifier" or not all(chain):
        return None
    return (node_text(root), tuple(keys[0] for keys in chain)) if node_text(root) != name else None


def _context(node: Node, unit: Unit, code: ServerReading) -> tuple[tuple[str, ...], str]:
    """(the keys of the entries whose values hold the object `node` is an entry of, the variable holding
    the outermost one)."""
    parents: list[str] = []
    child, parent = node, node.parent
    for _ in range(MAX_UP):
        if parent is None or parent == unit.node:
            break
        if parent.type == "initializer_list" and _is_entry_value(parent, child):
            parents[:0] = code.keys(parent.named_children[0], unit)[:1]
        elif parent.type not in _PASS_THROUGH or _holder(parent) is not None:
            return _stored_under(parent, unit, code) + tuple(parents), _holder(parent) or ""
        child, parent = parent, parent.parent
    return tuple(parents), ""


def _stored_under(node: Node, unit: Unit, code: ServerReading) -> tuple[str, ...]:
    """The keys an object is stored under by an assignment (`x["a"].at(0)["b"] = {...}`: a, b)."""
    if node.type != "assignment_expression":
        return ()
    chain, _ = _subscripts(node.child_by_field_name("left"), unit, code)
    return tuple(keys[0] for keys in chain) if all(chain) else ()


def _holder(node: Node) -> str | None:
    """The variable an object ends in at `node`: the object of a method call (`x.push_back({...})`), the
    declared or assigned variable; None where the walk up goes on."""
    if node.type == "call_expression":
        target = _method_object(node)
        return _root_name(target) if target is not None else None
    if node.type == "init_declarator":
        return _declared(node)
    if node.type == "assignment_expression":
        return _root_name(node.child_by_field_name("left"))
    return None


def _is_entry_value(entry: Node, child: Node) -> bool:
    children = entry.named_children
    return len(children) == 2 and children[1] == child and children[0].type == "string_literal"


def _method_object(call: Node) -> Node | None:
    """The object of a method call `x.f(...)` / `x->f(...)`."""
    function = call.child_by_field_name("function")
    return (
        function.child_by_field_name("argument")
        if function is not None and function.type == "field_expression"
        else None
    )


def _root_name(node: Node | None) -> str:
    """The variable at the root of `x`, `x[0]`, `x.back()`, `x->y`."""
    while node is not None and node.type != "identifier":
        node = (
            node.child_by_field_name("argument")
            or node.child_by_field_name("function")
            or node.child_by_field_name("left")
        )
    return node_text(node)


def _declared(declarator: Node) -> str:
    inner = declarator.child_by_field_name("declarator")
    return node_text(inner) if inner is not None and inner.type == "identifier" else ""


def _guards(node: Node, stop: Node | None) -> frozenset[str]:
    """The conditions a node inside its unit is reached under: each conjunct of the `if`s and `?:`s around it
    (`a && b` gives `a` and `b`), an else branch's condition negated whole."""
    guards: list[str] = []
    child, parent = node, node.parent
    while parent is not None and parent != stop:
        if parent.type in ("if_statement", "conditional_expression"):
            condition = squash(node_text(parent.child_by_field_name("condition")))
            if child == parent.child_by_field_name("consequence"):
                guards += conjuncts(condition)
            elif child == parent.child_by_field_name("alternative"):
                guards.append(f"!({unwrapped(condition)})")
        child, parent = parent, parent.parent
    return frozenset(guards)


def conjuncts(condition: str) -> list[str]:
    """The parts of a condition joined by a top-level `&&` (outer parentheses off)."""
    condition = unwrapped(condition)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(condition):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and condition.startswith("&&", i):
            parts.append(condition[start:i])
            start = i + 2
    return [unwrapped(p) for p in [*parts, condition[start:]] if p]


def unwrapped(text: str) -> str:
    """The text without parentheses around all of it."""
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _variable_parents(found: list[_Written]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Variable -> (the variable it is stored into, under which keys): a variable holding an object that is
    the value (or an element of the value) of another key."""
    owners = {e.owner for e in found if e.owner}
    above: dict[str, tuple[str, tuple[str, ...]]] = {}
    for e in found:
        if e.value is None:
            continue
        for name in _names_in(e.value) & owners:
            if name != e.owner:
                above.setdefault(name, (e.owner, (*e.parents, e.key)))
    return above


def _names_in(node: Node) -> set[str]:
    if node.type == "identifier":
        return {node_text(node)}
    return {node_text(n) for n in syntax.captures(_IDENTIFIERS, node).get("i", [])}


def _chain(owner: str, above: dict[str, tuple[str, tuple[str, ...]]], seen: set[str]) -> tuple[str, ...]:
    if owner not in above or owner in seen:
        return ()
    seen.add(owner)
    outer, keys = above[owner]
    return _chain(outer, above, seen) + keys


# ---- request schema ----------------------------------------------------------------------------------------------


def schema_field(new: Node, names: list[str], code: ServerReading, unit: Unit) -> SchemaField | None:
    """The schema field a `new T("name", ...)` declares, with what its method chain adds; None when its
    first argument is no key."""
    if not names:
        return None
    names = names[:1]
    bounds: tuple[str, str] | None = None
    rejects = False
    for method, args in _chain_calls(new):
        if _ALIAS.search(method) and args:
            names += code.keys(args[0], unit)[:1]
        elif _BOUNDS.search(method) and len(args) == 2:
            bounds = (squash(node_text(args[0])), squash(node_text(args[1])))
            rejects = "hard" in method.lower()
    return SchemaField(tuple(dict.fromkeys(names)), bounds, rejects, new.start_point[0] + 1)


def _chain_calls(node: Node) -> list[tuple[str, list[Node]]]:
    """(method, arguments) of `(node)->a(...)->b(...)`, in order."""
    calls = []
    current = node
    while current.parent is not None:
        parent = current.parent
        if parent.type == "parenthesized_expression":
            current = parent
            continue
        call = parent.parent
        if parent.type != "field_expression" or call is None or call.type != "call_expression":
            break
        args = call.child_by_field_name("arguments")
        calls.append(
            (node_text(parent.child_by_field_name("field")), list(args.named_children) if args else [])
        )
        current = call
    return calls


# ---- request reads -------------------------------------------------------------------------------------------


def reads(
    unit: Unit, code: ServerReading, readers: Mapping[str, int]
) -> tuple[dict[str, int], list[SchemaField], frozenset[str]]:
    """(request key -> first line reading it, the schema fields the unit declares, the keys it reads only to
    reject a request): the keys of the calls that read one, and every name of its schema fields."""
    found: dict[str, int] = {}
    used: set[str] = set()  # keys whose value the unit uses beyond a check that rejects the request
    for call in unit.nodes.get("call", []):
        key = _read_key(call, readers)
        names = code.keys(key, unit) if key is not None else []
        for name in names:
            found.setdefault(name, call.start_point[0] + 1)
        if names and not _only_validated(call, unit.node):
            used.update(names)
    declared = [
        f
        for new in unit.nodes.get("new", [])
        if (f := schema_field(new, code.keys(_first_argument(new), unit), code, unit))
    ]
    for f in declared:
        for name in f.names:
            found.setdefault(name, f.line)
            used.add(name)
    return found, declared, frozenset(found.keys() - used)


MAX_DEFAULT_CHARS = 200  # a longer default argument is kept as nothing: no literal or member is that long


def read_defaults(unit: Unit, code: ServerReading, readers: Mapping[str, int]) -> dict[str, str]:
    """Request key -> the default the unit reads it with, as written: the argument after the key of a reader
    function or of `x.value(key, default)`, and the value a schema field is declared with
    (`new field_bool("stream", params.stream)`: the member whose initializer is the default), and the value
    it writes into the request where the request lacks the key."""
    found = (
        _presence_defaults(unit, code)
        | _schema_defaults(unit, code)
        | _call_defaults(unit, code, readers)
        | _injected_defaults(unit, code)
    )
    return {key: text for key, text in found.items() if len(text) <= MAX_DEFAULT_CHARS}


def _presence_defaults(unit: Unit, code: ServerReading) -> dict[str, str]:
    """`bool use_base64 = false; if (body.count("encoding_format") != 0) { ... use_base64 = true; }`: a local
    that the unit assigns only under a test of one key's presence keeps its initializer when the request leaves
    the key out. That is the key's default, written `use_base64 = false`."""
    initial: dict[str, tuple[Node, str]] = {}
    assigned: dict[str, list[Node]] = {}
    for node in unit.nodes.get("local", []):
        if node.type == "init_declarator" and (init := node.child_by_field_name("value")) is not None:
            initial.setdefault(declared_name(node), (node, squash(node_text(init))))
        elif node.type == "assignment_expression":
            assigned.setdefault(node_text(node.child_by_field_name("left")), []).append(node)
    found: dict[str, str] = {}
    for name, (declaration, value) in initial.items():
        key = _set_only_when_present(assigned.get(name, []), unit, code)
        if key is not None and declaration.end_byte < _first(assigned[name]):
            found.setdefault(key, f"{name} = {value}")
    return found


def _set_only_when_present(assignments: list[Node], unit: Unit, code: ServerReading) -> str | None:
    """The one key every assignment is made under a test of the request having it."""
    tested = {_branch_of(n, unit, code) for n in assignments}
    branch = tested.pop() if len(tested) == 1 else None
    return branch[0] if branch is not None and branch[1] else None


def _injected_defaults(unit: Unit, code: ServerReading) -> dict[str, str]:
    """`if (!body.contains("add_generation_prompt")) { body["add_generation_prompt"] = false; }`: a value the
    unit writes into the request under a test of that key's absence is the key's default from there on, over
    the default of whatever reads the request after it."""
    found: dict[str, str] = {}
    for node in unit.nodes.get("store", []):
        chain, _ = _subscripts(node.child_by_field_name("left"), unit, code)
        if len(chain) == 1 and len(chain[0]) == 1 and _branch_of(node, unit, code) == (chain[0][0], False):
            found.setdefault(chain[0][0], squash(node_text(node.child_by_field_name("right"))))
    return found


def _first(nodes: list[Node]) -> int:
    return min(n.start_byte for n in nodes)


def _branch_of(node: Node, unit: Unit, code: ServerReading) -> tuple[str, bool] | None:
    """The one key whose presence (`x.count(key)`, `x.contains(key)`, `x.find(key)`) the nearest `if` around
    the node that tests one tests, and whether the branch holding the node runs when the request has it."""
    child, parent = node, node.parent
    while parent is not None and parent != unit.node:
        condition = parent.child_by_field_name("condition") if parent.type == "if_statement" else None
        keys = _presence_keys(condition, unit, code) if condition is not None else set()
        if keys:
            branches = parent.child_by_field_name("consequence"), parent.child_by_field_name("alternative")
            if len(keys) != 1 or child not in branches:
                return None
            absent = bool(_ABSENCE.search(node_text(condition)))
            return keys.pop(), (child == branches[0]) != absent
        child, parent = parent, parent.parent
    return None


def _presence_keys(condition: Node, unit: Unit, code: ServerReading) -> set[str]:
    calls = [
        c for c in unit.nodes.get("call", []) if condition.start_byte <= c.start_byte < condition.end_byte
    ]
    return {k for c in calls if _presence_method(c) for k in code.keys(_first_argument(c), unit)}


def _presence_method(call: Node) -> bool:
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    return (
        function is not None
        and function.type == "field_expression"
        and node_text(function.child_by_field_name("field")) in PRESENCE_METHODS
        and args is not None
        and bool(args.named_children)
    )


def _call_defaults(unit: Unit, code: ServerReading, readers: Mapping[str, int]) -> dict[str, str]:
    found: dict[str, str] = {}
    for call in unit.nodes.get("call", []):
        key = _read_key(call, readers)
        args = call.child_by_field_name("arguments")
        if key is None or args is None or not _reads_with_default(call, readers):
            continue
        after = [a for a in args.named_children if a.start_byte > key.start_byte]
        for name in code.keys(key, unit) if after else ():
            found.setdefault(name, squash(node_text(after[0])))
    return found


def _schema_defaults(unit: Unit, code: ServerReading) -> dict[str, str]:
    found: dict[str, str] = {}
    for new in unit.nodes.get("new", []):
        args = new.child_by_field_name("arguments")
        if args is not None and len(args.named_children) >= 2:
            for name in code.keys(args.named_children[0], unit)[:1]:
                found.setdefault(name, squash(node_text(args.named_children[1])))
    return found


def _reads_with_default(call: Node, readers: Mapping[str, int]) -> bool:
    """Whether a reading call's argument after the key is the default: `x.value(key, d)`, a reader function."""
    function = call.child_by_field_name("function")
    if function is not None and function.type == "field_expression":
        return node_text(function.child_by_field_name("field")) == "value"
    return callee_name(call) in readers


def _only_validated(call: Node, function: Node | None) -> bool:
    """Whether a read's value is only checked to reject the request: it initializes a local that the rest
    of the function names only in the conditions of `if`s that throw (`std::string format = json_value(...);
    if (format != "wav") { throw ...; }`)."""
    declarator = call.parent
    if function is None or declarator is None or declarator.type != "init_declarator":
        return False
    uses = list(_identifiers(function, declared_name(declarator).encode(), declarator.end_byte))
    return bool(uses) and all(_in_throwing_condition(n, function) for n in uses)


def _identifiers(node: Node, name: bytes, after: int):
    """The identifiers spelled `name` in a node, past a byte offset."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.end_byte <= after:
            continue
        if current.type == "identifier":
            if current.text == name:
                yield current
        else:
            stack.extend(current.children)


def _in_throwing_condition(node: Node, function: Node) -> bool:
    """Whether a node is in the condition of an `if` whose branch only throws."""
    current: Node | None = node
    while current is not None and current != function:
        parent = current.parent
        if parent is not None and parent.type == "if_statement" and current.type == "condition_clause":
            return _only_throws(parent.child_by_field_name("consequence"))
        current = parent
    return False


def _only_throws(branch: Node | None) -> bool:
    """Whether a branch (a block or one statement) holds only `throw` statements."""
    statements = (
        branch.named_children if branch is not None and branch.type == "compound_statement" else [branch]
    )
    return bool(statements) and all(s is not None and s.type == "throw_statement" for s in statements)


def reader_functions(units: list[Unit]) -> dict[str, int]:
    """Functions that read a key handed to them (`json_value(body, key, def)` tests `body.contains(key)`):
    name -> the key parameter's position."""
    readers = {}
    for unit in units:
        names = _parameter_names(unit.node) if unit.node is not None else []
        for call in unit.nodes.get("call", []) if names else []:
            key = _read_key(call, {})
            if key is not None and key.type == "identifier" and node_text(key) in names:
                readers[unit.name] = names.index(node_text(key))
    return readers


def _parameter_names(node: Node) -> list[str]:
    declarator = function_declarator(node) if node.type == "function_definition" else None
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    return [declared_name(p) for p in params.named_children] if params is not None else []


def _first_argument(node: Node) -> Node | None:
    args = node.child_by_field_name("arguments")
    return args.named_children[0] if args is not None and args.named_children else None


def _read_key(call: Node, readers: Mapping[str, int]) -> Node | None:
    """The key a call reads: of `x.at(key)`, `x.contains(key)`, `x.find(key)`, `x.value(key, ...)`, or the
    key argument of a reader function."""
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if args is None or not args.named_children:
        return None
    if function is not None and function.type == "field_expression":
        method = node_text(function.child_by_field_name("field"))
        return args.named_children[0] if method in READ_METHODS else None
    position = readers.get(callee_name(call))
    return (
        args.named_children[position]
        if position is not None and position < len(args.named_children)
        else None
    )
