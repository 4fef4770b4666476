"""What a CMake option chooses in upstream's build, read from the commands its `if()` branches hold: whether
all it does is pick some text (a version suffix, a message) rather than what is compiled, linked or found.

A new option that only picks text cannot change what Ollama builds; it is still said, as information, with
the variables whose text it picks, since a program may print that text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from tree_sitter import Node

from bot.lang import cmakelang, syntax

MAX_VARIABLES = 16  # followed from one option before its effect is called unknown
# keywords whose next argument is metadata (a version or a description), not a build input
_TEXT_KEYWORDS = ("VERSION", "SOVERSION", "DESCRIPTION")
_DECLARES = ("option", "cmake_dependent_option")


def text_only(texts: Mapping[str, str], name: str) -> tuple[str, ...]:
    """The variables whose text the option `name` chooses, when that is all it does in the CMake files
    `texts`: every command of its `if()` branches sets a variable or prints, and each such variable reaches
    only messages, version and description arguments, string definitions (`NAME="${VAR}"`) and variables
    that do the same. Empty when it does anything else, or nothing found."""
    gated: list[Node] = []
    for text in texts.values():
        if _word(name).search(text):
            commands = _gated(cmakelang.parse(text), name)
            if commands is None:
                return ()
            gated += commands
    variables = _set_variables(gated) if gated else None
    return _text_reach(texts, variables) if variables is not None else ()


def _gated(root: Node, name: str) -> list[Node] | None:
    """The commands of a file's `if()` branches on the option; None when the file reads it anywhere else (in
    a generator expression, a list, another command)."""
    branches = list(_branches_on(root, name))
    inside = {c.id for branch in branches for c in _all(branch)}
    if any(_mentions(c, name) and c.id not in inside and not _declares(c, name) for c in _all(root)):
        return None
    return [c for branch in branches for c in cmakelang.commands(branch)]


def _set_variables(gated: list[Node]) -> list[str] | None:
    """The variables the branches' commands set, None when one of them does anything but set one or print."""
    found = []
    for command in gated:
        kind, args = cmakelang.name(command), cmakelang.arguments(command)
        if kind == "set" and args and "CACHE" not in args:
            found.append(args[0])
        elif kind != "message":
            return None
    return list(dict.fromkeys(found))


def _text_reach(texts: Mapping[str, str], variables: list[str]) -> tuple[str, ...]:
    """The variables and those set from them, when each is only ever read as text; empty otherwise."""
    seen, queue = list(variables), list(variables)
    while queue:
        variable = queue.pop()
        for text in texts.values():
            if variable not in text:
                continue
            for command in _all(cmakelang.parse(text)):
                derived = _read_as_text(command, variable)
                if derived is None or len(seen) > MAX_VARIABLES:
                    return ()
                for name in derived:
                    if name not in seen:
                        seen.append(name)
                        queue.append(name)
    return tuple(seen)


def _read_as_text(command: Node, variable: str) -> list[str] | None:
    """How a command reads `variable`: [] when not at all or only as text, [X] when it sets X from it (X's
    readers are then asked), None when it reads it any other way (a condition, a build input)."""
    if not _mentions(command, variable):
        return []
    if command.type != "normal_command":
        return None  # a condition: what it chooses is unknown
    kind, args = cmakelang.name(command), cmakelang.arguments(command)
    if kind == "set" and args and "CACHE" not in args:
        return [] if args[0] == variable else [args[0]]
    return [] if kind == "message" or _only_as_text(syntax.node_text(command), variable) else None


def _only_as_text(text: str, variable: str) -> bool:
    """Whether every mention of `variable` in a command is a `${VAR}` read as text, or a definition's name."""
    for m in _word(variable).finditer(text):
        read = text[m.start() - 2 : m.start()] == "${" and text[m.end() : m.end() + 1] == "}"
        if not (_as_text(text, m.start() - 2, m.end() + 1) if read else text.startswith('="', m.end())):
            return False
    return True


def _as_text(text: str, start: int, end: int) -> bool:
    """Whether the `${VAR}` at text[start:end] is inside a string definition or after a metadata keyword."""
    before, after = text[:start], text[end:]
    quoted = re.search(r'\b\w+="[^"\n]*$', before) is not None and re.match(r'[^"\n]*"', after) is not None
    keyword = re.search(rf"\b(?:{'|'.join(_TEXT_KEYWORDS)})\s+\"?$", before) is not None
    return quoted or keyword


def _branches_on(root: Node, name: str) -> Iterator[Node]:
    """Each `if()` block whose condition (of any branch) names the option."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "if_condition" and any(
            c.type in ("if_command", "elseif_command") and _mentions(c, name) for c in node.children
        ):
            yield node
            continue
        stack.extend(node.children)


def _all(root: Node) -> Iterator[Node]:
    """Every command and branch condition of a file."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("normal_command", "if_command", "elseif_command", "while_command"):
            yield node
        stack.extend(node.children)


def _mentions(node: Node, name: str) -> bool:
    return _word(name).search(syntax.node_text(node)) is not None


def _declares(command: Node, name: str) -> bool:
    args = cmakelang.arguments(command) if command.type == "normal_command" else []
    return cmakelang.name(command) in _DECLARES and args[:1] == [name]


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def optional_package(texts: Mapping[str, str], name: str) -> str | None:
    """The package the option `name` only lets a build use when the builder has it, when that is all it
    does: each `if()` branch on it looks for one package without REQUIRED, prints, and acts only under
    `if(<package>_FOUND)`. A build without the package is the same either way. None otherwise."""
    packages: set[str] = set()
    found = False
    for text in texts.values():
        if not _word(name).search(text):
            continue
        root = cmakelang.parse(text)
        if _gated(root, name) is None:
            return None
        for block in _branches_on(root, name):
            found = True
            for body in cmakelang.children(block, "body"):
                if not _only_optional(body, packages):
                    return None
    return packages.pop() if found and len(packages) == 1 else None


def _only_optional(body: Node, packages: set[str]) -> bool:
    """Whether a branch only looks for packages without REQUIRED (added to `packages`), prints, and acts
    under conditions on a package being found."""
    for node in body.children:
        if node.type == "normal_command":
            if not _optional_lookup(node, packages):
                return False
        elif node.type == "if_condition":
            if not _on_found(node):
                return False
        elif node.named_child_count:
            return False
    return True


def _optional_lookup(command: Node, packages: set[str]) -> bool:
    """Whether a command prints or looks for a package without REQUIRED (added to `packages`)."""
    kind, args = cmakelang.name(command), cmakelang.arguments(command)
    if kind == "find_package" and args and "REQUIRED" not in args:
        packages.add(args[0])
        return True
    return kind == "message"


def _on_found(block: Node) -> bool:
    """Whether an `if()` block's first condition asks whether a package was found."""
    head = next((c for c in block.children if c.type == "if_command"), None)
    return head is not None and re.search(r"\w+_FOUND\b", syntax.node_text(head)) is not None
