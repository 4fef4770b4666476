"""llama-server flags Ollama passes (the contract inventory's), against upstream's common/arg.cpp option table at
both refs."""

from bot.model import LocalRef
from bot.review.consumers.contracts import Contracts
from bot.review.flags import flag_drafts, flag_table
from bot.review.source import code_text

ARG = """
    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N",
        string_format("size of the prompt context (default: %d, 0 = loaded from model)", params.n_ctx),
        [](common_params & params, int value) {
            params.n_ctx = value;
        }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"-fa", "--flash-attn"}, "[on|off|auto]",
        "set Flash Attention use ('on', 'off', or 'auto', default: 'auto')",
        [](common_params & params, const std::string & value) {
            params.flash_attn_type = parse(value);
        }
    ));
    add_opt(common_arg(
        {"--mmap"},
        {"--no-mmap"},
        "whether to memory-map model",
        [](common_params & params, bool value) {
            params.use_mmap = value;
        }
    ));
    add_opt(common_arg(
        {"--slots"},
        "expose slots monitoring endpoint",
        [](common_params & params) {
            params.endpoint_slots = true;
        }
    ).set_examples({LLAMA_EXAMPLE_SERVER}));
"""
GO = """package llm

import (
	"os/exec"
	"path/filepath"
	"strconv"
)

func start(dir string, n int) error {
	args := []string{"--ctx-size", strconv.Itoa(n), "--flash-attn", "on", "--no-mmap", "--slots", "--model=x"}
	return exec.Command(serverPath(dir), args...).Start()
}

func serverPath(dir string) string {
	return filepath.Join(dir, "llama-server")
}
"""
ARGS_LINE = GO[: GO.index('"--ctx-size"')].count("\n") + 1
INSTALL = "install(TARGETS llama-server RUNTIME DESTINATION lib/ollama)\n"


def _table(text):
    return flag_table(code_text(text, "common/arg.cpp"))


def _passed_by(files):
    return Contracts({"llama/server/CMakeLists.txt": INSTALL, **files}).passed_flags


def _passed():
    return _passed_by({"llm/server.go": GO})


def _drafts(new_text):
    return flag_drafts(_table(ARG), _table(new_text), _passed(), lambda line: 40, "common/arg.cpp")


def test_flag_table_reads_names_negations_hints_help_and_examples():
    table = _table(ARG)
    assert table["-fa"] is table["--flash-attn"] and table["--flash-attn"].value_hint == "[on|off|auto]"
    assert table["--no-mmap"].names == ("--mmap", "--no-mmap")
    assert "size of the prompt context" in table["--ctx-size"].help and table["--ctx-size"].line == 2
    assert table["--slots"].examples == ("LLAMA_EXAMPLE_SERVER",) and table["--slots"].for_server


def test_ollama_flags_are_those_it_starts_an_installed_program_with_wherever_the_code_lives():
    for path in ("llm/server.go", "internal/runner/backend/start.go"):
        test = path.replace(".go", "_test.go")
        starting_in_test = GO.replace("package llm", "package llm_test").replace('"--slots"', '"--lora"')
        files = {path: GO, test: starting_in_test, "api/types.go": 'package api\n\nvar x = "--threads"\n'}
        passed = _passed_by(files)
        assert passed["--ctx-size"] == (LocalRef(path, ARGS_LINE),) and "--model" in passed
        assert "--lora" not in passed and "--threads" not in passed


def test_removed_flag_ollama_passes_is_high():
    (draft,) = _drafts(ARG.replace('{"--mmap"},\n        {"--no-mmap"},', '{"--mmap"},'))
    assert (draft.area, draft.severity) == ("server", "high")
    assert draft.title == "llama-server flag --no-mmap was removed; Ollama passes it"
    assert draft.line == 40 and draft.removed == ("common/arg.cpp", '"--no-mmap"')
    assert draft.local_refs == (LocalRef("llm/server.go", ARGS_LINE),)


def test_deprecated_or_replaced_flag_is_high():
    deprecated = ARG.replace('"expose slots monitoring endpoint"', '"deprecated: slots are always exposed"')
    (draft,) = _drafts(deprecated)
    assert draft.severity == "high" and "--slots is deprecated or replaced" in draft.title
    replaced = (
        ARG
        + """    add_opt(common_arg(
        {"--ctx"}, "N",
        "context size; replaces --ctx-size",
        [](common_params & params, int value) { params.n_ctx = value; }
    ));
"""
    )
    (draft,) = _drafts(replaced)
    assert "--ctx-size" in draft.title and "`--ctx` takes over its job" in draft.detail


def test_flag_no_longer_offered_to_the_server_is_high():
    (draft,) = _drafts(
        ARG.replace("set_examples({LLAMA_EXAMPLE_SERVER})", "set_examples({LLAMA_EXAMPLE_MAIN})")
    )
    assert draft.title == "llama-server no longer accepts flag --slots; Ollama passes it"


def test_a_changed_value_set_is_medium_a_changed_default_of_a_flag_ollama_passes_is_information():
    (draft,) = _drafts(ARG.replace('"[on|off|auto]"', '"[on|off]"'))
    assert (draft.severity, draft.title) == ("medium", "llama-server flag --flash-attn changed its value set")
    (draft,) = _drafts(ARG.replace("default: 'auto'", "default: 'on'"))
    assert (draft.severity, draft.title) == (
        "info",
        "llama-server flag --flash-attn changed its default or help",
    )


def test_no_finding_for_rewrapped_help_or_flags_ollama_does_not_pass():
    rewrapped = ARG.replace('"whether to memory-map model"', '"whether to memory-map "\n        "model"')
    assert _drafts(rewrapped) == []
    other = ARG.replace('"size of the prompt context', '"size of the context')
    assert (
        flag_drafts(
            _table(ARG),
            _table(other),
            {"--flash-attn": (LocalRef("llm/server.go", 1),)},
            lambda n: n,
            "common/arg.cpp",
        )
        == []
    )
