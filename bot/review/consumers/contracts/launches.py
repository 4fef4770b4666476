"""Where Ollama's Go code starts an upstream program and talks to it: the `exec.Command` of a binary its build
installs, the arguments and environment it gets, the port it listens on, and the HTTP requests sent there.

A command runs an upstream program when its program argument is, or comes from a function that names, one of
the executables Ollama's build installs from upstream (`install(TARGETS ...)`). A request goes to such a
program when its URL is formatted with the value the command was given as `--port` (followed through the
function that starts the program, its results and the fields they are stored in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.contracts.gocode import (
    STRING_LITERALS,
    Binding,
    Func,
    GoProgram,
    Package,
    arguments,
    callee_parts,
    enclosing_function,
    go_string,
    named,
    unwrap,
)
from bot.review.consumers.contracts.resolve import Resolver, Where, where_of
from bot.review.consumers.shared import URL_PATH

_IDENTIFIERS = syntax.pattern("go", "(identifier) @i")
_INTERPRETED_STRINGS = syntax.pattern("go", "(interpreted_string_literal) @s")
_SELECTORS = syntax.pattern("go", "(selector_expression) @s")
_STRING_LITERALS = syntax.pattern("go", "(interpreted_string_literal) @s (raw_string_literal) @s")

_EXEC = {"Command": 1, "CommandContext": 2}  # exec function -> where its program arguments start

FLAG = re.compile(r"^(--?[A-Za-z][\w-]*)(=.*)?$")

_PORT_FLAG = "--port"

_BRANCHES = (
    "if_statement",
    "expression_case",
    "default_case",
    "type_case",
    "for_statement",
    "communication_case",
)

_ERROR_VALUE = re.compile(r"err|\w*Err|.*\.Err\(\)")

_HTTP_SENDERS = {"NewRequest": 1, "NewRequestWithContext": 2, "Get": 0, "Post": 0, "Head": 0, "PostForm": 0}


@dataclass(frozen=True)
class Command:
    """One `exec.Command` of an upstream program."""

    func: Func
    node: Node
    program: str
    variable: str  # the local name the command is kept in, "" when none
    arguments: tuple[Node, ...]  # what follows the program argument

    @property
    def where(self) -> Where:
        return where_of(self.func)

    @property
    def label(self) -> str:
        """The program, with its arguments when they are all constants (a probe such as `--list-devices`)."""
        fixed = [go_string(a) for a in self.arguments if a.type in STRING_LITERALS]
        return (
            " ".join([self.program, *fixed]) if fixed and len(fixed) == len(self.arguments) else self.program
        )


@dataclass(frozen=True)
class Request:
    """One HTTP request to an upstream program Ollama started."""

    func: Func
    node: Node  # the call that builds (or sends) it
    method: str
    endpoint: str
    variable: str  # the local name a built request is kept in, "" when the call sends it (http.Get)
    body: Node | None

    @property
    def label(self) -> str:
        return f"{self.method} {self.endpoint}"


@dataclass(frozen=True)
class ArgSite:
    """Arguments added in one place, in order, and whether the way there is conditional."""

    elements: tuple[Node, ...]
    where: Where
    conditional: bool


@dataclass(frozen=True)
class Flag:
    """A flag in an argument list: its name, its value expression (None without one), where."""

    name: str
    literal: Node
    value: Node | None
    where: Where
    conditional: bool


def find_commands(program: GoProgram, resolver: Resolver, programs: frozenset[str]) -> list[Command]:
    """Every `exec.Command(...)` whose program is one of `programs`, in file order."""
    found: list[Command] = []
    names = _ProgramNames(resolver, programs)
    for directory in program.directories():
        if any("exec.Command" in program.text(p) for p in program.files(directory)):
            for path in program.files(directory):
                if "os/exec" in program.text(path):  # a file that does not import it starts nothing
                    for func in _spelling(program.package(directory), path, _EXEC):
                        found += _commands_in(func, names)
    return sorted(found, key=lambda c: (c.func.path, c.node.start_byte))


def _spelling(package: Package, path: str, names: Iterable[str]) -> Iterator[Func]:
    """The functions of a file whose code spells one of the names (a call of one must): the others' calls are
    not read."""
    if any(name in package.text_of(path) for name in names):
        for func in package.functions_in(path):
            if any(func.spells(name) for name in names):
                yield func


def _commands_in(func: Func, names: _ProgramNames) -> Iterator[Command]:
    where = where_of(func)
    for call in func.calls:
        qualifier, name = callee_parts(call)
        if name not in _EXEC or names.resolver.program.import_path(func.path, qualifier) != "os/exec":
            continue
        args = arguments(call)
        start = _EXEC[name]
        if len(args) < start:
            continue
        found = names.of_value(args[start - 1], where)
        if found is not None:
            yield Command(func, call, found, assigned_name(call), tuple(args[start:]))


class _ProgramNames:
    """The upstream program a value or a function names: each function is read once per depth, however many
    commands reach it."""

    def __init__(self, resolver: Resolver, programs: frozenset[str]):
        self.resolver = resolver
        self.programs = programs
        self._bodies: dict[tuple[str, int, int], str | None] = {}
        self._strings: dict[tuple[str, int], str | None] = {}

    def of_value(self, expr: Node, where: Where, depth: int = 3) -> str | None:
        """A literal naming a program, or a value from a function that names one."""
        for literal in self.resolver.literals(expr, where):
            if _program(literal.value, self.programs):
                return _program(literal.value, self.programs)
        if depth <= 0:
            return None
        for source, at in _sources(expr, where, self.resolver):
            for func in self.resolver.callees(source, at):
                found = self.of_body(func, depth - 1)
                if found is not None:
                    return found
        return None

    def of_body(self, func: Func, depth: int) -> str | None:
        """A program named by a string constant of a function's body, or of a function it calls."""
        key = (func.path, func.node.start_byte, depth)
        if key not in self._bodies:
            self._bodies[key] = self._read_body(func, depth)
        return self._bodies[key]

    def _read_body(self, func: Func, depth: int) -> str | None:
        if func.body is None:
            return None
        found = self._in_strings(func)
        if found is not None or depth <= 0:
            return found
        for call in func.calls:
            for callee in self.resolver.callees(call, where_of(func)):
                found = self.of_body(callee, depth - 1)
                if found is not None:
                    return found
        return None

    def _in_strings(self, func: Func) -> str | None:
        key = (func.path, func.node.start_byte)
        if key not in self._strings:
            strings = syntax.captures(_INTERPRETED_STRINGS, func.body).get("s", []) if func.body else []
            named_ = (_program(go_string(n), self.programs) for n in strings)
            self._strings[key] = next((n for n in named_ if n is not None), None)
        return self._strings[key]


