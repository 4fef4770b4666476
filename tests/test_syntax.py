"""tree-sitter in one place: a later version of a text is parsed from the earlier one's tree, and the tree is
the one a fresh parse gives."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.lang import syntax


def _shape(node) -> list[tuple]:
    """Every node's type, byte range and line/column range, in document order."""
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        found.append(
            (n.type, n.start_byte, n.end_byte, tuple(n.start_point), tuple(n.end_point), n.has_error)
        )
        stack.extend(reversed(n.children))
    return found


@pytest.fixture
def edits(monkeypatch):
    """How many parses started from an earlier text's tree."""
    made = []
    edited = syntax._edited

    def counted(*args):
        made.append(edited(*args))
        return made[-1]

    monkeypatch.setattr(syntax, "_edited", counted)
    return made


OLD = "".join(f"int f{i}(int x) {{\n    return x + {i};\n}}\n" for i in range(40))


def test_a_later_version_is_parsed_from_the_earlier_tree_and_reads_as_a_fresh_parse(edits):
    new = ("#include <a.h>\n" + OLD).replace("x + 7;", "x * 7;\n    // more").replace("int f39", "long f39")
    new = new.replace("int f20(int x) {\n    return x + 20;\n}\n", "")[:-1]  # no newline at the end
    syntax.root("cpp", OLD)
    with syntax.edited_from([(OLD, new)]):
        tree = syntax.root("cpp", new)
    assert len(edits) == 1 and edits[0] is not None
    assert _shape(tree) == _shape(syntax.parse("cpp", new).root_node)
    assert _shape(syntax.root("cpp", OLD)) == _shape(
        syntax.parse("cpp", OLD).root_node
    )  # the earlier tree is intact


def test_without_the_earlier_tree_or_for_binary_text_the_parse_is_a_fresh_one(edits):
    other = OLD.replace("x + 1;", "x + 2;")
    with syntax.edited_from([("never parsed", other)]):
        assert _shape(syntax.root("cpp", other)) == _shape(syntax.parse("cpp", other).root_node)
    assert edits == []
    old, new = b"int a;\0\n" + OLD.encode(), b"int b;\0\n" + OLD.encode()
    syntax.root("cpp", old)
    with syntax.edited_from([(old, new)]):
        assert _shape(syntax.root("cpp", new)) == _shape(syntax.parse("cpp", new).root_node)
    assert edits == [None]  # git's diff calls the text binary: no edits to apply


_LINE = st.sampled_from(
    ["int a;", "}", "void g() {", "  x = f(1);", "/* c", "*/", '"s', "", "#if X", "#endif"]
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_LINE, max_size=30), st.lists(st.tuples(st.integers(0, 30), _LINE, st.booleans()), max_size=5)
)
def test_any_line_edits_give_the_tree_a_fresh_parse_gives(lines, changes):
    old = "\n".join(lines)
    new_lines = list(lines)
    for at, text, insert in changes:
        at = min(at, len(new_lines))
        if insert or at == len(new_lines):
            new_lines.insert(at, text)
        else:
            del new_lines[at]
    new = "\n".join(new_lines)
    syntax.root("cpp", old)
    with syntax.edited_from([(old, new)]):
        tree = syntax.root("cpp", new)
    assert _shape(tree) == _shape(syntax.parse("cpp", new).root_node)
