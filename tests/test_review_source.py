"""Shared text helpers of the review and the no-noise rule: comments and whitespace are not changes."""

import re

from bot.review.changes import FileChange
from bot.review.needles import may_match, needles
from bot.review.source import code_text, glob_match, region_code, split_args, string_value


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
