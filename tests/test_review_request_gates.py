"""A field Ollama sends that llama-server now reads only when the request sets a key Ollama never sends
(`server.request-gates`), on the shape of llama.cpp's chat parameter parsing."""

from __future__ import annotations

import pytest

from bot.review.changes import FileChange
from bot.review.checks.server.request_gates import new_gates

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
