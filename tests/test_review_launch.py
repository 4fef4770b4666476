"""llama-server's launch contracts at both refs (bot/review/launch.py): the named values Ollama passes to its
flags, the environment variables it sets, and the parameter defaults it relies on where it leaves a flag or a
request field out; each on a real upstream history (pygit2) against a small Ollama tree."""

from __future__ import annotations

import pytest

from bot.cache import facts
from bot.model import LocalRef
from bot.review import argvalues, paramdefaults
from tests.fixtures import review_one_commit

WEB = "https://github.com/ggml-org/llama.cpp"

ARG = """#include "common.h"
#include "speculative.h"

static std::string list_builtin_chat_templates() {
    std::vector<const char *> supported;
    int32_t n = llama_chat_builtin_templates(nullptr, 0);
    supported.resize(n);
    llama_chat_builtin_templates(supported.data(), supported.size());
    return join(supported);
}

bool common_arg_utils::is_truthy(const std::string & value) {
    return value == "on" || value == "enabled" || value == "1";
}

bool common_arg_utils::is_autoy(const std::string & value) {
    return value == "auto" || value == "-1";
}

void add_options(common_params & params) {
    add_opt(common_arg({ "-fa", "--flash-attn" }, "[on|off|auto]",
        string_format("set Flash Attention use (default: '%s')", flash_attn_name(params.flash_attn)),
        [](common_params & params, const std::string & value) {
            if (is_truthy(value)) {
                params.flash_attn = 1;
            } else if (is_autoy(value)) {
                params.flash_attn = -1;
            } else {
                throw std::runtime_error("unknown value");
            }
        }).set_env("LLAMA_ARG_FLASH_ATTN"));
    add_opt(common_arg(
        {"-lm", "--load-mode"}, "MODE",
        "model loading mode",
        [](common_params & params, const std::string & value) {
            /**/ if (value == "none") { params.load_mode = 0; }
            else if (value == "dio")  { params.load_mode = 3; }
            else { throw std::invalid_argument("invalid value"); }
        }
    ).set_env("LLAMA_ARG_LOAD_MODE"));
    add_opt(common_arg(
        {"--chat-template"}, "JINJA_TEMPLATE",
        string_format("set chat template; built-in templates:\\n%s", list_builtin_chat_templates().c_str()),
        [](common_params & params, const std::string & value) {
            params.chat_template = value;
        }
    ).set_env("LLAMA_ARG_CHAT_TEMPLATE"));
    add_opt(common_arg(
        {"--spec-type"}, "TYPES",
        "speculative decoding types",
        [](common_params & params, const std::string & value) {
            auto types = common_speculative_types_from_names(string_split(value, ','));
            params.speculative.types = types;
        }
    ).set_env("LLAMA_ARG_SPEC_TYPE"));
    add_opt(common_arg(
        {"--context-shift"},
        {"--no-context-shift"},
        string_format("context shift (default: %s)", params.ctx_shift ? "enabled" : "disabled"),
        [](common_params & params, bool value) {
            params.ctx_shift = value;
        }
    ).set_env("LLAMA_ARG_CONTEXT_SHIFT"));
    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N",
        "context size",
        [](common_params & params, int value) {
            params.n_ctx = value;
        }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"--batch-threads"}, "N",
        "threads for batches",
        [](common_params & params, int value) {
            params.n_threads_batch = value;
        }
    ).set_env("LLAMA_ARG_THREADS_BATCH"));
    add_opt(common_arg(
        {"--sleep-idle-seconds"}, "N",
        "seconds of idleness after which the server unloads the model",
        [](common_params & params, int value) {
            params.sleep_idle_seconds = value;
        }
    ).set_examples({LLAMA_EXAMPLE_SERVER}));
    add_opt(common_arg(
        { "-fitt", "--fit-target" }, "MiB",
        "target margin per device",
        [](common_params & params, const std::string & value) {
            params.fit_target = std::stoull(value);
        }
    ).set_env("LLAMA_ARG_FIT_TARGET"));
}
"""
COMMON_H = """#pragma once
#define LLAMA_DEFAULT_SEED 0xFFFFFFFF

struct common_params_sampling {
    uint32_t seed = LLAMA_DEFAULT_SEED;
    float   temp               = 0.80f;  // <= 0.0 to sample greedily
    float   dry_multiplier     = 0.0f;   // 0.0 = disabled
    int32_t dry_penalty_last_n = -1;     // how many tokens to scan
    float   xtc_probability    = 0.00f;  // 0.0 = disabled
};

struct common_params_speculative {
    std::vector<int> types = { 0 };
};

struct common_params {
    int32_t n_ctx = 4096;
    int32_t n_threads_batch = -1;
    int32_t sleep_idle_seconds = -1; // if >0, unload the model after this many idle seconds
    bool ctx_shift = false; // context shift on infinite text generation
    int32_t flash_attn = -1;
    std::string chat_template = "";
    struct common_params_sampling sampling;
    struct common_params_speculative speculative;
};
"""
SPECULATIVE = """#include "speculative.h"

const std::map<std::string, int> common_speculative_type_from_name_map = {
    {"none",          0},
    {"draft-simple",  1},
    {"draft-mtp",     2},
};

std::vector<int> common_speculative_types_from_names(const std::vector<std::string> & names) {
    std::vector<int> types;
    for (const auto & name : names) {
        auto it = common_speculative_type_from_name_map.find(name);
        if (it == common_speculative_type_from_name_map.end()) {
            throw std::invalid_argument("unknown speculative type: " + name);
        }
        types.push_back(it->second);
    }
    return types;
}
"""
CHAT = """#include "llama-chat.h"

static const std::map<std::string, llm_chat_template> LLM_CHAT_TEMPLATES = {
    { "chatml",   LLM_CHAT_TEMPLATE_CHATML   },
    { "llama2",   LLM_CHAT_TEMPLATE_LLAMA_2  },
};

int32_t llama_chat_builtin_templates(const char ** output, size_t len) {
    auto it = LLM_CHAT_TEMPLATES.begin();
    for (size_t i = 0; i < std::min(len, LLM_CHAT_TEMPLATES.size()); i++) {
        output[i] = it->first.c_str();
        std::advance(it, 1);
    }
    return (int32_t) LLM_CHAT_TEMPLATES.size();
}
"""
BACKEND_REG = """#include "ggml-backend-impl.h"

void ggml_backend_load_all() {
    const char * backend_path = std::getenv("GGML_BACKEND_PATH");
    if (backend_path) {
        ggml_backend_load(backend_path);
    }
}
"""
SCHEMA = """#include "server-schema.h"

void make_schema(const common_params & params_base, task_params & params) {
    add((new field_num("temperature", params.sampling.temp)));
    add((new field_num("dry_multiplier", params.sampling.dry_multiplier)));
    add((new field_num("dry_penalty_last_n", params.sampling.dry_penalty_last_n)));
    add((new field_num("xtc_probability", params.sampling.xtc_probability)));
}
"""
UPSTREAM = {
    "CMakeLists.txt": 'cmake_minimum_required(VERSION 3.14)\nproject("llama.cpp" C CXX)\n',
    "common/arg.cpp": ARG,
    "common/common.h": COMMON_H,
    "common/speculative.cpp": SPECULATIVE,
    "src/llama-chat.cpp": CHAT,
    "ggml/src/ggml-backend-reg.cpp": BACKEND_REG,
    "tools/server/server-schema.cpp": SCHEMA,
}

