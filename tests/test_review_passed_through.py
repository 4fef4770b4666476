"""A check before serving that answers what Ollama reads from an endpoint, now passed over for that endpoint
(`server.passed-through`), on the shape of llama-server's not-ready middleware."""

from __future__ import annotations

import pytest

from bot.model import LocalRef
from bot.review.changes import FileChange
from bot.review.checks.server.passed_through import bypasses
from bot.review.consumers.contracts.model import OutputPattern

MIDDLEWARE = """bool server_http_context::init(const common_params & params) {
    auto middleware_server_state = [this](const httplib::Request & req, httplib::Response & res) {
        if (!is_ready.load()) {
            if (frontend_paths.count(req.path)) {
                return true;
            }
            res.status = 503;
            res.set_content(safe_json_to_str(json {
                {"error", {{"message", "Loading model"}, {"type", "unavailable_error"}}}
            }), "application/json");
            return false;
        }
        return true;
    };
    return true;
}
"""
FRONTEND = "            if (frontend_paths.count(req.path)) {\n                return true;\n            }\n"
LOADING = OutputPattern(
    "equals", "loading model", ("GET /health response",), LocalRef("llm/s.go", 12), (), ()
)
ENDPOINTS = {"GET /health": (LocalRef("llm/s.go", 5),), "POST /completion": (LocalRef("llm/s.go", 30),)}


def _bypasses(added: str, read=(LOADING,)):
    new = MIDDLEWARE.replace(FRONTEND, FRONTEND + added)
    return bypasses(FileChange.from_texts("tools/server/server-http.cpp", MIDDLEWARE, new), ENDPOINTS, read)


@pytest.mark.parametrize(
    "added",
    [
        '            if (req.path == "/health" || req.path == "/v1/health") {\n                return true;\n            }\n',
        '            if (req.path == "/health") { return true; }\n',
    ],
)
def test_an_endpoint_ollama_reads_a_state_from_let_through_above_that_answer_is_found(added):
    (bypass,) = _bypasses(added)
    assert (bypass.endpoint, bypass.read.value) == ("GET /health", "loading model")
    assert bypass.line == 7 and bypass.answer == bypass.line + added.count("\n")


@pytest.mark.parametrize(
    ("added", "read"),
    [
        # an endpoint Ollama calls, but reads nothing of that answer from it
        (
            '            if (req.path == "/completion") {\n                return true;\n            }\n',
            (LOADING,),
        ),
        # a path Ollama never calls
        (
            '            if (req.path == "/metrics") {\n                return true;\n            }\n',
            (LOADING,),
        ),
        # the block answers, it does not let the request through
        (
            '            if (req.path == "/health") {\n                res.status = 200;\n            }\n',
            (LOADING,),
        ),
        # Ollama reads nothing the answer says
        ('            if (req.path == "/health") {\n                return true;\n            }\n', ()),
    ],
)
def test_a_pass_ollama_does_not_read_the_answer_of_is_quiet(added, read):
    assert _bypasses(added, read) == []
