"""Placing hunks: pure functions over lines."""

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.patches import hunks
from bot.patches.enumentries import collisions, renumber
from bot.patches.hunks import Image, best_candidate, find_exact, is_terminator, relocate
from bot.patches.patchfile import parse


def _hunk(text: bytes):
    return parse(b"--- a/f\n+++ b/f\n" + text).files[0].hunks[0]


def _lines(text: str) -> list[bytes]:
    return [line.encode() for line in text.splitlines(keepends=True)]


def test_find_exact_prefers_the_nearest_match_like_git_apply():
    image = _lines("x\na\nb\nx\nx\nx\na\nb\n")
    hunk = _hunk(b"@@ -6,2 +6,3 @@\n a\n+new\n b\n")
    assert find_exact(image, hunk).start == 6


def test_hunk_without_trailing_context_must_match_at_the_end():
    hunk = _hunk(b"@@ -2,1 +2,2 @@\n a\n+tail\n")
    assert find_exact(_lines("x\na\n"), hunk).start == 1
    assert find_exact(_lines("x\na\nmore\n"), hunk) is None


def test_relocation_prefers_the_function_named_in_the_header():
    image = _lines("void other() {\n    a;\n    b;\n}\nvoid target() {\n    a;\n    b;\n}\n")
    hunk = _hunk(b"@@ -2,2 +2,3 @@ void target() {\n   a;\n+  hook;\n   b;\n")
    placement, replacement = relocate(image, hunk)
    assert placement.start == 5 and Image(image).function_at(placement.start) == b"void target() {"
    assert replacement == [b"    a;\n", b"    hook;\n", b"    b;\n"] and placement.reindent == 2


def test_relocation_gives_up_beyond_two_lines_of_fuzz():
    image = _lines("p\nq\nr\ns\nt\n")
    hunk = _hunk(b"@@ -1,6 +1,7 @@\n a\n b\n c\n+x\n d\n e\n f\n")
    assert relocate(image, hunk) is None


def test_renumbering_takes_the_next_value_nobody_uses():
    image = _lines("enum e {\n    A    = 53,\n    NEW  = 54,\n    OLMO = 54,\n    GRAN = 55,\n};\n")
    renumbered, (move,) = renumber(image, {2})
    assert renumbered[2] == b"    NEW  = 56,\n" and (move.old, move.new) == (54, 56)
    assert move.note == "renumbered from 54 to 56: upstream now uses 54 and 55"
    hexadecimal = _lines("enum f {\n    A = 0x0A,\n    B = 0x0A,\n};\n")
    assert renumber(hexadecimal, {1})[0][1] == b"    A = 0x0B,\n"


def test_the_patchs_own_entries_move_past_each_other():
    image = _lines("enum e {\n    UP_A = 1,\n    UP_B = 2,\n    X = 1,\n    Y = 2,\n};\n")
    renumbered, moves = renumber(image, {3, 4})
    assert [(m.name, m.new) for m in moves] == [("X", 3), ("Y", 4)]
    assert renumbered[3:5] == [b"    X = 3,\n", b"    Y = 4,\n"]


def test_collisions_name_duplicate_keys():
    table = _lines('m = {\n    { ARCH_X, "x" },\n    { ARCH_X, "x" },\n};\n')
    assert collisions(table, {2}) == ["ARCH_X (line 3) is already there at line 2"]


def test_no_renumbering_across_separate_blocks_or_for_implicit_values():
    image = _lines("enum a {\n    A = 1,\n};\nenum b {\n    B = 1,\n};\nenum c {\n    C,\n    D,\n};\n")
    assert renumber(image, {4, 8}) == (image, []) and collisions(image, {4, 8}) == []


def test_terminators_are_known_by_their_shape():
    ends = [
        "};\n",
        "    },\n",
        "    ]\n",
        "        default:\n",
        "    } else {\n",
        "    else\n",
        "    LLM_ARCH_UNKNOWN,\n",
        '    { TENSOR_COUNT, "count" },\n',
        "    GGML_TYPE_COUNT = 41,\n",
    ]
    others = [
        "}\n",
        "    } else if (x) {\n",
        "    return 0;\n",
        "    LLM_ARCH_LLAMA,\n",
        "    case A:\n",
        "    UNKNOWN_THING,\n",
    ]
    assert [is_terminator(line.encode()) for line in ends] == [True] * len(ends)
    assert [is_terminator(line.encode()) for line in others] == [False] * len(others)