SERVER_GO = """package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
)

const (
	fitTargetEnv = "LLAMA_ARG_FIT_TARGET"
	draftTypeMTP = "draft-mtp"
)

type Options struct {
	FlashAttention bool
	Auto           bool
	Direct         bool
	Draft          bool
	GoTemplate     bool
	ContextShift   bool
	BatchThreads   int
	Backend        string
}

func serverPath(dir string) string {
	return filepath.Join(dir, "llama-server")
}

func flashAttentionArgs(params []string, opts Options) []string {
	if opts.Auto {
		return append(params, "--flash-attn", "auto")
	}
	return append(params, "--flash-attn", "on")
}

type server struct {
	port int
}

func (s *server) launch(dir string, opts Options) error {
	port, err := start(dir, opts)
	s.port = port
	return err
}

func start(dir string, opts Options) (int, error) {
	port := 8089
	params := []string{"--port", strconv.Itoa(port), "--ctx-size", strconv.Itoa(4096)}
	params = flashAttentionArgs(params, opts)
	if opts.Direct {
		params = append(params, "--load-mode", "dio")
	}
	if opts.Draft {
		params = append(params, "--spec-type", draftTypeMTP)
	}
	if opts.GoTemplate {
		params = append(params, "--chat-template", "chatml")
	}
	if opts.ContextShift {
		params = append(params, "--context-shift")
	}
	params = append(params, "--batch-threads", strconv.Itoa(opts.BatchThreads))
	cmd := exec.Command(serverPath(dir), params...)
	env := map[string]string{}
	if opts.Backend != "" {
		env["GGML_BACKEND_PATH"] = opts.Backend
	}
	env[fitTargetEnv] = strconv.Itoa(512)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return port, cmd.Start()
}

type completionRequest struct {
	Prompt      string  `json:"prompt"`
	Stream      bool    `json:"stream"`
	Temperature float32 `json:"temperature"`
}

func (s *server) complete(prompt string, temperature float32) error {
	body, err := json.Marshal(completionRequest{Prompt: prompt, Stream: true, Temperature: temperature})
	if err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/completion", s.port)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"""
