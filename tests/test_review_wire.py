"""The wire between Ollama and llama-server at both refs, on a small Ollama-like Go tree and llama-server sources
shaped like the real ones (route table, handler lambdas, a declarative request schema, result builders, the SSE
formatter): request fields no longer read or newly rejected, decoded fields no longer written or written under
a new condition, compared values no longer sent, stream frames Ollama's reader no longer accepts; and the
edits that keep the wire as it was, which must stay quiet."""

from __future__ import annotations

import pytest

from bot.model import LocalRef
from bot.review.consumers.contracts import Contracts, contracts_of
from bot.review.grouping import by_cause
from bot.review.paramdefaults import declared_at
from bot.review.source import code_text
from bot.review.wire import wire_drafts

GO_MOD = "module example.com/ollama\n\ngo 1.22\n"

API_GO = """package api

type Options struct {
	Seed        int `json:"seed,omitempty"`
	RepeatLastN int `json:"repeat_last_n,omitempty"`
	NumPredict  int `json:"num_predict,omitempty"`
}

func DefaultOptions() Options {
	return Options{Seed: -1, RepeatLastN: 64, NumPredict: -1}
}
"""

DOCS = """# Modelfile

| Parameter | Description | Value Type | Example Usage |
| --- | --- | --- | --- |
| repeat_last_n | How far back to look for repetitions. (Default: 64, 0 = disabled, -1 = num_ctx) | int | repeat_last_n 64 |
"""

BINARY_GO = """package runner

import "path/filepath"

func ServerPath(dir string) string {
	return filepath.Join(dir, "llama-server")
}
"""

SERVER_GO = """package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"

	"example.com/ollama/api"
)

type Server struct {
	port int
}

func start(dir string) (*exec.Cmd, int, error) {
	port := 8089
	cmd := exec.Command(ServerPath(dir), "--port", strconv.Itoa(port))
	return cmd, port, cmd.Start()
}

func (s *Server) Launch(dir string) error {
	_, port, err := start(dir)
	if err != nil {
		return err
	}
	s.port = port
	return nil
}

func (s *Server) Health() (string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", s.port))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var result struct {
		Status string `json:"status"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		return "", err
	}
	if result.Status == "ok" {
		return "ready", nil
	}
	if result.Error != nil && strings.ToLower(result.Error.Message) == "loading model" {
		return "loading", nil
	}
	return "error", nil
}

type completionRequest struct {
	Prompt      string `json:"prompt"`
	Stream      bool   `json:"stream"`
	NPredict    int    `json:"n_predict,omitempty"`
	RepeatLastN int    `json:"repeat_last_n"`
	Seed        int    `json:"seed"`
}

type completionChunk struct {
	Content  string  `json:"content"`
	Stop     bool    `json:"stop"`
	StopType string  `json:"stop_type"`
	Word     *string `json:"stopping_word"`
	Timings  struct {
		PredictedN  int     `json:"predicted_n"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
}

type progress struct {
	Stop bool
}

// the same field name on another struct, and a method of that name: no reads of the chunk's field
func (p progress) Done(t interface{ Stop() bool }) bool {
	return t.Stop() || p.Stop
}

func (s *Server) Complete(prompt string, opts api.Options, fn func(string)) (bool, error) {
	body, err := json.Marshal(completionRequest{
		Prompt:      prompt,
		Stream:      true,
		NPredict:    opts.NumPredict,
		RepeatLastN: opts.RepeatLastN,
		Seed:        opts.Seed,
	})
	if err != nil {
		return false, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/completion", s.port)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, ":") {
			continue
		}
		evt, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			evt = line
		}
		var chunk completionChunk
		if err := json.Unmarshal([]byte(evt), &chunk); err != nil {
			return false, err
		}
		fn(chunk.Content)
		if chunk.Word != nil {
			return true, nil
		}
		if chunk.Stop {
			return chunk.StopType == "limit", nil
		}
	}
	return false, scanner.Err()
}
"""

OLLAMA = {
    "go.mod": GO_MOD,
    "CMakeLists.txt": "project(Ollama C CXX)\ninstall(TARGETS llama-server RUNTIME DESTINATION lib)\n",
    "api/types.go": API_GO,
    "docs/modelfile.md": DOCS,
    "runner/binary.go": BINARY_GO,
    "runner/server.go": SERVER_GO,
}

SERVER_CPP = """int main(int argc, char ** argv) {
    server_routes routes(params, ctx_server);
    ctx_http.get ("/health",     ex_wrapper(routes.get_health));
    ctx_http.get ("/metrics",    ex_wrapper(routes.get_metrics));
    ctx_http.post("/completion", ex_wrapper(routes.post_completions));
    ctx_http.post("/v1/messages", ex_wrapper(routes.post_anthropic_messages));
    return 0;
}
"""

CONTEXT_CPP = """void server_routes::init_routes() {
    this->get_health = [this](const server_http_req &) {
        auto res = create_response();
        res->ok({{"status", "ok"}});
        return res;
    };
    this->get_metrics = [this](const server_http_req & req) {
        auto res = create_response();
        const bool verbose = json_value(json::parse(req.body), "verbose", false);
        for (const auto & metric_def : metrics) {
            const std::string name = metric_def.at("name");
            const std::string help = metric_def.at("help");
        }
        return res;
    };
    this->post_completions = [this](const server_http_req & req) {
        json data = json::parse(req.body);
        return handle_completions_impl(req, data);
    };
    this->post_anthropic_messages = [this](const server_http_req & req) {
        json body = convert_anthropic_to_oai(json::parse(req.body));
        return handle_completions_impl(req, body);
    };
}

std::unique_ptr<server_res_generator> server_routes::handle_completions_impl(const server_http_req & req, const json & data) {
    auto res = create_response();
    const auto & prompt = data.at("prompt");
    const bool per_token = json_value(data, "timings_per_token", false);
    task.params = eval_schema(data);
    res->set_next([res_this = res.get()](std::string & output) -> bool {
        if (!res_this->rd.has_next()) {
            output = "data: [DONE]\\n\\n";
            return false;
        }
        auto result = res_this->rd.next();
        output = format_sse(result->to_json());
        return true;
    });
    return res;
}
"""

HTTP_CPP = """bool server_http_context::init(const common_params & params) {
    auto middleware_server_state = [this](const httplib::Request & req, httplib::Response & res) {
        if (!is_ready.load()) {
            res.status = 503;
            res.set_content(safe_json_to_str(json {
                {"error", {
                    {"message", "Loading model"},
                    {"type", "unavailable_error"},
                }}
            }), "application/json");
            return false;
        }
        return true;
    };
    return true;
}
"""