def test_entries_appended_before_a_terminator_go_after_upstreams_last_entry_aligned_like_it():
    image = _lines("enum t {\n    T_A       = 1,\n    T_B       = 2,\n    T_NEWER   = 3,\n};\n\nstruct s;\n")
    hunk = _hunk(b"@@ -2,2 +2,3 @@ enum t {\n     T_B     = 2,\n+    T_C     = 3,\n };\n")
    placement, replacement = relocate(image, hunk)
    assert placement.start == 4 and placement.terminator == b"};"
    assert replacement == [b"    T_C       = 3,\n", b"};\n"]


def test_a_terminator_alone_is_no_anchor_without_an_entry_like_the_old_neighbour_above_it():
    image = _lines("void f() {\n    g();\n}\n")
    hunk = _hunk(b"@@ -2,2 +2,3 @@\n     T_B = 2,\n+    T_C = 3,\n };\n")
    assert relocate(image, hunk) is None


def test_the_old_neighbour_is_dropped_for_the_terminator_even_with_three_lines_of_context():
    image = _lines("enum a {\n    A_X,\n    A_Y,\n    A_Z,\n    A_NEW,\n    A_UNKNOWN,\n};\n")
    hunk = _hunk(b"@@ -1,5 +1,6 @@\n enum a {\n     A_X,\n     A_Y,\n+    A_OURS,\n     A_UNKNOWN,\n };\n")
    placement, replacement = relocate(image, hunk)
    assert placement.start == 5 and placement.terminator == b"A_UNKNOWN,"
    assert replacement == [b"    A_OURS,\n", b"    A_UNKNOWN,\n", b"};\n"]


def test_only_enum_values_are_renumbered():
    assignments = _lines("def f():\n    count = 3\n    retries = 3\n")
    assert renumber(assignments, {2}) == (assignments, [])
    allman = _lines("enum e\n{\n    A = 1,\n    B = 1,\n};\n")
    assert renumber(allman, {3})[0][3] == b"    B = 2,\n"


def test_a_statement_before_a_blocks_closing_brace_stays_with_its_neighbour():
    image = _lines("void f() {\n    a();\n    b();\n}\n")
    hunk = _hunk(b"@@ -2,2 +2,3 @@ void f() {\n     a();\n+    hook();\n }\n")
    placement, replacement = relocate(image, hunk)
    assert placement.start == 1 and placement.terminator == b""
    assert replacement == [b"    a();\n", b"    hook();\n"]


_WORDS = [b"a\n", b"  a\n", b"b\n", b"}\n", b"\n", b"int f() {\n", b"x  y\n", b"x y\n"]


def _scanned(image: list[bytes], hunk) -> int | None:
    """Where git apply's outward search over every position puts the hunk (no index): the reference."""
    pre, start = hunk.before, min(max(0, hunk.new_start - 1), len(image) - len(hunk.before))
    if start < 0:
        return None
    order = sorted(range(len(image) - len(pre) + 1), key=lambda p: (abs(p - start), p < start))
    return next((p for p in order if image[p : p + len(pre)] == pre), None)


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_WORDS), max_size=200),
    steps=st.lists(
        st.tuples(
            st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5),  # the hunk's context
            st.integers(2, 400),  # where it expects to be
            st.integers(0, 200),  # where the splice after it starts
            st.lists(st.sampled_from([*_WORDS, b"new\n"]), max_size=4),  # what the splice puts there
        ),
        max_size=120,
    ),
    near=st.sampled_from([0, 1, hunks.NEAR]),  # how far the search goes before the index
    kept=st.sampled_from([1, 2, hunks.SPLICES_KEPT]),  # splices an index maps through before it is rebuilt
)
def test_an_image_kept_through_splices_finds_what_a_scan_of_the_file_finds(lines, steps, near, kept):
    with patch.object(hunks, "NEAR", near), patch.object(hunks, "SPLICES_KEPT", kept):
        _search_and_splice(Image(list(lines)), steps)


def _search_and_splice(image: Image, steps: list) -> None:
    for context, expected, at, new in steps:
        text = b"".join(b" " + line for line in context)
        hunk = _hunk(b"@@ -%d,%d +%d,%d @@\n" % (expected, len(context), expected, len(context)) + text)
        found = find_exact(image, hunk)
        assert (found.start if found else None) == _scanned(image.lines, hunk)
        assert relocate(image, hunk) == relocate(list(image.lines), hunk)  # a fresh index, the same place
        assert best_candidate(image, hunk) == best_candidate(list(image.lines), hunk)
        at = min(at, len(image))
        image.splice(at, min(len(image), at + 2), new)