def _sources(expr: Node, where: Where, resolver: Resolver) -> Iterator[tuple[Node, Where]]:
    """The calls an expression's value comes from: itself, or what a local name is given."""
    expr = unwrap(expr) or expr
    if expr.type == "call_expression":
        yield expr, where
    elif expr.type == "identifier":
        for binding in resolver.bindings(node_text(expr), where):
            value = unwrap(binding.value)
            if value is not None and value.type == "call_expression":
                yield value, where


def _program(value: str, programs: frozenset[str]) -> str | None:
    name = value.rsplit("/", 1)[-1].removesuffix(".exe")
    return name if name in programs else None


_ASSIGNMENTS = ("short_var_declaration", "assignment_statement", "var_spec")


def assigned_name(call: Node) -> str:
    """The local name a call's value is assigned to (`x := f()`, `x, err = f()`), "" when none."""
    statement = _assignment_of(call)
    if statement is None:
        return ""
    first = _first(statement.children_by_field_name("left") or statement.children_by_field_name("name"))
    return node_text(first) if first is not None and first.type == "identifier" else ""


def _assignment_of(value: Node) -> Node | None:
    """The assignment statement whose right-hand side holds a value."""
    parent = value.parent
    if parent is None or parent.type != "expression_list":
        return None
    statement = parent.parent
    return statement if statement is not None and statement.type in _ASSIGNMENTS else None


