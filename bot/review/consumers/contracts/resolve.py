"""What a Go expression can be, read statically: the module functions a call reaches, the named type of a value,
the string constants an expression holds, and the set of values it can take as far as the code says.

Every question is bounded (a depth limit on following bindings, call sites and returns) and answers what it can
read; what it cannot is described by its type or its text, never guessed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.review.consumers.contracts.gocode import (
    STRING_LITERALS,
    Binding,
    Func,
    GoProgram,
    Value,
    arguments,
    base_type_name,
    callee_parts,
    go_string,
    named,
    unwrap,
)

_FIELD_DECLARATIONS = syntax.pattern("go", "(field_declaration) @f")

DEPTH = 5  # how many bindings, call sites and returns one question follows
MAX_VALUES = 16  # a value set larger than this is cut, and says so

# string functions that hand back (a transformed copy of) their first argument
_TRANSFORMS = {"ToLower", "ToUpper", "TrimSpace", "Title", "ToTitle"}

_INTEGER_FORMATS = {"Itoa", "FormatInt", "FormatUint", "Atoi", "ParseInt", "ParseUint"}

_BASIC = (
    (re.compile(r"u?int\d*|byte|rune|uintptr"), "integer"),
    (re.compile(r"float\d+"), "number"),
    (re.compile(r"bool"), "bool"),
    (re.compile(r"string"), "string"),
)

_FORMAT_VERB = re.compile(r"%[-+# 0-9.*]*[a-zA-Z%]")


@dataclass(frozen=True)
class Where:
    """Where an expression is read: the function holding it (None at package level) and its file."""

    func: Func | None
    path: str

    @cached_property
    def directory(self) -> str:
        """The package directory (a function's own: its file's directory, named once)."""
        return self.func.package if self.func is not None else posixpath.dirname(self.path)


def where_of(func: Func) -> Where:
    return Where(func, func.path)


@dataclass(frozen=True)
class Literal:
    """A string constant and where it is written."""

    value: str
    path: str
    line: int


class Resolver:
    """Static answers about one program's expressions."""

    def __init__(self, program: GoProgram):
        self.program = program
        self._callers: dict[tuple[str, str], list[tuple[Func, Node]]] = {}
        self._field_values: dict[str, dict[str, list[tuple[Node, Where]]]] = {}
        self._struct_fields: dict[tuple[str, str], dict[str, tuple[Node, str]]] = {}
        self._callees: dict[tuple[str, int, int, int, bool], list[Func]] = {}

    # ---- names -----------------------------------------------------------------------------------------------

    def bindings(self, name: str, where: Where) -> list[Binding]:
        return self.program.scope(where.func).of_name(name) if where.func is not None else []

    def package_value(self, name: str, where: Where) -> tuple[Value, Where] | None:
        value = self.program.value(where.directory, name)
        return (value, Where(None, value.path)) if value is not None else None

    def qualified(self, node: Node, where: Where) -> tuple[str, str] | None:
        """(module directory, name) of `pkg.Name` where pkg is an import of this module."""
        if node.type != "selector_expression":
            return None
        operand = named(node, "operand")
        if operand is None or operand.type != "identifier" or self.bindings(node_text(operand), where):
            return None
        directory = self.program.imported(where.path, node_text(operand))
        return (directory, node_text(named(node, "field"))) if directory is not None else None

    def is_package_alias(self, node: Node | None, where: Where) -> bool:
        return (
            node is not None
            and node.type == "identifier"
            and not self.bindings(node_text(node), where)
            and self.program.is_import(where.path, node_text(node))
        )

    # ---- calls -----------------------------------------------------------------------------------------------

    def callees(self, call: Node, where: Where, exact: bool = False) -> list[Func]:
        """The module functions and methods a call may invoke. A method is found by name (the file's package
        first, else the module packages it imports), narrowed to its receiver's type when the code says it;
        `exact` gives nothing rather than several methods of unknown receivers. Asked once per call."""
        held = where.func.node.start_byte if where.func is not None else -1
        key = (where.path, held, call.start_byte, call.end_byte, exact)
        if key not in self._callees:
            self._callees[key] = self._find_callees(call, where, exact)
        return self._callees[key]

    def _find_callees(self, call: Node, where: Where, exact: bool) -> list[Func]:
        function = unwrap(named(call, "function"))
        if function is None:
            return []
        if function.type == "identifier":
            if self.bindings(node_text(function), where):
                return []
            return self.program.functions_named(where.directory, node_text(function))
        if function.type != "selector_expression":
            return []
        target = self.qualified(function, where)
        if target is not None:
            return self.program.functions_named(*target)
        if self.is_package_alias(named(function, "operand"), where):
            return []
        methods = self.program.methods_named(where.path, node_text(named(function, "field")))
        return self._narrowed(methods, named(function, "operand"), where, exact)

    def _narrowed(self, methods: list[Func], operand: Node | None, where: Where, exact: bool) -> list[Func]:
        """The methods whose receiver the operand can be: its type when known; for a field of an interface
        type, the module types of the values the code stores in it (none when it stores only others)."""
        if len(methods) <= 1 and not exact:
            return methods
        kinds = self._receiver_kinds(operand, where)
        if kinds is not None:
            return [m for m in methods if (m.package, m.receiver) in kinds]
        return [] if exact and len(methods) > 1 else methods

    def _receiver_kinds(self, operand: Node | None, where: Where) -> set[tuple[str, str]] | None:
        kind = self.type_of(operand, where, 3)
        if kind is not None:
            return {kind}
        operand = unwrap(operand)
        if operand is None or operand.type != "selector_expression":
            return None
        stored = self.field_values(where.directory).get(node_text(named(operand, "field")), [])
        if not stored:
            return None
        return {k for value, at in stored if (k := self.type_of(value, at, 3)) is not None}

    def call_sites(self, func: Func) -> list[tuple[Func, Node]]:
        """The calls of a function (by name) in the loaded packages: (calling function, call)."""
        sites: list[tuple[Func, Node]] = []
        for package in self.program.loaded():
            if not package.spells(func.name):
                continue  # no call of it there: its calls need not be read
            for caller, call in self._calls_named(package.directory, func.name):
                if func in self.callees(call, where_of(caller)):
                    sites.append((caller, call))
        return sites

    def _calls_named(self, directory: str, name: str) -> list[tuple[Func, Node]]:
        """The calls of a function called `name` in a package, in the order of its functions: only the
        functions whose code spells the name have their calls read."""
        if (directory, name) not in self._callers:
            package = self.program.package(directory)
            paths = package.paths_spelling(name)
            self._callers[(directory, name)] = [
                (func, call)
                for func in package.all_functions()
                if func.path in paths and func.spells(name)
                for call in func.calls
                if callee_parts(call)[1] == name
            ]
        return self._callers[(directory, name)]

    def returned(self, func: Func, index: int = 0) -> list[tuple[Node, Where]]:
        """The expressions a function returns at result `index` (named results through their bindings)."""
        out: list[tuple[Node, Where]] = []
        where = where_of(func)
        for statement in func.own_returns:
            listed = statement.named_children[0].named_children if statement.named_children else []
            if index < len(listed):
                out.append((listed[index], where))
            elif not listed:
                out += self._named_result(func, index)
        return out

    def _named_result(self, func: Func, index: int) -> list[tuple[Node, Where]]:
        """What a bare `return` hands back at `index`: the values given to the named result."""
        results = func.results()
        if index >= len(results) or not results[index][0]:
            return []
        where = where_of(func)
        return [(b.value, where) for b in self.bindings(results[index][0], where) if b.value is not None]

    # ---- types -----------------------------------------------------------------------------------------------

    def type_ref(self, kind: Node | None, where: Where) -> tuple[str, str] | None:
        """(directory, name) of a named module type written at `where`; None for others."""
        qualifier, name = base_type_name(kind)
        if not name:
            return None
        directory = self.program.imported(where.path, qualifier) if qualifier else where.directory
        if directory is None or self.program.type_decl(directory, name) is None:
            return None
        return directory, name

    def type_of(self, expr: Node | None, where: Where, depth: int = DEPTH) -> tuple[str, str] | None:
        """The named module type of an expression's value, where the code says it."""
        expr = unwrap(expr)
        if expr is None or depth <= 0:
            return None
        reader = _TYPE_READERS.get(expr.type)
        return reader(self, expr, where, depth - 1) if reader is not None else None

    def _type_of_identifier(self, expr: Node, where: Where, depth: int) -> tuple[str, str] | None:
        for binding in self.bindings(node_text(expr), where):
            found = self._type_of_binding(binding, where, depth)
            if found is not None:
                return found
        value = self.package_value(node_text(expr), where)
        if value is not None:
            return self.type_ref(value[0].declared, value[1]) or self.type_of(value[0].value, value[1], depth)
        return None

    def _type_of_binding(self, binding: Binding, where: Where, depth: int) -> tuple[str, str] | None:
        if binding.declared is not None:
            return self.type_ref(binding.declared, where)
        if binding.value is None or binding.kind == "range":
            return None
        if binding.arity > 1 and binding.value.type == "call_expression":
            return self._result_type(binding.value, binding.index, where)
        return self.type_of(binding.value, where, depth)

    def _type_of_call(self, expr: Node, where: Where, depth: int) -> tuple[str, str] | None:
        return self._result_type(expr, 0, where)

    def _result_type(self, call: Node, index: int, where: Where) -> tuple[str, str] | None:
        for func in self.callees(call, where):
            results = func.results()
            if index < len(results):
                found = self.type_ref(results[index][1], where_of(func))
                if found is not None:
                    return found
        return None

    def _type_of_composite(self, expr: Node, where: Where, depth: int) -> tuple[str, str] | None:
        return self.type_ref(named(expr, "type"), where)

    def _type_of_unary(self, expr: Node, where: Where, depth: int) -> tuple[str, str] | None:
        return self.type_of(named(expr, "operand"), where, depth)

    def _type_of_selector(self, expr: Node, where: Where, depth: int) -> tuple[str, str] | None:
        target = self.qualified(expr, where)
        if target is not None:
            value = self.program.value(*target)
            return self.type_ref(value.declared, Where(None, value.path)) if value is not None else None
        declared = self.field_declaration(expr, where, depth)
        return self.type_ref(named(declared[0], "type"), Where(None, declared[1])) if declared else None

    def field_declaration(self, selector: Node, where: Where, depth: int = DEPTH) -> tuple[Node, str] | None:
        """The declaration of the field a selector `x.f` reads: through x's type when the code says it, else
        the only field of that name in the package."""
        name = node_text(named(selector, "field"))
        owner = self.type_of(named(selector, "operand"), where, depth)
        if owner is not None:
            found = self.struct_field(owner, name)
            if found is not None:
                return found
        candidates = self.program.package(where.directory).fields_named(name)
        return candidates[0] if len(candidates) == 1 else None

    def struct_field(self, owner: tuple[str, str], name: str) -> tuple[Node, str] | None:
        if owner not in self._struct_fields:
            self._struct_fields[owner] = _fields_of(self.program.type_decl(*owner))
        return self._struct_fields[owner].get(name)

    # ---- string constants ------------------------------------------------------------------------------------

    def literals(self, expr: Node | None, where: Where, depth: int = DEPTH) -> list[Literal]:
        """The string constants an expression holds: a literal, a constant, a variable given one, a loop
        variable over a list of them, through case changes and []byte/string conversions."""
        expr = unwrap(expr)
        if expr is None or depth <= 0:
            return []
        if expr.type in STRING_LITERALS:
            return [Literal(go_string(expr), where.path, expr.start_point[0] + 1)]
        reader = _LITERAL_READERS.get(expr.type)
        return reader(self, expr, where, depth - 1) if reader is not None else []

    def _literals_of_identifier(self, expr: Node, where: Where, depth: int) -> list[Literal]:
        bindings = self.bindings(node_text(expr), where)
        if bindings:
            return [lit for b in bindings for lit in self._literals_of_binding(b, where, depth)]
        value = self.package_value(node_text(expr), where)
        return self.literals(value[0].value, value[1], depth) if value is not None else []

    def _literals_of_binding(self, binding: Binding, where: Where, depth: int) -> list[Literal]:
        if binding.value is None:
            return []
        if binding.kind == "range":
            return self.elements_literals(binding.value, where, depth) if binding.index == 1 else []
        return self.literals(binding.value, where, depth) if binding.arity == 1 else []

    def elements_literals(self, expr: Node, where: Where, depth: int) -> list[Literal]:
        """The string constants of the elements of a list: a composite literal, or a name given one."""
        listed = self.composite(expr, where, depth)
        if listed is None:
            return []
        body = named(listed[0], "body")
        elements = body.named_children if body is not None else []
        return [lit for e in elements for lit in self.literals(e, listed[1], depth)]

    def composite(self, expr: Node | None, where: Where, depth: int) -> tuple[Node, Where] | None:
        """The composite literal an expression is, or a name (local or package-level) is given."""
        expr = unwrap(expr)
        if expr is None or depth <= 0:
            return None
        if expr.type == "composite_literal":
            return expr, where
        if expr.type != "identifier":
            return None
        for binding in self.bindings(node_text(expr), where):
            if binding.arity == 1 and binding.kind != "range":
                found = self.composite(binding.value, where, depth - 1)
                if found is not None:
                    return found
        value = self.package_value(node_text(expr), where)
        return self.composite(value[0].value, value[1], depth - 1) if value is not None else None

    def _literals_of_call(self, expr: Node, where: Where, depth: int) -> list[Literal]:
        qualifier, name = callee_parts(expr)
        args = arguments(expr)
        if not args:
            return []
        if (qualifier, name) in (("", "string"), ("", "[]byte")) or name in _TRANSFORMS:
            return self.literals(args[0], where, depth)
        return []

    def _literals_of_conversion(self, expr: Node, where: Where, depth: int) -> list[Literal]:
        return self.literals(named(expr, "operand"), where, depth)

    def _literals_of_selector(self, expr: Node, where: Where, depth: int) -> list[Literal]:
        target = self.qualified(expr, where)
        value = self.program.value(*target) if target is not None else None
        return self.literals(value.value, Where(None, value.path), depth) if value is not None else []

    # ---- value sets ------------------------------------------------------------------------------------------

    def values(self, expr: Node | None, where: Where, depth: int = DEPTH) -> tuple[str, ...]:
        """The values an expression can take as far as the code says: constants JSON-quoted ("on"), what is
        not constant by its kind (integer, number, bool, string) or its expression."""
        found = list(dict.fromkeys(self._values(expr, where, depth)))
        if len(found) > MAX_VALUES:
            found = found[:MAX_VALUES] + ["..."]
        return tuple(found)

    def _values(self, expr: Node | None, where: Where, depth: int) -> list[str]:
        expr = unwrap(expr)
        if expr is None:
            return []
        if depth <= 0:
            return [self.described(expr, where)]
        reader = _VALUE_READERS.get(expr.type)
        if reader is None:
            return [self.described(expr, where)]
        return reader(self, expr, where, depth - 1) or [self.described(expr, where)]

    def described(self, expr: Node, where: Where) -> str:
        """What a value is when its constants cannot be read: its basic kind, else its expression."""
        kind = self.basic_kind(expr, where)
        return kind or _short(node_text(expr))

    def basic_kind(self, expr: Node, where: Where) -> str:
        """integer/number/bool/string for a value whose declared Go type says so, else ""."""
        declared = self.declared_type(expr, where)
        return kind_of_type(node_text(declared)) if declared is not None else ""

    def declared_type(self, expr: Node, where: Where) -> Node | None:
        expr = unwrap(expr) or expr
        if expr.type == "identifier":
            declared = self.program.scope(where.func).declared_type(node_text(expr)) if where.func else None
            return declared
        if expr.type == "selector_expression":
            found = self.field_declaration(expr, where)
            return named(found[0], "type") if found is not None else None
        return None

    def _values_of_string(self, expr: Node, where: Where, depth: int) -> list[str]:
        return [quoted(go_string(expr))]

    def _values_of_number(self, expr: Node, where: Where, depth: int) -> list[str]:
        return [node_text(expr)]

    def _values_of_identifier(self, expr: Node, where: Where, depth: int) -> list[str]:
        name = node_text(expr)
        if name in ("true", "false", "nil", "iota"):
            return [name]
        bindings = self.bindings(name, where)
        if bindings:
            return [v for b in bindings for v in self._values_of_binding(b, where, depth)]
        value = self.package_value(name, where)
        if value is not None and value[0].value is not None:
            return self._values(value[0].value, value[1], depth)
        return []

    def _values_of_binding(self, binding: Binding, where: Where, depth: int) -> list[str]:
        if binding.kind in ("param", "receiver") and where.func is not None:
            return self._values_of_parameter(binding, where.func, depth) if binding.index >= 0 else []
        if binding.value is None:
            return [kind_of_type(node_text(binding.declared))] if binding.declared is not None else []
        if binding.kind == "range":
            return []
        if binding.arity > 1:
            return self._values_of_result(binding.value, binding.index, where, depth)
        return self._values(binding.value, where, depth)

    def _values_of_result(self, call: Node, index: int, where: Where, depth: int) -> list[str]:
        """One result of a multi-value call: what the called functions return there."""
        callees = self.callees(call, where, exact=True) if call.type == "call_expression" else []
        found = [
            v for f in callees for node, at in self.returned(f, index) for v in self._values(node, at, depth)
        ]
        return found or [self.described(call, where)]

    def _values_of_parameter(self, binding: Binding, func: Func, depth: int) -> list[str]:
        """A parameter's values: the arguments its function's calls pass it."""
        out: list[str] = []
        for caller, call in self.call_sites(func)[:MAX_VALUES]:
            args = arguments(call)
            if binding.index < len(args) and args[binding.index].type != "variadic_argument":
                out += self._values(args[binding.index], where_of(caller), depth)
        if not out and binding.declared is not None:
            out.append(kind_of_type(node_text(binding.declared)) or _short(node_text(binding.declared)))
        return out

    def _values_of_call(self, expr: Node, where: Where, depth: int) -> list[str]:
        qualifier, name = callee_parts(expr)
        args = arguments(expr)
        formatted = _formatted(qualifier, name, args)
        if formatted is not None:
            return formatted
        if name in _TRANSFORMS and args:
            return self._values(args[0], where, depth)
        return [v for f in self.callees(expr, where, exact=True) for v in self._returned_values(f, depth)]

    def _returned_values(self, func: Func, depth: int) -> list[str]:
        return [v for node, where in self.returned(func) for v in self._values(node, where, depth)]

    def _values_of_selector(self, expr: Node, where: Where, depth: int) -> list[str]:
        target = self.qualified(expr, where)
        if target is not None:
            value = self.program.value(*target)
            return self._values(value.value, Where(None, value.path), depth) if value and value.value else []
        assigned = self.field_values(where.directory).get(node_text(named(expr, "field")), [])
        if assigned and len(assigned) <= MAX_VALUES:
            found = [v for node, at in assigned for v in self._values(node, at, depth)]
        else:
            kind = self.basic_kind(expr, where)
            found = [kind] if kind else []
        return found + self._declared_defaults(expr, where, depth)

    def _declared_defaults(self, expr: Node, where: Where, depth: int) -> list[str]:
        """The constants the package that declares a field of another package's struct gives it (the defaults
        its constructors set): values the field holds whenever nothing overrides them."""
        declared = self.field_declaration(expr, where)
        home = posixpath.dirname(declared[1]) if declared is not None else where.directory
        if home == where.directory:
            return []
        assigned = self.field_values(home).get(node_text(named(expr, "field")), [])[:MAX_VALUES]
        return [v for node, at in assigned for v in self._values(node, at, depth) if is_constant(v)]

    def _values_of_conversion(self, expr: Node, where: Where, depth: int) -> list[str]:
        return self._values(named(expr, "operand"), where, depth)

    def _values_of_unary(self, expr: Node, where: Where, depth: int) -> list[str]:
        operand = named(expr, "operand")
        if (
            node_text(named(expr, "operator")) == "-"
            and operand is not None
            and operand.type == "int_literal"
        ):
            return ["-" + node_text(operand)]
        return self._values(operand, where, depth) if node_text(named(expr, "operator")) in ("&", "*") else []

    def field_values(self, directory: str) -> dict[str, list[tuple[Node, Where]]]:
        """Field name -> the values the package's code gives it (`f: v` in a composite literal, `x.f = v`)."""
        if directory not in self._field_values:
            self._field_values[directory] = dict(self._collect_field_values(directory))
        return self._field_values[directory]

    def _collect_field_values(self, directory: str) -> Iterator[tuple[str, list[tuple[Node, Where]]]]:
        table: dict[str, list[tuple[Node, Where]]] = {}
        for func in self.program.package(directory).all_functions():
            where = where_of(func)
            for key, value in _keyed_fields(func.keyed_elements):
                table.setdefault(key, []).append((value, where))
            for target, value in self.program.scope(func).stores:
                if target.type == "selector_expression":
                    table.setdefault(node_text(named(target, "field")), []).append((value, where))
        yield from table.items()


