"""C and C++ source read with tree-sitter: tokens by line, the names a file defines, its declarations.

The patch engine asks two questions of upstream's C/C++ files that a line regex answers wrongly in
the corner cases (a name inside a string or a comment, a statement split over lines): which entries
does a file define (enum entries, table rows, switch cases, types, string comparisons), and which
parameters, fields and functions does it declare. tree-sitter parses any text, broken or partial,
into a tree whose leaves are the file's tokens, so both answers come from one parse.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from tree_sitter import Node

from bot import syntax

C_FAMILY = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".metal")
# nodes read as one token: their inner pieces (quotes, escapes) are no names
_ATOMS = {
    "string_literal",
    "raw_string_literal",
    "char_literal",
    "number_literal",
    "comment",
    "system_lib_string",
}
NAME_TOKENS = {"identifier", "field_identifier", "type_identifier", "namespace_identifier"}


def is_c_family(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in C_FAMILY


def _nodes(source: bytes, *types: str) -> list[Node]:
    """The nodes of those types in the file, in file order."""
    return syntax.captures("cpp", "\n".join(f"({t}) @node" for t in types), _root(source)).get("node", [])


def _root(source: bytes) -> Node:
    return syntax.root("cpp", source)


@dataclass(frozen=True)
class Token:
    row: int  # 0-based line
    start: int  # byte offset in its line
    end: int
    kind: str  # tree-sitter's node type: identifier, field_identifier, string_literal, comment, "(", ...
    text: bytes

    @property
    def is_name(self) -> bool:
        return self.kind in NAME_TOKENS


def tokens(source: bytes) -> list[Token]:
    """Every token of the text in order; a literal or a comment is one token (`end` stops at the end of
    its first line)."""
    out: list[Token] = []
    stack: list[Node] = [_root(source)]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in _ATOMS:
            text = source[node.start_byte : node.end_byte]
            if text:
                start = node.start_point[1]
                out.append(
                    Token(node.start_point[0], start, start + len(text.split(b"\n")[0]), node.type, text)
                )
            continue
        stack.extend(reversed(node.children))
    return out


def tokens_by_line(source: bytes) -> dict[int, list[Token]]:
    lines: dict[int, list[Token]] = {}
    for token in tokens(source):
        lines.setdefault(token.row, []).append(token)
    return lines


def names(line: bytes) -> list[bytes]:
    """The names (identifiers of any kind) one line of code uses, in order."""
    return [t.text for t in tokens(line) if t.is_name]


def words(text: bytes) -> set[str]:
    """Every lower-cased word of some code, names split at `_`, literals and comments included: what it
    mentions."""
    out: set[str] = set()
    for token in tokens(text):
        piece = token.text.decode("utf-8", "replace")
        out.update(w.lower() for w in "".join(c if c.isalnum() else " " for c in piece).split())
    return out


@dataclass(frozen=True)
class Definition:
    """An entry a file defines: what a patch adding an architecture, a table row or a case adds."""

    kind: str  # enumerator | row | case | type | match
    key: str  # the name defined; for a match, `<expression> == "<literal>"` without spaces
    owner: str  # the enum, table variable or function it belongs to ("" at file level)
    row: int  # 0-based line of its key

    @property
    def label(self) -> str:
        what = {
            "enumerator": "enum entry",
            "row": "table row",
            "case": "case",
            "type": "type",
            "match": "comparison",
        }[self.kind]
        return f"{what} {self.key}" + (f" in {self.owner}" if self.owner else "")


def _text(node: Node | None) -> str:
    return "".join((node.text or b"").decode("utf-8", "replace").split()) if node is not None else ""


def _owner(node: Node) -> str:
    """The name of the enum, table, type or function a node sits in."""
    parent = node.parent
    while parent is not None:
        if parent.type == "enum_specifier":
            return _text(parent.child_by_field_name("name"))
        if parent.type == "init_declarator":
            return _text(parent.child_by_field_name("declarator"))
        if parent.type == "function_definition":
            declarator = parent.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            return _text(declarator.child_by_field_name("declarator")) if declarator is not None else ""
        if parent.type in ("struct_specifier", "class_specifier") and parent.child_by_field_name("body"):
            return _text(parent.child_by_field_name("name"))
        parent = parent.parent
    return ""


def function_at(source: bytes, row: int) -> str:
    """The name of the function whose body holds line `row` (0-based); "" outside any."""
    node = _root(source).descendant_for_point_range((row, 0), (row, 0))
    while node is not None and node.type != "function_definition":
        node = node.parent
    if node is None:
        return ""
    return _owner(node.children[-1]) if node.children else ""


def member_uses(source: bytes) -> list[tuple[str, int]]:
    """(name, 0-based line) of every `this-><name>` in the file, in file order."""
    out = []
    for node in _nodes(source, "field_expression"):
        target, name = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if target is not None and target.type == "this" and name is not None:
            out.append((_text(name), name.start_point[0]))
    return out


_DEFINING = (
    "enumerator",
    "initializer_list",
    "case_statement",
    "struct_specifier",
    "class_specifier",
    "enum_specifier",
    "binary_expression",
)


@lru_cache(maxsize=64)
def definitions(source: bytes) -> tuple[Definition, ...]:
    """The entries the file defines, in file order."""
    out: list[Definition] = []
    for node in _nodes(source, *_DEFINING):
        defined = _DEFINES.get(node.type)
        found = defined(node) if defined is not None else None
        if found is not None:
            kind, key = found
            owner = _owner(node) if kind != "type" else ""
            out.append(Definition(kind, _text(key), owner, key.start_point[0]))
    return tuple(out)


def _enumerator(node: Node) -> tuple[str, Node] | None:
    return "enumerator", node.child_by_field_name("name") or node


def _table_row(node: Node) -> tuple[str, Node] | None:
    """A braced list inside a braced list, keyed by a leading name or string: `{ LLM_ARCH_X, "x" }`."""
    if node.parent is None or node.parent.type != "initializer_list":
        return None
    first = next(iter(node.named_children), None)
    if first is not None and first.type in ("identifier", "qualified_identifier", "string_literal"):
        return "row", first
    return None


def _case(node: Node) -> tuple[str, Node] | None:
    value = node.child_by_field_name("value")
    return ("case", value) if value is not None else None


def _defined_type(node: Node) -> tuple[str, Node] | None:
    """A named struct, class or enum with a body (not a use or a forward declaration)."""
    name = node.child_by_field_name("name")
    if node.child_by_field_name("body") is not None and name is not None:
        return "type", name
    return None


def _string_match(node: Node) -> tuple[str, Node] | None:
    """A comparison with a string literal on the right: `name == "x"`."""
    if _text(node.child_by_field_name("operator")) != "==":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if right is not None and right.type == "string_literal" and left is not None:
        return "match", node
    return None


# (kind, key node) of what each node type defines, None when this one defines nothing
_DEFINES: dict[str, Callable[[Node], tuple[str, Node] | None]] = {
    "enumerator": _enumerator,
    "initializer_list": _table_row,
    "case_statement": _case,
    "struct_specifier": _defined_type,
    "class_specifier": _defined_type,
    "enum_specifier": _defined_type,
    "binary_expression": _string_match,
}


@dataclass(frozen=True)
class Declaration:
    """A parameter, field or function a file declares, by name and by what it belongs to."""

    kind: str  # parameter | field | function
    name: str
    owner: str  # the function a parameter belongs to, the type a field belongs to ("" for functions)
    row: int  # 0-based line of the name


def _declared_name(node: Node | None) -> Node | None:
    """The identifier a declarator declares, through pointers, references and arrays."""
    while node is not None and node.type not in ("identifier", "field_identifier", "qualified_identifier"):
        if node.type == "function_declarator":
            return None
        node = node.child_by_field_name("declarator")
    return node


_DECLARATOR_NAMES = ("identifier", "field_identifier", "qualified_identifier")


@lru_cache(maxsize=64)
def declarations(source: bytes) -> tuple[Declaration, ...]:
    out: list[Declaration] = []
    for node in _nodes(source, *_DECLARES):
        out += _DECLARES[node.type](node)
    return tuple(out)


def _parameter(node: Node) -> list[Declaration]:
    """A named parameter of a function declarator, owned by the function's name."""
    name = _declared_name(node.child_by_field_name("declarator"))
    function = node.parent.parent if node.parent is not None else None
    if name is None or function is None or function.type != "function_declarator":
        return []
    owner = _text(function.child_by_field_name("declarator"))
    return [Declaration("parameter", _text(name), owner, name.start_point[0])]


