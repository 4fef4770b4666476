"""Placing hunks: pure functions over lines."""

from bot.hunks import collisions, find_exact, function_at, relocate
from bot.patchfile import parse


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
    assert placement.start == 5 and function_at(image, placement.start) == b"void target() {"
    assert replacement == [b"    a;\n", b"    hook;\n", b"    b;\n"] and placement.reindent == 2


def test_relocation_gives_up_beyond_two_lines_of_fuzz():
    image = _lines("p\nq\nr\ns\nt\n")
    hunk = _hunk(b"@@ -1,6 +1,7 @@\n a\n b\n c\n+x\n d\n e\n f\n")
    assert relocate(image, hunk) is None


def test_collisions_name_taken_values_and_duplicate_keys():
    image = _lines("enum e {\n    A = 53,\n    NEW = 54,\n    OLMO = 54,\n};\n")
    assert collisions(image, {2}) == ["NEW = 54 (line 3) takes the value upstream now gives OLMO (line 4)"]
    table = _lines('m = {\n    { ARCH_X, "x" },\n    { ARCH_X, "x" },\n};\n')
    assert collisions(table, {2}) == ["ARCH_X (line 3) is already there at line 2"]


def test_no_collision_across_separate_blocks_or_implicit_values():
    image = _lines("enum a {\n    A = 1,\n};\nenum b {\n    B = 1,\n};\nenum c {\n    C,\n    D,\n};\n")
    assert collisions(image, {4, 8}) == []
