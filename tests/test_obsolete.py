"""Obsolete patches: what the new upstream already provides, by names or at the hunk's place, on real git
repositories, with the real `git apply` on what is rebuilt."""

import pytest

from bot.cache import facts
from bot.lang import cpp
from bot.patches.obsolete import FileSides, assess
from bot.patches.patchfile import parse
from tests.gitutil import git_apply_stack, make_patch, run, upstream_pair

ARCH_H = (
    "enum llm_arch {\n    LLM_ARCH_LLAMA,\n    LLM_ARCH_QWEN,\n    LLM_ARCH_UNKNOWN,\n};\n\n"
    "enum llm_tensor {\n    LLM_TENSOR_ATTN_Q,\n    LLM_TENSOR_ATTN_GATE,\n    LLM_TENSOR_FFN_UP,\n};\n"
)
ARCH_CPP = (
    "static const std::map<llm_arch, const char *> LLM_ARCH_NAMES = {\n"
    '    { LLM_ARCH_LLAMA,   "llama"     },\n'
    '    { LLM_ARCH_QWEN,    "qwen"      },\n'
    '    { LLM_ARCH_UNKNOWN, "(unknown)" },\n'
    "};\n\n"
    "llama_rope_type rope_type(llm_arch arch) {\n"
    "    switch (arch) {\n"
    "        case LLM_ARCH_LLAMA:\n"
    "        case LLM_ARCH_QWEN:\n"
    "            return LLAMA_ROPE_TYPE_NORM;\n"
    "        default:\n"
    "            return LLAMA_ROPE_TYPE_NONE;\n"
    "    }\n"
    "}\n"
)


def _add(text: str, after: str, lines: str) -> str:
    assert after in text
    return text.replace(after, after + lines, 1)


def _laguna(arch_h: str, arch_cpp: str, *, tensor: bool = True) -> tuple[str, str]:
    """Our Laguna: the arch in the enum, the names table and the rope switch; with its own gate tensor."""
    h = _add(arch_h, "    LLM_ARCH_QWEN,\n", "    LLM_ARCH_LAGUNA,\n")
    if tensor:
        h = _add(h, "    LLM_TENSOR_ATTN_GATE,\n", "    LLM_TENSOR_ATTN_GATE_LAGUNA,\n")
    c = _add(arch_cpp, '    { LLM_ARCH_QWEN,    "qwen"      },\n', '    { LLM_ARCH_LAGUNA,  "laguna"    },\n')
    c = _add(c, "        case LLM_ARCH_QWEN:\n", "        case LLM_ARCH_LAGUNA:\n")
    return h, c


def _patch(old: dict[str, str], new: dict[str, str]) -> bytes:
    return b"".join(make_patch(old[p], new[p], p, context=1) for p in old if old[p] != new[p])


def _upstream_laguna(arch_h: str, arch_cpp: str) -> dict[str, str]:
    """Upstream's own Laguna: same names, other neighbours and spacing, no gate tensor of its own."""
    h = _add(arch_h, "    LLM_ARCH_QWEN,\n", "    LLM_ARCH_MELLUM,\n    LLM_ARCH_LAGUNA,\n")
    c = _add(
        arch_cpp,
        '    { LLM_ARCH_QWEN,    "qwen"      },\n',
        '    { LLM_ARCH_MELLUM,  "mellum"    },\n    { LLM_ARCH_LAGUNA, "laguna" },\n',
    )
    c = _add(
        c, "        case LLM_ARCH_QWEN:\n", "        case LLM_ARCH_MELLUM:\n        case LLM_ARCH_LAGUNA:\n"
    )
    return {"src/llama-arch.h": h, "src/llama-arch.cpp": c}