OLLAMA = {
    "go.mod": b"module example.com/ollama\n\ngo 1.22\n",
    "llm/server.go": SERVER_GO.encode(),
    "llama/server/CMakeLists.txt": b"install(TARGETS llama-server RUNTIME DESTINATION lib/ollama)\n",
}


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _review(tmp_path, changes: dict[str, str], ollama=OLLAMA):
    """The review of one upstream commit that makes `changes` (path -> new text) to UPSTREAM."""
    return review_one_commit(tmp_path, UPSTREAM, changes, ollama)


def _raising(findings):
    return [f for f in findings if f.severity in ("high", "medium")]


def _one(findings, start: str):
    (found,) = [f for f in findings if f.title.startswith(start)]
    return found


# ------------------------------------------------------------------------------------------ values


def test_a_value_the_handler_no_longer_compares_with_is_high_at_the_line_that_passes_it(tmp_path):
    new = ARG.replace(
        'else if (value == "dio")  { params.load_mode = 3; }',
        'else if (value == "direct-io") { params.load_mode = 3; }',
    )
    findings = _review(tmp_path, {"common/arg.cpp": new})
    item = _one(findings, "llama-server no longer accepts `dio` for --load-mode")
    assert item.severity == "high" and item.area == "server"
    assert LocalRef("llm/server.go", _line(SERVER_GO, '"--load-mode", "dio"')) in item.local_refs
    assert "new names: `direct-io`" in item.detail and "on some starts" in item.detail
    assert (item.upstream_path, item.upstream_line) == (
        "common/arg.cpp",
        _line(new, '{"-lm", "--load-mode"}') - 1,  # the entry's `common_arg(`
    )


def test_a_value_the_handler_still_knows_but_handles_otherwise_is_medium_with_both_branches(tmp_path):
    new = ARG.replace(
        'else if (value == "dio")  { params.load_mode = 3; }',
        'else if (value == "dio")  { params.load_mode = 1; } // an alias of auto now',
    )
    item = _one(_review(tmp_path, {"common/arg.cpp": new}), "What `dio` for --load-mode does changed")
    assert (item.severity, item.area) == ("medium", "server")
    assert "was `params.load_mode = 3;`, now `params.load_mode = 1;`" in item.detail
    assert LocalRef("llm/server.go", _line(SERVER_GO, '"--load-mode", "dio"')) in item.local_refs


def test_a_values_branch_reformatted_or_another_values_branch_changed_is_quiet(tmp_path):
    spaced = ARG.replace(
        'else if (value == "dio")  { params.load_mode = 3; }',
        'else if (value == "dio") {\n                params.load_mode = 3;\n            }',
    )
    other = ARG.replace(
        'if (value == "none") { params.load_mode = 0; }', 'if (value == "none") { params.load_mode = 5; }'
    )
    for i, new in enumerate((spaced, other)):
        findings = _review(tmp_path / str(i), {"common/arg.cpp": new})
        assert not [f for f in findings if f.title.startswith("What `")], new