def _fields_of(declared: tuple[Node, str] | None) -> dict[str, tuple[Node, str]]:
    """Field name -> (its declaration, path) of a type declaration: the first declaring a name."""
    fields: dict[str, tuple[Node, str]] = {}
    if declared is None:
        return fields
    for declaration in syntax.captures(_FIELD_DECLARATIONS, declared[0]).get("f", []):
        for name in declaration.children_by_field_name("name"):
            fields.setdefault(node_text(name), (declaration, declared[1]))
    return fields


def _formatted(qualifier: str, name: str, args: list[Node]) -> list[str] | None:
    """The values of a `strconv` conversion (its kind) or a `fmt.Sprintf` (its format, `*` for each verb)."""
    if qualifier == "strconv":
        return ["integer"] if name in _INTEGER_FORMATS else (["number"] if "Float" in name else ["bool"])
    if qualifier == "fmt" and name == "Sprintf" and args and args[0].type in STRING_LITERALS:
        return [quoted(_FORMAT_VERB.sub("*", go_string(args[0])))]
    return None


def _keyed_fields(elements: list[Node]) -> Iterator[tuple[str, Node]]:
    """(field name, value) of the `name: value` elements of composite literals."""
    for element in elements:
        key, value = unwrap(named(element, "key")), named(element, "value")
        if key is not None and key.type == "identifier" and value is not None:
            yield node_text(key), value


