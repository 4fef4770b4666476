"""The patch engine on real upstream repositories built with pygit2, verified with the real `git apply`."""

import subprocess
import zlib

import pygit2
import pytest

from bot.engine import patch_order
from bot.model import AnalysisError
from bot.render.markdown import subject
from bot.repos.snapshot import MemorySnapshot
from tests import hostile
from tests.gitutil import git_apply_stack, make_patch, run, upstream_pair

BODY = "".join(f"line {i}\n" for i in range(40))


def _func(name: str, body: list[str], indent: str = "    ") -> str:
    return f"int {name}(void) {{\n" + "".join(f"{indent}{b}\n" for b in body) + "}\n"


def _one(report):
    (pin,) = report.pins
    return pin.patches


def test_clean_patch_comes_out_byte_identical(tmp_path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"other.c": "x\n"})
    patch = b"preamble\n" + make_patch(BODY, BODY.replace("line 5\n", "line 5\nadded\n"), "a.c")
    (result,) = _one(run(up, {"llama/compat/0001-a.patch": patch}))
    assert result.status == "clean" and result.new_text == patch and result.regenerated is None


def test_offset_is_normal_and_thin_patches_apply(tmp_path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"a.c": "new top\n" * 7 + BODY})
    thin = b"--- a/a.c\n+++ b/a.c\n@@ -10,2 +10,3 @@\n line 9\n+added\n line 10\n"
    (result,) = _one(run(up, {"llama/compat/0001-thin.patch": thin}))
    assert result.status == "offset" and result.hunks[0].new_line == 17
    assert "moved" in result.message


def test_hunk_at_file_start_without_leading_context(tmp_path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"a.c": BODY + "tail\n"})
    patch = b"--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,3 @@\n+// header\n line 0\n line 1\n"
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}))
    assert result.status == "clean"


def test_three_way_merge_regenerates_and_git_apply_accepts_it(tmp_path):
    old = _func("f", ["a();", "b();", "c();", "d();", "e();", "f();", "g();"])
    new = "// upstream comment\n" * 3 + old.replace("b();", "b(1);").replace("g();", "g(2);")
    up = upstream_pair(tmp_path, {"src/f.c": old}, {"src/f.c": new})
    patch = make_patch(old, old.replace("d();\n", "d();\n    ollama_hook();\n"), "src/f.c")
    (result,) = _one(run(up, {"llama/compat/0001-hook.patch": patch}))
    assert result.status == "regenerated", result.message
    assert result.hunks[0].status == "merged" and result.hunks[0].new_line is not None
    assert [c.subject for c in result.hunks[0].upstream_commits] == ["upstream moves things (#4242)"]
    assert b"+    ollama_hook();\n" in result.new_text
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")
    assert "ollama_hook();" in (tmp_path / "work/src/f.c").read_text()


def test_index_abbreviation_length_is_kept(tmp_path):
    old = _func("f", ["a();", "b();", "c();", "d();", "e();", "f();", "g();"])
    new = old.replace("b();", "b(1);")
    ours = old.replace("d();\n", "d();\n    x();\n")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    patch = make_patch(old, ours, "f.c")
    seven = next(ln for ln in patch.split(b"\n") if ln.startswith(b"index "))
    nine = (
        f"index {str(pygit2.hash(old.encode()))[:9]}..{str(pygit2.hash(ours.encode()))[:9]} 100644".encode()
    )
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch.replace(seven, nine)}))
    assert result.status == "regenerated"
    index = next(ln for ln in result.new_text.split(b"\n") if ln.startswith(b"index "))
    old_id, new_id = index.split()[1].decode().split("..")
    assert (len(old_id), len(new_id)) == (9, 9) and old_id == str(pygit2.hash(new.encode()))[:9]
    assert index.endswith(b" 100644")


def test_relocation_reindents_and_is_fuzzy(tmp_path):
    old = _func("load", ["init();", "a = 1;", "b = 2;", "c = 3;", "finish();", "more();", "end();"])
    new = old.replace(
        "    a = 1;\n    b = 2;\n    c = 3;\n",
        "    if (ready) {\n        a = 1;\n        b = 2;\n        c = 3;\n    }\n",
    )
    up = upstream_pair(tmp_path, {"l.c": old}, {"l.c": new})
    patch = make_patch(old, old.replace("    b = 2;\n", "    b = 2;\n    hook();\n"), "l.c")
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}))
    assert result.status == "fuzzy", result.message
    assert result.hunks[0].status == "relocated" and "+4 columns" in result.hunks[0].detail
    assert b"+        hook();\n" in result.new_text
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")