def test_the_flags_are_read_off_the_code_that_starts_the_server_wherever_it_lives(tmp_path):
    """Ollama's flags are those the code starting llama-server passes, found by following it (the contract
    inventory), not by a folder: in a package no review knows by name, a removed flag, a value the handler no
    longer names, a default behind a flag and a new limit on a field Ollama sends are each still an item at the
    Go line."""
    moved = "internal/runtime/backend/start.go"
    ollama = {(moved if path == "llm/server.go" else path): text for path, text in OLLAMA.items()}
    removed = ARG.replace('{"--context-shift"},\n        {"--no-context-shift"},', '{"--no-context-shift"},')
    renamed = ARG.replace('(value == "dio")  {', '(value == "direct-io") {')
    default = COMMON_H.replace("bool ctx_shift = false;", "bool ctx_shift = true;")
    limited = SCHEMA.replace(
        '    add((new field_num("dry_multiplier"',
        '    if (params.sampling.temp < 0.0f) {\n        throw std::invalid_argument("temp must not be negative");\n'
        '    }\n    add((new field_num("dry_multiplier"',
    )
    for n, (changes, title, needle) in enumerate(
        (
            (
                {"common/arg.cpp": removed},
                "llama-server flag --context-shift was removed",
                '"--context-shift")',
            ),
            ({"common/arg.cpp": renamed}, "llama-server no longer accepts `dio` for --load-mode", '"dio")'),
            (
                {"common/common.h": default},
                "Default of llama-server parameter ctx_shift",
                '"--context-shift")',
            ),
            (
                {"tools/server/server-schema.cpp": limited},
                "llama-server now rejects some values of `temperature`",
                '`json:"temperature"`',
            ),
        )
    ):
        item = _one(_review(tmp_path / str(n), changes, ollama), title)
        assert LocalRef(moved, _line(SERVER_GO, needle)) in item.local_refs, title


def test_a_value_known_through_a_helper_the_handler_stops_calling_is_high(tmp_path):
    new = ARG.replace(
        """            } else if (is_autoy(value)) {
                params.flash_attn = -1;
            } else {""",
        "            } else {",
    )
    item = _one(
        _review(tmp_path, {"common/arg.cpp": new}), "llama-server no longer accepts `auto` for --flash-attn"
    )
    assert item.severity == "high"
    assert LocalRef("llm/server.go", _line(SERVER_GO, '"--flash-attn", "auto"')) in item.local_refs


def test_a_value_of_a_name_table_another_file_keeps_is_high_and_points_at_the_go_constant(tmp_path):
    new = SPECULATIVE.replace('{"draft-mtp",     2},', '{"mtp",           2},')
    item = _one(
        _review(tmp_path, {"common/speculative.cpp": new}), "llama-server no longer accepts `draft-mtp`"
    )
    assert item.severity == "high" and item.upstream_path == "common/speculative.cpp"
    assert LocalRef("llm/server.go", _line(SERVER_GO, 'draftTypeMTP = "draft-mtp"')) in item.local_refs
    assert "`common/speculative.cpp:" in item.detail


def test_a_free_text_flag_knows_the_names_its_help_lists_from_upstream_tables(tmp_path):
    new = CHAT.replace(
        '{ "chatml",   LLM_CHAT_TEMPLATE_CHATML   },', '{ "chat-ml",  LLM_CHAT_TEMPLATE_CHATML   },'
    )
    item = _one(
        _review(tmp_path, {"src/llama-chat.cpp": new}),
        "llama-server no longer accepts `chatml` for --chat-template",
    )
    assert item.severity == "high"
    assert LocalRef("llm/server.go", _line(SERVER_GO, '"--chat-template", "chatml"')) in item.local_refs


def test_only_the_value_ollama_passes_is_reported_beside_names_it_does_not_use(tmp_path):
    changes = {
        "common/arg.cpp": ARG.replace('value == "on" || ', 'value == "on" || value == "yes" || ').replace(
            '{"none",          0},', ""
        ),
        "src/llama-chat.cpp": CHAT.replace('{ "llama2",   LLM_CHAT_TEMPLATE_LLAMA_2  },', ""),  # not Ollama's
        "common/speculative.cpp": SPECULATIVE.replace('{"none",          0},', "").replace(
            '{"draft-mtp",     2},', '{"draft-mtp",     2}, {"ngram", 3},'
        ),
    }
    changes["common/arg.cpp"] = changes["common/arg.cpp"].replace('(value == "dio")', '(value == "direct")')
    assert [f.title for f in _raising(_review(tmp_path, changes))] == [
        "llama-server no longer accepts `dio` for --load-mode; Ollama passes it"
    ]


# ------------------------------------------------------------------------------------------ environment


