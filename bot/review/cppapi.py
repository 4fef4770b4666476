"""What a C or C++ file offers other code, and what it uses of code declared elsewhere.

A header's interface is its declarations outside function bodies, a function's with its parameter types;
a file's uses are its calls, with how many arguments each passes, and its other qualified names. The
review compares a header's interface at both refs (a compat layer's use of a name upstream changed, a
consumer's call no new overload takes) and checks the uses against what changed. Parsed with bot.lang.cpp's
tree-sitter reading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from tree_sitter import Node

from bot.cache import facts
from bot.lang import syntax
from bot.lang.cpp import DECLARATOR_NAMES, compact, last_name, node_pattern, nodes, root


@dataclass(frozen=True)
class Declared:
    """A name a file declares outside function bodies: what other code can use of it."""

    line: int  # 1-based line of the name
    kind: str  # macro | type | function | field | variable | enum value
    name: str
    owner: str  # the struct, class or enum it belongs to ("" at namespace scope)
    parameters: tuple[str, ...] = ()  # a function's parameter types; `=` ends one with a default value
    qualifiers: str = ""  # a function's `const`, `noexcept`, `&`
    namespace: str = ""  # the enclosing namespaces, `mlx::core::detail`
    # a function's parameter names ("" for an unnamed one): what a finding calls a parameter, never compared
    parameter_names: tuple[str, ...] = field(default=(), compare=False)
    # a variable's or field's type as written, spaces squeezed (`const std::map<int, const char *>`): compared
    # only where a use of the name is judged
    value_type: str = field(default="", compare=False)

    @property
    def qualified(self) -> str:
        """The name as code outside every namespace spells it: `mlx::core::array::item`."""
        return "::".join(part for part in (self.namespace, self.owner, self.name) if part)

    @property
    def signature(self) -> str:
        if self.kind != "function":
            return ""
        return " ".join([f"({', '.join(self.parameters)})", self.qualifiers]).strip()


_BLOCKS = {
    "translation_unit",
    "declaration_list",
    "field_declaration_list",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
    "template_declaration",
    "linkage_specification",
    "ERROR",
}
_TYPES = ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier")
_WRAPPERS = {
    "pointer_declarator",
    "reference_declarator",
    "init_declarator",
    "array_declarator",
    "attributed_declarator",
    "parenthesized_declarator",
}


def _parameter_type(param: Node) -> str:
    """A parameter without its name or default value: what a caller must pass."""
    value = param.child_by_field_name("default_value")
    end = _type_end(param, value)
    name = _parameter_name(param.child_by_field_name("declarator"))
    text, start = param.text or b"", param.start_byte
    if name is not None and name.type in ("identifier", "field_identifier"):
        kept = text[: name.start_byte - start] + text[name.end_byte - start : end - start]
    else:
        kept = text[: end - start]
    return " ".join(kept.decode("utf-8", "replace").split()) + ("=" if value is not None else "")


def _type_end(param: Node, value: Node | None) -> int:
    """Where a parameter's type (and name) ends: before the `=` of its default value, if it has one."""
    if value is None:
        return param.end_byte
    equals = value.prev_sibling
    return equals.start_byte if equals is not None else value.start_byte


_PARAMETER_WRAPPERS = _WRAPPERS | {"function_declarator"}


def _parameter_name(node: Node | None) -> Node | None:
    """What a parameter's declarator declares, through pointers, references, arrays and function types."""
    while node is not None and node.type in _PARAMETER_WRAPPERS:
        inner = node.child_by_field_name("declarator")
        if inner is None and node.named_children:  # a reference declarator holds its name as a plain child
            inner = node.named_children[-1]
        node = inner
    return node


def _signature(function: Node) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """(parameter types, qualifiers, parameter names) of a function declarator."""
    params = function.child_by_field_name("parameters")
    if params is None:
        return (), "", ()
    listed = [p for p in params.named_children if p.type != "comment"]
    types = tuple(_parameter_type(p) for p in listed)
    after = [
        compact(c)
        for c in function.children
        if c.start_byte >= params.end_byte and c.type in ("type_qualifier", "ref_qualifier", "noexcept")
    ]
    return types, " ".join(after), tuple(_parameter_label(p) for p in listed)