def test_conflict_explains_where_and_which_commits(tmp_path):
    old = _func("w", ["a();", "b();", "warmup(ctx);", "c();", "d();"])
    new = old.replace("warmup(ctx);", "warmup_graph(ctx, DEFAULT);")
    up = upstream_pair(tmp_path, {"w.c": old}, {"w.c": new})
    patch = make_patch(old, old.replace("    warmup(ctx);\n", "    if (on) warmup(ctx);\n"), "w.c")
    (result,) = _one(run(up, {"llama/compat/0001-warmup.patch": patch}))
    assert result.status == "conflict"
    hunk = result.hunks[0]
    assert "expected near w.c:1" in hunk.detail and "best candidate is line 1" in hunk.detail
    assert subject(hunk.upstream_commits[0]).endswith(
        "([#4242](https://github.com/ggml-org/llama.cpp/pull/4242))"
    )


def test_json_report_has_exactly_the_contract_keys_even_for_a_conflict(tmp_path):
    old = _func("w", ["a();", "b();", "warmup(ctx);", "c();", "d();"])
    up = upstream_pair(tmp_path, {"w.c": old}, {"w.c": old.replace("warmup(ctx);", "warmup_graph(ctx);")})
    patch = make_patch(old, old.replace("    warmup(ctx);\n", "    if (on) warmup(ctx);\n"), "w.c")
    (pin,) = run(up, {"llama/compat/0001-warmup.patch": patch}).to_json()["pins"]
    assert set(pin) == {
        "name",
        "version_file",
        "old_ref",
        "new_ref",
        "old_commit",
        "new_commit",
        "compare_url",
        "error",
        "patches",
        "findings",
        "unchecked",
    }
    (result,) = pin["patches"]
    assert set(result) == {"path", "status", "message", "regenerated", "hunks"}
    (hunk,) = result["hunks"]
    assert set(hunk) == {"file", "old_line", "new_line", "status", "upstream_commits"}
    assert (hunk["status"], type(hunk["new_line"])) == ("conflict", int)
    assert set(hunk["upstream_commits"][0]) == {"sha", "subject", "url"}


def test_upstreamed_when_the_change_is_already_there(tmp_path):
    old = _func("f", ["a();", "b();", "c();"])
    new = old.replace("b();\n", "b();\n    min_p();\n")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    (result,) = _one(run(up, {"llama/compat/0001.patch": make_patch(old, new, "f.c")}))
    assert result.status == "upstreamed" and "drop" in result.message


def test_a_patch_repeating_an_earlier_one_is_a_conflict_not_upstreamed(tmp_path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"b.c": "x\n"})
    patch = make_patch(BODY, BODY.replace("line 5\n", "line 5\nadded\n"), "a.c")
    first, again = _one(run(up, {"llama/compat/0001.patch": patch, "llama/compat/0002-copy.patch": patch}))
    assert (first.status, again.status) == ("clean", "conflict")
    assert "already made by an earlier carried patch" in again.message


def test_an_enum_value_upstream_took_is_renumbered_and_the_patch_is_fuzzy(tmp_path):
    enum = "enum llm_arch {\n    LLM_ARCH_LLAMA = 0,\n    LLM_ARCH_QWEN = 1,\n    LLM_ARCH_MISTRAL = 53,\n    LLM_ARCH_UNKNOWN,\n};\n"
    new = enum.replace(
        "    LLM_ARCH_MISTRAL = 53,\n", "    LLM_ARCH_MISTRAL = 53,\n    LLM_ARCH_OLMO = 54,\n"
    )
    up = upstream_pair(tmp_path, {"arch.h": enum}, {"arch.h": new})
    patch = make_patch(
        enum, enum.replace("= 53,\n", "= 53,\n    LLM_ARCH_LAGUNA = 54,\n"), "arch.h", context=2
    )
    (result,) = _one(run(up, {"llama/compat/models/0001-laguna.patch": patch}))
    assert result.status == "fuzzy", result.message
    assert "renumbered from 54 to 55: upstream now uses 54" in result.hunks[0].detail
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")
    text = (tmp_path / "work/arch.h").read_text()
    assert "    LLM_ARCH_OLMO = 54,\n    LLM_ARCH_LAGUNA = 55,\n    LLM_ARCH_UNKNOWN,\n" in text


