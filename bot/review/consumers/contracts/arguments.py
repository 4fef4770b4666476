"""The flags and environment variables Ollama starts an upstream program with, and which of them it passes only
sometimes (upstream's default applies the other times).

Flags are read from the command's argument list, followed back to every place an element is added. The
environment is every `GGML_*`/`LLAMA_*` variable the code of the starting packages (and the module functions
they call, two calls deep) writes into an environment: a map element (`env[K] = V`), a map literal's key, an
`os.Setenv`, a `"K=" + V`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tree_sitter import Node

from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.contracts.gocode import (
    STRING_LITERALS,
    Func,
    arguments,
    callee_parts,
    go_string,
    named,
    unwrap,
)
from bot.review.consumers.contracts.launches import Command, Flag, argument_sites, branchy, flags_of
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.consumers.contracts.resolve import Resolver, Where, where_of
from bot.review.consumers.shared import SETTABLE

CALL_DEPTH = 2  # module calls followed from the starting packages when looking for environment writes
MAX_FUNCTIONS = 4000

_Entry = tuple[list[str], list[bool], dict[LocalRef, None]]  # values, conditional per place, places


def launch_settings(commands: list[Command], resolver: Resolver) -> list[LaunchSetting]:
    """Every flag and environment variable per program, merged over the places that set it."""
    table: dict[tuple[str, str, str], _Entry] = {}
    for command, flag, ref in _flags(commands, resolver):
        values = resolver.values(flag.value, flag.where) if flag.value is not None else ()
        _add(table, (command.program, "flag", flag.name), values, flag.conditional, ref)
    for programs, func, called in _environment_writers(commands, resolver):
        for name, values, conditional, ref in _environment(func, resolver):
            for program in programs:
                _add(table, (program, "env", name), _as_text(values), conditional or called, ref)
    return [
        LaunchSetting(program, kind, name, tuple(values), not all(conditional), tuple(refs))
        for (program, kind, name), (values, conditional, refs) in table.items()
    ]


def passed_flags(commands: list[Command], resolver: Resolver) -> dict[str, tuple[LocalRef, ...]]:
    """Every flag a program is started with, each with every place that passes it: `launch_settings`' flags
    without their values, which only the argument lists tell (the values and the environment cost the most)."""
    return flag_places((flag.name, (ref,)) for _, flag, ref in _flags(commands, resolver))


def flag_places(flags: Iterable[tuple[str, tuple[LocalRef, ...]]]) -> dict[str, tuple[LocalRef, ...]]:
    """(name, places) pairs merged by name, in name order, each place once."""
    found: dict[str, dict[LocalRef, None]] = {}
    for name, refs in flags:
        found.setdefault(name, {}).update(dict.fromkeys(refs))
    return {name: tuple(refs) for name, refs in sorted(found.items())}


def _flags(commands: list[Command], resolver: Resolver) -> Iterator[tuple[Command, Flag, LocalRef]]:
    """Each flag of each command's argument list, with where its literal is."""
    for command in commands:
        for site in argument_sites(command, resolver):
            for flag in flags_of(site, resolver):
                yield command, flag, LocalRef(flag.where.path, flag.literal.start_point[0] + 1)


def _add(table: dict, key: tuple[str, str, str], values, conditional: bool, ref: LocalRef) -> None:
    entry = table.setdefault(key, ([], [], {}))
    entry[0].extend(v for v in values if v not in entry[0])
    entry[1].append(conditional)
    entry[2][ref] = None


def _as_text(values: tuple[str, ...]) -> tuple[str, ...]:
    """An environment variable's values: its constants and value kinds; any other expression is some string."""
    kept = [v for v in values if v.startswith('"') or v in _KINDS]
    return tuple(dict.fromkeys(kept + (["string"] if len(kept) < len(values) else [])))


_KINDS = ("integer", "number", "bool", "string")


def _environment_writers(
    commands: list[Command], resolver: Resolver
) -> Iterator[tuple[list[str], Func, bool]]:
    """The functions whose environment writes can reach a command: those of the packages that start it and
    the module functions they call, with the programs started there and whether the function was reached
    through a call (its writes are then only as certain as that call)."""
    seen: set = set()
    for directory, programs in sorted(_programs_by_package(commands).items()):
        frontier = list(resolver.program.package(directory).all_functions())
        for depth in range(CALL_DEPTH + 1):
            frontier = [f for f in frontier if f.key not in seen and len(seen) < MAX_FUNCTIONS]
            seen.update(f.key for f in frontier)
            yield from ((programs, f, depth > 0) for f in frontier)
            frontier = [callee for f in frontier for callee in _module_callees(f, resolver)]


