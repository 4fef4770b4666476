"""A changed file's removed and added lines come from the diff, and must read exactly as the file's own lines."""

from bot.review.changes import FileChange


def test_hunk_lines_read_as_the_texts_lines():
    old = "keep\r\nold one\r\nkeep too\nlast line without newline"
    new = "keep\r\nnew one\r\n\r\nkeep too\nlast line changed, still without newline"
    change = FileChange.from_texts("src/a.cpp", old, new)
    old_lines, new_lines = old.split("\n"), new.split("\n")
    expected_removed = [old_lines[n - 1] for s in change.spans for n in s.old_lines]
    expected_added = [new_lines[n - 1] for s in change.spans for n in s.new_lines]
    assert change.removed_raw == expected_removed == ["old one\r", "last line without newline"]
    assert change.added_raw == expected_added
    assert "new one\r" in change.added_raw and "" not in change.removed_raw
    assert all(change.added_line(n) == new_lines[n - 1] for n in range(1, len(new_lines) + 1))
    assert all(change.removed_line(n) == old_lines[n - 1] for n in range(1, len(old_lines) + 1))


def test_a_comment_only_hunk_is_not_significant():
    old = "int a = 1; // one\nint x;\nint y;\nint b = 2;\n"
    new = "int a = 1; // the first\nint x;\nint y;\nint b = 3;\n"
    change = FileChange.from_texts("src/a.cpp", old, new)
    assert [s.old_start for s in change.spans] == [1, 4]
    assert [s.old_start for s in change.significant] == [4]