def test_a_variable_ollama_sets_that_upstream_stops_reading_is_high(tmp_path):
    new = BACKEND_REG.replace('std::getenv("GGML_BACKEND_PATH")', 'std::getenv("GGML_BACKEND_FILE")')
    item = _one(
        _review(tmp_path, {"ggml/src/ggml-backend-reg.cpp": new}),
        "Upstream no longer reads environment variable GGML_BACKEND_PATH",
    )
    assert (item.severity, item.area) == ("high", "discovery")
    assert LocalRef("llm/server.go", _line(SERVER_GO, 'env["GGML_BACKEND_PATH"]')) in item.local_refs
    assert "reads `GGML_BACKEND_FILE`" in item.detail and "on some starts" in item.detail


def test_a_flags_environment_variable_renamed_names_the_flag_and_ollamas_constant(tmp_path):
    new = ARG.replace('.set_env("LLAMA_ARG_FIT_TARGET")', '.set_env("LLAMA_ARG_FIT_MARGIN")')
    item = _one(
        _review(tmp_path, {"common/arg.cpp": new}),
        "Upstream no longer reads environment variable LLAMA_ARG_FIT_TARGET",
    )
    assert item.severity == "high" and "`-fitt`'s environment variable" in item.detail
    assert (
        LocalRef("llm/server.go", _line(SERVER_GO, 'fitTargetEnv = "LLAMA_ARG_FIT_TARGET"'))
        in item.local_refs
    )


def test_a_variable_still_read_elsewhere_or_not_set_by_ollama_is_not_reported(tmp_path):
    moved = BACKEND_REG.replace('std::getenv("GGML_BACKEND_PATH")', "backend_path_from_env()")
    helper = 'const char * backend_path_from_env() { return std::getenv("GGML_BACKEND_PATH"); }\n'
    renamed = ARG.replace('.set_env("LLAMA_ARG_CTX_SIZE")', '.set_env("LLAMA_ARG_CONTEXT")')  # not Ollama's
    changes = {
        "ggml/src/ggml-backend-reg.cpp": moved,
        "ggml/src/ggml-backend-env.cpp": helper,
        "common/arg.cpp": renamed.replace('.set_env("LLAMA_ARG_FIT_TARGET")', '.set_env("LLAMA_ARG_FIT")'),
    }
    assert [f.title for f in _raising(_review(tmp_path, changes))] == [
        "Upstream no longer reads environment variable LLAMA_ARG_FIT_TARGET; Ollama sets it"
    ]


# ------------------------------------------------------------------------------------------ defaults


def test_a_default_behind_a_flag_ollama_passes_on_some_starts_only_is_medium(tmp_path):
    new = COMMON_H.replace("bool ctx_shift = false;", "bool ctx_shift = true;")
    item = _one(
        _review(tmp_path, {"common/common.h": new}), "Default of llama-server parameter ctx_shift changed"
    )
    assert item.severity == "medium" and "leaves --context-shift out" in item.title
    assert item.local_refs == [
        LocalRef("llm/server.go", _line(SERVER_GO, 'params = append(params, "--context-shift")'))
    ]
    assert "from `false` to `true`" in item.detail
    assert (item.upstream_path, item.upstream_line) == ("common/common.h", _line(new, "bool ctx_shift"))


def test_a_default_of_a_request_field_ollama_never_sends_is_medium_at_the_body_it_builds(tmp_path):
    new = COMMON_H.replace("float   dry_multiplier     = 0.0f;", "float   dry_multiplier     = 0.8f;")
    item = _one(
        _review(tmp_path, {"common/common.h": new}),
        "Default of llama-server parameter sampling.dry_multiplier changed",
    )
    assert item.severity == "medium" and "leaves `dry_multiplier` out" in item.title
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, "type completionRequest struct"))]
    assert "POST /completion" in item.detail and "from `0.0f` to `0.8f`" in item.detail


@pytest.mark.parametrize(
    "old, new",
    [
        ("float   temp               = 0.80f;", "float   temp               = 0.70f;"),  # always sent
        ("int32_t n_ctx = 4096;", "int32_t n_ctx = 8192;"),  # a flag Ollama passes on every start
        ("int32_t n_threads_batch = -1;", "int32_t n_threads_batch = 4;"),  # passed on every start too
        ("int32_t dry_penalty_last_n = -1;", "int32_t dry_penalty_last_n = 64;"),  # its group is off
        ("float   xtc_probability    = 0.00f;", "float   xtc_probability    = 0.000f;"),  # the same value
    ],
)
def test_a_default_ollama_overrides_or_that_cannot_act_is_not_reported_beside_one_it_relies_on(
    tmp_path, old, new
):
    assert old in COMMON_H
    changed = COMMON_H.replace(old, new).replace("bool ctx_shift = false;", "bool ctx_shift = true;")
    relied_on = "Default of llama-server parameter ctx_shift changed; Ollama relies on it where it leaves "
    assert [f.title for f in _raising(_review(tmp_path, {"common/common.h": changed}))] == [
        relied_on + "--context-shift out"
    ]


