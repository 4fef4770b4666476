"""GGML API declarations Ollama calls: removal, signature change, deprecation; parameter names do not count."""

from bot.model import LocalRef
from bot.review.source import code_text
from bot.review.symbols import declarations, ollama_uses, symbol_drafts

HEADER = """#pragma once
// the device API
GGML_API size_t ggml_backend_dev_count(void);
GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);
GGML_API void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total);
GGML_API enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device);
GGML_API int64_t ggml_nelements(const struct ggml_tensor * tensor);
static inline int ggml_up(int n, int m) { return (n + m - 1) & ~(m - 1); }
"""
GO = "n := C.ggml_backend_dev_count()\nC.ggml_backend_dev_memory(dev, &free, &total)\nC.ggml_backend_dev_get(i)\n"


def _decls(text):
    return declarations(code_text(text, "ggml/include/ggml-backend.h"), "ggml/include/ggml-backend.h")


def _drafts(new_text):
    return symbol_drafts(
        _decls(HEADER), _decls(new_text), ollama_uses({"discover/gpu.go": GO}), lambda p, n: 9
    )


def test_declarations_normalise_away_parameter_names():
    decls = _decls(HEADER)
    assert (
        decls["ggml_backend_dev_memory"].signature
        == "void ggml_backend_dev_memory(ggml_backend_dev_t, size_t *, size_t *)"
    )
    assert (
        decls["ggml_backend_dev_type"].signature
        == "enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t)"
    )
    assert decls["ggml_nelements"].signature == "int64_t ggml_nelements(const struct ggml_tensor *)"
    assert "ggml_up" not in decls and decls["ggml_backend_dev_get"].line == 4


def test_ollama_uses_ggml_names_in_its_go_c_and_cpp_code_in_any_folder():
    uses = ollama_uses(
        {
            "internal/probe/gpu.go": GO,
            "engine/bridge.cpp": "int64_t n = ggml_nelements(t);\n",
            "docs/ggml.md": "ggml_backend_load() loads a backend\n",
        }
    )
    assert uses["ggml_backend_dev_get"] == [LocalRef("internal/probe/gpu.go", 3)]
    assert uses["ggml_nelements"] == [LocalRef("engine/bridge.cpp", 1)] and "ggml_backend_load" not in uses


def test_removed_or_changed_declaration_ollama_uses_is_high():
    removed = HEADER.replace("GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);\n", "")
    (draft,) = _drafts(removed)
    assert (draft.area, draft.severity, draft.title) == (
        "discovery",
        "high",
        "`ggml_backend_dev_get` was removed upstream",
    )
    assert draft.line == 9 and draft.local_refs == (LocalRef("discover/gpu.go", 3),)
    changed = HEADER.replace("size_t * free, size_t * total", "size_t * free, size_t * total, bool host")
    (draft,) = _drafts(changed)
    assert draft.title == "Signature of `ggml_backend_dev_memory` changed" and "bool)" in draft.detail


def test_deprecation_is_medium():
    deprecated = HEADER.replace(
        "GGML_API size_t ggml_backend_dev_count(void);",
        'GGML_DEPRECATED(GGML_API size_t ggml_backend_dev_count(void), "use ggml_backend_reg");',
    )
    (draft,) = _drafts(deprecated)
    assert (draft.severity, draft.title) == ("medium", "`ggml_backend_dev_count` is now deprecated")


def test_no_finding_for_renamed_parameters_comments_or_unused_functions():
    renamed = HEADER.replace(
        "ggml_backend_dev_t device, size_t * free", "ggml_backend_dev_t dev, size_t * mem_free"
    )
    assert _drafts(renamed) == []
    assert _drafts(HEADER.replace("size_t index);", "size_t index); // by position")) == []
    assert (
        _drafts(HEADER.replace("GGML_API int64_t ggml_nelements(const struct ggml_tensor * tensor);\n", ""))
        == []
    )
