"""Ollama's compat C/C++ code against the upstream internals it uses: removed, renamed, re-kinded."""

from functools import partial
from pathlib import Path

import pytest

from bot.lang import cppvalues
from bot.model import LocalRef
from bot.patches.patchfile import parse
from bot.review.changes import FileChange
from bot.review.compat import compat_drafts, declarations, declared
from bot.review.compatvalues import Elsewhere, value_drafts, value_strings
from bot.review.consumers.compat_sources import compat_source_texts, compat_uses
from bot.review.source import code_text

CONTEXT_H = """#pragma once
#define LLAMA_MAX_SEQ 256
enum llama_pooling {
    LLAMA_POOLING_NONE,
    LLAMA_POOLING_MEAN = 1,
};
struct llama_cparams {
    uint32_t n_ctx;
    uint32_t n_batch;
    bool embeddings = false;
    float rope_freq_base() const;
};
static int helper(const llama_cparams & p) {
    uint32_t n_local = p.n_ctx;
    return n_local;
}
"""
COMPAT = {
    "llama/compat/hooks.cpp": code_text(
        "// Ollama hooks\nuint32_t ctx_of(const llama_cparams & p) { return p.n_ctx + p.n_batch; }\n"
        "bool pooled(int t) { return t == LLAMA_POOLING_MEAN && LLAMA_MAX_SEQ > 1 && n_local; }\n",
        "llama/compat/hooks.cpp",
    )
}


def _none(name):
    return set()


def _uses(files, patches=()):
    """What the app finds Ollama's compat sources (path -> comment-free text) and patches using: the names
    and strings of `consumer_model`'s tree-sitter pass (the pin's patch directory is llama/compat)."""
    return compat_uses(compat_source_texts(files, list(files), list(patches), "llama/compat"))


def _drafts(new_text, uses=None, elsewhere=_none):
    change = FileChange.from_texts("src/llama-cparams.h", CONTEXT_H, new_text)
    return compat_drafts(uses or _uses(COMPAT).names, change, elsewhere)


def test_what_each_compat_source_uses_is_read_once_per_facts_store(tmp_path, monkeypatch):
    from bot.cache import facts
    from bot.review.consumers import compat_sources

    two = {**COMPAT, "llama/compat/more.cpp": "int more() { return cparams.n_ctx + llama_other(); }\n"}
    uncached = _uses(two)
    with facts.using(facts.FactStore(tmp_path / "facts")):
        assert _uses(two) == uncached
        monkeypatch.setattr(compat_sources, "_read_source_uses", lambda *args: pytest.fail("read again"))
        assert _uses(two) == uncached
    assert uncached.names["n_ctx"] == (
        LocalRef("llama/compat/hooks.cpp", 2),
        LocalRef("llama/compat/more.cpp", 1),
    )


def test_declarations_know_their_scope_and_skip_function_bodies():
    found = {(name, kind) for _, kind, name in declarations(CONTEXT_H.split("\n"))}
    assert {
        ("LLAMA_MAX_SEQ", "macro"),
        ("LLAMA_POOLING_MEAN", "enum value"),
        ("llama_cparams", "type"),
        ("n_ctx", "field"),
        ("embeddings", "field"),
        ("rope_freq_base", "function"),
        ("helper", "function"),
    } <= found
    assert not any(name == "n_local" for name, _ in found)


def test_compat_uses_name_the_lines_of_compat_sources_and_patch_added_files():
    patch = (
        b"diff --git a/src/ollama-added.cpp b/src/ollama-added.cpp\nnew file mode 100644\n"
        b"--- /dev/null\n+++ b/src/ollama-added.cpp\n@@ -0,0 +1,2 @@\n"
        b"+#include <x.h>\n+int use() { return llama_special_field; }\n"
    )
    patches = [("llama/compat/0002-add.patch", parse(patch))]
    sources = compat_source_texts(COMPAT, list(COMPAT), patches)
    assert [path for path, _, _ in sources] == [
        "llama/compat/hooks.cpp",
        "llama/compat/0002-add.patch:src/ollama-added.cpp",  # the lines the patch adds to that file
    ]
    uses = _uses(COMPAT, patches).names
    assert uses["n_ctx"] == (LocalRef("llama/compat/hooks.cpp", 2),)
    assert "Ollama" not in uses and "hooks" not in uses  # comments are not uses
    (ref,) = uses["llama_special_field"]  # shown where it stands in the patch file
    assert (
        ref.path == "llama/compat/0002-add.patch"
        and b"llama_special_field" in patch.splitlines()[ref.line - 1]
    )


