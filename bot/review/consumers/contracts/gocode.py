"""Ollama's Go code as packages: the functions, types and package-level values of each directory, what a name
in one file refers to (an import's package, a package-level value), and the local bindings of a function.

Everything is read lazily from a path -> text mapping: a directory is parsed when a question first needs it.
Build tags are ignored (every platform's file counts); `_test.go` files are left out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.review.consumers.shared import go_string, text_of

_FIELD_DECLARATIONS = syntax.pattern("go", "(field_declaration) @f")

FuncKey = tuple[str, str, str]  # (package directory, receiver type or "", name)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # an ASCII identifier, as the parser reads one

_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)

_TOP_LEVEL = syntax.pattern(
    "go",
    """
(function_declaration) @function
(method_declaration) @method
(type_spec) @type
(var_spec) @value
(const_spec) @value
(import_spec) @import
""",
)

_DECLARATIONS = {
    "function_declaration": "function",
    "method_declaration": "method",
    "type_declaration": "type",
    "var_declaration": "value",
    "const_declaration": "value",
    "import_declaration": "import",
}
_SPECS = {"type_spec": "type", "var_spec": "value", "const_spec": "value", "import_spec": "import"}

# What the questions about a function body ask for, found in one walk of it (a query's cost is the walk: one
# with every pattern costs what one with a single pattern does).
_BODY = syntax.pattern(
    "go",
    """
