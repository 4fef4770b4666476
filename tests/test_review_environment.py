"""The code reading an environment variable Ollama sets for llama-server (`server.environment`): the lines that
read it and the blocks its value governs, compared at both refs; what else the function does is not that
code."""

from __future__ import annotations

import pytest

from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

STARTING = b"""package llm

import (
	"os"
	"os/exec"
)

func startWith(backend string) error {
	cmd := exec.Command("llama-server", "--port", "8089")
	cmd.Env = append(os.Environ(), "GGML_BACKEND_PATH="+backend)
	return cmd.Start()
}
"""
LOADING = """void ggml_backend_load_all_from_path(const char * dir_path) {
    ggml_backend_load_best("cuda", dir_path);
    ggml_backend_load_best("cpu", dir_path);
    const char * backend_path = std::getenv("GGML_BACKEND_PATH");
    if (backend_path) {
        ggml_backend_load(backend_path);
    }
}
"""
PATH = "ggml/src/ggml-backend-reg.cpp"


def _items(tmp_path, loading: str):
    b = _history(tmp_path, [("backend: loading (#1)", {PATH: loading})], base={**UPSTREAM, PATH: LOADING})
    findings, _ = _review(b, ollama={**OLLAMA, "llm/backend.go": STARTING})
    return [f for f in findings if f.check == "server.environment"]


def test_a_changed_block_its_value_governs_is_medium_at_ollamas_setting(tmp_path):
    exclusive = LOADING.replace(
        "        ggml_backend_load(backend_path);\n",
        "        ggml_backend_load(backend_path);\n        return;\n",
    )
    (item,) = _items(tmp_path, exclusive)
    assert (item.severity, item.upstream_path, item.upstream_line) == ("medium", PATH, 7)
    assert "`GGML_BACKEND_PATH`" in item.title and "`ggml_backend_load_all_from_path`" in item.title
    assert "now `return;`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [("llm/backend.go", 10)]


@pytest.mark.parametrize(
    "loading",
    [
        LOADING.replace(
            '    ggml_backend_load_best("cpu", dir_path);\n',
            '    ggml_backend_load_best("cpu", dir_path);\n    ggml_backend_load_best("zdnn", dir_path);\n',
        ),  # another search
        LOADING.replace("if (backend_path) {", "if (backend_path)  {"),  # spacing
        LOADING.replace(
            'std::getenv("GGML_BACKEND_PATH")', 'std::getenv("GGML_PLUGIN_PATH")'
        ),  # no longer read
    ],
)
def test_the_rest_of_the_function_or_a_respacing_is_quiet(tmp_path, loading):
    assert _items(tmp_path, loading) == []