def test_field_that_became_a_method_is_high():
    (draft,) = _drafts(CONTEXT_H.replace("    uint32_t n_ctx;\n", "    uint32_t n_ctx() const;\n"))
    assert (draft.area, draft.severity) == ("models", "high")
    assert draft.title == "`n_ctx` changed from field to function upstream"
    assert draft.local_refs == (LocalRef("llama/compat/hooks.cpp", 2),) and draft.line == 8


def test_removed_or_renamed_declarations_are_high():
    (draft,) = _drafts(CONTEXT_H.replace("    uint32_t n_batch;\n", "    uint32_t n_batch_size;\n"))
    assert draft.title == "`n_batch` was removed upstream" and "renamed to `n_batch_size`" in draft.detail
    (draft,) = _drafts(CONTEXT_H.replace("    LLAMA_POOLING_MEAN = 1,\n", ""))
    assert draft.title == "`LLAMA_POOLING_MEAN` was removed upstream" and "enum value" in draft.detail
    (draft,) = _drafts(CONTEXT_H.replace("#define LLAMA_MAX_SEQ 256\n", "#define LLAMA_MAX_SEQUENCES 256\n"))
    assert draft.title == "`LLAMA_MAX_SEQ` was removed upstream"


def test_no_finding_for_locals_comments_moves_or_unused_names():
    assert _drafts(CONTEXT_H.replace("uint32_t n_local = p.n_ctx;", "uint32_t n_other = p.n_ctx;")) == []
    assert _drafts(CONTEXT_H.replace("    uint32_t n_ctx;", "    uint32_t n_ctx; // tokens")) == []
    assert _drafts(CONTEXT_H.replace("    bool embeddings = false;\n", "")) == []  # Ollama does not use it
    moved = CONTEXT_H.replace("    uint32_t n_batch;\n", "")
    assert _drafts(moved, elsewhere=lambda name: {"field"} if name == "n_batch" else set()) == []


# ---- real excerpts (tests/data/decls/SOURCE.md says where each comes from)

DECLS = Path(__file__).parent / "data" / "decls"


def _excerpt(name: str) -> str:
    return (DECLS / name).read_text()


def _compat(path: str, name: str) -> dict[str, str]:
    return {path: code_text(_excerpt(name), path)}


def test_declarations_name_owners_and_parameter_types_and_never_locals():
    hparams = declared(code_text(_excerpt("llama-hparams-b9626.h"), "x.h").split("\n"))
    by = {(d.owner, d.name): d for d in hparams}
    assert by[("llama_hparams", "n_layer")].kind == "function"
    assert by[("llama_hparams_posnet", "n_layer")].kind == "field"
    assert by[("llama_hparams", "is_swa")].signature == "(uint32_t) const"
    assert by[("llama_swa_type", "LLAMA_SWA_TYPE_CHUNKED")].kind == "enum value"
    assert by[("", "LLAMA_MAX_LAYERS")].kind == "macro"
    # `key` is a field of the file-level struct only; the parser's local struct (a method `key` with a
    # parameter `key`) sits in a function body
    partial = declared(code_text(_excerpt("json-partial-b9781.cpp"), "x.cpp").split("\n"))
    assert [(d.owner, d.kind, d.line) for d in partial if d.name == "key"] == [
        ("common_json_stack_element", "field", 20)
    ]
    assert not any(
        d.name == "pos" for d in declared(_excerpt("llama-ollama-compat-util-rename.cpp").split("\n"))
    )


