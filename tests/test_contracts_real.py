"""The contract inventory of the real Ollama (commit cd3704409, the files under tests/data/contracts/, see
SOURCE.md there): the contracts read off its code by hand are in it, at their lines, and nothing floods it."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from bot.review.consumers.contracts import contract_inventory
from bot.review.source import code_text

DATA = Path(__file__).parent / "data" / "contracts" / "ollama"


@pytest.fixture(scope="module")
def inventory():
    tree = {}
    for file in DATA.rglob("*.gz"):
        path = file.relative_to(DATA).as_posix().removesuffix(".gz")
        tree[path] = code_text(gzip.decompress(file.read_bytes()).decode(), path)
    return contract_inventory(tree)


def test_each_group_has_the_size_read_off_the_code(inventory):
    assert inventory.sizes() == {
        "output_patterns": 79,
        "launch": 43,
        "request_fields": 118,
        "response_fields": 56,
        "behaviours": 50,
        "build": 107,
    }


# (constant, kind, where it is written, a source it is compared with), read in the code of cd3704409
OUTPUT_PATTERNS = [
    ("system_info:", "substring", "discover/llama_server.go:99", "llama-server stderr"),
    (
        r"^\s+(.+?):\s+(.+?)\s+\((\d+)\s+MiB,\s+(\d+)\s+MiB\s+free\)",
        "regexp",
        "discover/llama_server.go:179",
        "llama-server --list-devices --offline --verbose stdout+stderr",
    ),
    (r"CUDA\s*:\s*ARCHS\s*=\s*([\d,]+)", "regexp", "discover/llama_server.go:193", "llama-server stderr"),
    ("ok", "equals", "llm/llama_server.go:1235", "GET /health response"),
    ("no slot available", "equals", "llm/llama_server.go:1239", "GET /health response"),
    ("data: ", "prefix", "llm/llama_server.go:1682", "POST /completion stream"),
    ("limit", "equals", "llm/llama_server.go:1715", "POST /completion stream"),
    ("data: ", "prefix", "llm/llama_server.go:1972", "POST /v1/chat/completions stream"),
    ("[DONE]", "equals", "llm/llama_server.go:1976", "POST /v1/chat/completions stream"),
    ("length", "equals", "llm/llama_server.go:2016", "POST /v1/chat/completions stream"),
    ("context size", "substring", "llm/llama_server.go:2475", "POST /v1/embeddings response"),
    (r"offloaded\s+(\d+)/(\d+)\s+layers to GPU", "regexp", "llm/llama_server.go:2742", "llama-server stderr"),
    ("_Mapped", "suffix", "llm/llama_server.go:2764", "llama-server stdout"),
    ("GGML_ASSERT", "substring", "llm/status.go:79", "llama-server stderr"),
    ("out of memory", "substring", "llm/status.go:86", "llama-server stderr"),
    ("retrying without pipeline parallelism", "substring", "llm/status.go:99", "llama-server stderr"),
    ("failed to initialize metal backend", "substring", "llm/metal_retry.go:29", "llama-server stdout"),
    (r"\[\s*(\d+)/\s*(\d+)\]", "regexp", "server/quantization.go:27", "llama-quantize stdout"),
]


@pytest.mark.parametrize(("value", "kind", "where", "source"), OUTPUT_PATTERNS)
def test_the_output_patterns_read_off_the_code_are_there(inventory, value, kind, where, source):
    found = [
        p for p in inventory.output_patterns if (p.value, f"{p.ref.path}:{p.ref.line}") == (value, where)
    ]
    assert [(p.kind, source in p.sources) for p in found] == [(kind, True)]


def test_no_output_pattern_is_a_go_error_or_ollamas_own_text(inventory):
    """Ollama compares Go's errors ("connection refused", "unexpected EOF", "token too long") and its own
    strings too: none of them is something llama-server prints."""
    values = {p.value for p in inventory.output_patterns}
    assert not values & {
        "connection refused",
        "unexpected EOF",
        "forcibly closed",
        "token too long",
        "image/",
    }
    assert {p.ref.path.split("/")[0] for p in inventory.output_patterns} == {"discover", "llm", "server"}
    sources = {s.split(" ")[0] for p in inventory.output_patterns for s in p.sources}
    assert sources == {"llama-server", "llama-quantize", "GET", "POST"}


def _launch(inventory):
    return {(s.program, s.kind, s.name): s for s in inventory.launch}


@pytest.mark.parametrize(
    ("name", "values", "always", "where"),
    [
        ("--port", ("integer",), True, "llm/llama_server.go:371"),
        ("--host", ('"127.0.0.1"',), True, "llm/llama_server.go:372"),
        ("--log-verbosity", ('"4"',), True, "llm/llama_server.go:575"),
        ("--flash-attn", ('"on"', '"off"', '"auto"'), True, "llm/llama_server.go:616"),
        ("-ngl", ("integer", '"0"'), False, "llm/llama_server.go:405"),
        ("-t", ("integer",), False, "llm/llama_server.go:415"),
        ("--chat-template", ('"chatml"',), False, "llm/llama_server.go:783"),
        ("--spec-type", ('""', '"draft-mtp"', '"draft-dflash"'), False, "llm/llama_server.go:815"),
        ("--list-devices", (), True, "discover/llama_server.go:143"),
    ],
)
def test_the_flags_ollama_starts_llama_server_with_are_there(inventory, name, values, always, where):
    setting = _launch(inventory)[("llama-server", "flag", name)]
    assert (setting.values, setting.always) == (values, always)
    assert where in [f"{r.path}:{r.line}" for r in setting.refs]


def test_the_environment_ollama_starts_llama_server_with_is_there(inventory):
    env = {name: s for (program, kind, name), s in _launch(inventory).items() if kind == "env"}
    assert set(env) == {
        "GGML_METAL_TENSOR_DISABLE",
        "GGML_CUDA_INIT",
        "GGML_BACKEND_PATH",
        "GGML_VK_VISIBLE_DEVICES",
        "LLAMA_MEDIA_MARKER",
        "LLAMA_ARG_FIT_TARGET",
    }
    marker = env["LLAMA_MEDIA_MARKER"]
    assert (marker.always, [f"{r.path}:{r.line}" for r in marker.refs]) == (True, ["llm/llama_server.go:928"])
    assert env["LLAMA_ARG_FIT_TARGET"].values == ("integer",)
    assert _launch(inventory)[("llama-quantize", "flag", "--allow-requantize")].always


def _fields(entries):
    return {(f.endpoint, f.path): f for f in entries}


@pytest.mark.parametrize(
    ("endpoint", "path", "values", "optional", "line"),
    [
        ("POST /completion", "stream", ("true",), False, 1396),
        ("POST /completion", "cache_prompt", ("true",), False, 1397),
        ("POST /completion", "n_predict", ("integer", "-1"), True, 1398),  # -1: api.DefaultOptions
        ("POST /completion", "temperature", ("number", "0.8"), False, 1400),
        ("POST /v1/chat/completions", "response_format.type", ('"json_object"', '"json_schema"'), True, 2317),
        (
            "POST /v1/chat/completions",
            "messages[].content[].type",
            ('"text"', '"input_audio"', '"image_url"'),
            True,
            2231,
        ),
        ("POST /v1/chat/completions", "chat_template_kwargs.enable_thinking", ("false", "bool"), True, 2195),
        ("POST /tokenize", "add_special", ("true", "false"), True, 2484),
        ("POST /v1/embeddings", "embd_normalize", ("-1",), True, 2355),
    ],
)
def test_the_request_fields_read_off_the_code_are_there(inventory, endpoint, path, values, optional, line):
    field = _fields(inventory.request_fields)[(endpoint, path)]
    assert (field.values, field.optional, field.ref.path, field.ref.line) == (
        values,
        optional,
        "llm/llama_server.go",
        line,
    )


@pytest.mark.parametrize(
    ("endpoint", "direction", "path", "line"),
    [
        ("GET /health", "response", "status", 1225),
        ("GET /health", "response", "error.message", 1227),
        ("POST /completion", "stream", "stop_type", 1472),
        ("POST /completion", "stream", "timings.predicted_n", 1507),
        ("POST /completion", "stream", "completion_probabilities[].top_logprobs", 1524),
        ("POST /v1/chat/completions", "stream", "choices[].delta.reasoning_content", 1480),
        ("POST /v1/chat/completions", "stream", "choices[].delta.tool_calls[].function.arguments", 1487),
        ("POST /v1/chat/completions", "stream", "choices[].finish_reason", 1491),
        ("POST /v1/embeddings", "response", "usage.prompt_tokens", 2395),
        ("POST /tokenize", "response", "tokens", 2519),
    ],
)
def test_the_response_fields_read_off_the_code_are_there(inventory, endpoint, direction, path, line):
    field = _fields(inventory.response_fields)[(endpoint, path)]
    assert (field.direction, field.ref.path, field.ref.line) == (direction, "llm/llama_server.go", line)


def test_only_what_is_sent_to_llama_server_is_a_request_field(inventory):
    """api/types.go holds Ollama's own API (keep_alive, model ...): none of it goes to llama-server."""
    assert {f.ref.path for f in inventory.request_fields + inventory.response_fields} == {
        "llm/llama_server.go"
    }
    assert Counter(f.endpoint for f in inventory.request_fields) == {
        "POST /apply-template": 45,
        "POST /v1/chat/completions": 45,
        "POST /completion": 22,
        "POST /tokenize": 3,
        "POST /v1/embeddings": 2,
        "POST /detokenize": 1,
    }