def test_an_architecture_native_upstream_is_upstreamed_with_what_differs(tmp_path):
    old = {"src/llama-arch.h": ARCH_H, "src/llama-arch.cpp": ARCH_CPP}
    h, c = _laguna(ARCH_H, ARCH_CPP)
    up = upstream_pair(tmp_path, old, {})
    up.commit("model : add Laguna (#9300)", _upstream_laguna(ARCH_H, ARCH_CPP))
    up.tag("v3")
    patch = _patch(old, {"src/llama-arch.h": h, "src/llama-arch.cpp": c})
    (result,) = run(up, {"llama/compat/models/0001-laguna.patch": patch}, new_ref="v3").pins[0].patches
    assert result.status == "upstreamed", result.message
    assert "LLM_ARCH_LAGUNA" in result.message and "model : add Laguna (#9300)" in result.message
    assert "drop the patch, or reconcile it with upstream's version" in result.message
    assert "upstream does not have enum entry LLM_TENSOR_ATTN_GATE_LAGUNA in llm_tensor" in result.message
    assert result.regenerated is None and result.new_text is None
    statuses = [(h.file, h.status) for h in result.hunks]
    assert statuses.count(("src/llama-arch.h", "upstreamed")) == 1
    assert [s for f, s in statuses if f == "src/llama-arch.cpp"] == ["upstreamed", "upstreamed"]
    gate = next(h for h in result.hunks if h.status != "upstreamed")
    assert "LLM_TENSOR_ATTN_GATE_LAGUNA" in gate.detail
    laguna_row = next(h for h in result.hunks if h.file == "src/llama-arch.cpp")
    assert laguna_row.new_line == 5  # upstream's own row, after its MELLUM
    assert [c.subject for c in laguna_row.upstream_commits] == ["model : add Laguna (#9300)"]


def test_a_name_upstream_only_mentions_is_not_upstreamed(tmp_path):
    """A comment and a string naming LLM_ARCH_LAGUNA define nothing: the patch is still needed."""
    old = {"src/llama-arch.h": ARCH_H, "src/llama-arch.cpp": ARCH_CPP}
    h, c = _laguna(ARCH_H, ARCH_CPP, tensor=False)
    mention = {
        "src/llama-arch.h": ARCH_H + "// LLM_ARCH_LAGUNA,\n",
        "src/llama-arch.cpp": ARCH_CPP + 'static const char * NOTE = "{ LLM_ARCH_LAGUNA, laguna }";\n',
    }
    up = upstream_pair(tmp_path, old, mention)
    patch = _patch(old, {"src/llama-arch.h": h, "src/llama-arch.cpp": c})
    (result,) = run(up, {"llama/compat/models/0001-laguna.patch": patch}).pins[0].patches
    assert result.status in ("clean", "offset"), result.message


def test_part_upstream_is_dropped_and_the_rest_rebuilt(tmp_path):
    """Upstream added Laguna but not our other architecture: Laguna's hunks go, the rest is the patch."""
    old = {"src/llama-arch.h": ARCH_H, "src/llama-arch.cpp": ARCH_CPP}
    h, c = _laguna(ARCH_H, ARCH_CPP, tensor=False)
    h = _add(
        h, "    LLM_TENSOR_FFN_UP,\n", "    LLM_TENSOR_OLLAMA_PROJ,\n"
    )  # names nothing upstream provides
    up = upstream_pair(tmp_path, old, _upstream_laguna(ARCH_H, ARCH_CPP))
    patch = _patch(old, {"src/llama-arch.h": h, "src/llama-arch.cpp": c})
    (result,) = run(up, {"llama/compat/models/0001-archs.patch": patch}).pins[0].patches
    assert result.status == "fuzzy", result.message
    assert "3 of 4 hunks are in v2 already" in result.message and "dropped from the patch" in result.message
    assert [h.status for h in result.hunks].count("upstreamed") == 3
    assert b"+    LLM_TENSOR_OLLAMA_PROJ,\n" in result.new_text and b"LAGUNA" not in result.new_text
    assert b"src/llama-arch.cpp" not in result.new_text  # nothing of ours is left there
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")
    text = (tmp_path / "work/src/llama-arch.h").read_text()
    assert text.count("LLM_ARCH_LAGUNA") == 1 and "LLM_TENSOR_OLLAMA_PROJ" in text


def test_an_entry_upstream_has_elsewhere_but_not_here_keeps_its_hunk(tmp_path):
    """Upstream's Laguna has no rope case: ours is a gap in upstream's version, not a detail."""
    old = {"src/llama-arch.h": ARCH_H, "src/llama-arch.cpp": ARCH_CPP}
    h, c = _laguna(ARCH_H, ARCH_CPP, tensor=False)
    native = _upstream_laguna(ARCH_H, ARCH_CPP)
    native["src/llama-arch.cpp"] = native["src/llama-arch.cpp"].replace("        case LLM_ARCH_LAGUNA:\n", "")
    up = upstream_pair(tmp_path, old, native)
    patch = _patch(old, {"src/llama-arch.h": h, "src/llama-arch.cpp": c})
    (result,) = run(up, {"llama/compat/models/0001-laguna.patch": patch}).pins[0].patches
    assert result.status == "fuzzy", result.message
    assert b"+        case LLM_ARCH_LAGUNA:\n" in result.new_text
    assert b"LLM_ARCH_LAGUNA,\n" not in result.new_text and b'"laguna"' not in result.new_text
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")