def test_a_field_of_the_struct_that_became_a_getter_is_high_although_another_struct_keeps_the_field():
    """b9509 -> b9626: llama_hparams::n_layer became n_layer() while llama_hparams_posnet keeps a field
    n_layer; Ollama's own laguna.cpp read hparams.n_layer."""
    uses = _uses(_compat("llama/compat/models/laguna.cpp", "laguna-b9509.cpp")).names
    change = FileChange.from_texts(
        "src/llama-hparams.h", _excerpt("llama-hparams-b9509.h"), _excerpt("llama-hparams-b9626.h")
    )
    drafts = compat_drafts(uses, change, _none)
    (draft,) = [d for d in drafts if "n_layer`" in d.title]
    assert (draft.severity, draft.title) == ("high", "`n_layer` changed from field to function upstream")
    assert "of `llama_hparams`" in draft.detail and "`n_layer()`" in draft.detail
    assert LocalRef("llama/compat/models/laguna.cpp", 17) in draft.local_refs
    # Ollama's code that does not use it gets nothing
    unused = _uses({"llama/compat/x.cpp": "int f() { return 0; }\n"}).names
    assert compat_drafts(unused, change, _none) == []


def test_a_field_whose_struct_is_gone_is_removed_not_rekinded_and_other_headers_can_keep_it():
    """b9781 -> b9840 deletes common/regex-partial.h (common_string_range::begin); another changed file
    declares a function `begin`."""
    uses = {"begin": [LocalRef("llama/compat/llama-ollama-compat.cpp", 323)]}
    change = FileChange.from_texts("common/regex-partial.h", _excerpt("regex-partial-b9781.h"), None)
    (draft,) = compat_drafts(uses, change, lambda name: {"function"})
    assert draft.title == "`begin` was removed upstream" and draft.line is None
    assert compat_drafts(uses, change, _none, still_declared=lambda name, kind: kind == "field") == []
    assert len(compat_drafts(uses, change, _none, still_declared=lambda name, kind: kind == "function")) == 1


def test_what_a_source_file_declares_is_private_to_it():
    """b10091 -> b10242 rewrote reasoning-budget.cpp's token_matcher (a field `pos`); compat's `pos` is a
    local of its own, no use of upstream's."""
    uses = _uses(
        _compat("llama/compat/llama-ollama-compat-util.cpp", "llama-ollama-compat-util-rename.cpp")
    ).names
    assert "pos" not in uses and "gguf_get_tensor_name" in uses
    old, new = _excerpt("reasoning-budget-b10091.cpp"), _excerpt("reasoning-budget-b10242.cpp")
    change = FileChange.from_texts("common/reasoning-budget.cpp", old, new)
    assert compat_drafts(uses, change, _none) == []
    # were `pos` a name compat uses, the .cpp file's struct would still be private to it
    used = {"pos": (LocalRef("llama/compat/llama-ollama-compat-util.cpp", 8),)}
    assert compat_drafts(used, change, _none) == []
    # the same struct in a header is what other files see
    dropped = old.replace("    size_t pos = 0;\n", "")
    header = FileChange.from_texts("common/reasoning-budget.h", old, dropped)
    (draft,) = compat_drafts(used, header, _none)
    assert draft.title == "`pos` was removed upstream"
    assert compat_drafts(uses, header, _none) == []


def test_signature_of_a_free_function_ollama_calls():
    header = "LLAMA_API int32_t llama_foo(const struct llama_model * model, int n);\n"
    uses = {"llama_foo": [LocalRef("llama/compat/a.cpp", 3)]}

    def drafts(new):
        return compat_drafts(uses, FileChange.from_texts("include/llama.h", header, new), _none)

    (draft,) = drafts(header.replace("int n)", "int n, bool strict)"))
    assert draft.title == "Signature of `llama_foo` changed upstream" and draft.removed is None
    assert (
        "(const struct llama_model *, int)" in draft.detail
        and "(const struct llama_model *, int, bool)" in draft.detail
    )
    assert drafts(header.replace("int n)", "int n, bool strict = false)")) == []  # old calls compile
    assert drafts(header.replace("model, int n)", "m, int count)")) == []  # parameter names are no change