SCHEMA_CPP = """std::vector<field *> make_schema(task_params & params) {
    std::vector<field *> fields;
    auto add = [&](field * f) { fields.push_back(f); };
    add((new field_num("n_predict", params.n_predict))
        ->set_hard_limits(-1, INT32_MAX)
        ->add_alias("max_tokens")
        ->set_desc("The most tokens to predict"));
    add((new field_num("repeat_last_n", params.penalty_last_n))
        ->set_hard_limits(-1, INT32_MAX)
        ->set_desc("Last n tokens to consider for penalizing repetition"));
    add((new field_num("seed", params.seed))
        ->set_desc("The random seed"));
    add((new field_bool("return_progress", params.return_progress))
        ->set_desc("Report prompt progress in the stream"));
    return fields;
}

task_params eval_schema(const json & data) {
    task_params params;
    auto schema = make_schema(params);
    for (auto * f : schema) {
        f->eval(data);
    }
    return params;
}
"""

TASK_CPP = """static std::string stop_type_to_str(stop_type type) {
    switch (type) {
        case STOP_TYPE_EOS:   return "eos";
        case STOP_TYPE_LIMIT: return "limit";
        default:              return "none";
    }
}

json result_timings::to_json() const {
    return json {
        {"predicted_n",  predicted_n},
        {"predicted_ms", predicted_ms},
    };
}

json server_task_result_cmpl_final::to_json() {
    json res = json {
        {"content",   content},
        {"stop",      true},
        {"stop_type", stop_type_to_str(stop)},
        {"timings",   timings.to_json()},
    };
    return res;
}

json server_task_result_cmpl_partial::to_json() {
    json res = json {
        {"content", content},
        {"stop",    false},
        {"stopping_word", nullptr},
    };
    if (timings.prompt_n >= 0) {
        res.push_back({"timings", timings.to_json()});
    }
    return res;
}

json convert_anthropic_to_oai(const json & body) {
    json oai = json::object();
    oai["content"] = body.at("content");
    oai["stop"] = body.at("stop_sequences");
    return oai;
}
"""

COMMON_CPP = """template <typename T>
static T json_value(const json & body, const std::string & key, const T & default_value) {
    if (body.contains(key) && !body.at(key).is_null()) {
        return body.at(key);
    }
    return default_value;
}

std::string format_sse(const json & data) {
    std::ostringstream ss;
    ss << "data: " << safe_json_to_str(data) << "\\n\\n";
    return ss.str();
}

std::string format_anthropic_sse(const json & data) {
    std::ostringstream ss;
    ss << "event: " << data.at("event").get<std::string>() << "\\n";
    ss << "data: " << safe_json_to_str(data.at("data")) << "\\n\\n";
    return ss.str();
}
"""

TASK_H = """struct task_params {
    int32_t n_predict = -1;
    int32_t penalty_last_n = 64;
    uint32_t seed = LLAMA_DEFAULT_SEED;
    bool return_progress = false;
};
"""

UPSTREAM = {
    "tools/server/server.cpp": SERVER_CPP,
    "tools/server/server-task.h": TASK_H,
    "tools/server/server-context.cpp": CONTEXT_CPP,
    "tools/server/server-http.cpp": HTTP_CPP,
    "tools/server/server-schema.cpp": SCHEMA_CPP,
    "tools/server/server-task.cpp": TASK_CPP,
    "tools/server/server-common.cpp": COMMON_CPP,
}


def _line(path: str, needle: str) -> int:
    text = OLLAMA[path]
    return text.count("\n", 0, text.index(needle)) + 1


def _ref(needle: str, path: str = "runner/server.go") -> LocalRef:
    return LocalRef(path, _line(path, needle))


@pytest.fixture(scope="module")
def contracts():
    return Contracts({path: code_text(text, path) for path, text in OLLAMA.items()})


def _texts(files: dict[str, str]) -> dict[str, str]:
    return {path: code_text(text, path) for path, text in files.items()}


def _review(contracts, path: str, old: str, new: str, count: int = 1):
    """The wire items of a bump that replaces `old` by `new` in one upstream file."""
    assert UPSTREAM[path].count(old) == count, old
    changed = {**UPSTREAM, path: UPSTREAM[path].replace(old, new)}
    return wire_drafts(_texts(UPSTREAM), _texts(changed), contracts)


def _raising(drafts):
    return [d for d in drafts if d.severity in ("high", "medium")]


def test_an_unchanged_server_gives_nothing(contracts):
    assert wire_drafts(_texts(UPSTREAM), _texts(UPSTREAM), contracts) == []


# ---- requests ------------------------------------------------------------------------------------------------


def test_a_changed_default_behind_a_field_ollama_leaves_out_says_both_values(contracts):
    """A field Ollama never sends: information, at the body's declaration; one it sends only sometimes:
    medium, at the field's line. The default as a struct member's initializer behind a schema field, or as a
    handler's own literal."""
    (progress,) = _review(
        contracts, "tools/server/server-task.h", "return_progress = false", "return_progress = true"
    )
    assert progress.severity == "info" and "`return_progress`" in progress.title
    assert "before `false`" in progress.detail and "now `true`" in progress.detail
    assert progress.local_refs == (_ref("type completionRequest struct {"),)
    assert progress.path == "tools/server/server-task.h"

    (per_token,) = _review(
        contracts,
        "tools/server/server-context.cpp",
        '"timings_per_token", false',
        '"timings_per_token", true',
    )
    assert "`timings_per_token`" in per_token.title and "`POST /completion`" in per_token.title

    (n_predict,) = _raising(
        _review(contracts, "tools/server/server-task.h", "n_predict = -1", "n_predict = 128")
    )
    assert n_predict.severity == "medium" and "leave it out on some requests" in n_predict.detail
    assert n_predict.local_refs == (_ref("NPredict    int    `json"), _ref("NPredict:    opts.NumPredict,"))


def test_a_default_ollama_never_sends_that_decides_a_field_it_decodes_is_medium(contracts):
    """`timings_per_token` is never sent; the handler writes `timings`, which Ollama decodes, only when the
    value it read holds: the default now decides what every stream carries."""
    context = "tools/server/server-context.cpp"
    read = '    const bool per_token = json_value(data, "timings_per_token", false);\n'
    written = '    json first = json {{"content", ""}};\n    if (per_token) {\n        first["timings"] = json::object();\n    }\n'
    base = (read, read + written)
    (draft,) = _review_from(
        contracts, context, base, '"timings_per_token", false', '"timings_per_token", true'
    )
    assert draft.severity == "medium" and "`timings_per_token`" in draft.title
    assert "decides what llama-server writes into `timings`" in draft.detail
    assert _ref("Timings  struct {") in draft.local_refs


def test_a_member_default_that_another_function_writes_a_decoded_field_by_decides_it(contracts):
    """`return_progress` is never sent and read into a member; the partial chunk writes `timings` under a
    condition naming the member: the default decides what the stream carries, wherever it is written."""
    task = "tools/server/server-task.cpp"
    base = ("    if (timings.prompt_n >= 0) {", "    if (timings.prompt_n >= 0 || return_progress) {")
    start = {**UPSTREAM, task: UPSTREAM[task].replace(*base)}
    header = "tools/server/server-task.h"
    changed = {**start, header: start[header].replace("return_progress = false", "return_progress = true")}
    (draft,) = wire_drafts(_texts(start), _texts(changed), contracts)
    assert draft.severity == "medium" and "`return_progress`" in draft.title
    line = start[task].split("\n").index(base[1]) + 2
    assert f"writes into `timings` (`{task}:{line}`)" in draft.detail
    assert _ref("Timings  struct {") in draft.local_refs


