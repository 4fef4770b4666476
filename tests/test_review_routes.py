"""HTTP routes Ollama calls that llama-server stops serving, end to end: a real upstream history, the Ollama
tree of the wire tests (it requests GET /health and POST /completion), the whole review."""

import pytest

from bot.model import LocalRef
from tests.test_review_e2e import _history, _review
from tests.test_review_wire import OLLAMA, SERVER_CPP, UPSTREAM

COMPLETION = '    ctx_http.post("/completion", ex_wrapper(routes.post_completions));\n'
URL_LINE = next(
    n for n, line in enumerate(OLLAMA["runner/server.go"].split("\n"), 1) if "/completion" in line
)


def _routes(tmp_path, server_cpp: str, extra: dict[str, str] | None = None, base_extra=None):
    base = {**UPSTREAM, **(base_extra or {})}
    b = _history(
        tmp_path,
        [("server: routes (#7)", {"tools/server/server.cpp": server_cpp, **(extra or {})})],
        base=base,
    )
    findings, _ = _review(b, ollama={path: text.encode() for path, text in OLLAMA.items()}, patches=())
    return [f for f in findings if f.check == "server.routes"]


def test_a_route_ollama_calls_that_nothing_registers_any_more_is_high(tmp_path):
    (item,) = _routes(tmp_path, SERVER_CPP.replace(COMPLETION, ""))
    assert (item.severity, item.title) == (
        "high",
        "llama-server no longer serves `POST /completion`, which Ollama calls",
    )
    assert LocalRef("runner/server.go", URL_LINE) in item.local_refs  # where Ollama spells the path
    assert "404" in item.detail and "`tools/server/server.cpp:5`" in item.detail


def test_a_route_whose_handler_serves_another_path_now_is_told_as_renamed(tmp_path):
    (item,) = _routes(tmp_path, SERVER_CPP.replace('"/completion"', '"/v1/completion"'))
    assert (
        item.title
        == "llama-server serves `POST /completion` as `POST /v1/completion` now; Ollama calls `POST /completion`"
    )
    assert "`ex_wrapper(routes.post_completions)`" in item.detail


@pytest.mark.parametrize(
    ("server_cpp", "base_extra"),
    [
        (SERVER_CPP.replace('    ctx_http.get ("/metrics",    ex_wrapper(routes.get_metrics));\n', ""), None),
        (
            SERVER_CPP.replace(COMPLETION, ""),
            {"tools/server/server-legacy.cpp": "void legacy(server & s) {\n" + COMPLETION + "}\n"},
        ),
        (
            SERVER_CPP.replace(
                COMPLETION, '    ctx_http.post("/completion",  ex_wrapper(routes.post_completions));\n'
            ),
            None,
        ),
    ],
    ids=["a-route-ollama-never-calls", "still-registered-by-an-unchanged-file", "re-spaced"],
)
def test_routes_ollama_still_reaches_are_quiet(tmp_path, server_cpp, base_extra):
    assert _routes(tmp_path, server_cpp, base_extra=base_extra) == []
