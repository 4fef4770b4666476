"""What Ollama's build configuration relies on upstream's build having: the options it sets (its presets, CMake
files, Dockerfile and workflows: `settings.ollama_options`, and the `-DNAME=VALUE` its CMake files pass on),
the presets it runs, the targets it builds, installs, or adds sources to, the packages and programs it looks
for, and the tools its CMake commands run."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from tree_sitter import Node

from bot.lang import cmakelang
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.review.consumers.contracts.model import BuildItem
from bot.review.consumers.settings import ollama_options
from bot.review.consumers.shared import DEFINE, OLLAMA_CMAKE, OLLAMA_COMMAND_LINES, line_of, text_of
from bot.review.source import glob_match

_KEYWORD = re.compile(r"^[A-Z][A-Z0-9_]*$")  # CMake's argument keywords: DESTINATION, RUNTIME, COMPONENT ...
_TARGET_COMMANDS = {
    "target_sources",
    "target_include_directories",
    "target_compile_definitions",
    "target_compile_options",
    "target_link_libraries",
    "set_target_properties",
    "add_dependencies",
}
_DEFINING = {
    "add_library",
    "add_executable",
    "add_custom_target",
    "externalproject_add",
    "fetchcontent_declare",
}
_GENERATOR_TARGET = re.compile(r"\$<TARGET_[A-Z_]+:([\w.+-]+)>")
OPTIONAL = "if present"  # the value of a target Ollama names only where `if(TARGET x)` holds
_COMMAND_LINE_NAMED = re.compile(r"--(preset|target)[ =]([\w.+-]+)")
_TOOL_VARIABLES = {"${CMAKE_COMMAND}": "cmake", "${CMAKE_CTEST_COMMAND}": "ctest"}

_Found = dict[tuple[str, str, str], dict[LocalRef, None]]


def build_items(ollama: Mapping[str, str], paths: list[str]) -> list[BuildItem]:
    """Every option, preset, target, package, program and tool of Ollama's build, each with where."""
    found: _Found = {}
    options, _ = ollama_options(ollama, paths)
    for name, settings in options.items():
        for setting in settings:
            _add(found, "option", name, setting.value, setting.ref)
    defined: set[str] = set()
    own: set[str] = set()
    for path, text in _texts(ollama, paths, OLLAMA_CMAKE):
        named_project = _cmake_items(found, defined, path, text)
        own |= named_project if path == "CMakeLists.txt" else set()
    for path, text in _texts(ollama, paths, OLLAMA_COMMAND_LINES):
        _command_line_items(found, path, text)
    _merge_optional(found)
    return [
        BuildItem(kind, name, value, tuple(sorted(refs, key=lambda r: (r.path, r.line))))
        for (kind, name, value), refs in sorted(found.items())
        if _relied_on(kind, name, value, defined, tuple(own))
    ]


def _merge_optional(found: _Found) -> None:
    """A target also named where no `if(TARGET x)` guards it is one Ollama's build needs: its guarded
    places join that item."""
    for kind, name, value in [k for k in found if k[0] == "target" and k[2] == OPTIONAL]:
        needed = found.get((kind, name, ""))
        if needed is not None:
            needed.update(found.pop((kind, name, value)))


def _texts(
    ollama: Mapping[str, str], paths: list[str], patterns: tuple[str, ...]
) -> Iterator[tuple[str, str]]:
    for path in paths:
        text = text_of(ollama, path) if glob_match(path, patterns) else None
        if text:
            yield path, text


def _relied_on(kind: str, name: str, value: str, defined: set[str], own: tuple[str, ...]) -> bool:
    """Whether an item concerns upstream's build: not a target Ollama defines, nor a target or option of its
    own (named after the project its top-level CMakeLists.txt declares; an option `_NAME` is internal), not a
    value passed through (`${X}`)."""
    if kind == "target":
        return name not in defined and not name.upper().replace("-", "_").startswith(own)
    if kind == "option":
        return not name.startswith(("_", *own)) and "$" not in value
    return True


def _command_line_items(found: _Found, path: str, text: str) -> None:
    """`--preset NAME` and `--target NAME` of the cmake command lines of a Dockerfile, workflow or script."""
    for m in _COMMAND_LINE_NAMED.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if "cmake" in text[start : m.start()] or m[1] == "preset":
            _add(found, m[1], m[2], "", LocalRef(path, line_of(text, m.start())))