def _fields(node: Node) -> list[Declaration]:
    """The fields one field declaration declares (`int a, *b;`), owned by their type."""
    named = (_declared_name(d) for d in node.children_by_field_name("declarator"))
    return [
        Declaration("field", _text(name), _owner(node), name.start_point[0])
        for name in named
        if name is not None
    ]


def _function(node: Node) -> list[Declaration]:
    name = node.child_by_field_name("declarator")
    if name is not None and name.type in _DECLARATOR_NAMES:
        return [Declaration("function", _text(name), "", name.start_point[0])]
    return []


_DECLARES: dict[str, Callable[[Node], list[Declaration]]] = {
    "parameter_declaration": _parameter,
    "optional_parameter_declaration": _parameter,
    "field_declaration": _fields,
    "function_declarator": _function,
}


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


def _last_name(node: Node) -> tuple[str, str]:
    """(owner, name) of a declarator's name: `llama_hparams::is_swa` -> ("llama_hparams", "is_swa")."""
    owner = ""
    while node.type == "qualified_identifier":
        scope, inner = node.child_by_field_name("scope"), node.child_by_field_name("name")
        if scope is not None:
            base = scope.child_by_field_name("name") if scope.type == "template_type" else scope
            owner = _text(base)
        if inner is None:
            break
        node = inner
    if node.type in ("template_function", "template_type"):
        node = node.child_by_field_name("name") or node
    return owner, _text(node)


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