def test_the_type_of_a_field_or_variable_ollama_uses_changed_is_medium_with_both_types():
    (draft,) = _drafts(CONTEXT_H.replace("    uint32_t n_ctx;\n", "    const int64_t n_ctx;\n"))
    assert (draft.severity, draft.title) == ("medium", "Type of `n_ctx` changed upstream")
    assert "Was: `uint32_t`" in draft.detail and "Now: `const int64_t`" in draft.detail
    assert draft.local_refs == (LocalRef("llama/compat/hooks.cpp", 2),)
    table = "static std::map<int, std::string> NAMES = {};\n"
    uses = {"NAMES": [LocalRef("llama/compat/a.cpp", 3)]}
    retyped = table.replace("std::map<int, std::string>", "const std::map<int, const char *>")
    (draft,) = compat_drafts(uses, FileChange.from_texts("tools/mtmd/clip-impl.h", table, retyped), _none)
    assert "Was: `std::map<int, std::string>`" in draft.detail
    assert "Now: `const std::map<int, const char *>`" in draft.detail


def test_a_type_respaced_or_a_variable_ollama_does_not_use_retyped_is_quiet():
    assert _drafts(CONTEXT_H.replace("    uint32_t n_ctx;\n", "    uint32_t  n_ctx ;\n")) == []
    assert _drafts(CONTEXT_H.replace("    bool embeddings = false;\n", "    int embeddings = 0;\n")) == []


# ---- values Ollama produces that upstream stops recognising


def _gemma4_value_drafts(clip_old, clip_new, compat=None, tables=None):
    files = compat or _compat("llama/compat/llama-ollama-compat.cpp", "llama-ollama-compat-gemma4-clip.cpp")
    change = FileChange.from_texts("tools/mtmd/clip.cpp", clip_old, clip_new)
    header = FileChange.from_texts("x.h", _excerpt("clip-impl-b9479.h"), "")
    pairs = value_strings([header]) if tables is None else tables
    uses = _uses(files)
    return value_drafts(change, uses.names, uses.strings, pairs)


def test_a_case_dropped_from_a_switch_for_a_type_ollama_produces_is_high():
    """b9479 -> b9493: clip_n_mmproj_embd's `case PROJECTOR_TYPE_GEMMA4A:` became GEMMA4UA; compat writes
    "gemma4a", which PROJECTOR_TYPE_NAMES reads as PROJECTOR_TYPE_GEMMA4A; the default aborts."""
    old, new = _excerpt("clip_n_mmproj_embd-b9479.cpp"), _excerpt("clip_n_mmproj_embd-b9493.cpp")
    (draft,) = _gemma4_value_drafts(old, new)
    assert (draft.severity, draft.title) == (
        "high",
        "`clip_n_mmproj_embd` no longer handles `PROJECTOR_TYPE_GEMMA4A`",
    )
    assert "`case PROJECTOR_TYPE_GEMMA4UA:` in its place" in draft.detail
    assert '`"gemma4a"`' in draft.detail and "GGML_ABORT" in draft.detail and "carry a patch" in draft.detail
    assert draft.local_refs == (LocalRef("llama/compat/llama-ollama-compat.cpp", 45),)
    assert draft.removed == ("tools/mtmd/clip.cpp", "case PROJECTOR_TYPE_GEMMA4A:")
    assert new.split("\n")[draft.line - 1].strip() == "case PROJECTOR_TYPE_GEMMA4UA:"


def test_no_value_finding_when_ollama_does_not_reach_the_dropped_case():
    old, new = _excerpt("clip_n_mmproj_embd-b9479.cpp"), _excerpt("clip_n_mmproj_embd-b9493.cpp")
    vision_only = _excerpt("llama-ollama-compat-gemma4-clip.cpp").replace('"gemma4a"', '"gemma4v"')
    assert _gemma4_value_drafts(old, new, {"llama/compat/c.cpp": vision_only}) == []
    assert _gemma4_value_drafts(old, new, tables={}) == []  # no table says "gemma4a" is that value
    added_only = old.replace(
        "        case PROJECTOR_TYPE_GEMMA4A:\n",
        "        case PROJECTOR_TYPE_GEMMA4A:\n        case PROJECTOR_TYPE_GEMMA4UA:\n",
    )
    assert _gemma4_value_drafts(old, added_only) == []