def _parameter_label(param: Node) -> str:
    """A parameter's name, "" when it has none."""
    name = _parameter_name(param.child_by_field_name("declarator"))
    if name is None or name.type not in ("identifier", "field_identifier"):
        return ""
    return (name.text or b"").decode("utf-8", "replace")


class _Interface:
    """Reads the declarations of nested blocks (namespaces, types, preprocessor branches) into `out`."""

    def __init__(self) -> None:
        self.out: list[Declared] = []
        self.namespace = ""

    def add(
        self,
        node: Node,
        kind: str,
        owner: str,
        name: str = "",
        signature: tuple[tuple[str, ...], str, tuple[str, ...]] = ((), "", ()),
        value_type: str = "",
    ) -> None:
        name = name or compact(node)
        if name:
            parameters, qualifiers, names = signature
            self.out.append(
                Declared(
                    node.start_point[0] + 1,
                    kind,
                    name,
                    owner,
                    parameters,
                    qualifiers,
                    self.namespace,
                    parameter_names=names,
                    value_type=value_type,
                )
            )

    def block(self, node: Node, owner: str, in_type: bool) -> None:
        for child in node.named_children:
            if child.type in _BLOCKS:
                self.block(child, owner, in_type)
                continue
            read = _Interface._READERS.get(child.type)
            if read is not None:
                read(self, child, owner, in_type)

    def _macro(self, node: Node, owner: str, in_type: bool) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.add(name, "macro", "")

    def _namespace(self, node: Node, owner: str, in_type: bool) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        outer, name = self.namespace, node.child_by_field_name("name")
        self.namespace = "::".join(p for p in (outer, compact(name).replace(" ", "")) if p)
        self.block(body, "", False)
        self.namespace = outer

    def _declaration(self, node: Node, owner: str, in_type: bool) -> None:
        kind = node.child_by_field_name("type")
        self.specifier(kind, owner)
        written = [_spaced(c) for c in node.children if c.type == "type_qualifier"]
        base = " ".join([*written, _spaced(kind)]) if kind is not None else ""
        for declarator in node.children_by_field_name("declarator"):
            self.declarator(declarator, owner, in_type, base)

    def _function_definition(self, node: Node, owner: str, in_type: bool) -> None:
        head = node.child_by_field_name("declarator")
        if head is not None:
            self.declarator(head, owner, in_type)

    def _type_definition(self, node: Node, owner: str, in_type: bool) -> None:
        self.specifier(node.child_by_field_name("type"), owner)
        for alias in node.children_by_field_name("declarator"):
            name = _alias_name(alias)
            if name is not None:
                self.add(name, "type", owner)

    def _alias(self, node: Node, owner: str, in_type: bool) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.add(name, "type", owner)

    def _type(self, node: Node, owner: str, in_type: bool) -> None:
        self.specifier(node, owner)

    # how each kind of declaration in a block is read (nested blocks are entered by `block` itself)
    _READERS: ClassVar[dict[str, Callable[[_Interface, Node, str, bool], None]]] = {
        "preproc_def": _macro,
        "preproc_function_def": _macro,
        "namespace_definition": _namespace,
        "declaration": _declaration,
        "field_declaration": _declaration,
        "function_definition": _function_definition,
        "type_definition": _type_definition,
        "alias_declaration": _alias,
        **dict.fromkeys(_TYPES, _type),
    }

    def specifier(self, node: Node | None, owner: str) -> None:
        if node is None or node.type not in _TYPES:
            return
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if body is None:
            return  # a use or a forward declaration
        type_name = ""
        if name is not None:
            type_name = last_name(name)[1]
            self.add(name, "type", owner, type_name)
        if node.type == "enum_specifier":
            self._enum_values(body, type_name)
        else:
            self.block(body, type_name or owner, True)

    def _enum_values(self, body: Node, type_name: str) -> None:
        for entry in body.named_children:
            if entry.type == "enumerator" and (value := entry.child_by_field_name("name")) is not None:
                self.add(value, "enum value", type_name)

    def declarator(self, node: Node, owner: str, in_type: bool, base: str = "") -> None:
        core = _unwrapped(node)
        if core is None:
            return
        if core.type == "function_declarator":
            self._function_declarator(core, owner, in_type)
        elif core.type in DECLARATOR_NAMES:
            scope, text = last_name(core)
            kind = "field" if in_type or scope else "variable"
            self.add(core, kind, scope or owner, text, value_type=_value_type(base, node, core))

    def _function_declarator(self, node: Node, owner: str, in_type: bool) -> None:
        name = node.child_by_field_name("declarator")
        if name is None:
            return
        if name.type == "parenthesized_declarator":  # a pointer to a function is a variable
            self.declarator(name, owner, in_type)
            return
        scope, text = last_name(name)
        self.add(name, "function", scope or owner, text, _signature(node))


