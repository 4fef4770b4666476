"""C and C++ source read with tree-sitter: tokens by line, the names a file defines, its declarations.

The patch engine asks two questions of upstream's C/C++ files that a line regex answers wrongly in
the corner cases (a name inside a string or a comment, a statement split over lines): which entries
does a file define (enum entries, table rows, switch cases, types, string comparisons), and which
parameters, fields and functions does it declare. tree-sitter parses any text, broken or partial,
into a tree whose leaves are the file's tokens, so both answers come from one parse. What a header
offers other code, and what a file uses of it, the review reads in bot/review/cppapi.py; the enum values a
file maps (switch cases, value-to-string tables) are read in bot/lang/cppvalues.py.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from bot.cache import facts
from bot.lang import syntax

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


def node_pattern(*types: str) -> syntax.Pattern:
    """The query of the nodes of those types, declared (made at import, as `syntax.pattern` wants)."""
    return syntax.pattern("cpp", "\n".join(f"({t}) @node" for t in types))


def nodes(source: bytes, pattern: syntax.Pattern) -> list[Node]:
    """The nodes a `node_pattern` query finds in the file, in file order."""
    return syntax.captures(pattern, root(source)).get("node", [])


def root(source: bytes) -> Node:
    """The syntax tree of a C or C++ text."""
    return syntax.root("cpp", source)


_FIELD_EXPRESSIONS = node_pattern("field_expression")


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
    stack: list[Node] = [root(source)]
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


def compact(node: Node | None) -> str:
    """A node's text without whitespace: `a :: b` and `a::b` read alike ("" for no node)."""
    return "".join(syntax.node_text(node).split())


def enclosing_name(node: Node) -> str:
    """The name of the enum, table, type or function a node sits in."""
    parent = node.parent
    while parent is not None:
        name_of = _OWNER_NAMES.get(parent.type)
        name = name_of(parent) if name_of is not None else None
        if name is not None:
            return name
        parent = parent.parent
    return ""


def _function_name(definition: Node) -> str:
    """The declared name of a function definition, through pointer and reference declarators."""
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return compact(declarator.child_by_field_name("declarator")) if declarator is not None else ""


def _defined_type_name(specifier: Node) -> str | None:
    """A struct's or class's name where it is defined (it has a body); None where it is only named."""
    return compact(specifier.child_by_field_name("name")) if specifier.child_by_field_name("body") else None


_OWNER_NAMES: dict[str, Callable[[Node], str | None]] = {  # what can own a node -> its name (None: no owner)
    "enum_specifier": lambda n: compact(n.child_by_field_name("name")),
    "init_declarator": lambda n: compact(n.child_by_field_name("declarator")),
    "function_definition": _function_name,
    "struct_specifier": _defined_type_name,
    "class_specifier": _defined_type_name,
}


def function_at(source: bytes, row: int) -> str:
    """The name of the function whose body holds line `row` (0-based); "" outside any."""
    node = root(source).descendant_for_point_range((row, 0), (row, 0))
    while node is not None and node.type != "function_definition":
        node = node.parent
    if node is None:
        return ""
    return enclosing_name(node.children[-1]) if node.children else ""


def locals_at(source: bytes, row: int) -> frozenset[str]:
    """The local variables in scope on line `row` (0-based) of a function body: those declared up to that
    line (the line's own declaration included) in a block that holds it. A bare name among them is the
    local, not a parameter of the same name."""
    node = root(source).descendant_for_point_range((row, 0), (row, 0))
    found: set[str] = set()
    while node is not None and node.type != "function_definition":
        if node.type == "compound_statement":
            for child in node.named_children:
                if child.type == "declaration" and child.start_point[0] <= row:
                    found.update(_declared_names(child))
        node = node.parent
    return frozenset(found)


def _declared_names(declaration: Node) -> list[str]:
    """The names a declaration statement declares: `int a = 1, *b;` declares a and b."""
    names = []
    for declarator in declaration.children_by_field_name("declarator"):
        inner = (
            declarator.child_by_field_name("declarator")
            if declarator.type == "init_declarator"
            else declarator
        )
        name = _declared_name(inner)
        if name is not None:
            names.append(compact(name))
    return names


def member_uses(source: bytes) -> list[tuple[str, int]]:
    """(name, 0-based line) of every `this-><name>` in the file, in file order."""
    out = []
    for node in nodes(source, _FIELD_EXPRESSIONS):
        target, name = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if target is not None and target.type == "this" and name is not None:
            out.append((compact(name), name.start_point[0]))
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
_DEFINING_NODES = node_pattern(*_DEFINING)


# The patch stage's reading of the files a patch edits, kept in the facts store by content: a re-check of the
# same refs parses none of them again (on b10091 -> b10242, 6 parses: 0.1 s).
DEFINITIONS = facts.Extractor("cpp-definitions", 1, __name__)


@lru_cache(maxsize=64)
@facts.by_content(DEFINITIONS)
def definitions(source: bytes) -> tuple[Definition, ...]:
    """The entries the file defines, in file order."""
    out: list[Definition] = []
    for node in nodes(source, _DEFINING_NODES):
        defined = _DEFINES.get(node.type)
        found = defined(node) if defined is not None else None
        if found is not None:
            kind, key = found
            owner = enclosing_name(node) if kind != "type" else ""
            out.append(Definition(kind, compact(key), owner, key.start_point[0]))
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
    if compact(node.child_by_field_name("operator")) != "==":
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


DECLARATOR_NAMES = ("identifier", "field_identifier", "qualified_identifier")


@lru_cache(maxsize=64)
def declarations(source: bytes) -> tuple[Declaration, ...]:
    out: list[Declaration] = []
    for node in nodes(source, _DECLARING_NODES):
        out += _DECLARES[node.type](node)
    return tuple(out)


def _parameter(node: Node) -> list[Declaration]:
    """A named parameter of a function declarator, owned by the function's name."""
    name = _declared_name(node.child_by_field_name("declarator"))
    function = node.parent.parent if node.parent is not None else None
    if name is None or function is None or function.type != "function_declarator":
        return []
    owner = compact(function.child_by_field_name("declarator"))
    return [Declaration("parameter", compact(name), owner, name.start_point[0])]


def _fields(node: Node) -> list[Declaration]:
    """The fields one field declaration declares (`int a, *b;`), owned by their type."""
    named = (_declared_name(d) for d in node.children_by_field_name("declarator"))
    return [
        Declaration("field", compact(name), enclosing_name(node), name.start_point[0])
        for name in named
        if name is not None
    ]


def _function(node: Node) -> list[Declaration]:
    name = node.child_by_field_name("declarator")
    if name is not None and name.type in DECLARATOR_NAMES:
        return [Declaration("function", compact(name), "", name.start_point[0])]
    return []


_DECLARES: dict[str, Callable[[Node], list[Declaration]]] = {
    "parameter_declaration": _parameter,
    "optional_parameter_declaration": _parameter,
    "field_declaration": _fields,
    "function_declarator": _function,
}
_DECLARING_NODES = node_pattern(*_DECLARES)


def last_name(node: Node) -> tuple[str, str]:
    """(owner, name) of a declarator's name: `llama_hparams::is_swa` -> ("llama_hparams", "is_swa")."""
    owner = ""
    while node.type == "qualified_identifier":
        scope, inner = node.child_by_field_name("scope"), node.child_by_field_name("name")
        if scope is not None:
            base = scope.child_by_field_name("name") if scope.type == "template_type" else scope
            owner = compact(base)
        if inner is None:
            break
        node = inner
    if node.type in ("template_function", "template_type"):
        node = node.child_by_field_name("name") or node
    return owner, compact(node)