def _first(targets: list[Node]) -> Node | None:
    first = targets[0] if targets else None
    if first is not None and first.type == "expression_list":
        return first.named_children[0] if first.named_children else None
    return first


# ---- arguments -------------------------------------------------------------------------------------------------


def argument_sites(command: Command, resolver: Resolver) -> list[ArgSite]:
    """The places the command's arguments are added, in the order the code reads them; a place reached on
    several ways is conditional only when every way there is."""
    found: list[ArgSite] = []
    direct = [a for a in command.arguments if a.type != "variadic_argument"]
    if direct:
        found.append(ArgSite(tuple(direct), command.where, False))
    walk = _Walk(resolver)
    for spread in (a for a in command.arguments if a.type == "variadic_argument"):
        try:
            found += walk.sequence(spread.named_children[0], command.where, frozenset(), False)
        except RecursionError:  # a list nested deeper than Python's stack: what it holds is not read
            continue
    return _merged(found)


def _merged(sites: list[ArgSite]) -> list[ArgSite]:
    """One site per place, unconditional when some way there is."""
    merged: dict[tuple[str, int], ArgSite] = {}
    for site in sites:
        key = (site.where.path, site.elements[0].start_byte if site.elements else 0)
        old = merged.get(key)
        merged[key] = site if old is None or old.conditional else old
    return list(merged.values())


_MAX_PATH = 8  # names and calls followed on one way to an argument list


class _Walk:
    """Follows a []string value back to where its elements are added (its literal, `append`s, the helpers
    that return it, the arguments a parameter is given), each way remembered against cycles."""

    def __init__(self, resolver: Resolver):
        self.resolver = resolver

    def sequence(self, expr: Node | None, where: Where, path: frozenset, conditional: bool) -> list[ArgSite]:
        expr = unwrap(expr)
        if expr is None or len(path) > _MAX_PATH:
            return []
        if expr.type == "composite_literal":
            body = named(expr, "body")
            elements = tuple(body.named_children) if body is not None else ()
            return [ArgSite(elements, where, conditional)]
        if expr.type == "identifier":
            return self._name(expr, where, path, conditional)
        if expr.type == "call_expression":
            return self._call(expr, where, path, conditional)
        return []

    def _name(self, expr: Node, where: Where, path: frozenset, conditional: bool) -> list[ArgSite]:
        key = (str(where.func.key) if where.func else where.path, node_text(expr))
        if key in path:
            return []
        path = path | {key}
        sites: list[ArgSite] = []
        for binding in self.resolver.bindings(node_text(expr), where):
            sites += self._binding(binding, where, path, conditional)
        return sites

    def _binding(self, binding: Binding, where: Where, path: frozenset, conditional: bool) -> list[ArgSite]:
        if binding.kind == "param" and where.func is not None and binding.index >= 0:
            return self._parameter(where.func, binding.index, path, conditional)
        if binding.value is not None and binding.arity == 1 and binding.kind != "range":
            return self.sequence(binding.value, where, path, conditional or branchy(binding.value, where))
        return []

    def _parameter(self, func: Func, index: int, path: frozenset, conditional: bool) -> list[ArgSite]:
        sites: list[ArgSite] = []
        for caller, call in self.resolver.call_sites(func):
            args = arguments(call)
            if index < len(args):
                at = where_of(caller)
                sites += self.sequence(args[index], at, path, conditional or branchy(call, at))
        return sites

    def _call(self, call: Node, where: Where, path: frozenset, conditional: bool) -> list[ArgSite]:
        args = arguments(call)
        if callee_parts(call) == ("", "append") and args:
            return self._append(args, where, path, conditional)
        sites = []
        for func in self.resolver.callees(call, where):
            for value, at in self.resolver.returned(func):
                sites += self.sequence(value, at, path | {str(func.key)}, conditional)
        return sites

    def _append(self, args: list[Node], where: Where, path: frozenset, conditional: bool) -> list[ArgSite]:
        sites = self.sequence(args[0], where, path, conditional)
        added = tuple(a for a in args[1:] if a.type != "variadic_argument")
        if added:
            sites.append(ArgSite(added, where, conditional))
        for spread in (a for a in args[1:] if a.type == "variadic_argument"):
            sites += self.sequence(spread.named_children[0], where, path, conditional)
        return sites


