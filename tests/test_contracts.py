"""The contract inventory: what of upstream's behaviour Ollama's code relies on, read from its Go code and build.

A small Ollama-like tree exercises each kind of contract (a scanner loop over the server's stderr, a regular
expression over `--list-devices`, flags built from configuration fields and a switch, an SSE reader, request
and response structs, the build) next to code that must not count (a prefix compared with user input, a JSON
struct written to a file, another program's output); `contracts` runs on it as a real git repository. The
real Ollama is in tests/test_contracts_real.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.review.consumers.contracts import contract_inventory
from bot.review.consumers.contracts.build import OPTIONAL
from bot.review.source import code_text
from tests.fixtures import RepoBuilder

ROOT = Path(__file__).resolve().parent.parent

GO_MOD = "module example.com/ollama\n\ngo 1.22\n"

CMAKE = """cmake_minimum_required(VERSION 3.24)
project(Ollama C CXX)
find_package(Threads REQUIRED)
set(GGML_CUDA ON CACHE BOOL "" FORCE)
set(OLLAMA_RUNNER_DIR "" CACHE STRING "")
foreach(_t IN ITEMS llama mtmd)
  if(TARGET ${_t})
    target_sources(${_t} PRIVATE compat.cpp)
  endif()
endforeach()
install(TARGETS llama-server RUNTIME DESTINATION lib)
find_program(GIT_EXE git)
add_custom_target(ollama-docs COMMAND ${CMAKE_COMMAND} -E echo docs)
"""

DOCKERFILE = """FROM scratch
RUN cmake -S . --preset cpu && cmake --build build --target llama-server
"""

BINARY_GO = """package runner

import "path/filepath"

// ServerPath is where the upstream server binary is installed.
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
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
)

type Config struct {
	Threads   int
	Jinja     bool
	CacheType string
}

type Server struct {
	port  int
	ready bool
}

func cacheTypeFlag(kind string) string {
	switch kind {
	case "q8":
		return "q8_0"
	case "q4":
		return "q4_0"
	default:
		return "f16"
	}
}

func appendConfigArgs(params []string, cfg Config) []string {
	if cfg.Threads > 0 {
		params = append(params, "--threads", strconv.Itoa(cfg.Threads))
	}
	if !cfg.Jinja {
		params = append(params, "--no-jinja")
	}
	return params
}

func start(dir string, cfg Config) (*exec.Cmd, int, error) {
	exe := ServerPath(dir)
	port := 8089
	params := []string{"--port", strconv.Itoa(port), "--host", "127.0.0.1"}
	params = appendConfigArgs(params, cfg)
	params = append(params, "--cache-type-k", cacheTypeFlag(cfg.CacheType))
	cmd := exec.Command(exe, params...)
	cmd.Env = append(cmd.Env, "LLAMA_ARG_FLASH_ATTN=on")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, 0, err
	}
	go watch(stderr)
	return cmd, port, cmd.Start()
}

func watch(r io.Reader) {
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "main: server is listening") {
			fmt.Println("ready")
		}
	}
}

func (s *Server) Launch(dir string, cfg Config) error {
	_, port, err := start(dir, cfg)
	if err != nil {
		return err
	}
	s.port = port
	return nil
}

type completionRequest struct {
	Prompt      string  `json:"prompt"`
	Stream      bool    `json:"stream"`
	Temperature float32 `json:"temperature"`
	TopK        int     `json:"top_k,omitempty"`
}

type completionChunk struct {
	Content string `json:"content"`
	Stop    bool   `json:"stop"`
	Timings struct {
		PredictedN int `json:"predicted_n"`
	} `json:"timings"`
}

func (s *Server) Health() (bool, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", s.port))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var status struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		return false, err
	}
	return status.Status == "ok", nil
}

func (s *Server) Complete(prompt string, temperature float32, fn func(string)) error {
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
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		line := scanner.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return nil
		}
		var chunk completionChunk
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return err
		}
		fn(chunk.Content)
	}
	return scanner.Err()
}
"""

DEVICES_GO = """package discover

import (
	"os/exec"
	"regexp"
	"strings"

	"example.com/ollama/runner"
)

var deviceLine = regexp.MustCompile(`^\\s+(\\w+): (.+) \\((\\d+) MiB, (\\d+) MiB free\\)`)

