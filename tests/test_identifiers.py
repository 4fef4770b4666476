"""Names a patch's added lines use that upstream removed or renamed: renamed one for one where the upstream
diff shows it, else named with upstream's line and commit; on real git repositories, with the real
`git apply` on what is rebuilt."""

import pytest

from bot.cache import facts
from bot.model import LocalRef
from bot.patches import identifiers
from bot.patches.patchfile import parse
from tests.gitutil import git_apply_stack, make_patch, run, upstream_pair

LOADER = (
    "loader::loader(\n"
    "        const std::string & fname,\n"
    "        bool use_mmap,\n"
    "        bool check_tensors)\n"
    "        : fname(fname) {\n"
    "    open(fname);\n"
    "    read_header();\n"
    "    read_metadata();\n"
    "    read_tensors();\n"
    "    this->use_mmap = use_mmap;\n"
    "}\n"
    "\n"
    "void loader::load_all(bool use_mmap) {\n"
    "    start();\n"
    "    copy();\n"
    "    finish();\n"
    "}\n"
)
MEMBER = (
    LOADER.replace("        bool use_mmap,\n", "        load_mode mode,\n")
    .replace("    this->use_mmap = use_mmap;\n", "")
    .replace("    open(fname);\n", "    this->use_mmap = mode == LOAD_MODE_MMAP;\n    open(fname);\n")
)


def _hook(text: str) -> str:
    return text.replace(
        "    read_metadata();\n", "    read_metadata();\n    if (ollama_translate(this)) use_mmap = false;\n"
    )


def test_a_parameter_upstream_turned_into_a_member_is_named_and_the_line_kept(tmp_path):
    up = upstream_pair(tmp_path, {"src/loader.cpp": LOADER}, {})
    up.commit("loader : a load mode instead of use_mmap (#9400)", {"src/loader.cpp": MEMBER})
    up.tag("v3")
    patch = make_patch(LOADER, _hook(LOADER), "src/loader.cpp")
    (result,) = run(up, {"llama/compat/0001-hooks.patch": patch}, new_ref="v3").pins[0].patches
    assert result.status == "fuzzy", result.message
    assert "the parameter `use_mmap` of loader::loader, which upstream removed" in result.message
    assert "`bool use_mmap,` (line 3 at the old ref) became `load_mode mode,` (line 3)" in result.message
    assert "upstream now uses `this->use_mmap` (src/loader.cpp:6)" in result.message
    assert "loader : a load mode instead of use_mmap (#9400)" in result.message
    (hunk,) = result.hunks
    assert "use_mmap" in hunk.detail
    assert [c.subject for c in hunk.upstream_commits] == ["loader : a load mode instead of use_mmap (#9400)"]
    assert b"+    if (ollama_translate(this)) use_mmap = false;\n" in result.new_text  # kept as it was
    git_apply_stack(up.path, "v3", [result.new_text], tmp_path / "work")


def test_the_same_name_in_another_function_or_in_text_is_left_alone(tmp_path):
    """load_all's parameter is still there; a string and a comment name nothing."""
    hooked = LOADER.replace(
        "    copy();\n", '    copy();\n    log("use_mmap"); // use_mmap\n    if (use_mmap) sync();\n'
    )
    up = upstream_pair(tmp_path, {"src/loader.cpp": LOADER}, {"src/loader.cpp": MEMBER})
    patch = make_patch(LOADER, hooked, "src/loader.cpp")
    (result,) = run(up, {"llama/compat/0001-hooks.patch": patch}).pins[0].patches
    assert result.status in ("clean", "offset"), result.message


PARAMS_H = "struct cparams {\n    uint32_t n_ctx;\n    uint32_t n_batch;\n    bool flash_attn;\n};\n"
CONTEXT = (
    "void context::init(const cparams & cp) {\n"
    "    alloc(cp.n_batch);\n"
    "    reserve();\n"
    "    warmup();\n"
    "    ready = true;\n"
    "}\n"
)