def _programs_by_package(commands: list[Command]) -> dict[str, list[str]]:
    by_package: dict[str, list[str]] = {}
    for command in commands:
        programs = by_package.setdefault(command.func.package, [])
        if command.program not in programs:
            programs.append(command.program)
    return by_package


def _module_callees(func: Func, resolver: Resolver) -> list[Func]:
    where = where_of(func)
    return [callee for call in func.calls for callee in resolver.callees(call, where)]


_Write = tuple[str, tuple[str, ...], bool, LocalRef]

_ENV_SITES = syntax.pattern(
    "go",
    """
(keyed_element) @element
(call_expression) @call
(binary_expression) @joined
(interpreted_string_literal) @entry
""",
)


def _environment(func: Func, resolver: Resolver) -> Iterator[_Write]:
    """(variable, values, whether conditional, where) of each environment write of one function."""
    where = where_of(func)
    for target, value in resolver.program.scope(func).stores:
        if target.type == "index_expression" and not _other_map(named(target, "operand"), where, resolver):
            yield from _named(resolver, where, named(target, "index"), value, target)
    captured = syntax.captures(_ENV_SITES, func.body) if func.body is not None else {}
    for kind, reader in _ENV_READERS.items():
        for node in captured.get(kind, []):
            yield from reader(resolver, where, node)


def _map_element(resolver: Resolver, where: Where, element: Node) -> Iterator[_Write]:
    """`{"NAME": value}` in a `map[string]string` literal."""
    key = unwrap(named(element, "key"))
    if key is not None and key.type in STRING_LITERALS and _in_string_map(element):
        yield from _named(resolver, where, key, named(element, "value"), element)


def _setenv(resolver: Resolver, where: Where, call: Node) -> Iterator[_Write]:
    """`os.Setenv(NAME, value)`."""
    args = arguments(call)
    if callee_parts(call) == ("os", "Setenv") and len(args) == 2:
        yield from _named(resolver, where, args[0], args[1], call)


def _other_map(operand: Node | None, where: Where, resolver: Resolver) -> bool:
    """Whether a map written into is known to hold something else than strings (no environment)."""
    operand = unwrap(operand)
    if operand is None or operand.type != "identifier":
        return False
    for binding in resolver.bindings(node_text(operand), where):
        kind = binding.declared
        value = unwrap(binding.value)
        if kind is None and value is not None and value.type == "composite_literal":
            kind = named(value, "type")
        if kind is not None and kind.type == "map_type" and node_text(named(kind, "value")) != "string":
            return True
    return False


def _in_string_map(element: Node) -> bool:
    """Whether a keyed element belongs to a `map[string]string` literal: the shape of an environment."""
    literal = element.parent.parent if element.parent is not None else None
    kind = named(literal, "type") if literal is not None and literal.type == "composite_literal" else None
    return kind is not None and kind.type == "map_type" and node_text(named(kind, "value")) == "string"


def _named(
    resolver: Resolver, where: Where, key: Node | None, value: Node | None, site: Node
) -> Iterator[_Write]:
    """The environment variables a key expression can name, each with the values given."""
    if key is None:
        return
    names = [lit for lit in resolver.literals(key, where) if SETTABLE.fullmatch(lit.value)]
    values = resolver.values(value, where) if value is not None else ()
    for literal in names:
        yield literal.value, values, branchy(site, where), LocalRef(where.path, site.start_point[0] + 1)


def _assignment_text(resolver: Resolver, where: Where, joined: Node) -> Iterator[_Write]:
    """`"NAME=" + value`: an environment entry written as text."""
    if node_text(named(joined, "operator")) != "+":
        return
    left = unwrap(named(joined, "left"))
    if left is None or left.type not in STRING_LITERALS:
        return
    text = go_string(left)
    name, equals, rest = text.partition("=")
    if equals and SETTABLE.fullmatch(name):
        right = named(joined, "right")
        values = (f'"{rest}"' + " + " + node_text(right),) if rest else resolver.values(right, where)
        yield name, values, branchy(joined, where), LocalRef(where.path, joined.start_point[0] + 1)


def _entry_text(resolver: Resolver, where: Where, literal: Node) -> Iterator[_Write]:
    """`"NAME=value"`: a whole environment entry written as one constant."""
    name, equals, value = go_string(literal).partition("=")
    if (
        equals
        and value
        and SETTABLE.fullmatch(name)
        and (literal.parent is None or literal.parent.type != "binary_expression")
    ):
        yield name, (f'"{value}"',), branchy(literal, where), LocalRef(where.path, literal.start_point[0] + 1)


_ENV_READERS = {"element": _map_element, "call": _setenv, "joined": _assignment_text, "entry": _entry_text}