@pytest.mark.parametrize(
    "old, new, switched",
    [
        ("false", "true", True),
        ("-1", "300", True),
        ("0.0f", "0.1f", True),
        ("600", "3600", False),
        ("-1", "0", False),
        ("LLAMA_LOAD_MODE_MMAP", "LLAMA_LOAD_MODE_AUTO", False),
    ],
)
def test_a_default_is_switched_when_it_turns_what_it_sets_on_or_off(old, new, switched):
    assert paramdefaults.switched(old, new) is switched


def test_a_default_behind_a_flag_ollama_never_passes_is_medium_only_where_it_turns_it_on_or_off(tmp_path):
    """`--sleep-idle-seconds` is a server flag Ollama never passes: a default that turns what it sets on
    (-1 to 300) holds on every start Ollama makes, cited where it passes its flags; one that stays off
    (-1 to 0) is not reported."""
    on = COMMON_H.replace("sleep_idle_seconds = -1;", "sleep_idle_seconds = 300;")
    item = _one(
        _review(tmp_path / "on", {"common/common.h": on}),
        "Default of llama-server parameter sleep_idle_seconds changed; Ollama never passes --sleep-idle-seconds",
    )
    assert (
        item.severity == "medium"
        and "from `-1` to `300`" in item.detail
        and "now on by default" in item.detail
    )
    # the first line that passes a flag on every start
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, '"--flash-attn", "auto"'))]
    off = COMMON_H.replace("sleep_idle_seconds = -1;", "sleep_idle_seconds = 0;")
    assert _raising(_review(tmp_path / "off", {"common/common.h": off})) == []


def test_a_default_behind_a_flag_ollama_never_passes_is_cited_where_it_passes_the_flag_upstream_sets_it_by(
    tmp_path,
):
    """The server sets `sleep_idle_seconds` where it tests `n_ctx`, which Ollama passes (`--ctx-size`): what a
    start gives one decides the other, so the item points at that flag; a member set under a test of a member
    no flag Ollama passes writes keeps the lines that start the server."""
    on = COMMON_H.replace("sleep_idle_seconds = -1;", "sleep_idle_seconds = 300;")
    server = "int main(common_params & params) {\n    if (params.n_ctx == 0) {\n        params.sleep_idle_seconds = 60;\n    }\n}\n"
    item = _one(
        _review(tmp_path / "coupled", {"common/common.h": on, "tools/server/server.cpp": server}),
        "Default of llama-server parameter sleep_idle_seconds changed; Ollama never passes --sleep-idle-seconds",
    )
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, '"--ctx-size"'))]
    assert "sets it by what `--ctx-size` gives, which Ollama passes" in item.detail
    other = server.replace("params.n_ctx == 0", "params.n_predict == 0")
    item = _one(
        _review(tmp_path / "uncoupled", {"common/common.h": on, "tools/server/server.cpp": other}),
        "Default of llama-server parameter sleep_idle_seconds changed; Ollama never passes --sleep-idle-seconds",
    )
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, '"--flash-attn", "auto"'))]


def test_a_recheck_finds_which_handlers_lose_a_value_in_the_facts_store(tmp_path, monkeypatch):
    lost = {"common/arg.cpp": ARG.replace('value == "dio"', 'value == "direct-io"')}
    kept = {"common/arg.cpp": ARG.replace('"model loading mode"', '"how the model is loaded"')}
    with facts.using(facts.FactStore(tmp_path / "facts")):
        first = {
            name: _review(tmp_path / f"{name}-1", changes)
            for name, changes in (("lost", lost), ("kept", kept))
        }

        def unreached(*args, **kwargs):
            raise AssertionError("a handler's code was reached again")

        monkeypatch.setattr(argvalues, "accepted", unreached)
        assert _review(tmp_path / "kept-2", kept) == first["kept"]
        monkeypatch.undo()
        again = _review(tmp_path / "lost-2", lost)
    assert again == first["lost"] and _one(again, "llama-server no longer accepts `dio` for --load-mode")


EMBED_GO = """package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

func (s *server) embed(input string, raw bool) error {
	req := map[string]any{"input": input}
	if raw {
		req["embd_normalize"] = -1
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/embeddings", s.port)
	r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"""