def _clip_impl_drafts(new_text):
    files = _compat("llama/compat/llama-ollama-compat.cpp", "llama-ollama-compat-gemma4-clip.cpp")
    change = FileChange.from_texts("tools/mtmd/clip-impl.h", _excerpt("clip-impl-b9479.h"), new_text)
    uses = _uses(files)
    return value_drafts(change, uses.names, uses.strings)


def test_an_enum_value_renamed_or_a_table_row_dropped_for_a_string_ollama_produces_is_high():
    old = _excerpt("clip-impl-b9479.h")
    renamed = old.replace("PROJECTOR_TYPE_GEMMA4A,", "PROJECTOR_TYPE_GEMMA4UA,").replace(
        '{ PROJECTOR_TYPE_GEMMA4A,   "gemma4a"}', '{ PROJECTOR_TYPE_GEMMA4UA,  "gemma4ua"}'
    )
    drafts = {d.title: d for d in _clip_impl_drafts(renamed)}
    enum = drafts["Enum value `PROJECTOR_TYPE_GEMMA4A` of `projector_type` was renamed upstream"]
    assert "probably `PROJECTOR_TYPE_GEMMA4UA` now" in enum.detail and '`"gemma4a"`' in enum.detail
    row = drafts['`PROJECTOR_TYPE_NAMES` no longer pairs `PROJECTOR_TYPE_GEMMA4A` with "gemma4a"']
    assert row.severity == enum.severity == "high" and row.cause == enum.cause  # one item
    # only the string changes: the row is gone, the enum value stays
    respelled = old.replace('"gemma4a"}', '"gemma4_audio"}')
    (draft,) = _clip_impl_drafts(respelled)
    assert draft.title == row.title and draft.local_refs == (
        LocalRef("llama/compat/llama-ollama-compat.cpp", 45),
    )


def test_no_value_finding_for_added_values_or_values_ollama_never_produces():
    assert _clip_impl_drafts(_excerpt("clip-impl-b9493.h")) == []  # the real change only adds values
    old = _excerpt("clip-impl-b9479.h")
    assert _clip_impl_drafts(old.replace("PROJECTOR_TYPE_PHI4,", "PROJECTOR_TYPE_PHI4_MM,")) == []


def test_switch_cases_and_tables_are_read_by_the_grammar():
    text = (
        "enum kind { KIND_A, KIND_B };\n"
        'static const char * NAMES[][2] = { { "a", "x" } };\n'
        'static std::map<kind, std::string> KIND_NAMES = { { KIND_A, "a" }, { "b", KIND_B } };\n'
        "int size(kind k, int v) {\n"
        "    switch (k) {\n"
        "        case KIND_A: switch (v) { case 1: return 2; case KIND_B: return 3; }\n"
        "        case kind::KIND_B: return 1; // case KIND_C:\n"
        '        default: GGML_ABORT("unknown kind");\n'
        "    }\n"
        "}\n"
    )
    code = code_text(text, "x.cpp").encode()
    outer, inner = cppvalues.switches(code)
    assert (outer.function, outer.subject, outer.cases) == ("size", "k", (("KIND_A", 6), ("KIND_B", 7)))
    assert outer.default == 'default: GGML_ABORT("unknown kind");'
    assert (inner.subject, inner.cases, inner.default) == ("v", (("KIND_B", 6),), "")
    assert [(r.table, r.value, r.string) for r in cppvalues.string_tables(code)] == [
        ("KIND_NAMES", "KIND_A", "a"),
        ("KIND_NAMES", "KIND_B", "b"),
    ]
    # Ollama naming the value itself reaches it too; a switch that loses its only use of KIND_B says so
    uses = {"KIND_B": [LocalRef("llama/compat/k.cpp", 1)]}
    change = FileChange.from_texts(
        "src/k.cpp", text, text.replace("        case kind::KIND_B: return 1; // case KIND_C:\n", "")
    )
    (draft,) = value_drafts(change, uses, {})
    assert draft.title == "`size` no longer handles `KIND_B`" and "uses `KIND_B`" in draft.detail