def installed_programs(ollama: Mapping[str, str], paths: list[str]) -> frozenset[str]:
    """The upstream targets Ollama's CMake installs or builds by name (`install(TARGETS ...)`, a `TARGETS`
    argument): the programs its Go code may start."""
    found: _Found = {}
    defined: set[str] = set()
    for path in paths:
        text = text_of(ollama, path) if glob_match(path, OLLAMA_CMAKE) else None
        if text and "TARGETS" in text:
            _cmake_items(found, defined, path, text, targets_only=True)
    return frozenset(name for kind, name, _ in found if kind == "target" and name not in defined)


def _add(found: _Found, kind: str, name: str, value: str, ref: LocalRef) -> None:
    if name and "${" not in name and not name.startswith("$<") and not name.startswith("<"):
        found.setdefault((kind, name, value), {})[ref] = None


def _cmake_items(
    found: _Found, defined: set[str], path: str, text: str, targets_only: bool = False
) -> set[str]:
    """Record a CMake file's items (`targets_only`: the targets named and defined, not every item); the
    variable prefix its `project()` names (its name's first word)."""
    root = cmakelang.parse(text)
    lists, written = _list_variables(root)
    own: set[str] = set()
    for command in _commands(root):
        name = cmakelang.name(command)
        if targets_only and not _may_name_target(name, command):
            continue
        own |= _command_items(
            found, defined, LocalRef(path, cmakelang.line(command)), command, lists, written
        )
    for m in DEFINE.finditer(text):
        value = m[2].strip("\"'")
        value = value[:-1] if value.endswith(")") and "(" not in value else value
        _add(found, "option", m[1], value, LocalRef(path, line_of(text, m.start())))
    return own


def _command_items(
    found: _Found,
    defined: set[str],
    ref: LocalRef,
    command: Node,
    lists: dict[str, str],
    written: dict[str, int],
) -> set[str]:
    """Record one command's items; the variable prefix it names, if it is a `project()`."""
    name = cmakelang.name(command)
    own: set[str] = set()
    for env, loop in _expansions(command, lists):
        args, guarded = cmakelang.arguments(command, env), _tested_targets(command, env)
        own |= _declared(name, args, defined)
        for kind, item, value in _items_of(name, args):
            value = OPTIONAL if kind == "target" and item in guarded else value
            _add(found, kind, item, value, ref)
            origin = _written_at(item, loop, written)
            if kind == "target" and origin and origin != ref.line:
                _add(found, kind, item, value, LocalRef(ref.path, origin))
    return own


def _tested_targets(command: Node, env: Mapping[str, str]) -> frozenset[str]:
    """The targets whose presence decides whether the command runs: those an `if(TARGET x)` or
    `elseif(TARGET x)` tests, of the command itself or of the branch it is in."""
    tests = [command] if command.type in ("if_command", "elseif_command") else []
    node = command
    while node.parent is not None:
        if node.type == "body":
            header = node.prev_named_sibling
            if header is not None and header.type in ("if_command", "elseif_command"):
                tests.append(header)
        node = node.parent
    found = set()
    for test in tests:
        args = cmakelang.arguments(test, env)
        found |= {
            args[i + 1] for i, a in enumerate(args[:-1]) if a == "TARGET" and args[i - 1 : i] != ["NOT"]
        }
    return frozenset(found)


def _may_name_target(name: str, command: Node) -> bool:
    """Whether a command may define or name a target: one whose arguments, as written (no variable, no
    escape to expand), never spell `TARGET` names none."""
    written = node_text(command)
    return (
        name in _DEFINING
        or name in _TARGET_COMMANDS
        or "TARGET" in written
        or "$" in written
        or "\\" in written
    )


def _written_at(item: str, loop: tuple[str | None, int | None], written: dict[str, int]) -> int | None:
    """Where a name itself is written: the `foreach` that gives it, else the list that holds it."""
    return loop[1] if item == loop[0] else written.get(item)


def _declared(name: str, args: list[str], defined: set[str]) -> set[str]:
    """Note a target the command defines; the variable prefix a `project()` names."""
    if name in _DEFINING and args:
        defined.add(args[0])
    return {re.split(r"[-_ ]", args[0])[0].upper() + "_"} if name == "project" and args else set()


