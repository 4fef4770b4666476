"""CMake as tree-sitter-cmake parses it: the commands of a file and their arguments as CMake sees them.

One parser for every reader of CMake here: the patch discovery (which patches a fetch applies), the review
(options, packages, generators) and the consumer model (what Ollama's build turns on or off).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from tree_sitter import Node

from bot import syntax


def parse(text: str | bytes) -> Node:
    """The syntax tree of a CMake text."""
    return syntax.root("cmake", text)


def name(node: Node) -> str:
    """A command's name, in lower case (CMake's command names are case-insensitive)."""
    return text_of(node.child_by_field_name("name") or node.children[0]).lower() if node.children else ""


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
    env = env or {}
    args: list[str] = []
    for arg_list in (c for c in node.children if c.type == "argument_list"):
        for argument in (c for c in arg_list.children if c.type == "argument"):
            inner = argument.children[0] if argument.children else argument
            if inner.type == "quoted_argument":
                args.append(_expand(inner, env))
            elif inner.type == "bracket_argument":
                text = text_of(inner)
                args.append(text[text.index("[", 1) + 1 : text.rindex("]", 0, -1)])
            else:
                args += [item for item in _expand(inner, env).split(";") if item]
    return args


def text_of(node: Node | None) -> str:
    """A syntax node's source text (tree-sitter gives None for a node without text)."""
    return ((node.text or b"") if node is not None else b"").decode("utf-8", "replace")


def _expand(node: Node, env: Mapping[str, str]) -> str:
    if node.type == "variable_ref":
        var = next((c for c in node.children), None)
        name_node = next((c for c in var.children if c.type == "variable"), None) if var else None
        name = _expand(name_node, env) if name_node is not None else ""
        if var is not None and var.type == "normal_var" and name in env:
            return env[name]
        return text_of(node)  # unknown: kept, so it never passes for a real path
    if node.type in ("quoted_argument",):
        return "".join(_expand(c, env) for c in node.children if c.type == "quoted_element")
    if not node.children:
        return text_of(node)
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