def _signature(function: Node) -> tuple[tuple[str, ...], str]:
    """(parameter types, qualifiers) of a function declarator."""
    params = function.child_by_field_name("parameters")
    if params is None:
        return (), ""
    types = tuple(_parameter_type(p) for p in params.named_children if p.type != "comment")
    after = [
        _text(c)
        for c in function.children
        if c.start_byte >= params.end_byte and c.type in ("type_qualifier", "ref_qualifier", "noexcept")
    ]
    return types, " ".join(after)


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
        signature: tuple[tuple[str, ...], str] = ((), ""),
    ) -> None:
        name = name or _text(node)
        if name:
            self.out.append(Declared(node.start_point[0] + 1, kind, name, owner, *signature, self.namespace))

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
        self.namespace = "::".join(p for p in (outer, _text(name).replace(" ", "")) if p)
        self.block(body, "", False)
        self.namespace = outer

    def _declaration(self, node: Node, owner: str, in_type: bool) -> None:
        self.specifier(node.child_by_field_name("type"), owner)
        for declarator in node.children_by_field_name("declarator"):
            self.declarator(declarator, owner, in_type)

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
        type_name = _last_name(name)[1] if name is not None else ""
        if name is not None:
            self.add(name, "type", owner, type_name)
        if node.type == "enum_specifier":
            self._enum_values(body, type_name)
        else:
            self.block(body, type_name or owner, True)

    def _enum_values(self, body: Node, type_name: str) -> None:
        for entry in body.named_children:
            if entry.type == "enumerator" and (value := entry.child_by_field_name("name")) is not None:
                self.add(value, "enum value", type_name)

    def declarator(self, node: Node, owner: str, in_type: bool) -> None:
        core = _unwrapped(node)
        if core is None:
            return
        if core.type == "function_declarator":
            self._function_declarator(core, owner, in_type)
        elif core.type in _DECLARATOR_NAMES:
            scope, text = _last_name(core)
            self.add(core, "field" if in_type or scope else "variable", scope or owner, text)

    def _function_declarator(self, node: Node, owner: str, in_type: bool) -> None:
        name = node.child_by_field_name("declarator")
        if name is None:
            return
        if name.type == "parenthesized_declarator":  # a pointer to a function is a variable
            self.declarator(name, owner, in_type)
            return
        scope, text = _last_name(name)
        self.add(name, "function", scope or owner, text, _signature(node))


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


@lru_cache(maxsize=256)
def interface(source: bytes) -> tuple[Declared, ...]:
    """What the file declares outside function bodies, in file order: macros, types, functions (with
    their parameter types), fields, namespace-scope variables and enum values. A body's locals are
    nobody's interface, so bodies are never entered."""
    found = _Interface()
    found.block(_root(source), "", False)
    return tuple(sorted(found.out, key=lambda d: d.line))