EMBED = (
    "int main(int argc, char ** argv) {\n"
    "    const std::string out_cpp   = argv[1];\n"
    "    const std::string asset_dir = argv[3];\n"
    "\n"
    '    const bool use_gzip = std::filesystem::exists(asset_dir + "/_gzip");\n'
    "    return run(out_cpp, asset_dir, use_gzip);\n"
    "}\n"
)
OURS = EMBED.replace("= argv[3];", '= argc == 4 ? argv[3] : "";').replace(
    "use_gzip = std", "use_gzip = !asset_dir.empty() && std"
)


def test_behaviour_upstream_now_has_at_that_place_is_upstreamed(tmp_path):
    theirs = EMBED.replace("= argv[3];", "= (argc >= 4) ? argv[3] : std::string();").replace(
        "use_gzip = std", "use_gzip = !asset_dir.empty() && std"
    )
    up = upstream_pair(tmp_path, {"tools/ui/embed.cpp": EMBED}, {})
    up.commit("ui : allow a missing asset directory (#24597)", {"tools/ui/embed.cpp": theirs})
    up.tag("v3")
    patch = make_patch(EMBED, OURS, "tools/ui/embed.cpp")
    (result,) = run(up, {"llama/compat/0002-ui-empty-assets.patch": patch}, new_ref="v3").pins[0].patches
    assert result.status == "upstreamed", result.message
    assert "the change at tools/ui/embed.cpp:3" in result.message
    assert "ui : allow a missing asset directory (#24597)" in result.message
    assert (
        "where upstream has `const std::string asset_dir = (argc >= 4) ? argv[3] : std::string();`"
        in result.message
    )
    assert [h.status for h in result.hunks] == ["upstreamed"]


def test_upstream_changing_the_same_lines_otherwise_is_a_conflict(tmp_path):
    """Upstream edited the line we edit, for its own reason: nothing says our change is in."""
    theirs = EMBED.replace("= argv[3];", "= normalise(argv[3]);").replace(
        "use_gzip = std", "use_gzip = !asset_dir.empty() && std"
    )
    up = upstream_pair(tmp_path, {"tools/ui/embed.cpp": EMBED}, {"tools/ui/embed.cpp": theirs})
    patch = make_patch(EMBED, OURS, "tools/ui/embed.cpp")
    (result,) = run(up, {"llama/compat/0002-ui-empty-assets.patch": patch}).pins[0].patches
    assert result.status == "conflict", result.message


def test_lines_upstream_inserted_where_the_patch_inserts_them_are_upstreamed(tmp_path):
    """The hunk would still apply, adding a second copy of upstream's lines."""
    body = "".join(f"    step_{i}();\n" for i in range(8))
    old = f"void run() {{\n{body}}}\n"
    ours = old.replace("    step_3();\n", "    step_3();\n    flush_cache();\n")
    theirs = ours.replace("flush_cache();\n", "flush_cache();\n    flush_log();\n")  # no reverse-apply
    up = upstream_pair(tmp_path, {"src/run.cpp": old}, {"src/run.cpp": theirs})
    patch = make_patch(old, ours, "src/run.cpp")
    (result,) = run(up, {"llama/compat/0001-flush.patch": patch}).pins[0].patches
    assert result.status == "upstreamed" and "the change at src/run.cpp:6" in result.message


def test_definitions_are_read_by_the_tokenizer_not_by_the_look_of_a_line():
    source = (
        b"enum e {\n    A_ONE, // A_TWO,\n    A_THREE = 3,\n};\n"
        b'static const char * s = "case A_FOUR:";\n'
        b"void f(int x) {\n    switch (x) {\n        case A_ONE: break;\n    }\n"
        b'    if (\n        name == "laguna") {}\n}\n'
    )
    found = {(d.kind, d.key, d.owner) for d in cpp.definitions(source)}
    assert found == {
        ("enumerator", "A_ONE", "e"),
        ("enumerator", "A_THREE", "e"),
        ("type", "e", ""),
        ("case", "A_ONE", "f"),
        ("match", 'name=="laguna"', "f"),
    }


def test_a_files_definitions_are_read_once_per_facts_store(tmp_path, monkeypatch):
    source = (
        b"enum e {\n    A_ONE,\n};\nvoid f(int x) {\n    switch (x) {\n        case A_ONE: break;\n    }\n}\n"
    )
    with facts.using(facts.FactStore(tmp_path / "facts")):
        read = cpp.definitions(source)
        cpp.definitions.cache_clear()
        monkeypatch.setattr(cpp, "nodes", lambda *args: pytest.fail("parsed again"))
        assert cpp.definitions(source) == read and len(read) == 3