def kind_of_type(text: str) -> str:
    """integer/number/bool/string for a basic Go type (through a pointer), else ""."""
    text = text.lstrip("*")
    for pattern, kind in _BASIC:
        if pattern.fullmatch(text):
            return kind
    return ""


def is_constant(value: str) -> bool:
    """Whether a value as `values` gives it is a constant: a quoted string, a number, true or false."""
    if value.startswith('"') or value in ("true", "false"):
        return True
    try:
        float(value)
    except ValueError:
        return False
    return True


def quoted(value: str) -> str:
    return '"' + _short(value).replace('"', '\\"') + '"'


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_TYPE_READERS = {
    "identifier": Resolver._type_of_identifier,
    "call_expression": Resolver._type_of_call,
    "composite_literal": Resolver._type_of_composite,
    "unary_expression": Resolver._type_of_unary,
    "selector_expression": Resolver._type_of_selector,
}

_LITERAL_READERS = {
    "identifier": Resolver._literals_of_identifier,
    "call_expression": Resolver._literals_of_call,
    "type_conversion_expression": Resolver._literals_of_conversion,
    "selector_expression": Resolver._literals_of_selector,
}

_VALUE_READERS = {
    "interpreted_string_literal": Resolver._values_of_string,
    "raw_string_literal": Resolver._values_of_string,
    "int_literal": Resolver._values_of_number,
    "float_literal": Resolver._values_of_number,
    "true": Resolver._values_of_number,
    "false": Resolver._values_of_number,
    "identifier": Resolver._values_of_identifier,
    "call_expression": Resolver._values_of_call,
    "selector_expression": Resolver._values_of_selector,
    "type_conversion_expression": Resolver._values_of_conversion,
    "unary_expression": Resolver._values_of_unary,
}
