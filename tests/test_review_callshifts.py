"""A call a carried patch makes whose arguments a parameter upstream inserted before them shifts."""

from bot.model import LocalRef
from tests.gitutil import make_patch
from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

GRAPH_H = """#pragma once
struct llm_graph_context {
    ggml_tensor * build_ffn(
            ggml_tensor * cur,
            ggml_tensor * up,
                    int   il,
            ggml_tensor * up_b = nullptr,
            ggml_tensor * up_s = nullptr) const;
    ggml_tensor * build_norm(ggml_tensor * cur, int il) const;
};
"""
MODEL_CPP = """#include "llama-graph.h"
llm_build_model::llm_build_model(const llama_model & model) {
    for (int il = 0; il < n_layer; ++il) {
        cur = build_norm(cur, il);
        cur = build_ffn(cur,
                model.layers[il].ffn_up,
                il);
    }
}
"""
BASE = {**UPSTREAM, "src/llama-graph.h": GRAPH_H, "src/models/model.cpp": MODEL_CPP}
INSERTED = GRAPH_H.replace(
    "            ggml_tensor * up_b = nullptr,\n",
    "            ggml_tensor * up_b = nullptr,\n            ggml_tensor * gate_b = nullptr,\n",
)
PATCH_PATH = "llama/compat/models/001-scale.patch"


def _patch(call_tail: str) -> bytes:
    """The patch: the model's call to build_ffn passes more arguments, ending with `call_tail`."""
    patched = MODEL_CPP.replace("                il);\n", f"                il,\n{call_tail}")
    return make_patch(MODEL_CPP, patched, "src/models/model.cpp")


def _findings(tmp_path, patch: bytes, header: str = INSERTED):
    b = _history(tmp_path, [("graph: gate bias for ffn (#30100)", {"src/llama-graph.h": header})], base=BASE)
    findings, _ = _review(b, ollama={**OLLAMA, PATCH_PATH: patch}, patches=((PATCH_PATH, patch),))
    return [f for f in findings if f.check == "compat.call-arguments"]


def test_an_argument_a_patch_passes_past_an_inserted_parameter_is_high_with_where_it_lands_now(tmp_path):
    patch = _patch("                nullptr,\n                scale);\n")
    (item,) = _findings(tmp_path, patch)
    assert (item.severity, item.upstream_path) == ("high", "src/llama-graph.h")
    assert item.title == "Arguments of Ollama's patch's call to `build_ffn` shift: upstream inserted `gate_b`"
    assert "`scale` now goes to `gate_b` (was `up_s`)" in item.detail
    assert "`llm_graph_context::build_ffn` with 5 arguments" in item.detail
    line = patch.decode().split("\n").index("+                scale);") + 1
    assert LocalRef(PATCH_PATH, line) in item.local_refs


def test_a_call_that_stops_before_the_insertion_or_a_parameter_added_last_is_quiet(tmp_path):
    # the patch's call passes nothing past `up_b`: its arguments land where they did
    assert _findings(tmp_path / "short", _patch("                nullptr);\n")) == []
    # a parameter appended after the last one shifts nothing
    appended = GRAPH_H.replace(
        "up_s = nullptr) const;", "up_s = nullptr,\n            ggml_tensor * gate_b = nullptr) const;"
    )
    assert _findings(tmp_path, _patch("                nullptr,\n                scale);\n"), appended) == []


def test_a_call_only_upstreams_context_holds_is_not_the_patchs(tmp_path):
    """The patch adds a line beside an upstream call that already passes past the insertion: upstream
    rewrites its own calls (and the patch's context then fails to apply)."""
    base_call = MODEL_CPP.replace("                il);\n", "                il, nullptr, up_s);\n")
    patched = base_call.replace(
        "        cur = build_norm(cur, il);\n",
        '        cur = build_norm(cur, il);\n        cb(cur, "norm", il);\n',
    )
    patch = make_patch(base_call, patched, "src/models/model.cpp")
    b = _history(
        tmp_path,
        [("graph: gate bias for ffn (#30100)", {"src/llama-graph.h": INSERTED})],
        base={**BASE, "src/models/model.cpp": base_call},
    )
    findings, _ = _review(b, ollama={**OLLAMA, PATCH_PATH: patch}, patches=((PATCH_PATH, patch),))
    assert [f for f in findings if f.check == "compat.call-arguments"] == []