def test_a_local_set_only_when_the_request_has_a_key_is_that_keys_default(contracts):
    """`bool with_timings = false; if (data.contains("timings_format")) {... with_timings = true;}`: the
    initializer is what a request without the key gets; a local also set elsewhere is no such default."""
    context = "tools/server/server-context.cpp"
    anchor = '    const bool per_token = json_value(data, "timings_per_token", false);\n'
    read = (
        "    bool with_timings = false;\n"
        '    if (data.contains("timings_format")) {\n'
        '        if (data.at("timings_format") == "full") {\n'
        "            with_timings = true;\n"
        "        }\n"
        "    }\n"
    )
    written = '    json first = json {{"content", ""}};\n    if (with_timings) {\n        first["timings"] = json::object();\n    }\n'
    flipped = ("bool with_timings = false;", "bool with_timings = true;")
    (draft,) = _review_from(contracts, context, (anchor, anchor + read + written), *flipped)
    assert draft.severity == "medium" and "`timings_format`" in draft.title
    assert "before `with_timings = false`" in draft.detail and "now `with_timings = true`" in draft.detail
    assert "decides what llama-server writes into `timings`" in draft.detail
    also_set = anchor + read + "    with_timings = per_token;\n" + written
    assert _review_from(contracts, context, (anchor, also_set), *flipped) == []
    # set when the request leaves the key out: the initializer is what a request with the key gets
    absent = anchor + read.replace(
        'if (data.contains("timings_format"))', 'if (!data.contains("timings_format"))'
    )
    assert _review_from(contracts, context, (anchor, absent + written), *flipped) == []


def test_a_default_ollama_always_overrides_or_never_reaches_or_only_rewrites_is_quiet(contracts):
    """`seed` is always sent; `/metrics` is no endpoint Ollama sends a body to; `false` written as `false`
    with other spacing is the same value."""
    assert _review(contracts, "tools/server/server-task.h", "seed = LLAMA_DEFAULT_SEED", "seed = 0") == []
    assert _review(contracts, "tools/server/server-context.cpp", '"verbose", false', '"verbose", true') == []
    respaced = ("return_progress = false", "return_progress  =  false")
    assert _review(contracts, "tools/server/server-task.h", *respaced) == []
    # a default argument longer than any literal or member is not kept, so it is never compared or quoted
    long = f'"timings_per_token", "{"x" * 300}"'
    edited = UPSTREAM["tools/server/server-context.cpp"].replace('"timings_per_token", false', long)
    before = {**UPSTREAM, "tools/server/server-context.cpp": edited}
    after = {**before, "tools/server/server-context.cpp": edited.replace('"x', '"y', 1)}
    assert wire_drafts(_texts(before), _texts(after), contracts) == []


def test_a_schema_field_renamed_is_a_request_field_no_longer_read(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-schema.cpp",
        'field_num("n_predict", params.n_predict))\n        ->set_hard_limits(-1, INT32_MAX)\n        ->add_alias("max_tokens")',
        'field_num("max_tokens", params.n_predict))\n        ->set_hard_limits(-1, INT32_MAX)',
    )
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server no longer reads request field `n_predict` of POST /completion, which Ollama sends",
    )
    assert draft.local_refs == (_ref('`json:"n_predict,omitempty"`'), _ref("NPredict:    opts.NumPredict,"))
    assert "now `max_tokens`" in draft.detail and "also as `max_tokens`" in draft.detail


def test_a_key_held_in_a_named_constant_is_read_through_it(contracts):
    with_constant = 'constexpr char PROMPT_KEY[] = "prompt";\n    const auto & prompt = data.at(PROMPT_KEY);'
    base = {**UPSTREAM}
    base["tools/server/server-context.cpp"] = CONTEXT_CPP.replace(
        'const auto & prompt = data.at("prompt");', with_constant
    )
    renamed = {**base}
    renamed["tools/server/server-context.cpp"] = base["tools/server/server-context.cpp"].replace(
        '"prompt";', '"input";'
    )
    (draft,) = wire_drafts(_texts(base), _texts(renamed), contracts)
    assert draft.title.startswith("llama-server no longer reads request field `prompt`")
    assert wire_drafts(_texts(UPSTREAM), _texts(base), contracts) == []  # the constant is the same key


def test_a_bound_that_rejects_ollamas_default_names_the_value(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-schema.cpp",
        'field_num("seed", params.seed))',
        'field_num("seed", params.seed))\n        ->set_hard_limits(0, INT32_MAX)',
    )
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server now rejects `seed` -1 of POST /completion, which Ollama sends",
    )
    assert _ref('`json:"seed"`') in draft.local_refs
    assert "no bound at the old ref and takes 0..INT32_MAX" in draft.detail


def test_a_bound_that_rejects_a_documented_value_points_at_the_documentation(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-schema.cpp",
        "params.penalty_last_n))\n        ->set_hard_limits(-1, INT32_MAX)",
        "params.penalty_last_n))\n        ->set_hard_limits(0, INT32_MAX)",
    )
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server now rejects `repeat_last_n` -1 of POST /completion, which Ollama sends",
    )
    assert "-1 = num_ctx" in draft.detail
    assert set(draft.local_refs) == {
        _ref('`json:"repeat_last_n"`'),
        _ref("RepeatLastN: opts.RepeatLastN,"),  # where Ollama gives the field its value
        LocalRef("docs/modelfile.md", 5),
    }


def test_a_bound_that_keeps_every_value_ollama_sends_is_quiet_and_one_on_forwarded_values_is_information(
    contracts,
):
    widened = _review(
        contracts,
        "tools/server/server-schema.cpp",
        '->set_hard_limits(-1, INT32_MAX)\n        ->set_desc("Last',
        '->set_hard_limits(-2, INT32_MAX)\n        ->set_desc("Last',
    )
    assert widened == []
    (narrower,) = _review(
        contracts,
        "tools/server/server-schema.cpp",
        'field_num("seed", params.seed))',
        'field_num("seed", params.seed))\n        ->set_hard_limits(-1, INT32_MAX)',
    )
    assert narrower.severity == "info"


