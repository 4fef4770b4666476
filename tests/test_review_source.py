"""Shared text helpers of the review and the no-noise rule: comments and whitespace are not changes."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.review.changes import FileChange
from bot.review.needles import may_match, needles
from bot.review.source import code_text, glob_match, region_code, same_code, split_args, squash, string_value


def test_code_text_blanks_comments_and_keeps_strings_and_lines():
    text = 'int a; // note\n/* block\n still */ int b = "// not a comment";\n'
    code = code_text(text, "x.cpp")
    assert code.count("\n") == text.count("\n") and len(code) == len(text)
    assert "note" not in code and "block" not in code and "still" not in code
    assert '"// not a comment"' in code and "int b" in code
    assert (
        code_text('option(GGML_X "a # b" ON) # why\n', "CMakeLists.txt")
        == 'option(GGML_X "a # b" ON)      \n'
    )
    assert code_text("# just text\n", "README.md") == "# just text\n"  # unknown syntax: nothing is a comment


def test_region_code_sees_block_comments_that_began_above_the_hunk():
    tail, starts_inside, plain = region_code(
        [["   still a comment */ int x;"], [" * continued doc line", " * more"], ["int y; // c"]], "a.c"
    )
    assert tail[0].strip() == "int x;"
    assert [line.strip() for line in starts_inside] == ["", ""]
    assert plain[0].strip() == "int y;"
    # a comment left open in one hunk does not swallow the next one
    assert region_code([["/* open"], ["int z;"]], "a.c")[1] == ["int z;"]


def test_glob_match():
    assert glob_match("ggml/include/ggml.h", ["ggml/include/*.h"])
    assert not glob_match("ggml/include/sub/x.h", ["ggml/include/*.h"])
    assert glob_match("llm/server.go", ["llm/**/*.go"]) and glob_match("llm/a/b/c.go", ["llm/**/*.go"])
    assert glob_match("llama/compat/x/y.hpp", ["llama/compat/**/*.{c,cc,cpp,h,hpp}"])
    assert not glob_match("llama/compat/x/y.go", ["llama/compat/**/*.{c,cc,cpp,h,hpp}"])
    assert not glob_match("anything", [])


def test_split_args_respects_nesting_and_strings():
    code = 'f({"-a", "--b"}, "x, (y)", g(1, 2), [](int v) { return v; })'
    args, end = split_args(code, 1)
    assert args == ['{"-a", "--b"}', '"x, (y)"', "g(1, 2)", "[](int v) { return v; }"]
    assert end == len(code)


def test_string_value_joins_adjacent_literals_and_format_macros():
    assert string_value('"%s: " "took %" PRIu64 " ms\\n", __func__') == "%s: took %llu ms\n"
    assert string_value("__func__, 1") is None


def test_needles_are_a_never_wrong_prefilter():
    pattern = re.compile(r"(?i)\bspec(?:ulative)?_\w+|\bdraft\w*|\bmtp\b", re.MULTILINE)
    assert needles(pattern) == frozenset({"spec", "draft", "mtp"})
    assert may_match(pattern, "x = Draft_model;", "x = draft_model;")
    assert not may_match(pattern, "x = 1;", "x = 1;")
    assert needles(re.compile(r"\d+|x")) is None  # no literal every match holds: the regex decides
    assert may_match(re.compile(r"\d+|x"), "42", "42")


BODY = "".join(f"int f{i}(void) {{ return {i}; }}\n" for i in range(30))


def test_comment_only_and_whitespace_only_changes_are_not_significant():
    comments = BODY.replace("int f3(void) { return 3; }", "int f3(void) { return 3; } // explain")
    comments = comments.replace("int f20(void)", "/* reworded */ int f20(void)")
    assert FileChange.from_texts("a.c", BODY, comments).significant == []
    spaces = BODY.replace("return 7;", "return   7 ;").replace("int f9(void) {", "int f9(void)\n{")
    assert FileChange.from_texts("a.c", BODY, spaces).significant == []
    block = "/*\n * old words\n * here\n */\n" + BODY
    assert FileChange.from_texts("a.c", block, block.replace("old words", "new words")).significant == []


def test_real_changes_are_significant_and_lines_map_to_the_new_ref():
    new = "// header\n// more\n" + BODY.replace("return 10;", "return 11;")
    change = FileChange.from_texts("a.c", BODY, new)
    assert len(change.significant) == 1 and change.significant[0].new_start == 13
    assert change.new_line(5) == 7  # shifted by the two inserted lines
    assert change.new_line(11) == 13  # inside the changed hunk
    gone = FileChange.from_texts("a.c", BODY, None)
    assert gone.new_path is None and gone.new_line(3) is None and gone.significant


def test_code_reflowed_across_hunks_is_not_significant_but_moved_code_is():
    old = BODY + "int x = g(a,\n// between\nb);\n" + BODY
    reflowed = BODY + "int x = g(\n// between\na, b);\n" + BODY  # each hunk alone changes code
    assert FileChange.from_texts("a.c", old, reflowed).significant == []
    # each hunk alone changes code and the changes cancel in length, not in place: still a change
    moved = BODY.replace("return 3;", "return 3; x();").replace("x(); return 20;", "return 20;")
    moved = moved.replace("int f20(void) { return 20; }", "int f20(void) { return 20; } y();")
    assert len(FileChange.from_texts("a.c", BODY, moved).significant) == 2


def _same_code_by_reading_all(old: str, new: str, path: str) -> bool:
    return squash(code_text(old, path)) == squash(code_text(new, path))


# pieces that open, close and continue comments and literals, so that an edit can change how the rest reads
_PIECES = ["/*", "*/", "//", '"', "'", 'R"x(', ')x"', "`", "\\", "\n", "a", " ", "#", "#[[", "]]", "*", "/"]
_LINE = st.lists(st.sampled_from([p for p in _PIECES if p != "\n"]), max_size=6).map("".join)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_LINE, max_size=8),
    st.lists(
        st.tuples(st.integers(0, 8), st.sampled_from(["replace", "insert", "delete"]), _LINE), max_size=3
    ),
    st.sampled_from(["a.cpp", "CMakeLists.txt", "a.py", "a.txt"]),
)
def test_same_code_reads_only_part_of_the_texts_and_answers_as_reading_all(lines, edits, path):
    old = "\n".join(lines)
    new_lines = list(lines)
    for at, kind, text in edits:
        at = min(at, len(new_lines))
        if kind == "insert":
            new_lines.insert(at, text)
        elif at < len(new_lines):
            new_lines[at : at + 1] = [text] if kind == "replace" else []
    new = "\n".join(new_lines)
    assert same_code(old, path, new, path) == _same_code_by_reading_all(old, new, path)


def test_same_code_across_a_comment_opened_before_the_first_difference():
    head = "/* license */\nint a;\n/* open\n"
    assert same_code(head + "x\n*/ int b;\n", "a.c", head + "y\n*/ int b;\n", "a.c")
    assert not same_code(head + "*/ int b;\n", "a.c", head + "*/ int c;\n", "a.c")
    unclosed = "int a;\n/* never closed\n"  # what the other text adds is inside it, or closes it
    assert same_code(unclosed, "a.c", unclosed + "more words\n", "a.c")
    assert not same_code(unclosed, "a.c", unclosed + "*/ int b;\n", "a.c")
    continued = 's = "\\\n'  # a literal over an escaped newline: what follows is in the literal
    assert not same_code(continued + '/* x */ a";\n', "a.c", continued + '/* y */ a";\n', "a.c")
