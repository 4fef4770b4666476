"""Parsing patches exactly as git writes them."""

import base64
import zlib

import pytest

from bot.patches.binarypatch import apply_delta, binary_payload
from bot.patches.patchfile import PatchError, parse
from bot.patches.patchsafety import safety_problem
from tests.gitutil import make_patch

MAIL = (
    b"From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001\n"
    b"From: A Dev <dev@example.com>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\nSubject: [PATCH] hooks\n\n"
    b"Body text.\n---\n src/a.c | 1 +\n 1 file changed, 1 insertion(+)\n\n"
)
TRAILER = b"-- \n2.43.0\n\n"


def test_round_trip_keeps_mail_header_and_trailer_verbatim():
    data = MAIL + make_patch("a\nb\nc\n", "a\nb\nX\nc\n", "src/a.c") + TRAILER
    pf = parse(data)
    assert pf.preamble == MAIL and pf.trailer == TRAILER
    assert pf.preamble + b"".join(f.raw for f in pf.files) + pf.trailer == data
    assert pf.files[0].path == "src/a.c" and pf.files[0].index_old and len(pf.files[0].index_old) == 7


def test_several_files_new_deleted_rename_mode_and_nine_char_index():
    data = (
        b"diff --git a/new.c b/new.c\nnew file mode 100644\nindex 000000000..e69de29bb\n"
        b"--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+x\n"
        b"diff --git a/gone.c b/gone.c\ndeleted file mode 100644\nindex 123456789..000000000\n"
        b"--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
        b"diff --git a/old.c b/moved.c\nsimilarity index 90%\nrename from old.c\nrename to moved.c\n"
        b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    )
    files = parse(data).files
    assert [f.path for f in files] == ["new.c", "gone.c", "moved.c", "run.sh"]
    assert files[0].is_new and files[0].index_new == "e69de29bb"
    assert files[1].is_deleted
    assert (files[2].old_path, files[2].new_path) == ("old.c", "moved.c")
    assert (files[3].old_mode, files[3].new_mode) == ("100644", "100755")


def test_no_newline_at_end_of_file_and_crlf_content():
    data = make_patch(b"a\r\nb\r\nc", b"a\r\nB\r\nc", "w.txt")
    hunk = parse(data).files[0].hunks[0]
    assert hunk.before == [b"a\r\n", b"b\r\n", b"c"] and hunk.after == [b"a\r\n", b"B\r\n", b"c"]


def test_thin_patch_without_index_lines_and_one_context_line():
    data = b"--- a/x.c\n+++ b/x.c\n@@ -4,2 +4,3 @@ int f(void)\n a;\n+b;\n c;\n"
    fp = parse(data).files[0]
    assert fp.index_old is None and fp.hunks[0].section == b"int f(void)"
    assert fp.hunks[0].leading == 1 and fp.hunks[0].trailing == 1


@pytest.mark.parametrize(
    "data, words",
    [
        (b"hello\n", "no file changes"),
        (b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", "ends early"),
        (b"--- a/x\n+++ b/x\n@@ nonsense @@\n", "malformed hunk header"),
        (b"--- x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "prefix"),
    ],
)
def test_malformed_patches_say_where(data, words):
    with pytest.raises(PatchError, match=words):
        parse(data)


@pytest.mark.parametrize(
    "path, words",
    [
        ("/etc/passwd", "absolute"),
        ("../outside.c", "leaves"),
        ("src/../../x", "leaves"),
        (".git/hooks/pre-commit", ".git"),
        ("sub/.GIT/config", ".git"),
    ],
)
def test_unsafe_paths(path, words):
    data = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n".encode()
    assert words in safety_problem(parse(data).files[0])


def test_symlinks_are_unsafe():
    data = b"diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n"
    assert "symbolic link" in safety_problem(parse(data).files[0])


def _b85_lines(data: bytes) -> bytes:
    z = zlib.compress(data)
    out = b""
    for i in range(0, len(z), 52):
        chunk = z[i : i + 52]
        n = len(chunk)
        out += (bytes([64 + n]) if n <= 26 else bytes([96 + n - 26])) + base64.b85encode(chunk) + b"\n"
    return out


def test_binary_literal_decodes():
    content = bytes(range(256)) * 3
    data = (
        b"diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex 0000000..1234567\n"
        b"GIT binary patch\nliteral "
        + str(len(content)).encode()
        + b"\n"
        + _b85_lines(content)
        + b"\nliteral 0\nHcmV?d00001\n\n"
    )
    fp = parse(data).files[0]
    assert fp.is_binary and binary_payload(fp) == ("literal", content)


def test_binary_delta_copies_and_inserts():
    source = b"0123456789"
    delta = bytes([10, 7, 0x91, 2, 3]) + bytes([4]) + b"abcd"  # copy source[2:5], insert "abcd"
    assert apply_delta(source, delta) == b"234abcd"
