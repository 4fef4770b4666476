"""An error that now ends CMake's configure step for every build Ollama makes (`build.configure-errors`): found
through the branches Ollama's settings surely take, and only those."""

from __future__ import annotations

import pytest

from tests.test_review_e2e import CMAKE, _history, _review

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
