"""The maintainers' rules for rebuilding a patch, on real upstream repositories, checked with the real
`git apply`: each rebuilt patch is `fuzzy` with the rule named in its hunk, never `regenerated`."""

from bot.patches.patchfile import parse
from tests.gitutil import git_apply_stack, make_patch, run, upstream_pair

INCLUDES = '#include "a.h"\n#include "b.h"\n\n#include <map>\n#include <string>\n\n'
BODY = "".join(f"    step_{i}();\n" for i in range(30))


def _only(report):
    (pin,) = report.pins
    (patch,) = pin.patches
    return patch


def _applied(up, patch, tmp_path, path):
    git_apply_stack(up.path, "v2", [patch.new_text], tmp_path / "work")
    return (tmp_path / "work" / path).read_text()


def test_an_include_both_sides_added_after_the_same_line_goes_after_upstreams(tmp_path):
    old = INCLUDES + "int f(void) {\n" + BODY + "}\n"
    new = old.replace('#include "b.h"\n', '#include "b.h"\n#include "upstream.h"\n')
    ours = old.replace('#include "b.h"\n', '#include "b.h"\n#include "ollama.h"\n')
    up = upstream_pair(tmp_path, {"src/f.c": old}, {"src/f.c": new})
    patch = _only(run(up, {"llama/compat/0001-hooks.patch": make_patch(old, ours, "src/f.c")}))
    assert patch.status == "fuzzy", patch.message
    (hunk,) = patch.hunks
    assert hunk.status == "relocated"
    assert hunk.detail == "upstream inserted 1 line at the same place: kept theirs first, ours after"
    text = _applied(up, patch, tmp_path, "src/f.c")
    assert '#include "b.h"\n#include "upstream.h"\n#include "ollama.h"\n\n#include <map>' in text


def test_one_adjacent_insertion_no_longer_sends_the_whole_file_to_relocation(tmp_path):
    old = INCLUDES + "int f(void) {\n" + BODY + "}\n"
    ours = old.replace('#include "b.h"\n', '#include "b.h"\n#include "ollama.h"\n').replace(
        "    step_20();\n", "    step_20();\n    hook();\n"
    )
    # upstream rewrote the three lines above the hook: relocation alone could not place it, the merge can
    new = old.replace('#include "b.h"\n', '#include "b.h"\n#include "upstream.h"\n')
    for i in (17, 18, 19):
        new = new.replace(f"    step_{i}();\n", f"    step_{i}(ctx);\n")
    up = upstream_pair(tmp_path, {"src/f.c": old}, {"src/f.c": new})
    patch = _only(run(up, {"llama/compat/0001-hooks.patch": make_patch(old, ours, "src/f.c")}))
    assert patch.status == "fuzzy", patch.message
    assert [h.status for h in patch.hunks] == ["relocated", "merged"]
    text = _applied(up, patch, tmp_path, "src/f.c")
    assert "    step_19(ctx);\n    step_20();\n    hook();\n    step_21();\n" in text


def test_overlapping_edits_still_fail_the_merge_and_go_to_relocation(tmp_path):
    old = "int f(void) {\n" + BODY + "}\n"
    new = old.replace("    step_10();\n", "    step_10(1);\n")
    ours = old.replace("    step_10();\n", "    step_10(2);\n")
    up = upstream_pair(tmp_path, {"f.c": old}, {"f.c": new})
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(old, ours, "f.c")}))
    assert patch.status == "conflict" and "best candidate" in patch.hunks[0].detail


def test_added_lines_follow_a_block_upstream_nested_through_the_merge(tmp_path):
    lines = [f"    load_{i}();\n" for i in range(8)]
    old = "void load(void) {\n" + "".join(lines) + "}\n"
    ours = old.replace("    load_4();\n", "    load_4();\n    ollama_hook();\n")
    # upstream wraps the calls in a scope and changes the three above the hook: the merge places it
    # (relocation cannot: it keeps at least one context line on each side of the added lines)
    nested = ["    load_0();\n", "    if (ready) {\n"] + ["    " + x for x in lines[1:]] + ["    }\n"]
    for i in (3, 4, 5):
        nested[i] = nested[i].replace(f"load_{i - 1}()", f"load_{i - 1}(ctx)")
    new = "void load(void) {\n" + "".join(nested) + "}\n"
    up = upstream_pair(tmp_path, {"l.c": old}, {"l.c": new})
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(old, ours, "l.c")}))
    assert patch.status == "fuzzy", patch.message
    (hunk,) = patch.hunks
    assert hunk.detail == (
        "upstream changed the 3 lines just above: kept ours after them; "
        "added lines re-indented by +4 columns like their neighbours"
    )
    text = _applied(up, patch, tmp_path, "l.c")
    assert "        load_4(ctx);\n        ollama_hook();\n        load_5();\n" in text