def test_duplicate_table_key_is_a_conflict(tmp_path):
    table = 'static names = {\n    { LLM_ARCH_LLAMA, "llama" },\n    { LLM_ARCH_QWEN, "qwen" },\n};\n'
    new = table.replace('"qwen" },\n', '"qwen" },\n    { LLM_ARCH_LAGUNA, "laguna" },\n')
    up = upstream_pair(tmp_path, {"names.cpp": table}, {"other": "x\n"})
    up.commit("add laguna", {"names.cpp": new})
    up.tag("v3")
    # the hunk also adds a row upstream lacks, so upstream does not provide it: the duplicate is a clash
    ours = '    { LLM_ARCH_LAGUNA, "laguna" },\n    { LLM_ARCH_OTHER, "other" },\n    { LLM_ARCH_LLAMA'
    patch = make_patch(table, table.replace("    { LLM_ARCH_LLAMA", ours), "names.cpp")
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}, new_ref="v3"))
    assert result.status == "conflict" and "LLM_ARCH_LAGUNA" in result.message


@pytest.mark.parametrize("path", ["/abs/path.c", "../escape.c", ".git/config", "a/../../b.c"])
def test_unsafe_patches_are_errors_and_never_applied(tmp_path, path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"b.c": "x\n"})
    bad = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-line 0\n+evil\n".encode()
    good = make_patch(BODY, BODY.replace("line 0\n", "line zero\n"), "a.c")
    results = _one(run(up, {"llama/compat/0001-bad.patch": bad, "llama/compat/0002-good.patch": good}))
    assert [r.status for r in results] == ["error", "clean"]
    assert "Unsafe" in results[0].message


def test_a_patch_writing_through_an_upstream_symlink_is_an_error_like_git_apply_says(tmp_path):
    from tests.fixtures import RepoBuilder

    up = RepoBuilder(tmp_path / "up.git")
    up.commit("base", {"src/a.c": BODY})
    up.tag("v1")
    up.link("lnk", "src")
    up.link("out", "/tmp")
    up.commit("links", {})
    up.tag("v2")
    into_link, outside = (
        f"diff --git a/{p} b/{p}\nnew file mode 100644\n--- /dev/null\n+++ b/{p}\n"
        f"@@ -0,0 +1 @@\n+int x;\n".encode()
        for p in ("lnk/new.c", "out/evil")
    )
    fine = make_patch(BODY, BODY.replace("line 5\n", "line 5\nadded\n"), "src/a.c")
    results = _one(
        run(
            up,
            {
                "llama/compat/0001.patch": into_link,
                "llama/compat/0002.patch": outside,
                "llama/compat/0003.patch": fine,
            },
        )
    )
    assert [r.status for r in results] == ["error", "error", "clean"]
    assert "lnk/new.c is at or below lnk, a symbolic link upstream" in results[0].message
    work = tmp_path / "work"
    with pytest.raises(subprocess.CalledProcessError) as refused:
        git_apply_stack(up.path, "v2", [into_link], work)
    assert b"beyond a symbolic link" in refused.value.stderr


def test_malformed_patch_is_an_error_with_the_reason(tmp_path):
    up = upstream_pair(tmp_path, {"a.c": BODY}, {"b.c": "x\n"})
    (result,) = _one(
        run(up, {"llama/compat/0001.patch": b"--- a/a.c\n+++ b/a.c\n@@ -1,5 +1,5 @@\n line 0\n"})
    )
    assert result.status == "error" and "ends early" in result.message


def test_stacking_follows_file_names_across_subfolders(tmp_path):
    snap = MemorySnapshot(
        {
            "llama/compat/0003-c.patch": b"",
            "llama/compat/models/0002-b.patch": b"",
            "llama/compat/0001-a.patch": b"",
            "llama/compat/notes.txt": b"",
        }
    )
    assert patch_order(snap, "llama/compat") == [
        "llama/compat/0001-a.patch",
        "llama/compat/models/0002-b.patch",
        "llama/compat/0003-c.patch",
    ]


def test_stacked_patches_merge_against_earlier_ones(tmp_path):
    old = _func("f", [f"s{i}();" for i in range(12)])
    new = old.replace("s2();", "s2(true);").replace("s9();", "s9(true);")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    first = old.replace("s4();\n", "s4();\n    first();\n")
    second = first.replace("s6();\n", "s6();\n    second();\n")
    patches = {
        "llama/compat/0001-first.patch": make_patch(old, first, "f.c"),
        "llama/compat/models/0002-second.patch": make_patch(first, second, "f.c"),
    }
    results = _one(run(up, patches))
    assert [r.status for r in results] == ["regenerated", "regenerated"], [r.message for r in results]
    git_apply_stack(up.path, "v2", [r.new_text for r in results], tmp_path / "work")
    text = (tmp_path / "work/f.c").read_text()
    assert "first();" in text and "second();" in text and "s9(true);" in text