def branchy(node: Node, where: Where, flag: str | None = None) -> bool:
    """Whether a node runs only on some paths through its function: inside a loop, or a branch whose
    alternatives do not all pass `flag` too, or after a return that is not an error's."""
    top = where.func.node if where.func is not None else None
    parent = node.parent
    while parent is not None and parent != top and parent.type != "func_literal":
        if parent.type in _BRANCHES and not _in_condition(node, parent) and not _covered(parent, flag):
            return True
        parent = parent.parent
    return _after_early_return(node, where, flag)


def _in_condition(node: Node, branch: Node) -> bool:
    condition = named(branch, "condition") or named(branch, "initializer")
    return condition is not None and condition.start_byte <= node.start_byte < condition.end_byte


def _covered(branch: Node, flag: str | None) -> bool:
    """Whether every alternative of a branch passes the flag: an `if` with an `else`, a `switch` with a
    `default`, each naming it."""
    if flag is None:
        return False
    needle = json_quote(flag)
    if branch.type == "if_statement":
        alternatives = [named(branch, "consequence"), named(branch, "alternative")]
        return all(a is not None and needle in node_text(a) for a in alternatives)
    return branch.type in ("expression_case", "default_case") and _every_case(branch.parent, needle)


def _every_case(switch: Node | None, needle: str) -> bool:
    """Whether a switch has a default and each of its cases holds the text."""
    cases = (
        [c for c in switch.named_children if c.type in ("expression_case", "default_case")] if switch else []
    )
    return any(c.type == "default_case" for c in cases) and all(needle in node_text(c) for c in cases)


def _after_early_return(node: Node, where: Where, flag: str | None) -> bool:
    """Whether a `return` that is not an error's (and does not pass the flag) comes before the node."""
    if where.func is None or where.func.body is None:
        return False
    needle = json_quote(flag) if flag else None
    for statement in where.func.returns:
        if statement.end_byte > node.start_byte:
            break
        if enclosing_function(statement) != where.func.node or _returns_error(statement):
            continue
        if not (needle and needle in node_text(statement)):
            return True
    return False


def _returns_error(statement: Node) -> bool:
    listed = statement.named_children[0].named_children if statement.named_children else []
    return any(_is_error(v) for v in listed)


def _is_error(value: Node) -> bool:
    text = node_text(value)
    return bool(_ERROR_VALUE.fullmatch(text)) or text.startswith(("fmt.Errorf(", "errors.New("))


def json_quote(value: str) -> str:
    return '"' + value + '"'


def flags_of(site: ArgSite, resolver: Resolver) -> Iterator[Flag]:
    """The flags an argument site passes, each with the expression of its value."""
    elements = list(site.elements)
    for i, element in enumerate(elements):
        parsed = _flag(element, site.where, resolver)
        if parsed is None:
            continue
        name, inline = parsed
        value = inline
        if value is None and i + 1 < len(elements) and _flag(elements[i + 1], site.where, resolver) is None:
            value = elements[i + 1]
        conditional = site.conditional or branchy(element, site.where, name)
        yield Flag(name, _literal_node(element), value, site.where, conditional)