def test_a_local_in_an_inline_body_is_no_declaration():
    header = (
        "struct common_string_range {\n"
        "    size_t first;\n"
        "    size_t length() const {\n"
        "        size_t begin = first;\n"
        "        return begin;\n"
        "    }\n"
        "};\n"
    )
    uses = {"begin": [LocalRef("llama/compat/llama-ollama-compat.cpp", 323)]}
    change = FileChange.from_texts("common/regex-partial.h", header, header.replace("begin", "start"))
    assert compat_drafts(uses, change, _none) == []
    assert [d.name for d in declared(header.split("\n"))] == ["common_string_range", "first", "length"]


# ---- names Ollama writes that upstream stops reading

DEEPSTACK_WRITER = (
    "void fill(gguf_context * meta, const std::vector<uint8_t> & bools) {\n"
    '    gguf_set_arr_data(meta, "clip.vision.is_deepstack_layers", GGUF_TYPE_BOOL, bools.data(), bools.size());\n'
    "}\n"
)


def _key_drafts(new_text, compat=None, others=()):
    """The drafts of a change to clip-impl.h's key macros (b9509's, real) against compat code writing keys,
    with the bump's other changes."""
    files = compat or _compat("llama/compat/llama-ollama-compat.cpp", "llama-ollama-compat-gemma4-clip.cpp")
    change = FileChange.from_texts("tools/mtmd/clip-impl.h", _excerpt("clip-impl-keys-b9509.h"), new_text)
    uses = _uses(files)
    spelled = partial(Elsewhere, [change, *others], uses.strings)
    return value_drafts(change, uses.names, uses.strings, None, spelled)


def test_a_key_macro_that_names_another_key_now_is_high_at_the_lines_that_write_the_old_one():
    old = _excerpt("clip-impl-keys-b9509.h")
    renamed = old.replace('"clip.vision.image_size"', '"clip.vision.input_size"')
    (draft,) = _key_drafts(renamed)
    assert (draft.severity, draft.title) == ("high", '`"clip.vision.image_size"` was renamed upstream')
    assert 'probably `"clip.vision.input_size"` now' in draft.detail
    assert "KEY_IMAGE_SIZE" in draft.detail and "compatibility code writes" in draft.detail
    assert draft.local_refs == (LocalRef("llama/compat/llama-ollama-compat.cpp", 17),)
    assert renamed.split("\n")[draft.line - 1].startswith("#define KEY_IMAGE_SIZE")


def test_a_key_macro_removed_with_the_code_that_read_it_is_high_and_a_dead_one_is_quiet():
    """b9509 -> b9626 realigned every key macro and dropped KEY_IS_DEEPSTACK_LAYERS, which nothing read any
    more: Ollama's write of the key was already ignored, and the bump changes nothing for it."""
    writer = {"llama/compat/deepstack.cpp": code_text(DEEPSTACK_WRITER, "llama/compat/deepstack.cpp")}
    assert _key_drafts(_excerpt("clip-impl-keys-b9626.h")) == []
    assert _key_drafts(_excerpt("clip-impl-keys-b9626.h"), writer) == []
    reader = FileChange.from_texts(
        "tools/mtmd/clip.cpp",
        "void load() {\n    get_arr_bool(KEY_IS_DEEPSTACK_LAYERS, hparams.is_deepstack_layers, false);\n}\n",
        "void load() {\n}\n",
    )
    (draft,) = _key_drafts(_excerpt("clip-impl-keys-b9626.h"), writer, [reader])
    assert draft.title == '`"clip.vision.is_deepstack_layers"` was removed upstream'
    assert draft.local_refs == (LocalRef("llama/compat/deepstack.cpp", 2),)