def test_a_bound_only_the_running_server_knows_is_medium_and_one_still_a_number_is_not(contracts):
    """`n_predict` capped by the server's context size: no value Ollama sends can be checked against it now."""
    capped = "->set_hard_limits(-1, params_base.n_ctx > 0 ? params_base.n_ctx : INT32_MAX)"
    (draft,) = _review(
        contracts,
        "tools/server/server-schema.cpp",
        "->set_hard_limits(-1, INT32_MAX)\n        ->add_alias",
        capped + "\n        ->add_alias",
    )
    assert draft.severity == "medium"
    assert draft.title == (
        "llama-server now rejects request field `n_predict` of POST /completion, which Ollama sends, beyond a "
        "bound its own settings give: `params_base.n_ctx>0?params_base.n_ctx:INT32_MAX`"
    )
    assert "only known to the running server" in draft.detail
    assert draft.local_refs == (_ref('`json:"n_predict,omitempty"`'), _ref("NPredict:    opts.NumPredict,"))
    same_cap = ('->add_alias("max_tokens")', '->add_alias("max_tokens")\n        ->set_desc("capped")')
    assert _review(contracts, "tools/server/server-schema.cpp", *same_cap) == []


def test_a_key_an_endpoint_ollama_never_calls_stops_reading_says_nothing(contracts):
    assert (
        _review(contracts, "tools/server/server-context.cpp", 'metric_def.at("name")', 'metric_def.at("id")')
        == []
    )


# ---- responses -----------------------------------------------------------------------------------------------


def test_a_field_renamed_in_one_chunk_builder_is_high_though_another_builder_keeps_it(contracts):
    (draft,) = _review(
        contracts, "tools/server/server-task.cpp", '{"stop",      true},', '{"done",      true},'
    )
    assert (draft.severity, draft.area) == ("high", "streaming")
    assert draft.title == (
        "`stop` of llama-server's POST /completion stream is no longer written by "
        "`server_task_result_cmpl_final::to_json`"
    )
    # the field's declaration, then where Ollama's code reads it
    assert draft.local_refs == (_ref('`json:"stop"`'), _ref("if chunk.Stop {"))
    assert "it now writes `done`" in draft.detail and "false" in draft.detail


def _review_from(contracts, path: str, base: tuple[str, str], old: str, new: str):
    """The wire items of a bump from UPSTREAM with `base` put in to that with `old` replaced by `new` too."""
    start = {**UPSTREAM, path: UPSTREAM[path].replace(*base)}
    assert UPSTREAM[path].count(base[0]) == 1 and start[path].count(old) == 1, old
    changed = {**start, path: start[path].replace(old, new)}
    return wire_drafts(_texts(start), _texts(changed), contracts)


CHUNKS_THROUGH_A_REFERENCE = """json server_task_result_cmpl_partial::to_json() {
    std::vector<json> chunks;
    chunks.push_back({
        {"content", content},
        {"stop",    false},
        {"stopping_word", nullptr},
    });
    auto & last = chunks[chunks.size() - 1];
    if (timings.prompt_n >= 0) {
        last.push_back({"timings", timings.to_json()});
    }
    last.at("extra").at(0)["detail"] = json {
        {"content", piece},
        {"stop",    done},
    };
    return chunks;
}"""
PARTIAL = TASK_CPP[
    TASK_CPP.index("json server_task_result_cmpl_partial::to_json()") : TASK_CPP.index("json convert_")
].strip()


def test_a_field_written_through_a_reference_to_its_chunk_is_that_chunks_field(contracts):
    """`auto & last = chunks[...]` is the chunk: a key it no longer writes is one the chunk no longer has; keys
    stored under `.at("extra").at(0)["detail"]` are not the chunk's own."""
    task, base = "tools/server/server-task.cpp", (PARTIAL, CHUNKS_THROUGH_A_REFERENCE)
    (draft,) = _review_from(
        contracts,
        task,
        base,
        '    if (timings.prompt_n >= 0) {\n        last.push_back({"timings", timings.to_json()});\n    }\n',
        "",
    )
    assert draft.severity == "high"
    assert draft.title == (
        "`timings` of llama-server's POST /completion stream is no longer written by "
        "`server_task_result_cmpl_partial::to_json`"
    )
    assert _review_from(contracts, task, base, '{"content", piece},', '{"content", piece + suffix},') == []


def test_keys_of_separate_objects_built_in_place_are_not_one_objects(contracts):
    """Two one-key objects written in place in one function are two objects: neither vouches for the other
    as a field of the chunk Ollama decodes."""
    common = "tools/server/server-common.cpp"
    notices = (
        "std::string format_anthropic_sse(const json & data) {",
        (
            "std::string format_notice(const json & data) {\n"
            '    return format_sse(json {{"content", data.at("text")}}) + format_sse(json {{"stop", data.at("last")}});\n'
            "}\n\nstd::string format_anthropic_sse(const json & data) {"
        ),
    )
    assert (
        _review_from(contracts, common, notices, '"content", data.at("text")', '"content", data.at("body")')
        == []
    )


def test_a_top_level_field_written_by_a_function_the_handler_calls_is_compared(contracts):
    context = "tools/server/server-context.cpp"
    helper = (
        '        res->ok({{"status", "ok"}});',
        "        res->ok(health_json());",
    )
    start = {
        **UPSTREAM,
        context: UPSTREAM[context].replace(*helper)
        + 'static json health_json() {\n    return json {{"status", "ok"}};\n}\n',
    }
    changed = {**start, context: start[context].replace('{{"status", "ok"}}', '{{"state", "ok"}}')}
    drafts = wire_drafts(_texts(start), _texts(changed), contracts)
    assert {(d.severity, d.title) for d in drafts} == {
        ("high", "`status` of llama-server's GET /health response is no longer written by `health_json`"),
        (
            "high",
            "Ollama's \"ok\" for `status` no longer matches what llama-server's GET /health response sends",
        ),
    }


def test_a_field_written_as_json_of_another_kind_than_ollamas_type_takes_is_high(contracts):
    """Go's decoder fails on the whole answer when a string field arrives as an object or an array."""
    task = "tools/server/server-task.cpp"
    old = '{"stop_type", stop_type_to_str(stop)},'
    drafts = _review(contracts, task, old, '{"stop_type", json {{"name", stop_type_to_str(stop)}}},')
    (draft,) = [d for d in drafts if "is now" in d.title]
    assert (draft.severity, draft.title) == (
        "high",
        "`stop_type` of llama-server's POST /completion stream is now an object, not a string",
    )
    assert "`string`" in draft.detail and "fails on the whole answer" in draft.detail
    assert draft.local_refs == (_ref('`json:"stop_type"`'), _ref('chunk.StopType == "limit"'))
    (draft,) = _review(contracts, task, '{"stopping_word", nullptr},', '{"stopping_word", json::array()},')
    assert (draft.severity, draft.title) == (
        "high",
        "`stopping_word` of llama-server's POST /completion stream is now an array, not a string",
    )
    # an expression whose kind its form does not say is not judged by kind
    drafts = _review(contracts, task, old, '{"stop_type", std::string(stop_type_to_str(stop))},')
    assert not any("is now" in d.title for d in drafts)


