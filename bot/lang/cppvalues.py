"""The enum values a C or C++ file maps to code or to names: the cases of its switches and the rows of
its value-to-string tables, what the review checks a bump still covers for Ollama's compat code."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cpp, syntax

_PARSERS = ("tree-sitter", "tree-sitter-cpp")


@dataclass(frozen=True)
class Switch:
    """One `switch` of a function: the values it has a `case` for, and what its default does."""

    function: str
    subject: str  # the switched expression without spaces: `ctx->proj_type()`
    line: int  # 1-based line of `switch`
    cases: tuple[tuple[str, int], ...]  # (value's last name, 1-based line) of every named case
    default: str  # the default branch's code on one line ("" when it has none)
    # what runs for each of `cases` (its statements, or those it falls through to) and for the default, on
    # one line each
    bodies: tuple[str, ...] = ()
    default_body: str = ""


def _case_name(value: Node) -> str:
    """The enum value a case names (`projector_type::X` -> `X`); "" for a number or a character."""
    if value.type == "qualified_identifier":
        return cpp.last_name(value)[1]
    return cpp.compact(value) if value.type == "identifier" else ""


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


_SWITCHES = cpp.node_pattern("switch_statement")
_INITIALIZER_LISTS = cpp.node_pattern("initializer_list")


# What these read out of a C/C++ text: kept in the facts store, by the text's blob id
SWITCHES = facts.Extractor("cpp-switches", 1, __name__)
STRING_TABLES = facts.Extractor("cpp-string-tables", 1, __name__)


@lru_cache(maxsize=64)
@facts.by_content(SWITCHES)
def switches(source: bytes) -> tuple[Switch, ...]:
    """Every switch in the file, in file order."""
    out = []
    for node in cpp.nodes(source, _SWITCHES):
        body = node.child_by_field_name("body")
        if body is not None:
            out.append(_switch(source, node, body))
    return tuple(out)


def _statements(case: Node) -> str:
    """The statements of one case label on one line, its value left out ("" for a label that falls
    through)."""
    value = case.child_by_field_name("value")
    parts = [syntax.node_text(c) for c in case.named_children if value is None or c.id != value.id]
    return " ".join(" ".join(parts).split())


def _switch(source: bytes, node: Node, body: Node) -> Switch:
    """The switch statement `node` of `source`, whose body is `body`."""
    labels = _cases(body)
    runs, after = [], ""
    for case in reversed(labels):  # a label without statements runs those of the next one
        after = _statements(case) or after
        runs.append(after)
    runs.reverse()
    cases, bodies, default, default_body = [], [], "", ""
    for case, run in zip(labels, runs):
        value = case.child_by_field_name("value")
        if value is None:
            default, default_body = " ".join(syntax.node_text(case).split()), run
        elif name := _case_name(value):
            cases.append((name, value.start_point[0] + 1))
            bodies.append(run)
    return Switch(
        cpp.function_at(source, node.start_point[0]),
        cpp.compact(node.child_by_field_name("condition")).removeprefix("(").removesuffix(")"),
        node.start_point[0] + 1,
        tuple(cases),
        default,
        tuple(bodies),
        default_body,
    )


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
    return "".join(cpp.compact(c) for c in node.named_children if c.type == "string_content")


_ROW = re.compile(rb'\{\s*(?:[A-Za-z_][\w:]*\s*,\s*"|"[^"\n]*"\s*,\s*[A-Za-z_])')


@lru_cache(maxsize=64)
def string_tables(source: bytes) -> tuple[TableRow, ...]:
    """Rows of every table in the file that pairs an enum value with a string, in file order."""
    if not _ROW.search(source):
        return ()  # most files hold no such row: no need to parse them
    return _rows(source)


@facts.by_content(STRING_TABLES)
def _rows(source: bytes) -> tuple[TableRow, ...]:
    rows = (_string_row(node) for node in cpp.nodes(source, _INITIALIZER_LISTS))
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
            return TableRow(cpp.enclosing_name(node), _case_name(name), string, name.start_point[0] + 1)
    return None
