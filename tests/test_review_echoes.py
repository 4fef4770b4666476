"""Request text a server now prints at a verbosity Ollama starts it with, where Ollama scans the lines."""

from __future__ import annotations

import pytest

from bot.model import LocalRef
from bot.review import echoes
from bot.review.changes import FileChange
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.printwhen import Threshold

HANDLER = """std::unique_ptr<server_res_generator> handle_completions(const json & data) {
    const auto & prompt = data.at("prompt");
    const int n_probs = json_value(data, "n_probs", 0);
    auto res = create_response();
    return res;
}
"""
LEVELS = {"SRV_TRC": 4, "SRV_DBG": 5, "SRV_INF": 3}
MARKER = OutputPattern(
    "substring", "error:", ("llama-server stderr",), LocalRef("llm/status.go", 7), (), ("line",)
)
STARTS = [Threshold(4, "--log-verbosity", (LocalRef("llm/server.go", 12),))]


def _echoes(new: str) -> list[echoes.Echo]:
    change = FileChange.from_texts("tools/server/server-context.cpp", HANDLER, new)
    return echoes.echoes(change, LEVELS.get, lambda line: 1)


def _with(print_line: str) -> str:
    return HANDLER.replace(
        "    auto res = create_response();\n", f"    {print_line}\n    auto res = create_response();\n"
    )


@pytest.mark.parametrize(
    "fmt, indexes",
    [
        ("%s", [0]),
        ("%zu bytes: %.*s\\n", [2]),
        ("%d%% %-12s %*s", [1, 3]),
        ("%" + "d " + "%s", [1]),
        ("no strings: %d %f", []),
    ],
)
def test_the_string_conversions_of_a_format_are_found_by_argument(fmt, indexes):
    assert list(echoes.string_arguments(fmt)) == indexes


def test_a_new_trace_of_a_string_read_from_the_request_is_medium_at_the_verbosity_ollama_passes():
    new = _with(
        "const std::string & text = prompt.get_ref<const std::string &>();\n"
        '    SRV_TRC("prompt: %.*s\\n", 64, text.c_str());'
    )
    (echo,) = _echoes(new)
    assert (echo.call, echo.level, echo.fields) == ("SRV_TRC", 4, ("prompt",))
    (draft,) = echoes.echo_drafts([echo], STARTS, {"prompt"}, [MARKER])
    assert draft.severity == "medium"
    assert (
        draft.title == "llama-server now prints request text (`prompt`) at a verbosity Ollama starts it with"
    )
    assert draft.local_refs == (LocalRef("llm/server.go", 12), LocalRef("llm/status.go", 7))


def test_a_print_ollamas_verbosity_hides_a_number_or_a_field_ollama_never_sends_says_nothing():
    hidden = _echoes(_with('SRV_DBG("prompt: %s\\n", prompt.dump().c_str());'))
    assert [e.level for e in hidden] == [5] and echoes.echo_drafts(hidden, STARTS, {"prompt"}, [MARKER]) == []
    assert _echoes(_with('SRV_TRC("n_probs = %d\\n", n_probs);')) == []  # a number cannot hold a marker
    shown = _echoes(_with('SRV_TRC("prompt: %s\\n", prompt.dump().c_str());'))
    assert echoes.echo_drafts(shown, STARTS, {"messages"}, [MARKER]) == []  # Ollama never sends `prompt`
    assert echoes.echo_drafts(shown, STARTS, {"prompt"}, []) == []  # nothing scans the output
    assert _echoes(_with('LOG_SOMETHING("prompt: %s\\n", prompt.dump().c_str());')) == []  # no known level


def test_a_print_added_inside_a_comment_opened_above_the_hunk_is_no_print():
    """The hunk alone cannot tell the comment; the file's own code can."""
    commented = HANDLER.replace("    auto res", "    /* an old way:\n\n\n\n\n    auto res").replace(
        "    return res;", "    */\n    return res;"
    )
    change = FileChange.from_texts(
        "tools/server/server-context.cpp",
        commented,
        commented.replace("    */\n", '    SRV_TRC("prompt: %s\\n", prompt.dump().c_str());\n    */\n'),
    )
    assert echoes.echoes(change, LEVELS.get, lambda line: 1) == []