def _flag(element: Node, where: Where, resolver: Resolver) -> tuple[str, Node | None] | None:
    """(flag, its inline value) for an element that is a flag: "--x", a constant, or `"--x=" + value`."""
    element = unwrap(element) or element
    if element.type == "binary_expression":
        return _joined_flag(element)
    for literal in resolver.literals(element, where)[:1]:
        m = FLAG.match(literal.value)
        if m and not literal.value.startswith("-" * 3):
            return m[1], None
    return None


def _joined_flag(element: Node) -> tuple[str, Node | None] | None:
    """`"--x=" + value`: the flag and its value expression."""
    left = unwrap(named(element, "left"))
    if node_text(named(element, "operator")) != "+" or left is None or left.type not in STRING_LITERALS:
        return None
    m = FLAG.match(go_string(left))
    return (m[1], named(element, "right")) if m and m[2] == "=" else None


def _literal_node(element: Node) -> Node:
    element = unwrap(element) or element
    if element.type == "binary_expression":
        return named(element, "left") or element
    return element


# ---- the port, and requests to it ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ports:
    """The names the port an upstream program was started with goes by: locals of the functions that start it
    (and of their callers), and struct fields it is stored in."""

    names: frozenset[tuple[str, str]]  # (function key as text, local name)
    fields: frozenset[str]

    def mentioned_in(self, expr: Node, func: Func, resolver: Resolver) -> bool:
        key = str(func.key)
        if any((key, node_text(n)) in self.names for n in syntax.captures(_IDENTIFIERS, expr).get("i", [])):
            return True
        return bool(_fields_read(expr, where_of(func), resolver) & self.fields)


def ports_of(commands: list[Command], resolver: Resolver) -> Ports:
    names: set[tuple[str, str]] = set()
    fields: set[str] = set()
    for command in commands:
        for site in argument_sites(command, resolver):
            for flag in flags_of(site, resolver):
                if flag.name == _PORT_FLAG and flag.value is not None and flag.where.func is not None:
                    _follow_port(flag.value, flag.where.func, resolver, names, fields)
    return Ports(frozenset(names), frozenset(fields))


def _follow_port(value: Node, func: Func, resolver: Resolver, names: set, fields: set) -> None:
    """Record the locals a port value is read from, the results the function hands them back as, and where its
    callers keep those results."""
    where = where_of(func)
    locals_ = {
        node_text(n)
        for n in syntax.captures(_IDENTIFIERS, value).get("i", [])
        if not resolver.is_package_alias(n, where)
    }
    names.update((str(func.key), n) for n in locals_)
    fields.update(_fields_read(value, where, resolver))
    for index, (result_name, _) in enumerate(func.results()):
        returned = {node_text(v) for v, _ in resolver.returned(func, index) if v.type == "identifier"}
        if returned & locals_ or result_name in locals_:
            _port_in_callers(func, index, resolver, names, fields)


def _fields_read(value: Node, where: Where, resolver: Resolver) -> set[str]:
    """The struct fields an expression reads (`x.f`), package members (`strconv.Itoa`) left out."""
    return {
        node_text(named(n, "field"))
        for n in syntax.captures(_SELECTORS, value).get("s", [])
        if not resolver.is_package_alias(named(n, "operand"), where)
    }


def _port_in_callers(func: Func, index: int, resolver: Resolver, names: set, fields: set) -> None:
    for caller, call in resolver.call_sites(func):
        kept = _bound_at(call, index)
        if not kept:
            continue
        names.add((str(caller.key), kept))
        for target, value in resolver.program.scope(caller).stores:
            if node_text(value) == kept and target.type == "selector_expression":
                fields.add(node_text(named(target, "field")))


def _bound_at(call: Node, index: int) -> str:
    """The name the `index`-th result of a call is assigned to."""
    parent = call.parent
    statement = parent.parent if parent is not None and parent.type == "expression_list" else None
    left = named(statement, "left") if statement is not None else None
    targets = left.named_children if left is not None else []
    return node_text(targets[index]) if index < len(targets) and targets[index].type == "identifier" else ""