VOCAB = "enum pre_type {\n    PRE_DEFAULT    = 0,\n    PRE_WHITESPACE = 53,\n};\n"
UPSTREAM_VOCAB = VOCAB.replace("= 53,\n", "= 53,\n    PRE_GRANITE    = 54,\n    PRE_MELLUM     = 55,\n")
CHECKS = "".join(f"void check_{i}(void);\n" for i in range(12))


def _laguna(reference: str) -> bytes:
    ours = VOCAB.replace("= 53,\n", "= 53,\n    PRE_LAGUNA     = 54,\n")
    checks = CHECKS.replace("void check_5(void);\n", f"void check_5(void);\n{reference}\n")
    return make_patch(VOCAB, ours, "vocab.h", context=1) + make_patch(CHECKS, checks, "checks.c")


def test_a_value_upstream_took_is_renumbered_where_the_patch_names_the_entry_too(tmp_path):
    up = upstream_pair(tmp_path, {"vocab.h": VOCAB, "checks.c": CHECKS}, {"vocab.h": UPSTREAM_VOCAB})
    patch = _only(run(up, {"llama/compat/0001.patch": _laguna('static_assert(PRE_LAGUNA == 54, "abi");')}))
    assert patch.status == "fuzzy", patch.message
    vocab, checks = patch.hunks
    assert vocab.detail.endswith("renumbered from 54 to 56: upstream now uses 54 and 55")
    assert checks.status == "relocated" and checks.detail == "54 renumbered to 56 like PRE_LAGUNA"
    git_apply_stack(up.path, "v2", [patch.new_text], tmp_path / "work")
    assert (
        "    PRE_MELLUM     = 55,\n    PRE_LAGUNA     = 56,\n};\n" in (tmp_path / "work/vocab.h").read_text()
    )
    assert 'static_assert(PRE_LAGUNA == 56, "abi");' in (tmp_path / "work/checks.c").read_text()
    vocab_section, checks_section = parse(patch.new_text).files  # each keeps its context width
    assert [(h.leading, h.trailing) for h in vocab_section.hunks] == [(1, 1)]
    assert [(h.leading, h.trailing) for h in checks_section.hunks] == [(3, 3)]


def test_a_value_the_patch_writes_elsewhere_without_the_entry_name_is_a_conflict_naming_it(tmp_path):
    up = upstream_pair(tmp_path, {"vocab.h": VOCAB, "checks.c": CHECKS}, {"vocab.h": UPSTREAM_VOCAB})
    patch = _only(run(up, {"llama/compat/0001.patch": _laguna("int laguna_id = 54;")}))
    assert patch.status == "conflict"
    assert "the patch also writes 54 at checks.c:7 (`int laguna_id = 54;`)" in patch.message
    assert "vocab.h: PRE_LAGUNA = 54 takes the value upstream now gives PRE_GRANITE and would move to 56" in (
        patch.message
    )


NAMES = (
    "static const std::map<llm_arch, const char *> NAMES = {\n"
    '    { LLM_ARCH_LLAMA,   "llama"     },\n'
    '    { LLM_ARCH_QWEN,    "qwen"      },\n'
    '    { LLM_ARCH_TALKIE,  "talkie"    },\n'
    '    { LLM_ARCH_UNKNOWN, "(unknown)" },\n'
    "};\n\nint names(void);\n"
)


def _without_index_lines(patch: bytes) -> bytes:
    return b"".join(line for line in patch.splitlines(keepends=True) if not line.startswith(b"index "))


def test_entries_appended_to_a_table_stay_last_when_upstream_appended_its_own(tmp_path):
    """No old tree to merge with (the base's pin is garbage, the patch has no index lines): relocation
    anchors the entry on the table's terminator, after upstream's entries, not after the old neighbour."""
    ours = NAMES.replace('"talkie"    },\n', '"talkie"    },\n    { LLM_ARCH_LAGUNA,  "laguna"    },\n')
    new = NAMES.replace('"talkie"    },\n', '"talkie"    },\n    { LLM_ARCH_MELLUM,  "mellum"    },\n')
    up = upstream_pair(tmp_path, {"arch.cpp": NAMES}, {"arch.cpp": new})
    patch = _without_index_lines(make_patch(NAMES, ours, "arch.cpp"))
    result = _only(run(up, {"llama/compat/0001.patch": patch}, old_ref="not a ref"))
    assert result.status == "fuzzy", result.message
    (hunk,) = result.hunks
    assert 'anchored on the end of the list (`{ LLM_ARCH_UNKNOWN, "(unknown)" },`)' in hunk.detail
    assert b"\nindex " not in result.new_text
    text = _applied(up, result, tmp_path, "arch.cpp")
    assert '"mellum"    },\n    { LLM_ARCH_LAGUNA,  "laguna"    },\n    { LLM_ARCH_UNKNOWN' in text


