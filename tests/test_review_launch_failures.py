"""A setting Ollama starts llama-server with that the server now refuses where it went on before
(`server.launch-failures`)."""

from __future__ import annotations

import pytest

from bot.model import LocalRef
from bot.review.changes import FileChange
from bot.review.checks.server.launch_failures import refusal_drafts, refusals
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.flags import flag_table

TABLE = """void add_args() {
    add_opt(common_arg(
        {"--context-shift"},
        "enable context shift",
        [](common_params & params) {
            params.ctx_shift = true;
        }
    ));
}
"""
OLD = """bool server_context::load_model(const common_params & params) {
    if (mctx != nullptr) {
        if (params_base.ctx_shift) {
            params_base.ctx_shift = false;
            SRV_WRN("%s\\n", "ctx_shift is not supported by multimodal, it will be disabled");
        }
    }
    return true;
}
"""
FAILS = OLD.replace(
    '            params_base.ctx_shift = false;\n            SRV_WRN("%s\\n", "ctx_shift is not supported by multimodal, it will be disabled");\n',
    '            SRV_ERR("%s\\n", "--context-shift is not supported by multimodal models");\n            return false;\n',
)
PASSED = LaunchSetting("llama-server", "flag", "--context-shift", (), False, (LocalRef("llm/server.go", 12),))


def _drafts(new: str, settings=(PASSED,)):
    found = list(refusals(FileChange.from_texts("tools/server/server-context.cpp", OLD, new)))
    return refusal_drafts(found, flag_table(TABLE), settings)


def test_a_warning_on_a_flag_ollama_passes_turned_into_a_failure_is_high():
    (draft,) = _drafts(FAILS)
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server now fails where `params_base.ctx_shift` holds, which Ollama's `--context-shift` sets",
    )
    assert (draft.path, draft.line) == ("tools/server/server-context.cpp", 5)
    assert "`--context-shift is not supported by multimodal models`" in draft.detail
    assert draft.local_refs == (LocalRef("llm/server.go", 12),)


@pytest.mark.parametrize(
    ("new", "settings"),
    [
        (FAILS, ()),  # Ollama never passes the flag
        (
            FAILS.replace('SRV_ERR("%s\\n", "--context-shift is not supported by multimodal models");\n', ""),
            (PASSED,),
        ),  # no error said: control flow
        (OLD.replace("disabled", "turned off"), (PASSED,)),  # still a warning
    ],
    ids=["not-passed", "no-error", "still-warns"],
)
def test_a_flag_ollama_never_passes_or_a_block_that_does_not_fail_is_quiet(new, settings):
    assert _drafts(new, settings) == []


def test_a_condition_on_values_ollama_passes_is_not_judged():
    """`-b` and `-ub` set their members to the values given: Ollama's may not meet the condition."""
    table = TABLE.replace(
        "    ));\n}\n",
        "    ));\n"
        '    add_opt(common_arg({"-b"}, "N", "batch", [](common_params & params, int value) {\n'
        "        params.n_batch = value;\n"
        "    }));\n"
        "}\n",
    )
    new = FAILS.replace(
        "if (params_base.ctx_shift) {", "if (params_base.ctx_shift && params_base.n_batch > 512) {"
    )
    old = OLD.replace(
        "if (params_base.ctx_shift) {", "if (params_base.ctx_shift && params_base.n_batch > 512) {"
    )
    found = list(refusals(FileChange.from_texts("tools/server/server-context.cpp", old, new)))
    batch = LaunchSetting("llama-server", "flag", "-b", ("integer",), True, (LocalRef("llm/server.go", 13),))
    assert found and refusal_drafts(found, flag_table(table), (PASSED, batch)) == []
    assert (
        refusal_drafts(found, flag_table(table), (PASSED,)) != []
    )  # `-b` not passed: only the switch counts


BOOL_TABLE = TABLE.replace(
    '{"--context-shift"},', '{"--context-shift"},\n        {"--no-context-shift"},'
).replace(
    "[](common_params & params) {\n            params.ctx_shift = true;",
    "[](common_params & params, bool value) {\n            params.ctx_shift = value;",
)


@pytest.mark.parametrize(("passed", "told"), [("--context-shift", True), ("--no-context-shift", False)])
def test_an_on_off_flag_counts_where_ollama_switches_it_on(passed, told):
    found = list(refusals(FileChange.from_texts("tools/server/server-context.cpp", OLD, FAILS)))
    setting = LaunchSetting("llama-server", "flag", passed, (), False, (LocalRef("llm/server.go", 12),))
    assert bool(refusal_drafts(found, flag_table(BOOL_TABLE), (setting,))) is told