def test_a_field_renamed_one_for_one_is_renamed_in_the_added_lines_of_a_rebuilt_patch(tmp_path):
    renamed_h = PARAMS_H.replace("n_ctx;", "n_ctx_seq;")
    up = upstream_pair(tmp_path, {"src/context.h": PARAMS_H, "src/context.cpp": CONTEXT}, {})
    up.commit(
        "context : n_ctx is per sequence now (#9500)",
        {"src/context.h": renamed_h, "src/context.cpp": CONTEXT.replace("warmup();", "warmup(cp);")},
    )
    up.tag("v3")
    hooked = CONTEXT.replace(
        "    reserve();\n", "    reserve();\n    ollama_reserve(cp.n_ctx, cp.n_batch);\n"
    )
    patch = make_patch(CONTEXT, hooked, "src/context.cpp")
    (result,) = run(up, {"llama/compat/0001-hooks.patch": patch}, new_ref="v3").pins[0].patches
    assert result.status == "fuzzy", result.message
    assert "`n_ctx` to `n_ctx_seq` in the added lines, as upstream did at src/context.h:2" in result.message
    assert "context : n_ctx is per sequence now (#9500)" in result.message
    assert b"+    ollama_reserve(cp.n_ctx_seq, cp.n_batch);\n" in result.new_text
    git_apply_stack(up.path, "v3", [result.new_text], tmp_path / "work")
    assert "cp.n_ctx_seq, cp.n_batch" in (tmp_path / "work/src/context.cpp").read_text()


def test_a_patch_that_applies_as_it_is_keeps_its_status_and_a_removed_name_is_a_finding(tmp_path):
    """`git apply` takes the patch, so it is clean; that its line names a field upstream renamed is said as a
    finding with the evidence, high (the build fails on the old name), pointing at the hunk."""
    renamed_h = PARAMS_H.replace("n_ctx;", "n_ctx_seq;")
    up = upstream_pair(tmp_path, {"src/context.h": PARAMS_H, "src/context.cpp": CONTEXT}, {})
    up.commit("context : n_ctx is per sequence now (#9500)", {"src/context.h": renamed_h})
    up.tag("v3")
    hooked = CONTEXT.replace(
        "    reserve();\n", "    reserve();\n    ollama_reserve(cp.n_ctx, cp.n_batch);\n"
    )
    patch = make_patch(CONTEXT, hooked, "src/context.cpp")
    (pin,) = run(up, {"llama/compat/0001-hooks.patch": patch}, new_ref="v3").pins
    (result,) = pin.patches
    assert (result.status, result.regenerated) == ("clean", None), result.message
    (finding,) = [f for f in pin.findings if f.check == "patches.removed-names"]
    assert finding.severity == "high"
    assert finding.title == "`0001-hooks.patch` applies as it is, but names what upstream removed"
    assert "the field `n_ctx` of cparams, which upstream renamed to `n_ctx_seq` at src/context.h:2" in (
        finding.detail
    )
    assert [c.subject for c in finding.upstream_commits] == ["context : n_ctx is per sequence now (#9500)"]
    assert finding.local_refs == [LocalRef("llama/compat/0001-hooks.patch", 5)]


def test_a_member_reached_through_this_is_not_the_removed_parameter(tmp_path):
    """The finished bump: the hook already writes `this->use_mmap`, the member upstream made of the
    parameter; the patch applies as it is and names nothing removed."""
    member_hook = _hook(MEMBER).replace("use_mmap = false", "this->use_mmap = false")
    up = upstream_pair(tmp_path, {"src/loader.cpp": LOADER}, {})
    up.commit("loader : a load mode instead of use_mmap (#9400)", {"src/loader.cpp": MEMBER})
    up.tag("v3")
    patch = make_patch(MEMBER, member_hook, "src/loader.cpp")
    (pin,) = run(up, {"llama/compat/0001-hooks.patch": patch}, new_ref="v3").pins
    assert [r.status for r in pin.patches] == ["clean"], pin.patches[0].message
    assert not [f for f in pin.findings if f.check == "patches.removed-names"]


def test_a_field_removed_without_a_successor_is_named():
    changes = identifiers.removed_declarations(
        "src/context.h", PARAMS_H.encode(), PARAMS_H.replace("    bool flash_attn;\n", "").encode()
    )
    assert [(c.kind, c.name, c.owner, c.renamed_to, c.old_line) for c in changes] == [
        ("field", "flash_attn", "cparams", None, 4)
    ]


