"""A field Ollama sends that llama-server now reads only when the request sets a key Ollama never sends
(`server.request-gates`), on the shape of llama.cpp's chat parameter parsing."""

from __future__ import annotations

import pytest

from bot.review.changes import FileChange
from bot.review.checks.server.request_gates import _HandlerArguments, endpoint_gates, new_gates
from bot.review.servercode import read_server
from bot.review.source import code_text

OLD = """json params_parse(const json & body) {
    json out;
    auto wrapper = json_value(body, "json_schema", json::object());
    out["schema"] = json_value(wrapper, "schema", json::object());
    out["n_probs"] = json_value(body, "n_probs", 0);
    return out;
}
"""
SENT = {"json_schema", "schema", "n_probs", "stream"}


def _gates(new: str, old: str = OLD):
    return new_gates(FileChange.from_texts("tools/server/server-common.cpp", old, new), SENT.__contains__)


def _gated(condition: str) -> str:
    return OLD.replace(
        '    out["schema"] = json_value(wrapper, "schema", json::object());\n',
        f"    if ({condition}) {{\n"
        '        out["schema"] = json_value(wrapper, "schema", json::object());\n'
        "    }\n",
    )


@pytest.mark.parametrize(
    "condition",
    ['json_value(wrapper, "strict", false)', 'wrapper.contains("strict")', 'wrapper.value("strict", false)'],
)
def test_a_reading_of_a_sent_field_put_under_a_key_ollama_never_sends_is_found(condition):
    (gate,) = _gates(_gated(condition))
    assert (gate.key, gate.field, gate.line, gate.read_at) == ("strict", "schema", 4, 5)


@pytest.mark.parametrize(
    "condition",
    [
        'json_value(wrapper, "stream", false)',  # Ollama sends the key
        '!wrapper.contains("strict")',  # taken when the request leaves the key out, as Ollama does
        'json_value(wrapper, "strict", true)',  # on by default
        "wrapper.is_object()",  # no key at all
    ],
)
def test_a_condition_ollamas_requests_meet_is_quiet(condition):
    assert _gates(_gated(condition)) == []


def test_a_field_the_old_function_never_read_is_new_code_not_a_gate():
    old = OLD.replace('    out["schema"] = json_value(wrapper, "schema", json::object());\n', "")
    assert _gates(_gated('json_value(wrapper, "strict", false)'), old) == []


def test_only_the_block_the_condition_opens_is_read():
    new = OLD.replace(
        '    out["n_probs"]',
        '    if (json_value(body, "verbose", false)) {\n        out["v"] = true;\n    }\n    out["n_probs"]',
    )
    assert _gates(new) == []


# ---- a condition on what the endpoint's handler passes --------------------------------------------------------

ROUTES = """int main(int argc, char ** argv) {
    ctx_http.post("/embeddings", ex_wrapper(routes.post_embeddings));
    ctx_http.post("/v1/embeddings", ex_wrapper(routes.post_embeddings_oai));
    return 0;
}
"""
HANDLERS = """void server_routes::init_routes() {
    this->post_embeddings = [this](const server_http_req & req) {
        return handle_embeddings_impl(req, TASK_RESPONSE_TYPE_NONE);
    };
    this->post_embeddings_oai = [this](const server_http_req & req) {
        return handle_embeddings_impl(req, TASK_RESPONSE_TYPE_OAI_EMBD);
    };
}

std::unique_ptr<server_res_generator> server_routes::handle_embeddings_impl(
        const server_http_req & req, task_response_type res_type) {
    const json body = json::parse(req.body);
    int embd_normalize = 2;
    if (body.count("embd_normalize") != 0) {
        embd_normalize = body.at("embd_normalize");
    }
    return res;
}
"""
CONTEXT = "tools/server/server-context.cpp"


def _endpoint_gates(condition: str, sent_to: str, handlers: str = HANDLERS):
    new = handlers.replace('body.count("embd_normalize") != 0', condition)
    texts = {"tools/server/server.cpp": ROUTES, CONTEXT: new}
    passing = _HandlerArguments(lambda: read_server({p: code_text(t, p) for p, t in texts.items()}))
    change = FileChange.from_texts(CONTEXT, handlers, new)
    return endpoint_gates(change, lambda name: (sent_to,) if name == "embd_normalize" else (), passing)


def test_a_reading_put_under_a_parameter_the_endpoints_handler_passes_otherwise_is_found():
    only_native = 'res_type != TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize") != 0'
    (gate,) = _endpoint_gates(only_native, "POST /v1/embeddings")
    assert (gate.field, gate.condition, gate.passed) == (
        "embd_normalize",
        "res_type != TASK_RESPONSE_TYPE_OAI_EMBD",
        "TASK_RESPONSE_TYPE_OAI_EMBD",
    )
    line = HANDLERS.split("\n").index('    if (body.count("embd_normalize") != 0) {') + 1
    assert (gate.line, gate.read_at) == (line, line)


@pytest.mark.parametrize(
    ("condition", "sent_to"),
    [
        # the handler of the endpoint Ollama calls passes a value the test holds for
        ('res_type != TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize") != 0', "POST /embeddings"),
        (
            'res_type == TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize") != 0',
            "POST /v1/embeddings",
        ),
        # a local, not a parameter
        (
            'embd_normalize != TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize") != 0',
            "POST /v1/embeddings",
        ),
    ],
)
def test_a_parameter_test_the_endpoints_handler_passes_is_quiet(condition, sent_to):
    assert _endpoint_gates(condition, sent_to) == []


def test_a_value_the_handler_computes_is_not_judged():
    computed = HANDLERS.replace(
        "handle_embeddings_impl(req, TASK_RESPONSE_TYPE_OAI_EMBD)",
        "handle_embeddings_impl(req, type_of(req))",
    )
    only_native = 'res_type != TASK_RESPONSE_TYPE_OAI_EMBD && body.count("embd_normalize") != 0'
    assert _endpoint_gates(only_native, "POST /v1/embeddings", computed) == []
