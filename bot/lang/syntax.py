"""tree-sitter in one place: a parser per grammar, one parse per text, query captures in file order.

The CMake, C/C++ and Go readers ask many questions of the same files; each text is parsed once. Every query
is declared where its module is defined (`pattern`), so a process that forks analyses compiles them all
once beforehand (`compile_patterns`): a C++ query takes 7 to 40 ms to compile, more than a small check.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import tree_sitter_cmake
import tree_sitter_cpp
import tree_sitter_go
from tree_sitter import Language, Node, Parser, Query, QueryCursor

_GRAMMARS = {"cmake": tree_sitter_cmake, "cpp": tree_sitter_cpp, "go": tree_sitter_go}


@dataclass(frozen=True)
class Pattern:
    """A tree-sitter query's text in one grammar."""

    grammar: str
    source: str


_DECLARED: dict[Pattern, None] = {}  # every pattern made by `pattern`, in order


def pattern(grammar: str, source: str) -> Pattern:
    """A query, declared: made at import, it is among those `compile_patterns` compiles."""
    made = Pattern(grammar, source)
    _DECLARED[made] = None
    return made


@cache
def language(name: str) -> Language:
    return Language(_GRAMMARS[name].language())


@cache
def _parser(name: str) -> Parser:
    return Parser(language(name))


@cache
def query(pattern: Pattern) -> Query:
    return Query(language(pattern.grammar), pattern.source)


def compile_patterns() -> None:
    """Every grammar's parser and every declared query, compiled now rather than at their first use."""
    for name in _GRAMMARS:
        _parser(name)
    for declared in _DECLARED:
        query(declared)


# A tree holds every node of its text: on the real b10091 -> b10242 bump, 256 cached trees raised the check's
# peak RSS from 291 to 402 MB for no time saved; 16 keep the texts asked about again and again.
@lru_cache(maxsize=16)
def root(name: str, source: str | bytes) -> Node:
    """The syntax tree of a text in the grammar `name`, parsed once however many questions ask about it."""
    return _parser(name).parse(source.encode() if isinstance(source, str) else source).root_node


def captures(pattern: Pattern, node: Node) -> dict[str, list[Node]]:
    """The nodes of each capture of a query, in file order (tree-sitter gives them in match order; its
    query engine is far faster than a walk in Python over a file of ten thousand lines)."""
    found = QueryCursor(query(pattern)).captures(node)
    return {capture: sorted(nodes, key=lambda n: n.start_byte) for capture, nodes in found.items()}


def node_text(node: Node | None) -> str:
    """A syntax node's source text ("" for none; tree-sitter gives None for a node without text)."""
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""