def _commands(root: Node) -> Iterator[Node]:
    """Every command and `if`/`elseif` condition of a CMake file, in order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("normal_command", "if_command", "elseif_command"):
            yield node
        stack.extend(reversed(node.children))


def _list_variables(root: Node) -> tuple[dict[str, str], dict[str, int]]:
    """The file's list variables as `set(NAME a b c)` and `list(APPEND NAME ...)` give them (every value any
    branch gives, joined), for expanding `${NAME}`; and the line where each value is first written."""
    lists: dict[str, list[str]] = {}
    written: dict[str, int] = {}
    for command in cmakelang.commands(root):
        name = cmakelang.name(command)
        listed = _listed(name, cmakelang.arguments(command)) if name in _LISTING else None
        if listed is not None:
            lists.setdefault(listed[0], []).extend(listed[1])
            for value in listed[1]:
                written.setdefault(value, cmakelang.line(command))
    return {k: ";".join(dict.fromkeys(v)) for k, v in lists.items()}, written


_LISTING = ("set", "list")  # the commands that give a list variable values (their arguments alone are read)


def _listed(name: str, args: list[str]) -> tuple[str, list[str]] | None:
    """(list variable, the values a command gives it) of a plain `set()` or a `list(APPEND ...)`."""
    if name == "set" and len(args) > 1 and "CACHE" not in args and "PARENT_SCOPE" not in args:
        return args[0], args[1:]
    if name == "list" and len(args) > 2 and args[0] == "APPEND":
        return args[1], args[2:]
    return None


def _expansions(
    command: Node, lists: dict[str, str]
) -> Iterator[tuple[dict[str, str], tuple[str | None, int | None]]]:
    """The variables a command's arguments expand with, once per item of each enclosing
    `foreach(VAR IN ITEMS ...)` (or once), with the item and the line of the loop that gives it."""
    loops = _enclosing_loops(command, lists)
    if not loops:
        yield lists, (None, None)
        return
    variable, items, line = loops[0]
    for item in items:
        yield {**lists, variable: item}, (item, line)


def _enclosing_loops(command: Node, lists: dict[str, str]) -> list[tuple[str, list[str], int]]:
    """(variable, items, line) of each `foreach(VAR IN ITEMS|LISTS ...)` around a command, innermost first."""
    loops = []
    parent = command.parent
    while parent is not None:
        header = next((c for c in parent.children if c.type == "foreach_command"), None)
        if parent.type == "foreach_loop" and header is not None:
            loop = _loop(cmakelang.arguments(header, lists), lists)
            if loop is not None:
                loops.append((*loop, cmakelang.line(header)))
        parent = parent.parent
    return loops


def _loop(args: list[str], lists: dict[str, str]) -> tuple[str, list[str]] | None:
    if len(args) < 3 or args[1] != "IN" or args[2] not in ("ITEMS", "LISTS"):
        return None
    items = args[3:] if args[2] == "ITEMS" else [i for a in args[3:] for i in lists.get(a, "").split(";")]
    return args[0], [i for i in items if i]


def _items_of(name: str, args: list[str]) -> Iterator[tuple[str, str, str]]:
    """(kind, name, value) of what one command relies on."""
    for reader in _ITEM_READERS:
        yield from reader(name, args)


def _targets_named(name: str, args: list[str]) -> Iterator[tuple[str, str, str]]:
    """`if(TARGET x)`, `TARGETS a b`, `target_*(x ...)`, `$<TARGET_FILE:x>`."""
    if name in ("if", "elseif"):
        yield from (("target", args[i + 1], "") for i, a in enumerate(args[:-1]) if a == "TARGET")
    yield from (("target", t, "") for t in _after(args, "TARGETS"))
    if name in _TARGET_COMMANDS and args:
        yield "target", args[0], ""
    for arg in args:
        yield from (("target", m[1], "") for m in _GENERATOR_TARGET.finditer(arg))


def _looked_for(name: str, args: list[str]) -> Iterator[tuple[str, str, str]]:
    """`find_package(X)`, `find_program(VAR x)` / `NAMES x y`."""
    if name == "find_package" and args:
        yield "package", args[0], ""
    if name == "find_program" and len(args) > 1:
        yield from (("program", n, "") for n in _after(args, "NAMES") or [args[1]])


def _tools_run(name: str, args: list[str]) -> Iterator[tuple[str, str, str]]:
    """The program a `COMMAND` argument runs."""
    tool = (_after(args, "COMMAND") or [""])[0] if "COMMAND" in args else ""
    if tool:
        yield "tool", _TOOL_VARIABLES.get(tool, tool), ""


_ITEM_READERS = (_targets_named, _looked_for, _tools_run)


def _after(args: list[str], keyword: str) -> list[str]:
    """The values that follow a keyword argument, up to the next keyword."""
    if keyword not in args:
        return []
    at = args.index(keyword) + 1
    out: list[str] = []
    for arg in args[at:]:
        if _KEYWORD.match(arg) and not (keyword == "COMMAND" and not out):
            break
        out.append(arg)
    return out