def test_three_way_uses_index_blobs_when_the_old_ref_is_unknown(tmp_path):
    old = _func("f", ["a();", "b();", "c();", "d();", "e();", "f();", "g();"])
    new = old.replace("b();", "b(1);")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    patch = make_patch(old, old.replace("d();\n", "d();\n    x();\n"), "f.c")
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}, old_ref=None))
    assert result.status == "regenerated"


def test_a_change_repairing_a_garbage_pin_is_checked_against_its_new_ref(tmp_path):
    old = _func("f", ["a();", "b();", "c();", "d();", "e();", "f();", "g();"])
    new = "// upstream comment\n" * 3 + old.replace("b();", "b(1);").replace("g();", "g(2);")
    up = upstream_pair(tmp_path, {"src/f.c": old}, {"src/f.c": new})
    patch = make_patch(old, old.replace("d();\n", "d();\n    ollama_hook();\n"), "src/f.c")
    report = run(up, {"llama/compat/0001-hook.patch": patch}, old_ref="this is not a ref")
    (pin,) = report.pins
    assert (pin.old_ref, pin.new_ref) == ("v2", "v2")
    (result,) = pin.patches
    assert result.status == "regenerated", result.message  # merged on the patch's own index blobs
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")


def test_a_base_ref_upstream_lacks_is_an_error_not_an_empty_bump(tmp_path):
    old = _func("f", ["a();", "b();", "c();"])
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": old.replace("b();", "b(1);")})
    with pytest.raises(AnalysisError, match=r"LLAMA_CPP_VERSION at the base revision names 'b999999'"):
        run(
            up,
            {"llama/compat/0001.patch": make_patch(old, old.replace("c();", "c(2);"), "f.c")},
            old_ref="b999999",
        )


def test_an_abbreviated_commit_id_is_named_with_its_full_id(tmp_path):
    old = _func("f", ["a();", "b();", "c();"])
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": old.replace("b();", "b(1);")})
    full = str(pygit2.Repository(str(up.path)).revparse_single("v1").peel(pygit2.Commit).id)
    with pytest.raises(AnalysisError, match=f"{full[:10]} abbreviates commit {full}: use the full 40-hex id"):
        run(
            up,
            {"llama/compat/0001.patch": make_patch(old, old.replace("c();", "c(2);"), "f.c")},
            old_ref=full[:10],
        )


def test_a_downgrade_counts_the_commits_it_reverts(tmp_path):
    old = _func("f", ["a();", "b();", "c();"])
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": old.replace("b();", "b(1);")})
    (pin,) = run(
        up,
        {"llama/compat/0001.patch": make_patch(old, old.replace("c();", "c(2);"), "f.c")},
        old_ref="v2",
        new_ref="v1",
    ).pins
    assert (pin.old_ref, pin.new_ref, pin.commit_count, pin.reverted_count) == ("v2", "v1", 0, 1)


def test_regenerating_a_regenerated_patch_changes_nothing(tmp_path):
    old = _func("f", ["a();", "b();", "c();", "d();", "e();", "f();", "g();"])
    new = old.replace("b();", "b(1);").replace("f();", "f(1);")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    (first,) = _one(
        run(
            up, {"llama/compat/0001.patch": make_patch(old, old.replace("d();\n", "d();\n    x();\n"), "f.c")}
        )
    )
    assert first.status == "regenerated"
    (second,) = _one(run(up, {"llama/compat/0001.patch": first.new_text}, old_ref="v2"))
    assert second.status == "clean" and second.new_text == first.new_text


def test_new_file_and_crlf_and_no_newline_patches_apply(tmp_path):
    crlf = b"one\r\ntwo\r\nthree"
    up = upstream_pair(tmp_path, {"w.txt": crlf}, {"x": b"y\n"})
    patch = make_patch(crlf, b"one\r\ntwo\r\n2.5\r\nthree", "w.txt") + (
        b"diff --git a/added.c b/added.c\nnew file mode 100644\nindex 0000000..3b18e51\n"
        b"--- /dev/null\n+++ b/added.c\n@@ -0,0 +1 @@\n+hello world\n"
    )
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}))
    assert result.status == "clean"
    git_apply_stack(up.path, "v2", [patch], tmp_path / "work")