(call_expression) @call
(return_statement) @return
(keyed_element) @keyed
(short_var_declaration) @assign
(assignment_statement) @assign
(var_spec) @var
(range_clause) @range
(parameter_declaration) @param
(variadic_parameter_declaration) @param
""",
)

STRING_LITERALS = ("interpreted_string_literal", "raw_string_literal")

WRAPPERS = ("parenthesized_expression", "literal_element")


def unwrap(node: Node | None) -> Node | None:
    """The expression inside parentheses and composite-literal element wrappers."""
    while node is not None and node.type in WRAPPERS and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def named(node: Node | None, name: str) -> Node | None:
    return node.child_by_field_name(name) if node is not None else None


def line(node: Node) -> int:
    return node.start_point[0] + 1


def enclosing_function(node: Node) -> Node | None:
    """The innermost function, method or function literal holding a node."""
    parent = node.parent
    while parent is not None and parent.type not in FUNCTION_NODES:
        parent = parent.parent
    return parent


FUNCTION_NODES = ("function_declaration", "method_declaration", "func_literal")


def base_type_name(kind: Node | None) -> tuple[str, str]:
    """(package qualifier or "", type name) of a type node, through pointers, slices, arrays and maps' values;
    ("", "") for a type without a name (a struct literal type, a function type)."""
    kind = _element_type(kind)
    if kind is None:
        return "", ""
    if kind.type == "qualified_type":
        return node_text(named(kind, "package")), node_text(named(kind, "name"))
    if kind.type in ("type_identifier", "generic_type"):
        return "", node_text(kind).split("[", 1)[0]
    return "", ""


def _element_type(kind: Node | None) -> Node | None:
    """A type with its pointer, slice, array and map wrappers taken off."""
    while kind is not None and kind.type in ("pointer_type", "slice_type", "array_type", "map_type"):
        inner = named(kind, "value") or named(kind, "element")
        kind = inner if inner is not None else (kind.named_children[-1] if kind.named_children else None)
    return kind


@dataclass(frozen=True)
class Func:
    """One function or method of a package."""

    package: str
    receiver: str
    name: str
    path: str
    node: Node = field(compare=False, hash=False)

    @cached_property
    def key(self) -> FuncKey:
        return (self.package, self.receiver, self.name)

    @cached_property
    def body(self) -> Node | None:
        return named(self.node, "body")

    def spells(self, name: str) -> bool:
        """Whether the function's code holds the name's text (a call of it must)."""
        return name.encode() in (self.node.text or b"")

    @cached_property
    def captured(self) -> dict[str, list[Node]]:
        """The body's calls, returns, keyed elements and bindings (its closures' too), each kind in file order:
        read once, asked for by every question."""
        return syntax.captures(_BODY, self.body) if self.body is not None else {}

    @property
    def calls(self) -> list[Node]:
        """Every call expression of the body, in file order."""
        return self.captured.get("call", [])

    @property
    def returns(self) -> list[Node]:
        """Every return statement of the body (its closures' too), in file order."""
        return self.captured.get("return", [])

    @property
    def keyed_elements(self) -> list[Node]:
        """Every `key: value` element of the body's composite literals, in file order."""
        return self.captured.get("keyed", [])

    @cached_property
    def own_returns(self) -> list[Node]:
        """The function's own return statements (not its closures')."""
        return [r for r in self.returns if enclosing_function(r) == self.node]

    def params(self) -> list[tuple[str, Node | None]]:
        """(name, type) of each parameter in order; the receiver left out."""
        return _parameters(named(self.node, "parameters"))

    def receiver_param(self) -> tuple[str, Node | None] | None:
        listed = _parameters(named(self.node, "receiver"))
        return listed[0] if listed else None

    def results(self) -> list[tuple[str, Node | None]]:
        """(name or "", type) of each result."""
        result = named(self.node, "result")
        if result is None:
            return []
        if result.type == "parameter_list":
            return _parameters(result)
        return [("", result)]


def _parameters(plist: Node | None) -> list[tuple[str, Node | None]]:
    out: list[tuple[str, Node | None]] = []
    for declaration in plist.named_children if plist is not None else []:
        kind = named(declaration, "type")
        names = declaration.children_by_field_name("name")
        out += [(node_text(n), kind) for n in names] or [("", kind)]
    return out


@dataclass(frozen=True)
class Value:
    """A package-level `var` or `const`: its name, the expression it is given (None without one), where."""

    name: str
    value: Node | None
    declared: Node | None
    path: str
    node: Node


@dataclass
class Declarations:
    """What one directory's Go files declare."""

    functions: dict[str, list[Func]] = field(default_factory=dict)
    methods: dict[str, list[Func]] = field(default_factory=dict)
    types: dict[str, tuple[Node, str]] = field(default_factory=dict)  # name -> (its type node, path)
    values: dict[str, Value] = field(default_factory=dict)
    fields: dict[str, list[tuple[Node, str]]] = field(default_factory=dict)  # field name -> declarations
    imports: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> alias -> import path


class Package:
    """One directory's Go files, read when the package is first asked about; each file parsed when a question
    first needs its declarations: a question about a name is answered from the files that spell it."""

    def __init__(self, directory: str, texts: list[tuple[str, str]]):
        self.directory = directory
        self._texts = texts
        self._text_of = dict(texts)
        self._file_words = [frozenset(_WORD.findall(text)) for _, text in texts]
        self._words = frozenset().union(*self._file_words)
        self._indexed: dict[str, Declarations] = {}
        self._by_name: dict[str, list[Declarations]] = {}

    def spells(self, name: str) -> bool:
        """Whether a file may declare or use the name (a name not an ASCII identifier is not looked for)."""
        return name in self._words or not _WORD.fullmatch(name)

    def paths_spelling(self, name: str) -> frozenset[str]:
        """The files that may declare or use the name (every file for a name not an ASCII identifier)."""
        plain = _WORD.fullmatch(name) is not None
        return frozenset(
            path for (path, _), words in zip(self._texts, self._file_words) if name in words or not plain
        )

    def _file(self, path: str, text: str) -> Declarations:
        """What one file declares, parsed on first use."""
        if path not in self._indexed:
            self._indexed[path] = declared = Declarations()
            _index_file(declared, self.directory, path, syntax.root("go", text))
        return self._indexed[path]

    def _spelling(self, name: str) -> list[Declarations]:
        """The declarations of each file that may declare the name, in file order (asked once per name)."""
        if name not in self._by_name:
            plain = _WORD.fullmatch(name) is not None
            self._by_name[name] = [
                self._file(path, text)
                for (path, text), words in zip(self._texts, self._file_words)
                if name in words or not plain
            ]
        return self._by_name[name]

    @cached_property
    def declared(self) -> Declarations:
        declared = Declarations()
        for path, text in self._texts:
            _merge(declared, self._file(path, text))
        return declared

    def functions_named(self, name: str) -> list[Func]:
        return [f for file in self._spelling(name) for f in file.functions.get(name, [])]

    def methods_named(self, name: str) -> list[Func]:
        return [f for file in self._spelling(name) for f in file.methods.get(name, [])]

    def fields_named(self, name: str) -> list[tuple[Node, str]]:
        """The declarations of struct fields called `name` (of every type), in file order."""
        return [f for file in self._spelling(name) for f in file.fields.get(name, [])]

    def value(self, name: str) -> Value | None:
        found = [file.values[name] for file in self._spelling(name) if name in file.values]
        return found[-1] if found else None

    def type_decl(self, name: str) -> tuple[Node, str] | None:
        found = [file.types[name] for file in self._spelling(name) if name in file.types]
        return found[-1] if found else None

    def text_of(self, path: str) -> str:
        """A file's text; "" for a path not of this package."""
        return self._text_of.get(path, "")

    def imports_of(self, path: str) -> dict[str, str]:
        """The file's imports (alias -> import path); {} for a path not of this package."""
        text = self._text_of.get(path)
        return self._file(path, text).imports.get(path, {}) if text is not None else {}

    def functions_in(self, path: str) -> Iterator[Func]:
        """The functions and methods of one file of the package."""
        text = self._text_of.get(path)
        if text is not None:
            declared = self._file(path, text)
            for group in (declared.functions, declared.methods):
                for funcs in group.values():
                    yield from funcs

    @property
    def functions(self) -> dict[str, list[Func]]:
        return self.declared.functions

    @property
    def methods(self) -> dict[str, list[Func]]:
        return self.declared.methods

    def all_functions(self) -> Iterator[Func]:
        for group in (self.functions, self.methods):
            for funcs in group.values():
                yield from funcs


def _merge(into: Declarations, declared: Declarations) -> None:
    """One file's declarations added to those of the files before it (a later file's value or type wins, as
    when they are indexed in turn)."""
    for name, funcs in declared.functions.items():
        into.functions.setdefault(name, []).extend(funcs)
    for name, funcs in declared.methods.items():
        into.methods.setdefault(name, []).extend(funcs)
    into.types.update(declared.types)
    into.values.update(declared.values)
    for name, fields in declared.fields.items():
        into.fields.setdefault(name, []).extend(fields)
    into.imports.update(declared.imports)


class GoProgram:
    """The Go packages of one tree, parsed on demand."""

    def __init__(self, texts: Mapping[str, str], paths: list[str]):
        self.texts = texts
        self._dirs: dict[str, list[str]] = {}
        for path in sorted(paths):
            if path.endswith(".go") and not path.endswith("_test.go"):
                self._dirs.setdefault(posixpath.dirname(path), []).append(path)
        self._packages: dict[str, Package] = {}
        self._scopes: dict[FuncKey, Scope] = {}
        self._imports: dict[str, dict[str, str]] = {}

    @cached_property
    def module(self) -> str:
        found = _MODULE.search(text_of(self.texts, "go.mod") or "")
        return found[1] if found else ""

    def directories(self) -> list[str]:
        return sorted(self._dirs)

    def files(self, directory: str) -> list[str]:
        return self._dirs.get(directory, [])

    def text(self, path: str) -> str:
        return text_of(self.texts, path) or ""

    def package(self, directory: str) -> Package:
        if directory not in self._packages:
            self._packages[directory] = _read_package(self, directory)
        return self._packages[directory]

    def loaded(self) -> list[Package]:
        return list(self._packages.values())

    def directory_of(self, import_path: str) -> str | None:
        """The directory of an import inside the module; None for the standard library and other modules."""
        if not self.module or not (import_path == self.module or import_path.startswith(self.module + "/")):
            return None
        directory = import_path[len(self.module) + 1 :]
        return directory if directory in self._dirs or directory == "" else None

    def imports_of(self, path: str) -> dict[str, str]:
        """A Go file's imports (alias -> import path), asked once per file."""
        if path not in self._imports:
            self._imports[path] = self.package(posixpath.dirname(path)).imports_of(path)
        return self._imports[path]

    def imported(self, path: str, alias: str) -> str | None:
        """The module directory `alias` names in the Go file at `path`, if it is an import of this module."""
        target = self.imports_of(path).get(alias)
        return self.directory_of(target) if target is not None else None

    def is_import(self, path: str, alias: str) -> bool:
        return alias in self.imports_of(path)

    def import_path(self, path: str, alias: str) -> str | None:
        return self.imports_of(path).get(alias)

    def scope(self, func: Func) -> Scope:
        if func.key not in self._scopes:
            self._scopes[func.key] = Scope.of(func)
        return self._scopes[func.key]

    def functions_named(self, directory: str, name: str) -> list[Func]:
        package = self.package(directory)
        return package.functions_named(name) if package.spells(name) else []

    def methods_named(self, path: str, name: str) -> list[Func]:
        """Methods called `name` in the file's package, else in the module packages the file imports."""
        here = self.package(posixpath.dirname(path))
        found = here.methods_named(name) if here.spells(name) else []
        if found:
            return found
        for import_path in self.imports_of(path).values():
            directory = self.directory_of(import_path)
            if directory is not None:
                package = self.package(directory)
                found += package.methods_named(name) if package.spells(name) else []
        return found

    def value(self, directory: str, name: str) -> Value | None:
        package = self.package(directory)
        return package.value(name) if package.spells(name) else None

    def type_decl(self, directory: str, name: str) -> tuple[Node, str] | None:
        package = self.package(directory)
        return package.type_decl(name) if package.spells(name) else None


def _read_package(program: GoProgram, directory: str) -> Package:
    files = [(path, program.text(path)) for path in program.files(directory)]
    return Package(directory, [(path, text) for path, text in files if text])


def _index_file(package: Declarations, directory: str, path: str, root: Node) -> None:
    captured = _top_level(root)
    if captured is None:
        captured = syntax.captures(_TOP_LEVEL, root)
    for node in captured.get("function", []):
        _add(package.functions, Func(directory, "", node_text(named(node, "name")), path, node))
    for node in captured.get("method", []):
        receiver = _parameters(named(node, "receiver"))
        kind = base_type_name(receiver[0][1])[1] if receiver else ""
        _add(package.methods, Func(directory, kind, node_text(named(node, "name")), path, node))
    for node in captured.get("type", []):
        _index_type(package, path, node)
    for node in captured.get("value", []):
        if enclosing_function(node) is None:
            _index_value(package, path, node)
    package.imports[path] = dict(_imports(captured.get("import", [])))


def _top_level(root: Node) -> dict[str, list[Node]] | None:
    """What `_TOP_LEVEL` captures in a file, read off its top-level declarations (a query walks every node of
    the file): None for a file with a syntax error or a statement outside functions, whose declarations may be
    deeper down."""
    if root.has_error:
        return None
    found: dict[str, list[Node]] = {}
    for child in root.named_children:
        kind = _DECLARATIONS.get(child.type)
        if kind in ("function", "method"):
            found.setdefault(kind, []).append(child)
        elif kind is not None:
            for spec in _specs(child):
                found.setdefault(_SPECS[spec.type], []).append(spec)
        elif child.type not in ("package_clause", "comment"):
            return None
    return found


def _specs(declaration: Node) -> Iterator[Node]:
    """The specs of a `type`, `var`, `const` or `import` declaration, grouped in parentheses or not."""
    for child in declaration.named_children:
        if child.type in _SPECS:
            yield child
        elif child.type.endswith("_list"):
            yield from (spec for spec in child.named_children if spec.type in _SPECS)


def _add(table: dict[str, list[Func]], func: Func) -> None:
    table.setdefault(func.name, []).append(func)


def _index_type(package: Declarations, path: str, spec: Node) -> None:
    kind = named(spec, "type")
    if kind is None or enclosing_function(spec) is not None:
        return
    package.types[node_text(named(spec, "name"))] = (kind, path)
    for declaration in syntax.captures(_FIELD_DECLARATIONS, kind).get("f", []):
        for name in declaration.children_by_field_name("name"):
            package.fields.setdefault(node_text(name), []).append((declaration, path))


def _index_value(package: Declarations, path: str, spec: Node) -> None:
    values = named(spec, "value")
    listed = values.named_children if values is not None else []
    for i, name in enumerate(spec.children_by_field_name("name")):
        value = listed[i] if i < len(listed) else None
        package.values[node_text(name)] = Value(node_text(name), value, named(spec, "type"), path, spec)


def _imports(specs: list[Node]) -> Iterator[tuple[str, str]]:
    for spec in specs:
        path = named(spec, "path")
        target = go_string(path) if path is not None else ""
        alias = node_text(named(spec, "name")) or target.rsplit("/", 1)[-1]
        if alias not in ("_", "."):
            yield alias, target


@dataclass(frozen=True)
class Binding:
    """One way a local name gets a value: `value` is the right-hand expression (None for a parameter or a
    `var` without a value), `index`/`arity` its place in a multi-value assignment, `kind` how it binds."""

    kind: str  # "assign", "var", "range", "param"
    value: Node | None
    index: int
    arity: int
    declared: Node | None  # a declared type (var, parameter)


@dataclass
class Scope:
    """The local names of one function (its closures included) and how each is bound; the assignments whose
    target is not a plain name (`x.f = v`, `m[k] = v`)."""

    func: Func
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    stores: list[tuple[Node, Node]] = field(default_factory=list)  # (target, value)

    @classmethod
    def of(cls, func: Func) -> Scope:
        scope = cls(func)
        for i, (name, kind) in enumerate(func.params()):
            scope.bind(name, Binding("param", None, i, 0, kind))
        receiver = func.receiver_param()
        if receiver is not None:
            scope.bind(receiver[0], Binding("receiver", None, 0, 0, receiver[1]))
        for capture, nodes in func.captured.items():
            binder = _BINDERS.get(capture)
            if binder is not None:
                for node in nodes:
                    binder(scope, node)
        return scope

    def bind(self, name: str, binding: Binding) -> None:
        if name and name != "_":
            self.bindings.setdefault(name, []).append(binding)

    def of_name(self, name: str) -> list[Binding]:
        return self.bindings.get(name, [])

    def declared_type(self, name: str) -> Node | None:
        for binding in self.of_name(name):
            if binding.declared is not None:
                return binding.declared
        return None


def _bind_assignment(scope: Scope, node: Node) -> None:
    left = named(node, "left")
    right = named(node, "right")
    if left is None or right is None:
        return
    targets, values = left.named_children, right.named_children
    for i, target in enumerate(targets):
        value = values[i] if len(values) == len(targets) else (values[0] if values else None)
        arity = 1 if len(values) == len(targets) else len(targets)
        index = 0 if arity == 1 else i
        if target.type == "identifier":
            scope.bind(node_text(target), Binding("assign", value, index, arity, None))
        elif value is not None:
            scope.stores.append((target, value))


def _bind_var(scope: Scope, node: Node) -> None:
    values = named(node, "value")
    listed = values.named_children if values is not None else []
    names = node.children_by_field_name("name")
    for i, name in enumerate(names):
        value = listed[i] if len(listed) == len(names) else (listed[0] if listed else None)
        arity = 1 if len(listed) == len(names) else len(names)
        scope.bind(node_text(name), Binding("var", value, 0 if arity == 1 else i, arity, named(node, "type")))


def _bind_range(scope: Scope, node: Node) -> None:
    left = named(node, "left")
    names = left.named_children if left is not None else []
    for i, name in enumerate(names):
        scope.bind(node_text(name), Binding("range", named(node, "right"), i, len(names), None))


def _bind_parameter(scope: Scope, node: Node) -> None:
    """Parameters of closures inside the function: names without a value (the function's own are bound already)."""
    owner = enclosing_function(node)
    if owner is not None and owner.type == "func_literal":
        for name in node.children_by_field_name("name"):
            scope.bind(node_text(name), Binding("param", None, -1, 0, named(node, "type")))


_BINDERS = {
    "assign": _bind_assignment,
    "var": _bind_var,
    "range": _bind_range,
    "param": _bind_parameter,
}


def arguments(call: Node) -> list[Node]:
    args = named(call, "arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def callee_parts(call: Node) -> tuple[str, str]:
    """(qualifier, name) of a call's function: ("strings", "Contains") for `strings.Contains(...)`,
    ("", "append") for `append(...)`, (operand text, method) for `x.y.M(...)`."""
    function = named(call, "function")
    if function is None:
        return "", ""
    if function.type == "selector_expression":
        return node_text(named(function, "operand")), node_text(named(function, "field"))
    return "", node_text(function)
