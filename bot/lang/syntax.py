"""tree-sitter in one place: a parser per grammar, one parse per text, query captures in file order.

The CMake, C/C++ and Go readers ask many questions of the same files; each text is parsed once, and the new
side of a changed file, where a reader asks about both sides in turn, from the old side's tree. Every query
is declared where its module is defined (`pattern`), so a process that forks analyses compiles them all
once beforehand (`compile_patterns`): a C++ query takes 7 to 40 ms to compile, more than a small check.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import pygit2
import tree_sitter_cmake
import tree_sitter_cpp
import tree_sitter_go
from tree_sitter import Language, Node, Parser, Point, Query, QueryCursor, Tree

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
KEPT_TREES = 16
_TREES: OrderedDict[tuple[str, str | bytes], Tree] = OrderedDict()
_EARLIER: dict[str | bytes, str | bytes] = {}  # a text -> the earlier version it was edited from


def root(name: str, source: str | bytes) -> Node:
    """The syntax tree of a text in the grammar `name`, parsed once however many questions ask about it;
    a later version of a text whose tree is still kept (`edited_from`) is parsed from that tree, only
    what changed read again."""
    key = (name, source)
    tree = _TREES.get(key)
    if tree is not None:
        _TREES.move_to_end(key)
        return tree.root_node
    earlier = _EARLIER.get(source)
    base = _TREES.get((name, earlier)) if earlier is not None else None
    tree = parse(name, source, base, earlier)
    _TREES[key] = tree
    while len(_TREES) > KEPT_TREES:
        _TREES.popitem(last=False)
    return tree.root_node


def parse(
    name: str, source: str | bytes, base: Tree | None = None, earlier: str | bytes | None = None
) -> Tree:
    """The syntax tree of a text, parsed now: from `base`, the tree of the `earlier` text, when given."""
    data = _bytes(source)
    edited = _edited(base, _bytes(earlier), data) if base is not None and earlier is not None else None
    return _parser(name).parse(data, edited) if edited is not None else _parser(name).parse(data)


@contextmanager
def edited_from(pairs: Iterable[tuple[str | bytes, str | bytes]]) -> Iterator[None]:
    """While inside, each (earlier, later) text pair tells `root` that the later text is the earlier one
    edited: parsed after it, the later text reuses the earlier one's tree (tree-sitter's incremental parse,
    about a tenth of a full parse where a bump changes a few places of a long file)."""
    added = []
    for earlier, later in pairs:
        if earlier != later and later not in _EARLIER:
            _EARLIER[later] = earlier
            added.append(later)
    try:
        yield
    finally:
        for later in added:
            _EARLIER.pop(later, None)


def _bytes(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


def _edited(tree: Tree, old: bytes, new: bytes) -> Tree | None:
    """A copy of `old`'s tree with the edits that make `new` of it applied (last first, so that each edit's
    place is where the unedited text has it); None when git's diff of the two is not line by line."""
    patch = pygit2.Patch.create_from(old, new, context_lines=0)
    if patch.delta.is_binary:
        return None
    starts = _line_starts(old), _line_starts(new)
    edited = tree.copy()
    for hunk in reversed(patch.hunks):
        row = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        new_row = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        start = _offset(starts[0], len(old), row)
        old_end = _offset(starts[0], len(old), row + hunk.old_lines)
        added = _offset(starts[1], len(new), new_row + hunk.new_lines) - _offset(starts[1], len(new), new_row)
        edited.edit(
            start_byte=start,
            old_end_byte=old_end,
            new_end_byte=start + added,
            start_point=Point(row, 0),
            old_end_point=Point(row + hunk.old_lines, 0),
            new_end_point=Point(row + hunk.new_lines, 0),
        )
    return edited


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    at = data.find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    return starts


def _offset(starts: list[int], size: int, row: int) -> int:
    """Where 0-based line `row` begins (the end of the text past its last line)."""
    return starts[row] if row < len(starts) else size


def captures(pattern: Pattern, node: Node) -> dict[str, list[Node]]:
    """The nodes of each capture of a query, in file order (tree-sitter gives them in match order; its
    query engine is far faster than a walk in Python over a file of ten thousand lines)."""
    found = QueryCursor(query(pattern)).captures(node)
    return {capture: sorted(nodes, key=lambda n: n.start_byte) for capture, nodes in found.items()}


def node_text(node: Node | None) -> str:
    """A syntax node's source text ("" for none; tree-sitter gives None for a node without text)."""
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""