EMBEDDINGS = """#include "server-common.h"

void handle_embeddings(const json & body, const common_params & params) {
    int embd_normalize = params.embd_normalize;
    if (body.count("embd_normalize") != 0) {
        embd_normalize = body.at("embd_normalize");
    }
}
"""


def test_a_default_a_request_key_takes_where_ollama_sends_it_only_sometimes_is_medium_at_its_condition(
    tmp_path,
):
    """The handler starts a local from the member and overwrites it from the request's `embd_normalize`, which
    Ollama sends only for raw embeddings: elsewhere the member's default decides, so its change is told where
    Ollama sends the key, with the `if` it sends it under."""
    member = "    int32_t embd_normalize = 2; // -1 = none, 2 = euclidean\n"
    base = {
        **UPSTREAM,
        "common/common.h": COMMON_H.replace("    bool ctx_shift", member + "    bool ctx_shift"),
        "tools/server/server-embd.cpp": EMBEDDINGS,
    }
    ollama = {**OLLAMA, "llm/embed.go": EMBED_GO.encode()}
    changed = base["common/common.h"].replace("embd_normalize = 2;", "embd_normalize = -1;")
    item = _one(
        review_one_commit(tmp_path / "sometimes", base, {"common/common.h": changed}, ollama),
        "Default of llama-server parameter embd_normalize changed",
    )
    assert item.severity == "medium" and "leaves `embd_normalize` out of its requests" in item.title
    lines = EMBED_GO.split("\n")
    sent = next(n for n, line in enumerate(lines, 1) if 'req["embd_normalize"]' in line)
    assert item.local_refs == [LocalRef("llm/embed.go", sent - 1), LocalRef("llm/embed.go", sent)]
    always = EMBED_GO.replace("\tif raw {\n\t\treq", "\t{\n\t\treq")
    ollama_always = {**OLLAMA, "llm/embed.go": always.encode()}
    findings = review_one_commit(tmp_path / "always", base, {"common/common.h": changed}, ollama_always)
    assert [
        f for f in findings if f.title.startswith("Default of llama-server parameter embd_normalize")
    ] == []


def test_a_new_check_on_the_text_a_flag_ollama_passes_takes_is_high_where_it_passes_it(tmp_path):
    """`--chat-template`'s handler now throws for some texts, and Ollama passes the flag: high, where it does.
    A new bound on a number (`--ctx-size`), or a throw in the `else` of the names a handler accepts, says
    nothing (Ollama's numbers are its own computations; the names are `server.launch`'s)."""
    check = '            if (value.find("{%") != std::string::npos) {\n                throw std::invalid_argument("not a template name");\n            }\n'
    limited = ARG.replace(
        "            params.chat_template = value;\n", check + "            params.chat_template = value;\n"
    )
    item = _one(
        _review(tmp_path / "template", {"common/arg.cpp": limited}), "llama-server now rejects some values"
    )
    assert (item.severity, item.title) == (
        "high",
        "llama-server now rejects some values of --chat-template, which Ollama passes",
    )
    assert 'now throws when `value.find("{%") != std::string::npos` (`not a template name`)' in item.detail
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, '"--chat-template"'))]
    bounded = ARG.replace(
        "            params.n_ctx = value;\n",
        '            if (value < 256) {\n                throw std::invalid_argument("too small");\n            }\n'
        "            params.n_ctx = value;\n",
    )
    named = ARG.replace(
        "            params.chat_template = value;\n",
        '            if (value == "chatml") {\n                params.chat_template = value;\n            } else {\n'
        '                throw std::invalid_argument("unknown template");\n            }\n',
    )
    for name, changed in (("bounded", bounded), ("named", named)):
        assert changed != ARG
        findings = _review(tmp_path / name, {"common/arg.cpp": changed})
        assert [f for f in findings if f.title.startswith("llama-server now rejects")] == []


CONTEXT = """llama_context::llama_context(const llama_context_params & params) {
    cparams.n_ctx = params.n_ctx == 0 ? hparams.n_ctx_train : params.n_ctx;
    cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256);
    cparams.n_seq_max = params.n_seq_max;
}
"""


def _overrides(tmp_path, name: str, context: str) -> list:
    assert context != CONTEXT
    base = {**UPSTREAM, "src/llama-context.cpp": CONTEXT}
    findings = review_one_commit(tmp_path / name, base, {"src/llama-context.cpp": context}, OLLAMA)
    return [f for f in findings if f.title.startswith("llama-server may now run with another")]


