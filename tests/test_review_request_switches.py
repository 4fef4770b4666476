"""A constant a request's handling passed, now read from the request with another default, where Ollama
leaves the key out (`server.request-switches`)."""

from __future__ import annotations

import pytest

from bot.review.changes import FileChange
from bot.review.checks.server.request_switches import switch_drafts
from bot.review.consumers.contracts import Contracts
from bot.review.servercode import read_server
from bot.review.source import code_text
from tests.test_review_wire import OLLAMA, UPSTREAM

CONTEXT = "tools/server/server-context.cpp"
ANCHOR = '    const auto & prompt = data.at("prompt");\n'
CONSTANT = "    auto tokens = tokenize_prompt(vocab, prompt, true);\n"
OLD = UPSTREAM[CONTEXT].replace(ANCHOR, ANCHOR + CONSTANT)
READ = '    const bool special = json_value(data, "parse_special", false);\n'
SWITCHED = READ + "    auto tokens = tokenize_prompt(vocab, prompt, special);\n"


@pytest.fixture(scope="module")
def contracts():
    return Contracts({path: code_text(text, path) for path, text in OLLAMA.items()})


def _drafts(contracts, new_lines: str):
    new = OLD.replace(CONSTANT, new_lines)
    texts = {p: code_text(t, p) for p, t in {**UPSTREAM, CONTEXT: new}.items()}
    change = FileChange.from_texts(CONTEXT, code_text(OLD, CONTEXT), texts[CONTEXT])
    ollama = contracts.ollama
    return switch_drafts([change], read_server(texts), contracts.endpoints, contracts.request_fields, ollama)


def test_a_constant_now_read_from_a_key_ollama_never_sends_with_another_default_is_medium(contracts):
    (draft,) = _drafts(contracts, SWITCHED)
    assert (draft.severity, draft.title) == (
        "medium",
        (
            "llama-server now takes `parse_special` from the request where it passed `true`; Ollama leaves it "
            "out of `POST /completion`"
        ),
    )
    assert "in how llama-server handles their `prompt`" in draft.detail
    lines = OLLAMA["runner/server.go"].split("\n")
    cited = [lines[r.line - 1].strip() for r in draft.local_refs]
    assert cited[0] == 'Prompt      string `json:"prompt"`' and "Prompt:      prompt," in cited


@pytest.mark.parametrize(
    "new_lines",
    [
        SWITCHED.replace('"parse_special", false', '"parse_special", true'),  # the old constant by default
        SWITCHED.replace('"parse_special"', '"seed"'),  # a key Ollama always sends
        READ + "    auto tokens = tokenize_prompt(vocab, prompt, true);\n",  # read, but the call is unchanged
    ],
)
def test_a_default_equal_to_the_constant_or_a_key_ollama_sends_is_quiet(contracts, new_lines):
    assert _drafts(contracts, new_lines) == []
