"""A name a carried patch spells bare inside an upstream function: its parameter, not another struct's field."""

from bot.model import LocalRef
from tests.gitutil import make_patch
from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

LLAMA_H = "#pragma once\nstruct llama_model_params {\n    bool use_mmap;\n    int n_gpu_layers;\n};\n"
LOADER_H = """#pragma once
#include "llama.h"
struct llama_model_loader {
    bool use_mmap = false;
    llama_model_loader(const char * fname, bool use_mmap);
};
"""
LOADER_CPP = """#include "llama-model-loader.h"
llama_model_loader::llama_model_loader(const char * fname, bool use_mmap) {
    this->use_mmap = use_mmap;
    open(fname);
    read_header();
}
"""
BASE = {
    **UPSTREAM,
    "include/llama.h": LLAMA_H,
    "src/llama-model-loader.h": LOADER_H,
    "src/llama-model-loader.cpp": LOADER_CPP,
}
LOAD_MODE = {
    "include/llama.h": LLAMA_H.replace("bool use_mmap;", "int load_mode;"),
    "src/llama-model-loader.h": LOADER_H.replace("bool use_mmap);", "int load_mode);"),
    "src/llama-model-loader.cpp": LOADER_CPP.replace("bool use_mmap) {", "int load_mode) {").replace(
        "this->use_mmap = use_mmap;", "this->use_mmap = load_mode == 1;"
    ),
}


def _hooked(assignment: str) -> bytes:
    hooked = LOADER_CPP.replace(
        "    open(fname);\n", f"    open(fname);\n    if (ollama_translate(fname)) {assignment}\n"
    )
    return make_patch(LOADER_CPP, hooked, "src/llama-model-loader.cpp")


def _findings(tmp_path, patch: bytes):
    b = _history(tmp_path, [("args: refactor mmap into load-mode (#20834)", LOAD_MODE)], base=BASE)
    patches = (("llama/compat/001-hooks.patch", patch),)
    ollama = {**OLLAMA, "llama/compat/001-hooks.patch": patch}
    findings, _ = _review(b, ollama=ollama, patches=patches)
    return [f for f in findings if "use_mmap" in f.title]


def test_a_parameter_the_patched_function_no_longer_takes_is_named_not_a_header_field(tmp_path):
    patch = _hooked("use_mmap = false;")
    (item,) = _findings(tmp_path, patch)
    assert item.severity == "high"
    assert item.title == (
        "Parameter `use_mmap` of `llama_model_loader::llama_model_loader` is gone upstream; Ollama's patch uses it"
    )
    assert item.upstream_path == "src/llama-model-loader.cpp"
    assert "it takes `load_mode` now" in item.detail
    line = patch.decode().split("\n").index("+    if (ollama_translate(fname)) use_mmap = false;") + 1
    assert LocalRef("llama/compat/001-hooks.patch", line) in item.local_refs
    assert (
        "near hunk 1 of 001-hooks.patch" in item.detail
    )  # the patch-context item of the same commit, merged
    assert [c.subject for c in item.upstream_commits] == ["args: refactor mmap into load-mode (#20834)"]


def test_a_patch_naming_the_member_is_quiet(tmp_path):
    assert _findings(tmp_path, _hooked("this->use_mmap = false;")) == []
