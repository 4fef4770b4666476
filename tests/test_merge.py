"""The edit-by-edit three-way merge: pure functions over lines."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.patches.hunks import realign
from bot.patches.merge import Overlap, merge


def _lines(text: str) -> list[bytes]:
    return [line.encode() for line in text.splitlines(keepends=True)]


ENUM = "enum e {\n    A,\n    B,\n    E_UNKNOWN,\n};\n"


def test_both_sides_inserting_at_one_place_keeps_theirs_first_then_ours():
    ours = ENUM.replace("    B,\n", "    B,\n    OURS,\n")
    theirs = ENUM.replace("    B,\n", "    B,\n    C,\n    D,\n")
    merged = merge(_lines(ENUM), _lines(ours), _lines(theirs))
    assert b"".join(merged.lines).decode() == ENUM.replace("    B,\n", "    B,\n    C,\n    D,\n    OURS,\n")
    (placed,) = merged.ours
    assert placed.at == 5
    assert placed.notes == ["upstream inserted 2 lines at the same place: kept theirs first, ours after"]


def test_only_the_touching_edit_carries_a_note():
    body = "".join(f"s{i};\n" for i in range(20))
    ours = body.replace("s2;\n", "s2;\nhook;\n").replace("s15;\n", "s15;\nother;\n")
    theirs = body.replace("s2;\n", "s2;\nnew;\n").replace("s10;\n", "s10(1);\n")
    merged = merge(_lines(body), _lines(ours), _lines(theirs))
    text = b"".join(merged.lines).decode()
    assert "s2;\nnew;\nhook;\ns3;\n" in text and "s10(1);\n" in text and "s15;\nother;\n" in text
    assert [p.notes for p in merged.ours] == [
        ["upstream inserted 1 line at the same place: kept theirs first, ours after"],
        [],
    ]


def test_an_insertion_stays_next_to_the_neighbour_upstream_left_alone():
    body = "a;\nb;\nc;\nd;\n"
    ours = body.replace("b;\n", "b;\nhook;\n")
    above = merge(_lines(body), _lines(ours), _lines(body.replace("b;", "b(1);")))
    assert b"".join(above.lines) == b"a;\nb(1);\nhook;\nc;\nd;\n"
    assert above.ours[0].notes == ["upstream changed the 1 line just above: kept ours after them"]
    below = merge(_lines(body), _lines(ours), _lines(body.replace("c;", "c(1);")))
    assert b"".join(below.lines) == b"a;\nb;\nhook;\nc(1);\nd;\n"
    assert below.ours[0].notes == ["upstream changed the 1 line just below: kept ours before them"]


def test_edits_changing_the_same_lines_differently_are_an_overlap():
    body = "a;\nb;\nc;\n"
    with pytest.raises(Overlap, match="base lines 2-2"):
        merge(_lines(body), _lines(body.replace("b;", "b(ours);")), _lines(body.replace("b;", "b(theirs);")))
    with pytest.raises(Overlap):  # upstream replaced the two lines our insertion sits between
        merge(
            _lines(body),
            _lines(body.replace("a;\n", "a;\nhook;\n")),
            _lines(body.replace("a;\nb;", "x;\ny;")),
        )


def test_the_same_edit_on_both_sides_is_taken_once_without_a_note():
    body = "a;\nb;\nc;\n"
    both = body.replace("b;\n", "b;\nsame;\n")
    merged = merge(_lines(body), _lines(both), _lines(both))
    assert b"".join(merged.lines) == both.encode() and merged.ours[0].notes == []


def test_lines_added_into_a_block_upstream_nested_are_nested_too():
    body = "void f() {\n    a();\n    b();\n    c();\n}\n"
    ours = body.replace("    b();\n", "    b();\n    hook();\n")
    theirs = "void f() {\n    if (ok) {\n        a();\n        b();\n        c();\n    }\n}\n"
    merged = merge(_lines(body), _lines(ours), _lines(theirs))
    assert b"".join(merged.lines).decode() == theirs.replace(
        "        b();\n", "        b();\n        hook();\n"
    )
    assert merged.ours[0].notes == ["added lines re-indented by +4 columns like their neighbours"]


def test_an_entry_aligned_with_its_neighbours_follows_their_new_alignment():
    base = "enum t {\n    T_A     = 1,\n    T_BB    = 2,\n};\n"
    ours = base.replace("    T_BB    = 2,\n", "    T_BB    = 2,\n    T_C     = 3,\n")
    theirs = "enum t {\n    T_A       = 1,\n    T_BB      = 2,\n};\n"
    merged = merge(_lines(base), _lines(ours), _lines(theirs))
    assert b"".join(merged.lines).decode() == theirs.replace("= 2,\n", "= 2,\n    T_C       = 3,\n")
    assert merged.ours[0].notes == ["added lines re-spaced like upstream's re-aligned neighbours"]


def test_realign_moves_only_the_words_that_were_aligned():
    old, new = b'    { A,    "a"    },\n', b'    { A,      "a"      },\n'
    assert realign(b'    { LONGER, "l"  },\n', old, new) == b'    { LONGER, "l"      },\n'
    assert realign(b'    { B,    "b"    },\n', old, new) == b'    { B,      "b"      },\n'
    assert realign(b"        nested(x);\n", old, new) == b"        nested(x);\n"  # not an entry of the list


def test_entries_before_a_terminator_upstream_rewrote_stay_right_before_it():
    base = "enum e {\n    A,\n    B,\n    E_COUNT,\n};\n"
    ours = base.replace("    E_COUNT,\n", "    OURS,\n    E_COUNT,\n")
    theirs = base.replace("    E_COUNT,\n", "    C,\n    E_COUNT = 3,\n")
    merged = merge(_lines(base), _lines(ours), _lines(theirs))
    assert (
        b"".join(merged.lines).decode()
        == "enum e {\n    A,\n    B,\n    C,\n    OURS,\n    E_COUNT = 3,\n};\n"
    )
    assert merged.ours[0].notes == [
        "upstream rewrote the end of the list: kept ours after its new entries, right before `E_COUNT = 3,`"
    ]


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_edits_that_do_not_touch_merge_like_applying_both_without_a_note(data):
    """Edits at least two unchanged lines apart: the merge is both sides' edits, and no rule is named."""
    base = [f"    line_{i}();\n".encode() for i in range(40)]
    points = sorted(data.draw(st.sets(st.sampled_from(range(0, 40, 3)), min_size=1, max_size=10)))
    ours, theirs, expected = [], [], []
    plan = {
        p: (data.draw(st.sampled_from(["ours", "theirs"])), data.draw(st.sampled_from(EDITS))) for p in points
    }
    for i, line in enumerate(base):
        side, kind = plan.get(i, (None, None))
        if kind == "respace" and side == "ours":
            kind = "replace"  # only upstream's spacing is looked through
        new = {
            None: [line],
            "insert": [f"    {side}_{i}();\n".encode(), line],
            "replace": [f"    {side}_{i}(x);\n".encode()],
            "delete": [],
            "respace": [b"  " + line],
        }[kind]
        expected += new
        ours += new if side == "ours" else [line]
        theirs += new if side == "theirs" else [line]
    merged = merge(base, ours, theirs)
    assert merged.lines == expected
    assert all(p.notes == [] for p in merged.ours)


EDITS = ["insert", "replace", "delete", "respace"]


def test_a_line_upstream_re_spaced_and_the_patch_replaces_is_the_patchs_and_says_so():
    body = 'a();\nprint("x");\nc();\n'
    merged = merge(
        _lines(body), _lines(body.replace('"x"', '"y"')), _lines(body.replace('print("x");', 'print("x");  '))
    )
    assert b"".join(merged.lines) == b'a();\nprint("y");\nc();\n'
    assert merged.ours[0].notes == [
        "upstream re-spaced a line the patch replaces: the patch's line is kept as it is"
    ]
