"""Ollama's compat C/C++ code against the upstream internals it uses: removed, renamed, re-kinded."""

from bot.model import LocalRef
from bot.patchfile import parse
from bot.review.changes import FileChange
from bot.review.compat import compat_drafts, compat_uses, declarations
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
COMPAT = {"llama/compat/hooks.cpp": code_text(
    "// Ollama hooks\nuint32_t ctx_of(const llama_cparams & p) { return p.n_ctx + p.n_batch; }\n"
    "bool pooled(int t) { return t == LLAMA_POOLING_MEAN && LLAMA_MAX_SEQ > 1 && n_local; }\n",
    "llama/compat/hooks.cpp")}


def _none(name):
    return set()


def _drafts(new_text, uses=None, elsewhere=_none):
    change = FileChange.from_texts("src/llama-cparams.h", CONTEXT_H, new_text)
    return compat_drafts(uses or compat_uses(COMPAT, []), change, elsewhere)


def test_declarations_know_their_scope_and_skip_function_bodies():
    found = {(name, kind) for _, kind, name in declarations(CONTEXT_H.split("\n"))}
    assert {("LLAMA_MAX_SEQ", "macro"), ("LLAMA_POOLING_MEAN", "enum value"), ("llama_cparams", "type"),
            ("n_ctx", "field"), ("embeddings", "field"), ("rope_freq_base", "function"),
            ("helper", "function")} <= found
    assert not any(name == "n_local" for name, _ in found)


def test_compat_uses_name_the_lines_of_compat_sources_and_patch_added_files():
    patch = (b"diff --git a/src/ollama-added.cpp b/src/ollama-added.cpp\nnew file mode 100644\n"
             b"--- /dev/null\n+++ b/src/ollama-added.cpp\n@@ -0,0 +1,2 @@\n"
             b"+#include <x.h>\n+int use() { return llama_special_field; }\n")
    uses = compat_uses(COMPAT, [("llama/compat/0002-add.patch", parse(patch))])
    assert uses["n_ctx"] == [LocalRef("llama/compat/hooks.cpp", 2)]
    assert "Ollama" not in uses and "hooks" not in uses  # comments are not uses
    (ref,) = uses["llama_special_field"]
    assert ref.path == "llama/compat/0002-add.patch" and b"llama_special_field" in patch.splitlines()[ref.line - 1]


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