def test_a_nested_field_renamed_in_its_helper_is_found_by_its_path(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-task.cpp",
        '{"predicted_n",  predicted_n},',
        '{"n_predicted",  predicted_n},',
    )
    assert draft.title.startswith("`timings.predicted_n` of llama-server's POST /completion stream")
    assert draft.local_refs == (_ref('`json:"predicted_n"`'),)


def test_a_decoded_field_written_with_another_value_is_medium_with_both_values(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-task.cpp",
        '{"predicted_n",  predicted_n},',
        '{"predicted_n",  n_draft + predicted_n},',
    )
    assert (draft.severity, draft.area) == ("medium", "streaming")
    assert draft.title.startswith(
        "`timings.predicted_n` of llama-server's POST /completion stream is written with"
    )
    assert "`predicted_n`" in draft.detail and "`n_draft + predicted_n`" in draft.detail
    assert draft.local_refs == (_ref('`json:"predicted_n"`'),)


def test_a_field_decoded_into_a_pointer_no_longer_null_is_medium_at_its_nil_check(contracts):
    """Go decodes null into a pointer as nil and any value, "" too, as not nil: the check goes the other way."""
    task = "tools/server/server-task.cpp"
    (draft,) = _review(contracts, task, '{"stopping_word", nullptr},', '{"stopping_word", ""},')
    assert (draft.severity, draft.area) == ("medium", "streaming")
    assert "`stopping_word` of llama-server's POST /completion stream is no longer null" in draft.title
    assert "`*string`" in draft.detail and "`nullptr`" in draft.detail
    assert draft.local_refs == (_ref('`json:"stopping_word"`'), _ref("chunk.Word != nil"))
    # null written another way, or a value where Ollama's type is not a pointer, says nothing of nil
    assert _review(contracts, task, '{"stopping_word", nullptr},', '{"stopping_word", json()},') == []


def test_a_value_reformatted_or_its_variable_renamed_is_quiet(contracts):
    task = "tools/server/server-task.cpp"
    assert (
        _review(contracts, task, '{"predicted_n",  predicted_n},', '{"predicted_n", ( predicted_n )},') == []
    )
    renamed = UPSTREAM[task].replace("predicted_n}", "n_predicted}")
    assert _raising(wire_drafts(_texts(UPSTREAM), _texts({**UPSTREAM, task: renamed}), contracts)) == []
    # an object Ollama decodes into a struct: its own fields are compared
    assert (
        _review(contracts, task, '{"timings",   timings.to_json()},', '{"timings",   stats.to_json()},') == []
    )


def test_a_field_no_longer_written_where_it_only_held_its_go_zero_value_is_quiet(contracts):
    task = "tools/server/server-task.cpp"
    assert (
        _review(
            contracts, task, '{"content", content},\n        {"stop",    false},', '{"content", content},'
        )
        == []
    )
    (draft,) = _review(contracts, task, '{"stop",      true},\n', "")
    assert draft.severity == "high"


def test_a_field_written_under_a_new_condition_is_medium_and_a_rewritten_condition_is_quiet(contracts):
    (draft,) = _review(
        contracts,
        "tools/server/server-task.cpp",
        "if (timings.prompt_n >= 0) {",
        "if (timings.prompt_n >= 0 && include_usage) {",
    )
    assert (draft.severity, draft.area) == ("medium", "streaming")
    assert "`include_usage`" in draft.detail
    assert (
        _review(
            contracts,
            "tools/server/server-task.cpp",
            "if (timings.prompt_n >= 0) {",
            "if (timings.is_set()) {",
        )
        == []
    )


def test_a_field_left_out_only_where_it_holds_the_zero_value_ollama_decodes_is_quiet(contracts):
    old = """    return json {
        {"predicted_n",  predicted_n},
        {"predicted_ms", predicted_ms},
    };"""

    def only_when(condition: str) -> str:
        return (
            """    json base = json {
        {"predicted_ms", predicted_ms},
    };
    if ("""
            + condition
            + """) {
        base["predicted_n"] = predicted_n;
    }
    return base;"""
        )

    task = "tools/server/server-task.cpp"
    assert _raising(_review(contracts, task, old, only_when("predicted_n > 0"))) == []
    # left out for another reason, or for a value that is not Go's zero: Ollama decodes 0 where it was not
    (draft,) = _raising(_review(contracts, task, old, only_when("predicted_n > 1")))
    assert draft.title.startswith(
        "`timings.predicted_n` of llama-server's POST /completion stream is written under"
    )


def test_a_new_field_and_a_change_to_code_ollama_never_calls_are_quiet(contracts):
    assert (
        _review(
            contracts,
            "tools/server/server-task.cpp",
            '{"stop",      true},',
            '{"stop",      true},\n        {"n_draft", n_draft},',
        )
        == []
    )
    assert (
        _review(contracts, "tools/server/server-task.cpp", 'oai["stop"] =', 'oai["stop_sequences"] =') == []
    )


# ---- compared values -------------------------------------------------------------------------------------------


def test_a_compared_value_no_longer_written_is_high_with_the_old_and_new_values(contracts):
    (draft,) = _review(
        contracts, "tools/server/server-context.cpp", '{{"status", "ok"}}', '{{"status", "healthy"}}'
    )
    assert (draft.severity, draft.area) == ("high", "server")
    assert (
        draft.title
        == "Ollama's \"ok\" for `status` no longer matches what llama-server's GET /health response sends"
    )
    assert '"healthy"' in draft.detail and _ref('"ok"') in draft.local_refs


def test_a_compared_value_returned_by_a_helper_and_one_compared_in_any_case(contracts):
    (limit,) = _review(contracts, "tools/server/server-task.cpp", 'return "limit";', 'return "length";')
    assert limit.title.startswith('Ollama\'s "limit" for `stop_type` no longer matches')
    assert _ref('"limit"') in limit.local_refs
    (loading,) = _review(contracts, "tools/server/server-http.cpp", '"Loading model"', '"Model is loading"')
    assert loading.title.startswith('Ollama\'s "loading model" for `error.message`')
    assert _review(contracts, "tools/server/server-http.cpp", '"Loading model"', '"LOADING MODEL"') == []


def test_a_new_word_beside_a_compared_value_is_medium_and_one_ollama_compares_or_a_text_is_not(contracts):
    """`stop_type_to_str` gains `"context"` beside `"limit"`, which Ollama compares `stop_type` with: where
    it is sent for what was `"limit"`, Ollama's comparison no longer holds. A new value that one of Ollama's
    comparisons holds for, a renamed one, or a new error text beside `"Loading model"`, is no such value."""
    task = "tools/server/server-task.cpp"
    limit = '        case STOP_TYPE_LIMIT: return "limit";\n'
    (draft,) = _review(contracts, task, limit, limit + '        case STOP_TYPE_CONTEXT: return "context";\n')
    assert (draft.severity, draft.area) == ("medium", "streaming")
    assert draft.title == (
        "llama-server's POST /completion stream can now send `context` as `stop_type`, which Ollama does not "
        "compare with"
    )
    assert "`eos`, `limit`, `none`" in draft.detail and _ref('"limit"') in draft.local_refs
    assert _review(contracts, task, limit, limit + '        case STOP_TYPE_WORD: return "limit";\n') == []
    assert _review(contracts, task, 'return "eos";', 'return "end_of_stream";') == []  # a rename

    message = '{"message", "Loading model"},'
    other = '{"message", is_sleeping ? "Sleeping" : "Loading model"},'
    assert _review(contracts, "tools/server/server-http.cpp", message, other) == []


