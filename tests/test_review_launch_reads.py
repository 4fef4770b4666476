"""Environment variables Ollama sets whose value the reading function now uses otherwise, and flags whose
handler reads the value Ollama passes in another unit."""

from __future__ import annotations

from bot.model import LocalRef
from bot.review import flags
from bot.review.argunits import unit_drafts
from bot.review.changes import FileChange
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.envnames import reread_drafts, reread_names

MARKER = """const char * get_marker() {
    const char * env = getenv("LLAMA_MARKER");
    if (env && env[0] != '\\0') {
        return env;
    }
    return "<__marker__>";
}

int other() {
    return 1;
}
"""


def _reread(new: str):
    change = FileChange.from_texts("tools/server/common.cpp", MARKER, new)
    found = reread_names([change], lambda name: True)
    return reread_drafts(found, {"LLAMA_MARKER": ((LocalRef("llm/server.go", 9),), True)})


def test_a_variable_ollama_sets_whose_value_the_reading_function_now_uses_otherwise_is_medium():
    (draft,) = _reread(MARKER.replace("env && env[0] != '\\0'", 'env && strncmp(env, "<__", 3) == 0'))
    assert (draft.severity, draft.local_refs) == ("medium", (LocalRef("llm/server.go", 9),))
    assert "LLAMA_MARKER" in draft.title and "strncmp" in draft.detail
    # the same test respelled with a renamed local, a change elsewhere in the file, or in the function away
    # from the value: nothing
    refactored = MARKER.replace("const char * env = getenv", "const char * pinned = std::getenv")
    refactored = refactored.replace("env && env[0] != '\\0'", "pinned != nullptr && *pinned != '\\0'")
    assert _reread(refactored.replace("return env;", "return pinned;")) == []
    assert _reread(MARKER.replace("return 1;", "return 2;")) == []
    assert _reread(MARKER.replace('return "<__marker__>";', 'return "<__other__>";')) == []


def test_a_block_the_value_decides_that_now_does_more_is_information_and_one_alike_is_quiet():
    """`if (env) { ... }` gains a statement that does not use the value: what the value decides changed (often
    a refactor, so information only)."""
    logged = MARKER.replace("        return env;\n", '        log_info("marker set");\n        return env;\n')
    (draft,) = _reread(logged)
    assert draft.severity == "info" and draft.title.startswith(
        "What environment variable LLAMA_MARKER decides"
    )
    assert '`log_info("marker set");`' in draft.detail and draft.line == 4
    assert _reread(MARKER.replace("        return env;\n", "        return  env ;\n")) == []


MARGIN = """void add_options() {
    add_opt(common_arg(
        {"-fitt", "--fit-target"}, "MiB0,MiB1",
        "target margin per device",
        [](common_params & params, const std::string & value) {
            params.margin = std::stoull(value) * 1024*1024;
        }
    ).set_env("LLAMA_ARG_FIT_TARGET"));
}
"""


def test_a_flag_ollama_sets_by_its_variable_whose_handler_scales_otherwise_is_medium():
    env = LaunchSetting(
        "llama-server", "env", "LLAMA_ARG_FIT_TARGET", ("integer",), False, (LocalRef("llm/s.go", 7),)
    )

    def drafts(new: str, launches=(env,), old: str = MARGIN):
        return unit_drafts(flags.flag_table(old), flags.flag_table(new), launches, "common/arg.cpp")

    (draft,) = drafts(MARGIN.replace(" * 1024*1024", ""))
    assert (draft.severity, draft.local_refs) == ("medium", (LocalRef("llm/s.go", 7),))
    assert "--fit-target" in draft.title and "before `*1024*1024`, now no arithmetic" in draft.detail
    assert drafts(MARGIN.replace("std::stoull(value)", "std::stoull(value, nullptr, 10)")) == []
    assert drafts(MARGIN.replace(" * 1024*1024", ""), ()) == []  # not passed
    # arithmetic on something else than the value parsed (a size it prints): nothing
    printing = MARGIN.replace("params.margin = std::stoull(value) * 1024*1024;", "show(total / 1024 / 1024);")
    assert drafts(printing.replace(" / 1024 / 1024", ""), old=printing) == []


SWITCH = """void init_device(device * dev) {
    if (getenv("LLAMA_SWITCH") != NULL) {
        dev->enabled = false;
    }
}
"""


def _switch(new: str, values: tuple[str, ...]):
    change = FileChange.from_texts("ggml/src/device.cpp", SWITCH, new)
    found = reread_names([change], lambda name: True)
    settings = {"LLAMA_SWITCH": ((LocalRef("discover/runner.go", 5),), False)}
    return reread_drafts(found, settings, {"LLAMA_SWITCH": values})


def test_a_set_or_unset_variable_now_compared_with_the_constants_ollama_sets_is_information():
    """Ollama sets `1`; the new code takes `1` (and others): its value still works. A value the new code does
    not compare with, one that is no constant, or a comparison that rejects it stays medium."""
    compared = SWITCH.replace(
        'if (getenv("LLAMA_SWITCH") != NULL) {',
        'const char * v = getenv("LLAMA_SWITCH");\n    if (v != NULL && (strcmp(v, "1") == 0 || !strcmp(v, "on"))) {',
    )
    (draft,) = _switch(compared, ('"1"',))
    assert draft.severity == "info" and "LLAMA_SWITCH" in draft.title
    assert [d.severity for d in _switch(compared, ('"1"', '"on"'))] == ["info"]
    assert [d.severity for d in _switch(compared, ('"yes"',))] == ["medium"]
    assert [d.severity for d in _switch(compared, ("integer",))] == ["medium"]
    assert [d.severity for d in _switch(compared, ('"1',))] == ["medium"]  # a malformed constant is none
    rejecting = compared.replace('strcmp(v, "1") == 0', 'strcmp(v, "1") != 0')
    assert [d.severity for d in _switch(rejecting, ('"1"',))] == ["medium"]