def _loader(copies: int, tweak: bool = False) -> str:
    loop = "    for (auto & t : tensors) {\n        seek(t);\n        read(t);\n        upload(t);\n    }\n"
    begin = "    begin(ctx);\n" if tweak else "    begin();\n"
    body = "void load_all(void) {\n" + begin + loop + "    end();\n}\n"
    for i in range(1, copies):
        body += f"\nvoid load_copy_{i}(void) {{\n" + begin + loop + "    end();\n}\n"
    return body


def _hooked(source: str) -> str:
    return source.replace(
        "        read(t);\n", "        if (ollama_skip(t)) continue;\n        read(t);\n", 1
    )


def test_a_hooked_loop_upstream_copied_is_asked_about_not_hooked_silently(tmp_path):
    up = upstream_pair(tmp_path, {"load.c": _loader(1)}, {"load.c": _loader(2)})
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(_loader(1), _hooked(_loader(1)), "load.c")}))
    assert patch.status == "clean", patch.message  # it applies as it is: git apply's verdict stands
    (hunk,) = patch.hunks
    assert hunk.detail == "the hooked code now also appears at line 13: does it need the hook too?"
    text = _applied(up, patch, tmp_path, "load.c")
    assert text.count("ollama_skip") == 1 and text.splitlines()[11:13] == [
        "void load_copy_1(void) {",
        "    begin();",
    ]


def test_a_merged_hunk_with_that_question_makes_the_patch_fuzzy(tmp_path):
    up = upstream_pair(tmp_path, {"load.c": _loader(1)}, {"load.c": _loader(2, tweak=True)})
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(_loader(1), _hooked(_loader(1)), "load.c")}))
    assert patch.status == "fuzzy", patch.message
    (hunk,) = patch.hunks
    assert hunk.status == "relocated" and hunk.detail.endswith("does it need the hook too?")
    assert _applied(up, patch, tmp_path, "load.c").count("ollama_skip") == 1


def test_code_that_was_there_twice_already_raises_no_question(tmp_path):
    up = upstream_pair(tmp_path, {"load.c": _loader(2)}, {"load.c": "// moved\n" + _loader(2)})
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(_loader(2), _hooked(_loader(2)), "load.c")}))
    assert patch.status == "offset" and patch.hunks[0].detail == ""


def test_a_value_upstream_took_elsewhere_in_the_enum_names_the_commit_that_took_it(tmp_path):
    """The hunk itself still applies exactly; only the value moves, and the commit that took it is named."""
    enum = (
        "enum e {\n    E_A = 1,\n"
        + "".join(f"    E_{i} = {i + 10},\n" for i in range(8))
        + "    E_LAST = 30,\n};\n"
    )
    ours = enum.replace("    E_LAST = 30,\n", "    E_LAST = 30,\n    E_OURS = 31,\n")
    up = upstream_pair(tmp_path, {"e.h": enum}, {"other.c": "int x;\n"})
    up.commit("add E_TOP (#77)", {"e.h": enum.replace("    E_A = 1,\n", "    E_A = 1,\n    E_TOP = 31,\n")})
    up.tag("v3")
    patch = _only(run(up, {"llama/compat/0001.patch": make_patch(enum, ours, "e.h")}, new_ref="v3"))
    assert patch.status == "fuzzy", patch.message
    (hunk,) = patch.hunks
    assert (hunk.status, hunk.detail) == ("relocated", "renumbered from 31 to 32: upstream now uses 31")
    assert [c.subject for c in hunk.upstream_commits] == ["add E_TOP (#77)"]


def test_a_value_ollamas_compat_sources_write_for_the_entry_is_a_conflict_naming_the_line(tmp_path):
    up = upstream_pair(tmp_path, {"vocab.h": VOCAB, "checks.c": CHECKS}, {"vocab.h": UPSTREAM_VOCAB})
    patches = {"llama/compat/0001.patch": _laguna("void check_laguna(void);")}
    by_name = {**patches, "llama/compat/llama-ollama-compat.cpp": b"if (pre == PRE_LAGUNA) use_laguna();\n"}
    assert _only(run(up, by_name)).status == "fuzzy"  # the entry named, not its value: renumbering is safe
    by_value = {
        **patches,
        "llama/compat/llama-ollama-compat.cpp": b"int x;\nstatic_assert(PRE_LAGUNA == 54);\n",
    }
    patch = _only(run(up, by_value))
    assert patch.status == "conflict"
    assert (
        "but Ollama's llama/compat/llama-ollama-compat.cpp:2 writes 54 for PRE_LAGUNA "
        "(`static_assert(PRE_LAGUNA == 54);`): renumber them by hand"
    ) in patch.message