def test_a_compared_value_moved_to_a_named_constant_is_quiet(contracts):
    moved = _review(
        contracts,
        "tools/server/server-context.cpp",
        '{{"status", "ok"}}',
        '{{"status", HEALTH_OK}}',
    )
    assert [d.title for d in _raising(moved)] != []  # a constant the file does not declare: no value now
    base = {
        **UPSTREAM,
        "tools/server/server-context.cpp": 'static const char * HEALTH_OK = "ok";\n' + CONTEXT_CPP,
    }
    named = {**base}
    named["tools/server/server-context.cpp"] = base["tools/server/server-context.cpp"].replace(
        '{{"status", "ok"}}', '{{"status", HEALTH_OK}}'
    )
    assert wire_drafts(_texts(base), _texts(named), contracts) == []


# ---- stream frames ---------------------------------------------------------------------------------------------


def test_a_frame_prefix_ollama_cuts_that_loses_its_space_is_high(contracts):
    drafts = _review(
        contracts,
        "tools/server/server-common.cpp",
        'ss << "data: " << safe_json_to_str(data) <<',
        'ss << "data:" << safe_json_to_str(data) <<',
    )
    (draft,) = by_cause(drafts)
    assert (draft.severity, draft.area) == ("high", "streaming")
    assert "Ollama's `data: ` no longer matches" in draft.title
    assert _ref('"data: "') in draft.local_refs


def test_a_dropped_terminator_is_high_only_where_ollama_does_more_than_skip_it():
    """A function that stops writing `data: [DONE]` writes no frame Ollama misreads: a reader that skips the
    terminator (`continue`) is served the same; one that stops reading at it now waits for it."""
    context = "tools/server/server-context.cpp"
    for action, raised in (("continue", False), ("return false, nil", True)):
        reader = SERVER_GO.replace(
            "\t\tvar chunk completionChunk\n",
            f'\t\tif evt == "[DONE]" {{\n\t\t\t{action}\n\t\t}}\n\t\tvar chunk completionChunk\n',
        )
        assert reader != SERVER_GO
        contracts = Contracts(_texts({**OLLAMA, "runner/server.go": reader}))
        drafts = _review(contracts, context, 'output = "data: [DONE]\\n\\n";', 'output = "";')
        assert [(d.severity, d.title) for d in drafts] == (
            [
                (
                    "high",
                    "llama-server's stream frames changed in server-context.cpp: Ollama's `[DONE]` no longer matches",
                )
            ]
            if raised
            else []
        ), action


def test_a_frame_written_the_same_way_or_through_a_constant_is_quiet(contracts):
    assert (
        _review(
            contracts,
            "tools/server/server-common.cpp",
            'ss << "data: " << safe_json_to_str(data) << "\\n\\n";',
            'const std::string prefix = "data: ";\n    ss << prefix << safe_json_to_str(data) << "\\n\\n";',
        )
        == []
    )
    base = {
        **UPSTREAM,
        "tools/server/server-context.cpp": 'static const char * DONE = "data: [DONE]\\n\\n";\n' + CONTEXT_CPP,
    }
    named = {**base}
    named["tools/server/server-context.cpp"] = base["tools/server/server-context.cpp"].replace(
        'output = "data: [DONE]\\n\\n";', "output = DONE;"
    )
    assert wire_drafts(_texts(base), _texts(named), contracts) == []


def test_a_new_comment_frame_is_quiet_when_ollama_skips_comments_and_high_when_it_does_not(contracts):
    ping = (
        'output = "data: [DONE]\\n\\n";',
        'output = "data: [DONE]\\n\\n";\n            output = ":\\n\\n";',
    )
    assert _review(contracts, "tools/server/server-context.cpp", *ping) == []
    unaware = {
        **OLLAMA,
        "runner/server.go": SERVER_GO.replace('strings.HasPrefix(line, ":")', "len(line) == 0"),
    }
    blind = Contracts({p: code_text(t, p) for p, t in unaware.items()})
    (draft,) = _review(blind, "tools/server/server-context.cpp", *ping)
    assert (draft.severity, draft.title) == (
        "high",
        "llama-server's stream frames changed in server-context.cpp: `:\\n\\n` new",
    )


def test_a_formatter_ollamas_reader_never_accepted_may_change(contracts):
    assert (
        _review(contracts, "tools/server/server-common.cpp", 'ss << "event: " <<', 'ss << "event:" <<') == []
    )


# ---- Ollama's side -----------------------------------------------------------------------------------------


def test_a_forwarded_option_brings_its_default_and_its_name_into_the_inventory(contracts):
    fields = {f.path: f for f in contracts.request_fields if f.endpoint == "POST /completion"}
    assert (fields["seed"].values, fields["seed"].forwards) == (("integer", "-1"), ("seed",))
    assert fields["n_predict"].forwards == ("num_predict",)
    assert fields["prompt"].forwards == ()


def test_a_tree_that_reads_the_same_keeps_its_inventory_and_one_that_does_not_gets_a_new_one():
    first = contracts_of({path: code_text(text, path) for path, text in OLLAMA.items()})
    assert first.request_fields
    same = {path: code_text(text, path) for path, text in OLLAMA.items()}
    assert contracts_of(same) is first and first.ollama.texts is same
    changed = {**same, "runner/server.go": same["runner/server.go"].replace('"limit"', '"length"')}
    other = contracts_of(changed)
    assert other is not first
    assert {p.value for p in other.output_patterns} >= {"length"}


# ---- the inventory kept across reviews ------------------------------------------------------------------------