def test_no_key_finding_for_includes_comments_moves_or_names_still_spelled():
    old = _excerpt("clip-impl-keys-b9509.h")
    include_writer = {"llama/compat/inc.cpp": code_text('#include "clip-impl.h"\n', "llama/compat/inc.cpp")}
    assert _key_drafts('#include "clip-impl.h"\n' + old, include_writer) == []
    with_include = FileChange.from_texts("tools/mtmd/x.h", '#include "clip-impl.h"\nint x;\n', "int x;\n")
    uses = _uses(include_writer)
    assert value_drafts(with_include, uses.names, uses.strings, None, lambda: Elsewhere([], {})) == []
    commented = old.replace(
        '#define KEY_IMAGE_SIZE          "clip.vision.image_size"',
        '// was "clip.vision.image_size"\n#define KEY_IMAGE_SIZE          "clip.vision.input_size"',
    )
    assert [d.title for d in _key_drafts(commented)] == ['`"clip.vision.image_size"` was renamed upstream']
    moved = old.replace('#define KEY_IMAGE_SIZE          "clip.vision.image_size"\n', "")
    elsewhere = FileChange.from_texts(
        "tools/mtmd/keys.h", "", '#define KEY_IMAGE_SIZE "clip.vision.image_size"\n'
    )
    assert _key_drafts(moved, others=[elsewhere]) == []
    realigned = old.replace('KEY_IMAGE_SIZE          "', 'KEY_IMAGE_SIZE              "')
    assert _key_drafts(realigned) == []


PREDICATE = """bool clip_is_dense(const clip_ctx * ctx) {
    switch (ctx->proj_type()) {
        case PROJECTOR_TYPE_GEMMA4A:
        case PROJECTOR_TYPE_GEMMA4V:
            return false;
        default:
            return true;
    }
}
"""


def test_a_case_dropped_from_a_switch_that_only_answers_is_the_default_answer_now():
    """b9452 -> b10587 took `case LLM_ARCH_LFM2:` out of `llm_arch_supports_sm_tensor`'s `return false` list:
    the value is still known and gets the default's `return true` (upstream gave it the capability), not an
    unrecognised value. Ollama's compat code produces the value but never calls the predicate: upstream's
    own handling changed, worth knowing; where Ollama's code calls it and reads the answer, worth a look."""
    dropped = PREDICATE.replace("        case PROJECTOR_TYPE_GEMMA4A:\n", "")
    (draft,) = _gemma4_value_drafts(PREDICATE, dropped)
    assert (draft.severity, draft.title) == (
        "info",
        "`clip_is_dense` answers `PROJECTOR_TYPE_GEMMA4A` by its default now",
    )
    assert "`return true;` where its case gave `return false;`" in draft.detail
    assert "no longer recognised" not in draft.detail and "does not call it" in draft.detail
    compat = _compat("llama/compat/llama-ollama-compat.cpp", "llama-ollama-compat-gemma4-clip.cpp")
    path, text = next(iter(compat.items()))
    calling = {path: text + "\nstatic bool dense(const clip_ctx * c) { return clip_is_dense(c); }\n"}
    (draft,) = _gemma4_value_drafts(PREDICATE, dropped, calling)
    assert draft.severity == "medium" and "Check that Ollama's use" in draft.detail


def test_a_case_dropped_whose_branch_the_default_runs_too_is_no_finding():
    same = PREDICATE.replace("            return true;", "            return false;")
    assert _gemma4_value_drafts(same, same.replace("        case PROJECTOR_TYPE_GEMMA4A:\n", "")) == []
    # a default that does something else than answer keeps the case's loss high
    failing = PREDICATE.replace(
        "            return true;", '            throw std::runtime_error("unknown");'
    )
    (draft,) = _gemma4_value_drafts(failing, failing.replace("        case PROJECTOR_TYPE_GEMMA4A:\n", ""))
    assert draft.severity == "high" and "aborts" in draft.detail


def test_a_pin_without_patches_reads_its_compat_sources_from_its_configured_directory():
    moved = {f"vendor/llama-patches/{p.rsplit('/', 1)[-1]}": t for p, t in COMPAT.items()}
    sources = compat_source_texts(moved, list(moved), [], "vendor/llama-patches")
    assert {path for path, _, _ in sources} == set(moved)
    assert compat_source_texts(moved, list(moved), [], "llama/compat") == []  # no directory is assumed
