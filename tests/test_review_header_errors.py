"""An `#error` added to an upstream header Ollama's compat sources include (`compat.header-errors`)."""

from __future__ import annotations

from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

IMPL = '#pragma once\n#include "ggml.h"\n\nvoid llama_log_internal(int level, const char * fmt, ...);\n'
HOOKS = b'#include <cstdio>\n\n#include "llama-impl.h"\n\nggml_backend_dev_t first() { return ggml_backend_dev_get(0); }\n'


def _items(tmp_path, header: str, hooks: bytes = HOOKS):
    base = {**UPSTREAM, "src/llama-impl.h": IMPL}
    b = _history(tmp_path, [("llama: guard internal header (#1)", {"src/llama-impl.h": header})], base=base)
    findings, _ = _review(b, ollama={**OLLAMA, "llama/compat/hooks.cpp": hooks})
    return [f for f in findings if f.check == "compat.header-errors"]


def test_an_error_added_to_a_header_the_compat_sources_include_is_told_with_its_condition(tmp_path):
    guarded = (
        IMPL
        + '\n#if defined(LLAMA_SHARED) && !defined(LLAMA_BUILD)\n#error "llama-impl.h is internal"\n#endif\n'
    )
    (item,) = _items(tmp_path / "guarded", guarded)
    assert item.severity == "medium" and item.title.startswith(
        "`src/llama-impl.h`, which Ollama's compat sources"
    )
    assert "`defined(LLAMA_SHARED) && !defined(LLAMA_BUILD)`" in item.title
    assert [(r.path, r.line) for r in item.local_refs] == [("llama/compat/hooks.cpp", 3)]
    (always,) = _items(tmp_path / "always", IMPL + '#error "do not include"\n')
    assert always.severity == "high" and "where" not in always.title


def test_an_error_in_a_header_the_compat_sources_do_not_include_is_quiet(tmp_path):
    guarded = IMPL + '#error "internal"\n'
    assert (
        _items(tmp_path, guarded, hooks=b"ggml_backend_dev_t first() { return ggml_backend_dev_get(0); }\n")
        == []
    )