def test_a_second_review_of_the_same_go_code_reads_the_inventory_kept_by_the_first(tmp_path, monkeypatch):
    """A re-check finds what Ollama's Go code sends in the facts store, and finds it again when a file the
    inventory read changes: a kept inventory is never another tree's. In one process, as on one CPU (the
    wire check's own process lets its memory go when it ends)."""
    from bot.cache import facts
    from bot.review import beside
    from bot.review.consumers import contracts as inventory
    from tests.fixtures import review_one_commit

    monkeypatch.setattr(beside, "_may_fork", lambda: False)

    path, old = "tools/server/server-schema.cpp", 'field_num("n_predict", params.n_predict))'
    changes = {path: UPSTREAM[path].replace(old, 'field_num("max_tokens", params.n_predict))')}

    def titles(ollama, at):
        inventory._LAST.clear()  # no reuse within the process: only the store can serve it
        found = review_one_commit(
            tmp_path / at, UPSTREAM, changes, {p: t.encode() for p, t in ollama.items()}
        )
        return [f.title for f in found if f.severity == "high"]

    uncached = titles(OLLAMA, "uncached")
    assert any("`n_predict` of POST /completion" in t for t in uncached)
    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        assert titles(OLLAMA, "first") == uncached
        read = inventory._LAST[0]
        assert "resolver" not in read.__dict__  # the Go program let go once the review is done with it
        assert read.output_patterns == Contracts(read.ollama.texts).output_patterns  # read again when asked
        programs = []
        monkeypatch.setattr(
            inventory, "GoProgram", lambda *a: programs.append(a) or pytest.fail("read again")
        )
        assert titles(OLLAMA, "again") == uncached
        assert not programs
        monkeypatch.undo()
        # Ollama's request no longer sends n_predict: the kept inventory is not this tree's
        renamed = {**OLLAMA, "runner/server.go": SERVER_GO.replace('json:"n_predict', 'json:"n_keep_x')}
        assert not any("`n_predict`" in t for t in titles(renamed, "renamed"))


def test_a_re_check_reads_llama_servers_code_from_the_facts_store(tmp_path, contracts, monkeypatch):
    """What the wire check reads of the server sources is kept by their texts: a review of the same refs
    whose Ollama side reads otherwise (here its documentation) finds it without parsing."""
    from bot.cache import facts
    from bot.review import servercode, wire

    path, old = "tools/server/server-schema.cpp", 'field_num("n_predict", params.n_predict))'
    changed = {**UPSTREAM, path: UPSTREAM[path].replace(old, 'field_num("max_tokens", params.n_predict))')}
    uncached = wire_drafts(_texts(UPSTREAM), _texts(changed), contracts)
    assert _raising(uncached)
    with facts.using(facts.FactStore(tmp_path / "facts")):
        wire._RECENT.clear()
        assert wire_drafts(_texts(UPSTREAM), _texts(changed), contracts) == uncached
        wire._RECENT.clear()
        monkeypatch.setattr(servercode, "ServerReading", lambda *a: pytest.fail("parsed again"))
        documented = Contracts(_texts({**OLLAMA, "docs/modelfile.md": DOCS + "| seed | random |\n"}))
        assert wire_drafts(_texts(UPSTREAM), _texts(changed), documented) == uncached


def test_a_re_check_of_the_same_server_and_ollama_texts_compares_nothing_again(tmp_path, monkeypatch):
    """The wire items depend on the server sources, the inventory's wire groups and the texts of Ollama's
    tree the check reads: the same again is found kept; a documentation text that reads otherwise is
    compared again, and the item says what it says now."""
    from bot.cache import facts
    from bot.review import wire

    path = "tools/server/server-schema.cpp"
    bound = "params.penalty_last_n))\n        ->set_hard_limits({}, INT32_MAX)"
    limited = {**UPSTREAM, path: UPSTREAM[path].replace(bound.format(-1), bound.format(0))}

    def raising(ollama: dict[str, str]):
        return _raising(wire_drafts(_texts(UPSTREAM), _texts(limited), Contracts(_texts(ollama))))

    uncached = raising(OLLAMA)
    with facts.using(facts.FactStore(tmp_path / "facts")):
        assert raising(OLLAMA) == uncached
        compare = wire._drafts
        monkeypatch.setattr(wire, "_drafts", lambda *a: pytest.fail("compared again"))
        assert raising(OLLAMA) == uncached
        monkeypatch.setattr(wire, "_drafts", compare)
        (draft,) = raising({**OLLAMA, "docs/modelfile.md": DOCS.replace("-1 = num_ctx", "-1 = the context")})
    assert "-1 = num_ctx" in uncached[0].detail and "-1 = the context" in draft.detail


@pytest.mark.parametrize(
    ("use", "reported"),
    [
        (
            '    if (!stream.is_boolean()) {\n        throw std::invalid_argument("stream must be a boolean");\n    }\n',
            False,
        ),
        ("    task.params.stream = stream;\n", True),
    ],
    ids=["read-only-to-reject", "read-for-its-value"],
)
def test_a_field_read_only_to_reject_a_request_is_no_finding_once_unread(contracts, use, reported):
    """Upstream that stops checking a field Ollama sends accepts what it accepted before: nothing Ollama asks
    for is lost. A field whose value was used is."""
    read = '    const auto & stream = data.at("stream");\n' + use
    anchor = '    const auto & prompt = data.at("prompt");\n'
    base = {**UPSTREAM, "tools/server/server-context.cpp": CONTEXT_CPP.replace(anchor, anchor + read)}
    drafts = wire_drafts(_texts(base), _texts(UPSTREAM), contracts)
    titles = [d.title for d in _raising(drafts)]
    unread = "llama-server no longer reads request field `stream` of POST /completion, which Ollama sends"
    assert (unread in titles) == reported, titles


def test_a_new_frame_is_compared_when_upstream_inlines_the_lambda_that_writes_the_frames():
    """A frame written by a named lambda at the old ref and by the function that handed it on at the new one
    is the same function's frame: the new ping is still a frame Ollama's reader does not accept."""
    named = CONTEXT_CPP.replace(
        "    res->set_next([res_this = res.get()](std::string & output) -> bool {",
        "    res->next = [res_this = res.get()](std::string & output) -> bool {",
    ).replace(
        "        return true;\n    });\n    return res;", "        return true;\n    };\n    return res;"
    )
    inlined = CONTEXT_CPP.replace(
        'output = "data: [DONE]\\n\\n";', 'output = "data: [DONE]\\n\\n";\n            output = ":\\n\\n";'
    )
    unaware = {
        **OLLAMA,
        "runner/server.go": SERVER_GO.replace('strings.HasPrefix(line, ":")', "len(line) == 0"),
    }
    blind = Contracts({p: code_text(t, p) for p, t in unaware.items()})
    old = {**UPSTREAM, "tools/server/server-context.cpp": named}
    new = {**UPSTREAM, "tools/server/server-context.cpp": inlined}
    titles = [d.title for d in wire_drafts(_texts(old), _texts(new), blind) if d.severity == "high"]
    assert titles == ["llama-server's stream frames changed in server-context.cpp: `:\\n\\n` new"]


def test_an_object_a_frame_wrote_empty_and_now_fills_is_medium(contracts):
    """Ollama reads every frame alike: a closing frame whose object now carries what others carried is read
    again."""
    task = "tools/server/server-task.cpp"
    written, empty = '{"timings",   timings.to_json()},', '{"timings",   json::object()},'
    (draft,) = _review_from(contracts, task, (written, empty), empty, written)
    assert (draft.severity, draft.title) == (
        "medium",
        (
            "`timings` of llama-server's POST /completion stream is no longer written empty by "
            "`server_task_result_cmpl_final::to_json`"
        ),
    )
    assert "`json::object()`" in draft.detail and "`timings.to_json()`" in draft.detail
    # an object written with another expression, never empty: its fields are compared each
    assert _review(contracts, task, written, written.replace("to_json()", "to_json(true)")) == []


