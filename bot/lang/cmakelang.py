"""CMake as tree-sitter-cmake parses it: the commands of a file and their arguments as CMake sees them.

One parser for every reader of CMake here: the patch discovery (which patches a fetch applies), the review
(options, packages, generators) and the consumer model (what Ollama's build turns on or off).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from tree_sitter import Node

from bot.lang import syntax

VALUE_CHARS = 64 << 10  # what the variables of one command's arguments may expand to in all
# the words of `target_link_libraries()` that are not libraries
LINK_KEYWORDS = frozenset(
    {"PRIVATE", "PUBLIC", "INTERFACE", "LINK_PRIVATE", "LINK_PUBLIC", "LINK_INTERFACE_LIBRARIES"}
)
# the words of `install(TARGETS ...)` that end its list of targets
INSTALL_TARGETS_END = frozenset(
    {
        "EXPORT",
        "RUNTIME_DEPENDENCIES",
        "RUNTIME_DEPENDENCY_SET",
        "ARCHIVE",
        "LIBRARY",
        "RUNTIME",
        "OBJECTS",
        "FRAMEWORK",
        "BUNDLE",
        "PRIVATE_HEADER",
        "PUBLIC_HEADER",
        "RESOURCE",
        "FILE_SET",
        "CXX_MODULES_BMI",
        "DESTINATION",
        "COMPONENT",
        "INCLUDES",
    }
)


class _TooLong(Exception):
    """A variable's value would take a command's arguments past VALUE_CHARS."""


class _Expansion:
    """The variables of one command's arguments: their values, and how much of VALUE_CHARS is left. An
    argument whose variables would take more is left unexpanded (`overlong`), as an unknown variable is."""

    def __init__(self, env: Mapping[str, str]):
        self.env = env
        self.left = VALUE_CHARS
        self.overlong = False

    def value(self, name: str) -> str | None:
        """The variable's value, None when it has none; _TooLong when it would take more than is left."""
        value = self.env.get(name)
        if value is not None:
            if len(value) > self.left:
                raise _TooLong
            self.left -= len(value)
        return value


def parse(text: str | bytes) -> Node:
    """The syntax tree of a CMake text."""
    return syntax.root("cmake", text)


def name(node: Node) -> str:
    """A command's name, in lower case (CMake's command names are case-insensitive)."""
    return (
        syntax.node_text(node.child_by_field_name("name") or node.children[0]).lower()
        if node.children
        else ""
    )


def line(node: Node) -> int:
    """The 1-based line a node starts on."""
    return node.start_point[0] + 1


def commands(root: Node) -> Iterator[Node]:
    """Every command in document order, inside `if`/`foreach`/`function` bodies too."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "normal_command":
            yield node
            continue
        stack.extend(reversed(node.children))


def arguments(node: Node, env: Mapping[str, str] | None = None) -> list[str]:
    """The command's arguments as CMake sees them: variables expanded, unquoted lists split on `;`."""
    return expanded(node, env or {})[0]


def expanded(node: Node, env: Mapping[str, str]) -> tuple[list[str], bool]:
    """The command's arguments (`arguments`), and whether an argument was left unexpanded because its
    variables' values would take the command's arguments past VALUE_CHARS."""
    expansion = _Expansion(env)
    args: list[str] = []
    for arg_list in children(node, "argument_list"):
        for argument in children(arg_list, "argument"):
            try:
                args += _values(argument, expansion)
            except _TooLong:
                expansion.overlong = True
                args += _values(argument, _Expansion({}))
    return args, expansion.overlong


def children(node: Node, kind: str) -> list[Node]:
    """The node's children of one syntax type, in order."""
    return [c for c in node.children if c.type == kind]


def values(argument: Node) -> list[str]:
    """What one argument gives as written, its variables not expanded."""
    return _values(argument, _Expansion({}))


def _values(argument: Node, env: _Expansion) -> list[str]:
    """What one argument gives: a quoted or bracket argument one value, an unquoted one its list items."""
    inner = argument.children[0] if argument.children else argument
    if inner.type == "quoted_argument":
        return [_expand(inner, env)]
    if inner.type == "bracket_argument":
        text = syntax.node_text(inner)
        return [text[text.index("[", 1) + 1 : text.rindex("]", 0, -1)]]
    return [item for item in _expand(inner, env).split(";") if item]


def _expand(node: Node, env: _Expansion) -> str:
    if node.type == "variable_ref":
        return _variable(node, env)
    if node.type in ("quoted_argument",):
        return "".join(_expand(c, env) for c in children(node, "quoted_element"))
    if not node.children:
        return syntax.node_text(node)
    return _spliced(node, env)


def _variable(node: Node, env: _Expansion) -> str:
    """A `${name}` reference's value in `env` (its name expanded first); as written when unknown, so that it
    never passes for a real path."""
    var = next(iter(node.children), None)
    if var is None:
        return syntax.node_text(node)
    name_node = next(iter(children(var, "variable")), None)
    name = _expand(name_node, env) if name_node is not None else ""
    value = env.value(name) if var.type == "normal_var" else None
    return syntax.node_text(node) if value is None else value


def _spliced(node: Node, env: _Expansion) -> str:
    """A node's source text with each child's expansion in place of the child."""
    text, at = [], node.start_byte
    source = node.text or b""
    for child in node.children:
        text.append(
            source[at - node.start_byte : child.start_byte - node.start_byte].decode("utf-8", "replace")
        )
        text.append(_expand(child, env))
        at = child.end_byte
    text.append(source[at - node.start_byte :].decode("utf-8", "replace"))
    return "".join(text)


def leaves(node: Node) -> Iterable[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "unquoted_argument" or not current.children:
            yield current
        else:
            stack.extend(reversed(current.children))