def test_assess_needs_the_old_file_to_know_what_the_patch_introduces():
    """An entry the old file already defined is no evidence: the patch only moved it."""
    old = ARCH_H
    moved = ARCH_H.replace("    LLM_ARCH_QWEN,\n", "").replace(
        "    LLM_ARCH_LLAMA,", "    LLM_ARCH_QWEN,\n    LLM_ARCH_LLAMA,"
    )
    pf = parse(make_patch(old, moved, "src/llama-arch.h"))
    assessment = assess(pf, {"src/llama-arch.h": FileSides(old.encode(), old.encode(), old.encode())})
    assert not assessment.provided and not assessment.whole


def test_one_entry_upstream_has_does_not_make_a_hooks_patch_obsolete(tmp_path):
    """One hunk of three is upstream's: it is dropped, the hooks stay, and the patch is not `upstreamed`."""
    hooks = "".join(f"void step_{i}() {{\n    work({i});\n}}\n\n" for i in range(12))
    old = {"src/llama-arch.cpp": ARCH_CPP, "src/steps.cpp": hooks}
    ours = {
        "src/llama-arch.cpp": _add(
            ARCH_CPP, "        case LLM_ARCH_QWEN:\n", "        case LLM_ARCH_LAGUNA:\n"
        ),
        "src/steps.cpp": hooks.replace("    work(2);\n", "    work(2);\n    ollama_hook(2);\n").replace(
            "    work(9);\n", "    work(9);\n    ollama_hook(9);\n"
        ),
    }
    up = upstream_pair(
        tmp_path, old, {"src/llama-arch.cpp": _upstream_laguna(ARCH_H, ARCH_CPP)["src/llama-arch.cpp"]}
    )
    (result,) = run(up, {"llama/compat/0001-hooks.patch": _patch(old, ours)}).pins[0].patches
    assert result.status == "fuzzy", result.message
    assert [h.status for h in result.hunks] == ["upstreamed", "clean", "clean"]
    assert b"ollama_hook(2);" in result.new_text and b"LLM_ARCH_LAGUNA" not in result.new_text
    git_apply_stack(up.path, "v2", [result.new_text], tmp_path / "work")


def test_braces_upstream_inserted_at_the_same_place_are_no_evidence(tmp_path):
    old = "void run() {\n    if (a) {\n        step();\n    }\n    done();\n}\n"
    ours = old.replace("        step();\n", "        step();\n        }\n    {\n")
    theirs = old.replace("        step();\n", "        step();\n        }\n    {\n        again();\n")
    up = upstream_pair(tmp_path, {"src/run.cpp": old}, {"src/run.cpp": theirs})
    (result,) = (
        run(up, {"llama/compat/0001-braces.patch": make_patch(old, ours, "src/run.cpp")}).pins[0].patches
    )
    assert result.status != "upstreamed", result.message


def test_the_hunks_of_an_upstreamed_patch_keep_the_patchs_file_order(tmp_path):
    """A file the assessment cannot read (one the patch adds) stays where the patch has it, after the
    files before it, in the result a maintainer reads top to bottom."""
    old = {"src/llama-arch.h": ARCH_H, "src/llama-arch.cpp": ARCH_CPP}
    h, c = _laguna(ARCH_H, ARCH_CPP)
    up = upstream_pair(tmp_path, old, {})
    up.commit("model : add Laguna (#9300)", _upstream_laguna(ARCH_H, ARCH_CPP))
    up.tag("v3")
    added = (
        b"diff --git a/src/models/laguna.cpp b/src/models/laguna.cpp\nnew file mode 100644\n"
        b"--- /dev/null\n+++ b/src/models/laguna.cpp\n@@ -0,0 +1,2 @@\n"
        b"+// Laguna's graph\n+int laguna_graph() { return 1; }\n"
    )
    patch = _patch(old, {"src/llama-arch.h": h, "src/llama-arch.cpp": c}) + added
    (result,) = run(up, {"llama/compat/models/0001-laguna.patch": patch}, new_ref="v3").pins[0].patches
    assert result.status == "upstreamed", result.message
    order = ["src/llama-arch.h", "src/llama-arch.cpp", "src/models/laguna.cpp"]
    files = [h.file for h in result.hunks]
    assert "src/models/laguna.cpp" in files and files == sorted(files, key=order.index)