def _value_type(base: str, declarator: Node, name: Node) -> str:
    """The type a declarator gives its name: the declaration's type with the declarator's pointer, reference
    and array parts (`*`, `&`, `[4]`), its initializer and the name left out."""
    if not base:
        return ""
    if declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator") or declarator
    text = _spaced(declarator)
    spelled = _spaced(name)
    parts = text.replace(spelled, " ", 1) if spelled else text
    return " ".join(f"{base} {parts}".split())


def _spaced(node: Node) -> str:
    """A node's text with its spaces squeezed (a type's words kept apart)."""
    return " ".join(syntax.node_text(node).split())


def _unwrapped(node: Node) -> Node | None:
    """A declarator without its pointer, reference, array and initializer wrappers; None when a wrapper
    holds no declarator."""
    while node.type in _WRAPPERS:
        inner = node.child_by_field_name("declarator")
        if inner is None:
            return None
        node = inner
    return node


def _alias_name(node: Node | None) -> Node | None:
    """The name a typedef's declarator gives (`typedef struct x * x_t;` -> `x_t`)."""
    while node is not None and node.type not in ("type_identifier", "identifier"):
        node = node.child_by_field_name("declarator")
    return node


# A file's interface depends on its text alone: a re-check of the same refs finds it in the facts store.
INTERFACE = facts.Extractor("cpp-interface", 2, __name__)


@lru_cache(maxsize=256)
@facts.by_content(INTERFACE)
def interface(source: bytes) -> tuple[Declared, ...]:
    """What the file declares outside function bodies, in file order: macros, types, functions (with
    their parameter types), fields, namespace-scope variables and enum values. A body's locals are
    nobody's interface, so bodies are never entered."""
    found = _Interface()
    found.block(root(source), "", False)
    return tuple(sorted(found.out, key=lambda d: d.line))


@dataclass(frozen=True)
class Use:
    """A name a file uses from code declared elsewhere: a call with its argument count, or a qualified name."""

    line: int  # 1-based
    name: str  # as spelled, no template arguments: `mlx::core::detail::compile_erase`, `.item` for a member
    arguments: int | None  # None: named, not called


def _spelled(node: Node) -> str:
    if node.type == "qualified_identifier":
        scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
        head = _spelled(scope) if scope is not None else ""
        return f"{head}::{_spelled(name)}" if name is not None else head
    if node.type in ("template_function", "template_type"):
        name = node.child_by_field_name("name")
        return _spelled(name) if name is not None else compact(node)
    if node.type == "field_expression":
        field = node.child_by_field_name("field")
        return "." + (_spelled(field) if field is not None else "")
    return compact(node)


_QUALIFIED_NAMES = node_pattern("qualified_identifier")
_CALLS = node_pattern("call_expression")


def uses(source: bytes) -> tuple[Use, ...]:
    """Every call (with how many arguments it passes) and every other `a::b` name of the file, in file
    order: what a change of the declarations it reaches can break."""
    found, callees = _calls(source)
    for name in nodes(source, _QUALIFIED_NAMES):
        if name.start_byte in callees or (
            name.parent is not None and name.parent.type == "qualified_identifier"
        ):
            continue
        found.append(Use(name.start_point[0] + 1, _spelled(name), None))
    return tuple(sorted(found, key=lambda u: u.line))


def _calls(source: bytes) -> tuple[list[Use], set[int]]:
    """Every call of the file with how many arguments it passes, in file order, and the start bytes of
    their callees (a called name is no other use of it)."""
    found, callees = [], set()
    for call in nodes(source, _CALLS):
        function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        if function is None or arguments is None:
            continue
        callees.add(function.start_byte)
        count = sum(1 for a in arguments.named_children if a.type != "comment")
        found.append(Use(function.start_point[0] + 1, _spelled(function), count))
    return found, callees
