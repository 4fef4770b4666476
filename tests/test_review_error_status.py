"""An error llama-server answered with an error status, now answered with a success status, where Ollama
tells a failed request by the status (`server.error-status`)."""

from __future__ import annotations

import pytest

from bot.review.changes import FileChange
from bot.review.checks.server.error_status import status_drafts
from bot.review.consumers.contracts import Contracts
from bot.review.servercode import read_server
from bot.review.source import code_text
from tests.test_review_wire import OLLAMA, SERVER_GO, UPSTREAM

CONTEXT = "tools/server/server-context.cpp"
ERROR_BLOCK = (
    "    if (prompt.is_null()) {\n"
    '        res->error(format_error_response("no prompt", ERROR_TYPE_INVALID_REQUEST));\n'
    "        return res;\n"
    "    }\n"
)
IN_BAND = (
    "    if (prompt.is_null()) {\n"
    "        res->status = 200;\n"
    '        res->data = format_sse(json {{"error", "no prompt"}});\n'
    "        return res;\n"
    "    }\n"
)
ANCHOR = '    const auto & prompt = data.at("prompt");\n'
OLD = UPSTREAM[CONTEXT].replace(ANCHOR, ANCHOR + ERROR_BLOCK)
CHECKED = SERVER_GO.replace(
    "\tdefer resp.Body.Close()\n\tscanner",
    '\tdefer resp.Body.Close()\n\tif resp.StatusCode >= 400 {\n\t\treturn false, fmt.Errorf("status %d", resp.StatusCode)\n\t}\n\tscanner',
)


def _drafts(new_block: str, go: str = CHECKED):
    new = OLD.replace(ERROR_BLOCK, new_block)
    texts = {**UPSTREAM, CONTEXT: new}
    code = read_server({p: code_text(t, p) for p, t in texts.items()})
    ollama = {path: code_text(text, path) for path, text in {**OLLAMA, "runner/server.go": go}.items()}
    change = FileChange.from_texts(CONTEXT, code_text(OLD, CONTEXT), code_text(new, CONTEXT))
    return status_drafts([change], code, Contracts(ollama).endpoints, ollama)


def test_an_error_now_answered_with_a_success_status_is_high_at_ollamas_status_test():
    (draft,) = _drafts(IN_BAND)
    assert (draft.severity, draft.title) == (
        "high",
        (
            "llama-server now answers `200` where `prompt.is_null()` answered an error, in "
            "`server_routes::handle_completions_impl`"
        ),
    )
    assert "`POST /completion`" in draft.detail
    line = CHECKED.split("\n").index("\tif resp.StatusCode >= 400 {") + 1
    assert [(r.path, r.line) for r in draft.local_refs] == [("runner/server.go", line)]


@pytest.mark.parametrize(
    "block",
    [
        ERROR_BLOCK.replace("no prompt", "a prompt is required"),  # still an error, reworded
        ERROR_BLOCK.replace("res->error(", "send_error(res, "),  # moved into a helper: no success said
    ],
)
def test_a_block_that_still_answers_an_error_or_says_no_success_is_quiet(block):
    assert _drafts(block) == []


def test_where_ollama_never_tests_the_status_nothing_is_told():
    assert _drafts(IN_BAND, SERVER_GO) == []