def test_a_new_assignment_to_what_a_flag_ollama_passes_fills_is_medium_where_it_passes_the_flag(tmp_path):
    """`--ctx-size` fills `n_ctx`, and Ollama passes it: the context's copy given another value by the bump
    (rounded down), or a name given the member's value and then another, is medium."""
    rounded = CONTEXT.replace("GGML_PAD(cparams.n_ctx, 256)", "(cparams.n_ctx / 256) * 256")
    (item,) = _overrides(tmp_path, "rounded", rounded)
    assert item.title == "llama-server may now run with another `n_ctx` than the --ctx-size Ollama passes"
    assert (item.severity, item.upstream_path, item.upstream_line, item.check) == (
        "medium",
        "src/llama-context.cpp",
        3,
        "server.flag-overrides",
    )
    assert item.local_refs == [LocalRef("llm/server.go", _line(SERVER_GO, '"--ctx-size"'))]
    assert "`cparams.n_ctx = (cparams.n_ctx / 256) * 256;`" in item.detail
    swa = "    n_ctx = cparams.n_ctx;\n    if (swa_full) { n_ctx = hparams.n_swa; }\n    cparams.n_seq_max"
    (item,) = _overrides(tmp_path, "swa", CONTEXT.replace("    cparams.n_seq_max", swa))
    assert (item.upstream_line, "`if (swa_full) { n_ctx = hparams.n_swa; }`" in item.detail) == (5, True)


def test_an_assignment_to_a_member_ollama_never_passes_a_new_local_or_a_reformatted_one_is_quiet(tmp_path):
    """Nor is a copy of the member, a bound on it (its sense, as for a flag's own checks), the member of a
    struct not named after the handler's (`params`) or of a local copy, or a value filled only while it
    holds one (unset, automatic)."""
    quiet = {
        "other-member": CONTEXT.replace("cparams.n_seq_max = params.n_seq_max;", "cparams.n_seq_max = 1;"),
        "declared": CONTEXT.replace(
            "    cparams.n_seq_max", "    uint32_t n_ctx = 512;\n    cparams.n_seq_max"
        ),
        "unrelated-local": CONTEXT.replace(
            "    cparams.n_seq_max", "    n_ctx = 512;\n    cparams.n_seq_max"
        ),
        "reformatted": CONTEXT.replace("GGML_PAD(cparams.n_ctx, 256)", "GGML_PAD(cparams.n_ctx,256)"),
        "unset-filled": CONTEXT.replace(
            "    cparams.n_seq_max",
            "    if (cparams.n_ctx == 0) {\n        cparams.n_ctx = 4096;\n    }\n    cparams.n_seq_max",
        ),
    }
    added = {
        "copied": "other.cparams->n_ctx = cparams.n_ctx;",
        "bounded": "cparams.n_ctx = std::min(cparams.n_ctx, hparams.n_ctx_train);",
        "capped": "if (cparams.n_ctx > hparams.n_ctx_train) { cparams.n_ctx = hparams.n_ctx_train; }",
        "copy-changed": "llama_context_params cparams_probe = cparams;\n    cparams_probe.n_ctx = 256;",
        "unset-flagged": "const bool auto_ctx = cparams.n_ctx == 0;\n    if (auto_ctx) {\n        cparams.n_ctx = 4096;\n    }",
        "another-struct": "builder->n_ctx = imgs.size();",
        "auto-filled": "if (cparams.n_ctx == LLAMA_CTX_AUTO) { cparams.n_ctx = hparams.n_ctx_train; }",
    }
    for name, line in added.items():
        quiet[name] = CONTEXT.replace("    cparams.n_seq_max", f"    {line}\n    cparams.n_seq_max")
    for name, context in quiet.items():
        assert _overrides(tmp_path, name, context) == [], name


def test_an_assignment_of_a_long_chain_of_members_is_read_in_bounded_time(tmp_path):
    """A hostile line (`n_ctx = a. . . . b;`, a member chain read back on itself) must not make the copy test
    backtrack without end: it is an assignment like any other."""
    chain = "a" + ". " * 40 + "b"
    (item,) = _overrides(tmp_path, "chain", CONTEXT.replace("GGML_PAD(cparams.n_ctx, 256)", chain))
    assert item.upstream_line == 3