func Devices(dir string) ([]string, error) {
	out, err := exec.Command(runner.ServerPath(dir), "--list-devices").CombinedOutput()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(out), "\\n") {
		if m := deviceLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	return names, nil
}
"""

# What must not count: user input, a file Ollama writes, another program's output.
CLI_GO = """package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
)

type settings struct {
	Theme string `json:"theme"`
}

func Repl() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		if strings.HasPrefix(scanner.Text(), "/bye") {
			return
		}
	}
}

func Save(path string) error {
	data, err := json.Marshal(settings{Theme: "dark"})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func Clean() bool {
	out, _ := exec.Command("git", "status").Output()
	return strings.Contains(string(out), "nothing to commit")
}
"""

TREE = {
    "go.mod": GO_MOD,
    "CMakeLists.txt": CMAKE,
    "Dockerfile": DOCKERFILE,
    "runner/binary.go": BINARY_GO,
    "runner/server.go": SERVER_GO,
    "runner/server_test.go": 'package runner\n\nfunc helper() bool { return strings.Contains(out, "in a test") }\n',
    "discover/devices.go": DEVICES_GO,
    "cli/cli.go": CLI_GO,
}


def _line(path: str, needle: str, nth: int = 1) -> int:
    """The line of the nth occurrence of `needle` in one of TREE's files."""
    text = TREE[path]
    at = -1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


@pytest.fixture(scope="module")
def inventory():
    return contract_inventory({path: code_text(text, path) for path, text in TREE.items()})


def _pattern(inventory, value: str):
    found = [p for p in inventory.output_patterns if p.value == value]
    assert len(found) == 1, f"{value!r}: {found}"
    return found[0]


def test_a_prefix_matched_on_the_servers_stderr_is_an_output_pattern(inventory):
    pattern = _pattern(inventory, "main: server is listening")
    assert pattern.kind == "prefix"
    assert pattern.sources == ("llama-server stderr",)
    assert (pattern.ref.path, pattern.ref.line) == (
        "runner/server.go",
        _line("runner/server.go", '"main: server'),
    )


def test_a_regexp_over_list_devices_output_is_an_output_pattern(inventory):
    pattern = _pattern(inventory, r"^\s+(\w+): (.+) \((\d+) MiB, (\d+) MiB free\)")
    assert pattern.kind == "regexp"
    assert pattern.sources == ("llama-server --list-devices stdout+stderr",)
    assert (pattern.ref.path, pattern.ref.line) == (
        "discover/devices.go",
        _line("discover/devices.go", "MustCompile"),
    )
    assert [(u.path, u.line) for u in pattern.used_at] == [
        ("discover/devices.go", _line("discover/devices.go", "FindString"))
    ]


def test_the_sse_framing_and_end_marker_of_a_stream_are_output_patterns(inventory):
    data = _pattern(inventory, "data: ")
    done = _pattern(inventory, "[DONE]")
    assert (data.kind, data.sources) == ("prefix", ("POST /completion stream",))
    assert (done.kind, done.sources) == ("equals", ("POST /completion stream",))
    assert done.ref.line == _line("runner/server.go", '"[DONE]"')


def test_a_status_decoded_from_a_response_and_compared_is_an_output_pattern(inventory):
    ok = _pattern(inventory, "ok")
    assert (ok.kind, ok.sources, ok.expressions) == ("equals", ("GET /health response",), ("status.Status",))


def test_comparisons_of_user_input_and_other_programs_output_do_not_count(inventory):
    values = {p.value for p in inventory.output_patterns}
    assert not values & {"/bye", "nothing to commit", "in a test"}
    assert {p.ref.path for p in inventory.output_patterns} == {"runner/server.go", "discover/devices.go"}


def _setting(inventory, kind: str, name: str):
    found = [s for s in inventory.launch if (s.kind, s.name) == (kind, name)]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def test_flags_built_from_configuration_fields_are_launch_settings_passed_on_some_starts(inventory):
    threads = _setting(inventory, "flag", "--threads")
    assert (threads.program, threads.values, threads.always) == ("llama-server", ("integer",), False)
    assert [(r.path, r.line) for r in threads.refs] == [
        ("runner/server.go", _line("runner/server.go", '"--threads"'))
    ]
    jinja = _setting(inventory, "flag", "--no-jinja")
    assert (jinja.values, jinja.always) == ((), False)


def test_a_switch_gives_a_flag_its_set_of_values(inventory):
    cache = _setting(inventory, "flag", "--cache-type-k")
    assert cache.values == ('"q8_0"', '"q4_0"', '"f16"')
    assert cache.always


def test_fixed_flags_and_the_environment_are_launch_settings_passed_on_every_start(inventory):
    port = _setting(inventory, "flag", "--port")
    host = _setting(inventory, "flag", "--host")
    assert (port.values, port.always) == (("integer",), True)
    assert (host.values, host.always) == (('"127.0.0.1"',), True)
    assert _setting(inventory, "flag", "--list-devices").refs[0].path == "discover/devices.go"
    flash = _setting(inventory, "env", "LLAMA_ARG_FLASH_ATTN")
    assert (flash.values, flash.always) == (('"on"',), True)
    assert {s.program for s in inventory.launch} == {"llama-server"}


def _fields(entries) -> dict[tuple[str, str], object]:
    return {(f.endpoint, f.path): f for f in entries}


def test_the_request_structs_json_tags_are_request_fields_with_their_values(inventory):
    fields = _fields(inventory.request_fields)
    assert set(fields) == {("POST /completion", p) for p in ("prompt", "stream", "temperature", "top_k")}
    stream = fields[("POST /completion", "stream")]
    assert (stream.go_type, stream.values, stream.optional) == ("bool", ("true",), False)
    top_k = fields[("POST /completion", "top_k")]
    assert (top_k.optional, top_k.ref.line) == (True, _line("runner/server.go", 'json:"top_k'))


def test_the_structs_responses_and_stream_chunks_are_decoded_into_are_response_fields(inventory):
    fields = _fields(inventory.response_fields)
    assert {k: f.direction for k, f in fields.items()} == {
        ("GET /health", "status"): "response",
        ("POST /completion", "content"): "stream",
        ("POST /completion", "stop"): "stream",
        ("POST /completion", "timings"): "stream",
        ("POST /completion", "timings.predicted_n"): "stream",
    }
    assert fields[("POST /completion", "timings.predicted_n")].ref.line == _line(
        "runner/server.go", "predicted_n"
    )


def test_a_struct_never_sent_to_the_server_has_no_fields_in_the_inventory(inventory):
    names = {f.path for f in inventory.request_fields + inventory.response_fields}
    assert "theme" not in names


def test_sampler_and_template_behaviours_say_what_ollama_sets_and_leaves_to_upstream(inventory):
    found = {(b.area, b.subject): b.setting for b in inventory.behaviours}
    assert found[("sampler", "field temperature of POST /completion")] == "sends number in every request"
    assert found[("sampler", "field top_k of POST /completion")] == (
        "sends int in some requests only (or not when zero); upstream's default otherwise"
    )
    assert found[("template", "flag --no-jinja of llama-server")] == (
        "passes it on some starts only; llama-server's default otherwise"
    )


def test_the_build_names_options_targets_packages_programs_tools_and_presets(inventory):
    items = {(i.kind, i.name, i.value): [(r.path, r.line) for r in i.refs] for i in inventory.build}
    assert items[("option", "GGML_CUDA", "ON")] == [("CMakeLists.txt", 4)]
    # the loop that writes the name, and the commands that use it, all where `if(TARGET ...)` holds
    assert items[("target", "llama", OPTIONAL)] == [
        ("CMakeLists.txt", 6),
        ("CMakeLists.txt", 7),
        ("CMakeLists.txt", 8),
    ]
    assert ("target", "mtmd", OPTIONAL) in items and ("target", "llama-server", "") in items
    assert items[("package", "Threads", "")] == [("CMakeLists.txt", 3)]
    assert ("program", "git", "") in items and ("tool", "cmake", "") in items
    assert items[("preset", "cpu", "")] == [("Dockerfile", 2)]
    assert not {k for k in items if k[1] in ("OLLAMA_RUNNER_DIR", "ollama-docs")}  # Ollama's own


def test_a_target_named_also_where_no_guard_holds_is_needed():
    cmake = (
        "if(WIN32 AND TARGET dl)\n  install(TARGETS dl)\nendif()\n"
        "if(NOT TARGET zlib)\n  install(TARGETS zlib)\nelse()\n  install(TARGETS png)\nendif()\n"
        "if(TARGET ggml)\n  target_sources(ggml PRIVATE a.c)\nendif()\ntarget_link_libraries(ggml m)\n"
    )
    build = contract_inventory({"CMakeLists.txt": cmake}).build
    items = {(i.kind, i.name, i.value): [r.line for r in i.refs] for i in build if i.kind == "target"}
    assert items == {
        ("target", "dl", OPTIONAL): [1, 2],
        ("target", "zlib", ""): [4, 5],  # `NOT TARGET` guards the branch where it is absent
        ("target", "png", ""): [7],  # an `else()` branch guards nothing
        ("target", "ggml", ""): [9, 10, 12],
    }


def test_without_an_installed_program_no_go_code_counts():
    tree = {p: code_text(t, p) for p, t in TREE.items() if p != "CMakeLists.txt"}
    inventory = contract_inventory(tree)
    assert (inventory.output_patterns, inventory.launch, inventory.request_fields) == ((), (), ())


# ---- the command line ----------------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "bot", "contracts", *args]
    return subprocess.run(command, check=False, capture_output=True, text=True, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> RepoBuilder:
    repo = RepoBuilder(tmp_path_factory.mktemp("ollama"))
    repo.commit("first", {path: text.encode() for path, text in TREE.items()})
    repo.tag("v1")
    repo.commit("drop the stream", {"runner/server.go": SERVER_GO.replace('"[DONE]"', '"[END]"').encode()})
    return repo


def test_contracts_prints_the_groups_with_file_and_line(repository, tmp_path):
    result = _cli("--repo", str(repository.path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    for title in ("Output patterns (", "Launch flags and environment (", "Request fields (", "Build ("):
        assert f"## {title}" in out
    line = _line("runner/server.go", '"main: server')
    assert (
        f'| `"main: server is listening"` | prefix | llama-server stderr | runner/server.go:{line} |' in out
    )
    assert '`"[END]"`' in out and "[DONE]" not in out  # HEAD, the later commit


def test_contracts_reads_the_revision_asked_for_as_json(repository, tmp_path):
    result = _cli("--repo", str(repository.path), "--rev", "v1", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["rev"] == "v1" and len(report["commit"]) == 40
    done = [p for p in report["output_patterns"] if p["value"] == "[DONE]"]
    assert done == [
        {
            "kind": "equals",
            "value": "[DONE]",
            "sources": ["POST /completion stream"],
            "path": "runner/server.go",
            "line": _line("runner/server.go", '"[DONE]"'),
            "used_at": [{"path": "runner/server.go", "line": _line("runner/server.go", '"[DONE]"')}],
            "compared": ["data"],
        }
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--repo", "{tmp}"), "llama-bot: --repo {tmp}: not a git repository\n"),
        (("--repo", "{repo}", "--rev", "no-such-rev"), "llama-bot: --rev no-such-rev: unknown revision\n"),
    ],
)
def test_contracts_on_bad_input_exits_2_with_one_line(repository, tmp_path, args, message):
    values = {"tmp": str(tmp_path), "repo": str(repository.path)}
    result = _cli(*(a.format(**values) for a in args), cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message.format(**values))


def test_contracts_on_a_tree_without_go_code_says_so_and_exits_0(tmp_path):
    repo = RepoBuilder(tmp_path / "other")
    repo.commit("first", {"README.md": b"nothing here\n"})
    result = _cli("--repo", str(repo.path), cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr.startswith("llama-bot: note: HEAD (") and result.stderr.count("\n") == 1


def test_a_generated_expression_nested_deeper_than_pythons_stack_is_read_without_a_crash():
    """Hostile or generated Go: a comparison on a 5000-term concatenation is left out, the rest is read."""
    deep = " + ".join(["line"] * 5000)
    server = SERVER_GO.replace(
        '\t\tif strings.HasPrefix(line, "main: server is listening") {',
        f'\t\t_ = strings.Contains({deep}, "deep")\n\t\tif strings.HasPrefix(line, "main: server is listening") {{',
    )
    tree = {path: code_text(text, path) for path, text in {**TREE, "runner/server.go": server}.items()}
    inventory = contract_inventory(tree)
    assert "main: server is listening" in {p.value for p in inventory.output_patterns}
    assert "deep" not in {p.value for p in inventory.output_patterns}