def _binary_patch(tmp_path, path: str, old: bytes, new: bytes) -> bytes:
    """A real `git diff --binary` between two blobs."""
    import subprocess

    work = tmp_path / "bin"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / path).write_bytes(old)
    subprocess.run(["git", "-C", str(work), "add", path], check=True)
    (work / path).write_bytes(new)
    return subprocess.run(
        ["git", "-C", str(work), "diff", "--binary", path], check=True, capture_output=True
    ).stdout


def test_binary_patch_applies_as_it_is_else_error(tmp_path):
    old, new = bytes(range(256)) * 4, bytes(range(255, -1, -1)) * 4
    patch = _binary_patch(tmp_path, "blob.bin", old, new)
    up = upstream_pair(tmp_path, {"blob.bin": old}, {"x.c": "y\n"}, name="a.git")
    (result,) = _one(run(up, {"llama/compat/0001.patch": patch}))
    assert result.status == "clean"
    moved = upstream_pair(tmp_path, {"blob.bin": old}, {"blob.bin": old + b"more"}, name="b.git")
    (result,) = _one(run(moved, {"llama/compat/0001.patch": patch}))
    assert result.status == "error" and "binary change to blob.bin" in result.message


def _binary_section(kind: str, data: bytes, base85: bytes | None = None) -> bytes:
    """A `GIT binary patch` of blob.bin whose forward part is `kind` with `data` deflated."""
    return (
        f"diff --git a/blob.bin b/blob.bin\nGIT binary patch\n{kind} {len(data)}\n".encode()
        + (base85 or hostile.base85_lines(zlib.compress(data)))
        + b"\nliteral 0\nHcmV?d00001\n\n"
    )


def test_a_damaged_binary_patch_is_an_error_that_says_so(tmp_path):
    up = upstream_pair(tmp_path, {"blob.bin": b"four"}, {"x.c": "y\n"})
    truncated = _binary_section("delta", b"\x04\x05\x91")  # sizes 4 and 5, a copy whose offset is missing
    not_base85 = _binary_section("literal", b"data", base85=b"I'not base85 at all\n")
    (result,) = _one(run(up, {"llama/compat/0001.patch": truncated}))
    assert (result.status, result.message) == ("error", "Malformed patch: binary delta is truncated.")
    (result,) = _one(run(up, {"llama/compat/0001.patch": not_base85}))
    assert (result.status, result.message) == (
        "error",
        "Malformed patch: blob.bin: malformed binary patch line.",
    )


def test_the_report_lists_the_upstream_build_files_the_bump_changes_that_ollamas_build_uses(tmp_path):
    """A CMake file the build reads and a generator it runs, with their commit; not a directory an option
    Ollama leaves OFF cuts out, a comment-only change, a script nothing runs, or the docs."""
    old = _func("f", ["a();", "b();", "c();"])
    top = (
        "project(x)\n"
        'option(LLAMA_BUILD_EXAMPLES "examples" OFF)\n'
        "add_subdirectory(ggml/src)\n"
        "if (LLAMA_BUILD_EXAMPLES)\n  add_subdirectory(examples)\nendif()\n"
        "add_custom_command(OUTPUT gen.h COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/gen.py)\n"
    )
    up = upstream_pair(
        tmp_path,
        {
            "f.c": old,
            "CMakeLists.txt": top,
            "ggml/src/CMakeLists.txt": "add_library(ggml f.c)\n",
            "examples/CMakeLists.txt": "add_executable(ex ex.c)\n",
            "scripts/gen.py": "print(1)\n",
            "scripts/other.py": "print(1)\n",
            "docs/x.md": "a\n",
        },
        {
            "CMakeLists.txt": top.replace("project(x)\n", "project(x) # the project\n"),
            "ggml/src/CMakeLists.txt": "add_library(ggml f.c g.c)\n",
            "examples/CMakeLists.txt": "add_executable(ex ex.c ex2.c)\n",
            "scripts/gen.py": "print(2)\n",
            "scripts/other.py": "print(2)\n",
            "docs/x.md": "b\n",
        },
    )
    patch = make_patch(old, old.replace("c();", "c(2);"), "f.c")
    (pin,) = run(up, {"llama/compat/0001.patch": patch}, review=True).pins
    assert [c.path for c in pin.build_changes] == ["ggml/src/CMakeLists.txt", "scripts/gen.py"]
    for change in pin.build_changes:
        (commit,) = change.commits
        assert commit.sha == str(up.head) and commit.subject == "upstream moves things (#4242)"
    assert "build_changes" not in pin.to_json()  # the JSON report's keys stay as documented
