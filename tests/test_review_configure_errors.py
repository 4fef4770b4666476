"""An error that now ends CMake's configure step for every build Ollama makes (`build.configure-errors`): found
through the branches Ollama's settings surely take, and only those."""

from __future__ import annotations

import pytest

from tests.test_review_e2e import CMAKE, OLLAMA, UPSTREAM, _history, _review

STOP = 'message(FATAL_ERROR "llama: LLAMA_CURL is required")'


def _errors(tmp_path, added: str):
    b = _history(tmp_path, [("build: require things (#1)", {"CMakeLists.txt": CMAKE + added})])
    findings, _ = _review(b)
    return [f for f in findings if f.check == "build.configure-errors"]


def test_an_error_under_a_condition_ollamas_setting_makes_true_is_high_at_that_setting(tmp_path):
    """Ollama's build sets LLAMA_CURL OFF: `if (NOT LLAMA_CURL)` is taken by every build it makes."""
    (item,) = _errors(tmp_path, f"if (NOT LLAMA_CURL)\n    {STOP}\nendif()\n")
    assert (item.severity, item.area, item.upstream_path, item.upstream_line) == (
        "high",
        "build",
        "CMakeLists.txt",
        7,
    )
    assert "`NOT LLAMA_CURL`" in item.detail and "`llama: LLAMA_CURL is required`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [("llama/server/CMakeLists.txt", 2)]


def test_an_else_after_conditions_all_false_is_taken_too(tmp_path):
    (item,) = _errors(tmp_path, f"if (LLAMA_CURL)\n    set(X 1)\nelse()\n    {STOP}\nendif()\n")
    assert "under `NOT (LLAMA_CURL)`" in item.detail


@pytest.mark.parametrize(
    "added",
    [
        f"if (LLAMA_CURL)\n    {STOP}\nendif()\n",  # a branch Ollama's setting makes false
        f'if (CMAKE_CXX_COMPILER_ID STREQUAL "MSVC")\n    {STOP}\nendif()\n',  # one no setting decides
        f"function(require_curl)\n    {STOP}\nendfunction()\n",  # a function's body, until it is called
        'message(WARNING "llama: LLAMA_CURL is deprecated")\n',  # a warning ends nothing
    ],
)
def test_an_error_no_build_of_ollamas_surely_reaches_is_quiet(tmp_path, added):
    assert _errors(tmp_path, added) == []


PRESETS = """{
  "version": 3,
  "configurePresets": [
    {"name": "base", "hidden": true, "cacheVariables": {"GGML_NATIVE": "OFF"}},
    {"name": "cpu", "inherits": ["base"]},
    {
      "name": "cuda_old_gpus",
      "inherits": ["base"],
      "cacheVariables": {"GGML_CUDA": "ON", "CMAKE_CUDA_ARCHITECTURES": "50-virtual;70"}
    },
    {
      "name": "cuda_new_gpus",
      "inherits": ["base"],
      "cacheVariables": {"GGML_CUDA": "ON", "CMAKE_CUDA_ARCHITECTURES": "75;80"}
    }
  ]
}
"""
CUDA = """find_package(CUDAToolkit)
if (CUDAToolkit_FOUND)
    add_library(ggml-cuda ggml-cuda.cu)
else()
    message(FATAL_ERROR "CUDA Toolkit not found")
endif()
"""
MINIMUM = """
foreach(ARCH IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if (ARCH MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS 61)
        message(FATAL_ERROR "CUDA architecture ${ARCH} is no longer supported")
    endif()
endforeach()
"""


def _preset_errors(tmp_path, cuda: str, presets: str = PRESETS):
    """The errors of a bump of the CUDA backend's CMake file, against an Ollama whose presets alone turn
    backends on."""
    base = {**UPSTREAM, "ggml/src/ggml-cuda/CMakeLists.txt": CUDA}
    b = _history(
        tmp_path, [("cuda: raise the minimum (#1)", {"ggml/src/ggml-cuda/CMakeLists.txt": cuda})], base
    )
    settings = OLLAMA["llama/server/CMakeLists.txt"].replace(b"set(GGML_CUDA ON)\n", b"")
    ollama = {
        **OLLAMA,
        "llama/server/CMakeLists.txt": settings,
        "llama/server/CMakePresets.json": presets.encode(),
    }
    findings, _ = _review(b, ollama=ollama)
    return [f for f in findings if f.check == "build.configure-errors"]


def test_an_error_one_presets_list_reaches_names_that_build_and_its_setting(tmp_path):
    (item,) = _preset_errors(tmp_path, CUDA.replace("    add_library", MINIMUM + "    add_library"))
    assert item.severity == "high" and item.upstream_path == "ggml/src/ggml-cuda/CMakeLists.txt"
    assert "the build of Ollama's preset `cuda_old_gpus` meets" in item.detail
    assert "ARCH = 50-virtual" in item.detail and "cuda_new_gpus" not in item.detail
    line = PRESETS.split("\n").index(next(l for l in PRESETS.split("\n") if "50-virtual" in l)) + 1
    assert (item.local_refs[0].path, item.local_refs[0].line) == ("llama/server/CMakePresets.json", line)


def test_an_error_no_preset_reaches_is_quiet(tmp_path):
    newer_only = PRESETS.replace("50-virtual;70", "70;75")
    assert (
        _preset_errors(tmp_path, CUDA.replace("    add_library", MINIMUM + "    add_library"), newer_only)
        == []
    )
    # a list the build does not give (a loop over what upstream computes) is not judged
    computed = MINIMUM.replace("IN LISTS CMAKE_CUDA_ARCHITECTURES", "IN LISTS GGML_CUDA_ARCHS_FOUND")
    assert (
        _preset_errors(tmp_path / "computed", CUDA.replace("    add_library", computed + "    add_library"))
        == []
    )


def test_a_backend_no_preset_turns_on_is_not_walked(tmp_path):
    cpu_only = PRESETS.replace('"GGML_CUDA": "ON", ', "")
    assert (
        _preset_errors(tmp_path, CUDA.replace("    add_library", MINIMUM + "    add_library"), cpu_only) == []
    )