def find_requests(commands: list[Command], resolver: Resolver) -> list[Request]:
    """The HTTP requests of the commands' packages whose URL carries the port the program was started with."""
    ports = ports_of(commands, resolver)
    found: list[Request] = []
    program = resolver.program
    for directory in sorted({c.func.package for c in commands}):
        for path in program.files(directory):
            if "net/http" in program.text(path):  # a file that does not import it sends nothing
                for func in _spelling(program.package(directory), path, _HTTP_SENDERS):
                    found += _requests_in(func, resolver, ports)
    return sorted(found, key=lambda r: (r.func.path, r.node.start_byte))


def _requests_in(func: Func, resolver: Resolver, ports: Ports) -> Iterator[Request]:
    where = where_of(func)
    for call in func.calls:
        qualifier, name = callee_parts(call)
        if name not in _HTTP_SENDERS or resolver.program.import_path(func.path, qualifier) != "net/http":
            continue
        args = arguments(call)
        at = _HTTP_SENDERS[name]
        if at >= len(args):
            continue
        url = _url_expression(args[at], where, resolver)
        if ports.mentioned_in(url, func, resolver):
            method = _method(name, args[at - 1] if at else None, where, resolver)
            body = _body_argument(name, args, at)
            kept = assigned_name(call) if name.startswith("NewRequest") else ""  # Get/Post send it at once
            yield Request(func, call, method, _endpoint_of(url, where, resolver), kept, body)


def _url_expression(expr: Node, where: Where, resolver: Resolver) -> Node:
    """A URL argument, or the value a local name for it is given."""
    expr = unwrap(expr) or expr
    if expr.type == "identifier":
        for binding in resolver.bindings(node_text(expr), where):
            if binding.value is not None and binding.arity == 1:
                return binding.value
    return expr


def _method(sender: str, expr: Node | None, where: Where, resolver: Resolver) -> str:
    if expr is None:
        return sender.upper().replace("FORM", "")
    for literal in resolver.literals(expr, where):
        return literal.value.upper()
    text = node_text(expr)
    return text.rsplit("Method", 1)[-1].upper() if "Method" in text else text


def _body_argument(sender: str, args: list[Node], at: int) -> Node | None:
    if sender.startswith("NewRequest"):
        return args[at + 1] if at + 1 < len(args) else None
    return args[-1] if sender in ("Post", "PostForm") else None


def _endpoint_of(url: Node, where: Where, resolver: Resolver) -> str:
    """The path a URL expression names, `%d`-style holes as `{}`."""
    for node in syntax.captures(_STRING_LITERALS, url).get("s", []):
        m = URL_PATH.match(go_string(node))
        if m:
            return re.sub(r"%[a-z]", "{}", m[1].rstrip("/")) or "/"
    return node_text(url)


def endpoint_places(requests: Iterable[Request]) -> dict[str, tuple[LocalRef, ...]]:
    """Each endpoint Ollama calls ("POST /completion") with the lines that make the request and, nearest
    above or on them in the same function, the one that spells its path in a string."""
    found: dict[str, tuple[LocalRef, ...]] = {}
    for r in requests:
        line = r.node.start_point[0] + 1
        places = (LocalRef(r.func.path, _spelled_at(r, line)), LocalRef(r.func.path, line))
        found[r.label] = tuple(dict.fromkeys(found.get(r.label, ()) + places))
    return found


def _spelled_at(request: Request, line: int) -> int:
    """The line, at or above `line` in the request's function, whose string spells its path; `line` when
    none does."""
    first = request.func.node.start_point[0] + 1
    lines = node_text(request.func.node).split("\n")[: line - first + 1]
    spelled = re.compile(re.escape(request.endpoint) + r'[?"`]')
    return next((first + i for i in range(len(lines) - 1, -1, -1) if spelled.search(lines[i])), line)