def test_the_behaviours_say_what_ollama_sets_and_what_it_leaves_to_upstream(inventory):
    found = {(b.area, b.subject): b.setting for b in inventory.behaviours}
    assert found[("sampler", "field temperature of POST /completion")] == "sends number, 0.8 in every request"
    assert found[("sampler", "field typical_p of POST /completion")] == (
        "sends number, 1.0 in some requests only (or not when zero); upstream's default otherwise"
    )
    assert found[("template", "flag --chat-template of llama-server")] == (
        'passes "chatml" on some starts only; llama-server\'s default otherwise'
    )
    assert found[("tokenizer", "field add_special of POST /tokenize")].startswith("sends true, false in some")
    assert ("tokenizer", "endpoint POST /detokenize") in found
    assert not [
        b for b in found if b[0] == "sampler" and "apply-template" in b[1]
    ]  # a rendering, no sampling
    assert Counter(area for area, _ in found) == {"sampler": 34, "template": 9, "tokenizer": 7}


@pytest.mark.parametrize(
    ("kind", "name", "value", "where"),
    [
        ("option", "LLAMA_BUILD_SERVER", "ON", "llama/server/CMakeLists.txt:169"),
        ("option", "GGML_BACKEND_DL", "ON", "llama/server/CMakePresets.json:11"),
        ("target", "llama-server", "", "llama/server/CMakeLists.txt:524"),
        ("target", "mtmd", "", "llama/server/CMakeLists.txt:197"),
        ("target", "ggml-cuda", "", "llama/server/CMakeLists.txt:456"),
        ("package", "CUDAToolkit", "", "llama/server/CMakeLists.txt:226"),
        ("preset", "cpu", "", "Dockerfile:88"),
    ],
)
def test_what_the_build_relies_on_is_there(inventory, kind, name, value, where):
    items = {(i.kind, i.name, i.value): [f"{r.path}:{r.line}" for r in i.refs] for i in inventory.build}
    assert where in items[(kind, name, value)]


def test_the_build_leaves_out_ollamas_own_variables_and_targets(inventory):
    names = {i.name for i in inventory.build}
    assert not [n for n in names if n.startswith("OLLAMA_")]
    assert "ollama-llama-cpp-source" not in names  # an ExternalProject Ollama defines
    assert Counter(i.kind for i in inventory.build) == {
        "option": 65,
        "target": 17,
        "preset": 9,
        "program": 7,
        "tool": 5,
        "package": 4,
    }