def test_a_decoded_text_the_server_empties_in_fewer_places_is_medium(contracts):
    """The final chunk's text was emptied in stream mode (the partial chunks carried it): no longer."""
    context = "tools/server/server-context.cpp"
    gone = '        if (per_token) {\n            result->content = "";\n        }\n'
    read = "        auto result = res_this->rd.next();\n"
    emptying = (read, read + gone)
    drafts = _review_from(contracts, context, emptying, gone, "")
    (draft,) = drafts
    assert (draft.severity, draft.title) == (
        "medium",
        "`content` of llama-server's POST /completion stream is no longer emptied where it was (`content`)",
    )
    assert "empty: 1 at the old ref (`tools/server/server-context.cpp:38`), 0 at the new" in draft.detail
    assert draft.local_refs[0] == _ref('`json:"content"`')
    # emptied the other way (`.clear()`): the same place count, nothing told
    cleared = gone.replace('result->content = "";', "result->content.clear();")
    assert _review_from(contracts, context, emptying, gone, cleared) == []
    # emptied unless text was held back: the condition picks the empty text where the partial chunks carried it all
    flushed = gone.replace('result->content = "";', 'result->content = held.empty() ? "" : held;')
    assert _review_from(contracts, context, emptying, gone, flushed) == []


TEMPLATE_GO = """package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

type templateResponse struct {
	Prompt string `json:"prompt"`
}

func (s *Server) ApplyTemplate(messages []string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"messages": messages,
	})
	if err != nil {
		return "", err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/apply-template", s.port)
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out templateResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.Prompt, nil
}
"""

COMPLETION_ROUTE = '    ctx_http.post("/completion", ex_wrapper(routes.post_completions));\n'
TEMPLATE_ROUTE = (
    COMPLETION_ROUTE,
    COMPLETION_ROUTE + '    ctx_http.post("/apply-template", ex_wrapper(routes.post_apply_template));\n',
)
NEXT_HANDLER = "    this->post_anthropic_messages = "
TEMPLATE_HANDLER = (
    NEXT_HANDLER,
    """    this->post_apply_template = [this](const server_http_req & req) {
        auto res = create_response();
        json body = json::parse(req.body);
        json data = chat_params_parse(body);
        res->ok({{"prompt", data.at("prompt")}});
        return res;
    };
"""
    + NEXT_HANDLER,
)
NEXT_FUNCTION = "std::string format_sse("
TEMPLATE_PARSE = (
    NEXT_FUNCTION,
    """json chat_params_parse(const json & body) {
    json out;
    chat_inputs inputs;
    inputs.add_generation_prompt = json_value(body, "add_generation_prompt", true);
    inputs.messages = body.at("messages");
    out["prompt"] = apply_template(inputs);
    return out;
}

"""
    + NEXT_FUNCTION,
)
PARSED = "        json body = json::parse(req.body);\n"
INJECTED = (
    PARSED,
    PARSED
    + """        if (!body.contains("add_generation_prompt")) {
            body["add_generation_prompt"] = false;
        }
""",
)


def _with_template_endpoint() -> dict[str, str]:
    server, context, common = (
        "tools/server/server.cpp",
        "tools/server/server-context.cpp",
        "tools/server/server-common.cpp",
    )
    return {
        **UPSTREAM,
        server: UPSTREAM[server].replace(*TEMPLATE_ROUTE),
        context: UPSTREAM[context].replace(*TEMPLATE_HANDLER),
        common: UPSTREAM[common].replace(*TEMPLATE_PARSE),
    }


def test_a_default_of_an_endpoint_doing_template_work_is_medium_where_ollama_calls_it():
    """Ollama has `/apply-template` render its prompts and never sends `add_generation_prompt`: a default the
    handler now writes into requests that lack the key, or a new default where the key is read, changes every
    prompt Ollama renders there (medium, at the call). The same default of an endpoint that does no such work
    is information; a value written when the request has the key is no default."""
    ollama = {**OLLAMA, "runner/template.go": TEMPLATE_GO}
    contracts = Contracts({path: code_text(text, path) for path, text in ollama.items()})
    start = _with_template_endpoint()
    context = "tools/server/server-context.cpp"
    injected = {**start, context: start[context].replace(*INJECTED)}
    (draft,) = wire_drafts(_texts(start), _texts(injected), contracts)
    assert draft.severity == "medium" and "`add_generation_prompt`" in draft.title
    assert "`POST /apply-template`" in draft.title
    assert "before `true`" in draft.detail and "now `false`" in draft.detail
    assert "do this template work" in draft.detail
    call = (
        TEMPLATE_GO.split("\n").index('\turl := fmt.Sprintf("http://127.0.0.1:%d/apply-template", s.port)')
        + 1
    )
    assert LocalRef("runner/template.go", call) in draft.local_refs

    common = "tools/server/server-common.cpp"
    flipped = {
        **start,
        common: start[common].replace('"add_generation_prompt", true', '"add_generation_prompt", false'),
    }
    (draft,) = wire_drafts(_texts(start), _texts(flipped), contracts)
    assert draft.severity == "medium" and "`POST /apply-template`" in draft.title

    present = INJECTED[1].replace("!body.contains", "body.contains")
    only_with_key = {**start, context: start[context].replace(INJECTED[0], present)}
    assert wire_drafts(_texts(start), _texts(only_with_key), contracts) == []

    read = "        json data = json::parse(req.body);\n"
    defaulted = """        if (!data.contains("timings_per_token")) {
            data["timings_per_token"] = true;
        }
"""
    completion = (read, read + defaulted)
    (info,) = wire_drafts(
        _texts(start), _texts({**start, context: start[context].replace(*completion)}), contracts
    )
    assert (
        info.severity == "info" and "`timings_per_token`" in info.title and "`POST /completion`" in info.title
    )


def test_a_body_is_declared_where_its_literal_opens_never_in_another_function():
    """A one-line map literal is declared on its field's line; a body whose literal opens nowhere above its
    field in the same function is shown at the field, not at a struct of the function before."""
    go = """package runner

func tokenize() {
	var result struct {
		Tokens []int `json:"tokens"`
	}
}

func detokenize(tokens []int) {
	data, _ := json.Marshal(map[string][]int{"tokens": tokens})
}

func apply(messages []string) {
	body := map[string]any{
		"messages": messages,
	}
}

func build(messages []string) {
	body["messages"] = messages
}
"""
    lines = go.split("\n")
    at = lambda needle: LocalRef("r.go", next(n for n, line in enumerate(lines, 1) if needle in line))
    ollama = {"r.go": go}
    assert declared_at(ollama, at('{"tokens": tokens}')) == at('{"tokens": tokens}')
    assert declared_at(ollama, at('"messages": messages,')) == at("body := map[string]any{")
    assert declared_at(ollama, at('body["messages"]')) == at('body["messages"]')