@dataclass(frozen=True)
class Switch:
    """One `switch` of a function: the values it has a `case` for, and what its default does."""

    function: str
    subject: str  # the switched expression without spaces: `ctx->proj_type()`
    line: int  # 1-based line of `switch`
    cases: tuple[tuple[str, int], ...]  # (value's last name, 1-based line) of every named case
    default: str  # the default branch's code on one line ("" when it has none)


def _case_name(value: Node) -> str:
    """The enum value a case names (`projector_type::X` -> `X`); "" for a number or a character."""
    if value.type == "qualified_identifier":
        return _last_name(value)[1]
    return _text(value) if value.type == "identifier" else ""


def _cases(body: Node) -> list[Node]:
    """The case labels of one switch body, not those of a switch nested in it."""
    found, stack = [], list(reversed(body.named_children))
    while stack:
        node = stack.pop()
        if node.type == "case_statement":
            found.append(node)
        if node.type not in ("switch_statement", "lambda_expression", "function_definition"):
            stack.extend(reversed(node.named_children))
    return found


@lru_cache(maxsize=64)
def switches(source: bytes) -> tuple[Switch, ...]:
    """Every switch in the file, in file order."""
    out = []
    for node in _nodes(source, "switch_statement"):
        body = node.child_by_field_name("body")
        if body is None:
            continue
        cases, default = [], ""
        for case in _cases(body):
            value = case.child_by_field_name("value")
            if value is None:
                default = " ".join((case.text or b"").decode("utf-8", "replace").split())
            elif name := _case_name(value):
                cases.append((name, value.start_point[0] + 1))
        out.append(
            Switch(
                function_at(source, node.start_point[0]),
                _text(node.child_by_field_name("condition")).removeprefix("(").removesuffix(")"),
                node.start_point[0] + 1,
                tuple(cases),
                default,
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class TableRow:
    """`{ VALUE, "string" }` (either order) of a table that maps names to strings."""

    table: str
    value: str
    string: str
    line: int  # 1-based


def _string(node: Node) -> str | None:
    if node.type != "string_literal":
        return None
    return "".join(_text(c) for c in node.named_children if c.type == "string_content")


_ROW = re.compile(rb'\{\s*(?:[A-Za-z_][\w:]*\s*,\s*"|"[^"\n]*"\s*,\s*[A-Za-z_])')


@lru_cache(maxsize=64)
def string_tables(source: bytes) -> tuple[TableRow, ...]:
    """Rows of every table in the file that pairs an enum value with a string, in file order."""
    if not _ROW.search(source):
        return ()  # most files hold no such row: no need to parse them
    rows = (_string_row(node) for node in _nodes(source, "initializer_list"))
    return tuple(row for row in rows if row is not None)


def _string_row(node: Node) -> TableRow | None:
    """A braced pair inside a braced list, one a name and the other a string literal (either order)."""
    parent = node.parent
    if parent is None or parent.type != "initializer_list":
        return None
    items = [c for c in node.named_children if c.type != "comment"]
    if len(items) != 2:
        return None
    for name, text in (items, items[::-1]):
        string = _string(text)
        if string is not None and name.type in ("identifier", "qualified_identifier"):
            return TableRow(_owner(node), _case_name(name), string, name.start_point[0] + 1)
    return None


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
        return _spelled(name) if name is not None else _text(node)
    if node.type == "field_expression":
        field = node.child_by_field_name("field")
        return "." + (_spelled(field) if field is not None else "")
    return _text(node)


def uses(source: bytes) -> tuple[Use, ...]:
    """Every call (with how many arguments it passes) and every other `a::b` name of the file, in file
    order: what a change of the declarations it reaches can break."""
    found, callees = [], set()
    for call in _nodes(source, "call_expression"):
        function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        if function is None or arguments is None:
            continue
        callees.add(function.start_byte)
        count = sum(1 for a in arguments.named_children if a.type != "comment")
        found.append(Use(function.start_point[0] + 1, _spelled(function), count))
    for name in _nodes(source, "qualified_identifier"):
        if name.start_byte in callees or (
            name.parent is not None and name.parent.type == "qualified_identifier"
        ):
            continue
        found.append(Use(name.start_point[0] + 1, _spelled(name), None))
    return tuple(sorted(found, key=lambda u: u.line))