def test_a_rename_needs_one_token_changed_on_a_line_of_its_own():
    """Two parameters folded into one is no rename, though the line count stays."""
    old = b"void f(\n        bool use_mmap, int n) {\n}\n"
    new = b"void f(\n        load_mode mode, int n) {\n}\n"
    (change,) = identifiers.removed_declarations("src/f.cpp", old, new)
    assert change.renamed_to is None and change.new_text == "load_mode mode, int n) {"
    renamed = identifiers.removed_declarations("src/f.cpp", old, old.replace(b"use_mmap", b"mmap"))
    assert [c.renamed_to for c in renamed] == ["mmap"]


def test_what_a_file_pair_removes_is_read_once_per_facts_store(tmp_path, monkeypatch):
    old, new = PARAMS_H.encode(), PARAMS_H.replace("    bool flash_attn;\n", "").encode()
    with facts.using(facts.FactStore(tmp_path / "facts")):
        read = identifiers.removed_declarations("src/context.h", old, new)
        monkeypatch.setattr(identifiers, "_gone", lambda *args: pytest.fail("read again"))
        assert identifiers.removed_declarations("src/context.h", old, new) == read and read


def test_headers_beside_a_source_are_read_with_it():
    assert identifiers.headers_of("src/llama-model-loader.cpp") == [
        "src/llama-model-loader.h",
        "src/llama-model-loader.hpp",
        "src/llama-model-loader.hh",
    ]
    assert identifiers.headers_of("CMakeLists.txt") == []


def test_a_field_name_another_type_still_declares_is_no_evidence():
    header = PARAMS_H + "struct hparams {\n    uint32_t n_ctx;\n};\n"
    changes = identifiers.removed_declarations(
        "src/context.h",
        header.encode(),
        header.replace("uint32_t n_ctx;\n    uint32_t n_batch", "uint32_t n_batch").encode(),
    )
    assert changes == []


def test_a_bare_removed_parameter_in_a_patch_that_applies_is_a_medium_finding(tmp_path):
    """Written against the new ref, the hook's bare `use_mmap` now means the member: `git apply` takes it,
    and a person is asked whether that is what it meant."""
    up = upstream_pair(tmp_path, {"src/loader.cpp": LOADER}, {})
    up.commit("loader : a load mode instead of use_mmap (#9400)", {"src/loader.cpp": MEMBER})
    up.tag("v3")
    patch = make_patch(MEMBER, _hook(MEMBER), "src/loader.cpp")
    (pin,) = run(up, {"llama/compat/0001-hooks.patch": patch}, new_ref="v3").pins
    assert [r.status for r in pin.patches] == ["clean"], pin.patches[0].message
    (finding,) = [f for f in pin.findings if f.check == "patches.removed-names"]
    assert finding.severity == "medium"
    assert "the parameter `use_mmap` of loader::loader, which upstream removed" in finding.detail
    assert "upstream now uses `this->use_mmap` (src/loader.cpp:6)" in finding.detail


def test_a_local_of_the_removed_parameters_name_is_the_local():
    """A block of the hook declares its own `use_mmap`: the bare name there is that local, and the patch
    names nothing upstream removed; the same name after the block is the parameter again."""
    scoped = LOADER.replace(
        "    read_metadata();\n",
        "    read_metadata();\n    {\n        bool use_mmap = ollama_translate(this);\n        hook(use_mmap);\n    }\n",
    )
    change = identifiers.removed_declarations("src/loader.cpp", LOADER.encode(), MEMBER.encode())
    pf = parse(make_patch(LOADER, scoped, "src/loader.cpp"))
    _, uses = identifiers.adapt(pf, {"src/loader.cpp": change}, {"src/loader.cpp": LOADER.encode()})
    assert uses == []
    after = scoped.replace(
        "        hook(use_mmap);\n    }\n", "        hook(use_mmap);\n    }\n    log(use_mmap);\n"
    )
    pf = parse(make_patch(LOADER, after, "src/loader.cpp"))
    _, uses = identifiers.adapt(pf, {"src/loader.cpp": change}, {"src/loader.cpp": LOADER.encode()})
    assert [u.change.name for u in uses] == ["use_mmap"]
