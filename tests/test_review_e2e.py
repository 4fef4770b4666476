"""The review end to end on real upstream histories (pygit2) and a small Ollama tree."""

import json
from dataclasses import asdict

import pytest

from bot.config import parse_config
from bot.model import AnalysisError, LocalRef
from bot.patches.patchfile import parse
from bot.render.markdown import subject
from bot.repos.history import History
from bot.repos.snapshot import GitSnapshot, MemorySnapshot
from bot.repos.upstream import Upstream
from bot.review import ReviewContext, review
from tests.fixtures import RepoBuilder
from tests.gitutil import make_patch, run

WEB = "https://github.com/ggml-org/llama.cpp"
CMAKE = """cmake_minimum_required(VERSION 3.14)
project("llama.cpp" C CXX)
option(LLAMA_BUILD_TESTS "llama: build tests" OFF)
option(LLAMA_CURL "llama: use libcurl to download model from an URL" ON)
option(GGML_CUDA "ggml: use CUDA" OFF)
"""
ARG = """    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N",
        string_format("size of the prompt context (default: %d, 0 = loaded from model)", params.n_ctx),
        [](common_params & params, int value) {
            params.n_ctx = value;
        }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"-nkvo", "--no-kv-offload"},
        "disable KV offload",
        [](common_params & params) {
            params.no_kv_offload = true;
        }
    ).set_env("LLAMA_ARG_NO_KV_OFFLOAD"));
"""
LLAMA = """static int llama_model_load(llama_model & model) {
    for (auto * dev : model.devices) {
        size_t free, total;
        ggml_backend_dev_memory(dev, &free, &total);
        LLAMA_LOG_INFO("%s: using device %s (%s) - %zu MiB free\\n", __func__, ggml_backend_dev_name(dev),
                       ggml_backend_dev_description(dev), free/1024/1024);
    }
    return 0;
}
"""
ARCH = """static const std::map<llm_arch, const char *> LLM_ARCH_NAMES = {
    { LLM_ARCH_LLAMA,            "llama"            },
    { LLM_ARCH_QWEN3,            "qwen3"            },
    { LLM_ARCH_UNKNOWN,          "(unknown)"        },
};
"""
HEADER = """#pragma once
GGML_API size_t ggml_backend_dev_count(void);
GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);
"""
UPSTREAM = {
    "CMakeLists.txt": CMAKE,
    "common/arg.cpp": ARG,
    "src/llama.cpp": LLAMA,
    "src/llama-arch.cpp": ARCH,
    "ggml/include/ggml-backend.h": HEADER,
}
LAGUNA_PATCH = make_patch(
    ARCH,
    ARCH.replace("    { LLM_ARCH_UNKNOWN", '    { LLM_ARCH_LAGUNA, "laguna" },\n    { LLM_ARCH_UNKNOWN'),
    "src/llama-arch.cpp",
)
LAUNCH_GO = b"""package llm

import (
	"bufio"
	"os/exec"
)

func start(free map[string]string) error {
	cmd := exec.Command("llama-server", args(4096)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			if m := deviceRe.FindStringSubmatch(scanner.Text()); m != nil {
				free[m[1]] = m[2]
			}
		}
	}()
	return cmd.Start()
}
"""
OLLAMA = {
    "llm/server.go": b"""package llm

var deviceRe = regexp.MustCompile(`using device (\\S+)\\s+\\(.*\\)\\s+-\\s+(\\d+)\\s+MiB free`)

func args(n int) []string { return []string{"--ctx-size", strconv.Itoa(n), "--no-kv-offload"} }
""",
    "llm/launch.go": LAUNCH_GO,
    "go.mod": b"module example.com/ollama\n\ngo 1.22\n",
    "llama/server/CMakeLists.txt": b"set(GGML_CUDA ON)\nset(LLAMA_CURL OFF)\ninstall(TARGETS llama-server RUNTIME DESTINATION bin)\n",
    "discover/gpu.go": b"n := C.ggml_backend_dev_count()\nd := C.ggml_backend_dev_get(0)\n",
    "llama/compat/hooks.cpp": b"ggml_backend_dev_t first() { return ggml_backend_dev_get(0); }\n",
    "llama/compat/0001-laguna.patch": LAGUNA_PATCH,
}


def _history(tmp_path, commits, base=UPSTREAM):
    b = RepoBuilder(tmp_path / "u.git")
    b.commit("base", base)
    b.tag("b1")
    for message, files in commits:
        b.commit(message, files)
    b.tag("b2")
    return b


def _review(b, ollama=OLLAMA, rules=None, patches=(("llama/compat/0001-laguna.patch", LAGUNA_PATCH),)):
    up = Upstream(b.repo, WEB)
    old, new = up.commit("b1", "V"), up.commit("b2", "V")
    ctx = ReviewContext(
        parse_config(None).pins[0],
        GitSnapshot(b.repo, old),
        GitSnapshot(b.repo, new),
        History(up, old, new),
        MemorySnapshot(ollama),
        [(p, parse(d)) for p, d in patches],
        rules or {},
    )
    return review(ctx), str(new.id)


def _real_bump(tmp_path):
    return _history(
        tmp_path,
        [
            (
                "build: add LLAMA_SUBPROCESS (#101)",
                {
                    "CMakeLists.txt": CMAKE
                    + 'option(LLAMA_SUBPROCESS "llama: allow spawning helper processes" ON)\n'
                },
            ),
            (
                "common: drop --no-kv-offload (#102)",
                {"common/arg.cpp": ARG[: ARG.index('    add_opt(common_arg(\n        {"-nkvo"')]},
            ),
            (
                "llama: print free memory first (#103)",
                {"src/llama.cpp": LLAMA.replace("- %zu MiB free", "- free %zu MiB")},
            ),
            (
                "model: add Laguna (#104)",
                {
                    "src/llama-arch.cpp": ARCH.replace(
                        "    { LLM_ARCH_UNKNOWN",
                        '    { LLM_ARCH_LAGUNA,           "laguna"           },\n    { LLM_ARCH_UNKNOWN',
                    )
                },
            ),
            ("docs: unrelated (#105)", {"README.md": "hello\n"}),
        ],
    )


def test_a_real_bump_finds_what_silently_breaks_ollama(tmp_path):
    findings, new_sha = _review(_real_bump(tmp_path))
    by_title = {f.title: f for f in findings}
    assert [f.severity for f in findings] == sorted(
        (f.severity for f in findings), key=["high", "medium", "info"].index
    )

    flag = by_title["llama-server flag --no-kv-offload was removed; Ollama passes it"]
    assert (flag.area, flag.severity, flag.upstream_path) == ("server", "high", "common/arg.cpp")
    assert [c.subject for c in flag.upstream_commits] == ["common: drop --no-kv-offload (#102)"]
    assert flag.local_refs == [LocalRef("llm/server.go", 5)]
    assert flag.check == "server.flags"

    log = next(f for f in findings if f.title.startswith("llama-server output Ollama parses changed"))
    assert (log.area, log.severity, log.upstream_path, log.upstream_line) == (
        "server",
        "high",
        "src/llama.cpp",
        5,
    )
    assert [c.subject for c in log.upstream_commits] == ["llama: print free memory first (#103)"]
    assert log.local_refs == [LocalRef("llm/server.go", 3), LocalRef("llm/launch.go", 17)]
    assert "before `llama_model_load: using device CUDA0 (CUDA0) - 1024 MiB free`" in log.detail
    assert "now `llama_model_load: using device CUDA0 (CUDA0) - free 1024 MiB`" in log.detail
    assert log.check == "output.log-lines"

    arch = by_title["Upstream now supports architecture `laguna` natively"]
    assert (arch.area, arch.severity, arch.upstream_line) == ("models", "high", 4)
    assert arch.local_refs[0].path == "llama/compat/0001-laguna.patch"
    assert [c.subject for c in arch.upstream_commits] == ["model: add Laguna (#104)"]
    assert arch.check == "models.architectures"

    option = by_title["New CMake option LLAMA_SUBPROCESS: decide its value"]
    assert (option.area, option.severity, option.upstream_line) == ("build", "medium", 6)
    # where Ollama sets the options of the same prefix (`set(LLAMA_CURL OFF)`), not its GGML_ ones
    assert option.local_refs == [LocalRef("llama/server/CMakeLists.txt", 2)]
    assert option.check == "build.options"
    assert f"{WEB}/blob/{new_sha}/CMakeLists.txt#L6" in option.detail
    assert option.upstream_commits[0].url == f"{WEB}/commit/{option.upstream_commits[0].sha}"
    assert "[#101](https://github.com/ggml-org/llama.cpp/pull/101)" in subject(option.upstream_commits[0])

    # the patch-context item of the same commit and file is a part of the architecture's item
    assert "Upstream changed src/llama-arch.cpp near hunk 1 of 0001-laguna.patch" in arch.detail
    assert not any(f.area == "patch-context" for f in findings)
    assert not any("#105" in c.subject for f in findings for c in f.upstream_commits)
    json.dumps([asdict(f) for f in findings])  # JSON-shaped, as the report needs


def test_comment_only_and_whitespace_only_bumps_produce_nothing(tmp_path):
    b = _history(
        tmp_path,
        [
            (
                "comments (#1)",
                {
                    "CMakeLists.txt": CMAKE.replace(
                        'option(GGML_CUDA "ggml: use CUDA" OFF)',
                        'option(GGML_CUDA "ggml: use CUDA" OFF) # GPU\n# option(GGML_X "x" ON)',
                    ),
                    "common/arg.cpp": "// options\n"
                    + ARG.replace('"disable KV offload",', '"disable KV offload", // sic'),
                    "src/llama-arch.cpp": ARCH + '// { LLM_ARCH_LAGUNA, "laguna" },\n',
                },
            ),
            (
                "whitespace (#2)",
                {
                    "src/llama.cpp": LLAMA.replace("    for (auto", "\tfor (auto").replace(
                        ", &total)", ",  &total )"
                    ),
                    "ggml/include/ggml-backend.h": HEADER.replace("(size_t index)", "( size_t index )"),
                },
            ),
        ],
    )
    assert _review(b)[0] == []


def test_identical_findings_from_two_detectors_merge_into_one(tmp_path):
    b = _history(
        tmp_path,
        [
            (
                "backend: drop ggml_backend_dev_get (#7)",
                {
                    "ggml/include/ggml-backend.h": HEADER.replace(
                        "GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);\n", ""
                    )
                },
            )
        ],
    )
    findings, _ = _review(b, patches=())
    (removed,) = [f for f in findings if f.title == "`ggml_backend_dev_get` was removed upstream"]
    assert removed.severity == "high" and removed.area == "discovery"
    assert {r.path for r in removed.local_refs} == {"discover/gpu.go", "llama/compat/hooks.cpp"}
    assert [c.subject for c in removed.upstream_commits] == ["backend: drop ggml_backend_dev_get (#7)"]


def test_repository_rules_override_shipped_ones_and_bad_ones_are_errors(tmp_path):
    server = 'static void send(sink & s, const json & d) {\n    s.write("data: " + d.dump() + "\\n\\n");\n}\n'
    b = _history(
        tmp_path,
        [
            (
                "server: keep idle streams alive (#9)",
                {"tools/server/server.cpp": server.replace("}\n", "    if (idle) { keep_alive(s); }\n}\n")},
            )
        ],
        base={**UPSTREAM, "tools/server/server.cpp": server},
    )
    (ping,) = [f for f in _review(b, patches=())[0] if f.area == "streaming"]
    assert ping.severity == "medium"
    (ping,) = [
        f
        for f in _review(b, patches=(), rules={"stream-keepalive": {"severity": "high"}})[0]
        if f.area == "streaming"
    ]
    assert (ping.severity, ping.check) == ("high", "rule.stream-keepalive")
    with pytest.raises(AnalysisError, match=r"rules\.stream-keepalive\.severity"):
        _review(b, patches=(), rules={"stream-keepalive": {"severity": "loud"}})


def test_a_deleted_upstream_file_points_at_the_old_ref(tmp_path):
    vocab = "".join(f"static int tok_{i}(int x) {{ return x + {i}; }}\n" for i in range(5))
    b = _history(
        tmp_path,
        [("vocab: remove (#3)", {"src/llama-vocab.cpp": None})],
        base={**UPSTREAM, "src/llama-vocab.cpp": vocab},
    )
    # an information item says something only where it points into Ollama's code
    linked = {"tokenizer": {"local_paths": ["llm/server.go"]}}
    findings, _ = _review(b, patches=(), rules=linked)
    (tok,) = [f for f in findings if f.title == "Tokenizer changed in llama-vocab.cpp"]
    assert tok.upstream_line is None and "/blob/" in tok.detail and "gone at" in tok.detail
    assert [c.subject for c in tok.upstream_commits] == ["vocab: remove (#3)"]


def test_the_engine_fills_findings_in_the_report(tmp_path):
    up = RepoBuilder(tmp_path / "e.git")
    up.commit("base", {"CMakeLists.txt": CMAKE})
    up.tag("v1")
    up.commit("build: new option (#5)", {"CMakeLists.txt": CMAKE + 'option(GGML_NEW "ggml: new thing" ON)\n'})
    up.tag("v2")
    report = run(up, {}, review=True)
    (finding,) = report.pins[0].findings
    assert finding.title == "New CMake option GGML_NEW: decide its value"
    assert report.to_json()["pins"][0]["findings"][0]["upstream_line"] == 6


def test_what_one_upstream_commit_does_in_one_area_is_one_item_listing_its_parts(tmp_path):
    two_flags = ARG.replace('{"-c", "--ctx-size"}', '{"--ctx-size-old"}').replace(
        '{"-nkvo", "--no-kv-offload"}', '{"--kv-offload-off"}'
    )
    b = _history(tmp_path, [("common: rename two flags (#201)", {"common/arg.cpp": two_flags})])
    findings, _ = _review(b, patches=())
    flags = [f for f in findings if f.upstream_path == "common/arg.cpp"]
    assert len(flags) == 1, [f.title for f in flags]
    (item,) = flags
    assert item.severity == "high"
    assert "The same upstream change also shows in:" in item.detail
    other = "--no-kv-offload" if "--ctx-size" in item.title else "--ctx-size"
    assert other in item.detail
    assert {r.path for r in item.local_refs} == {"llm/server.go"}


DISCOVERY_GO = b"""package discover

import (
	"bufio"
	"os/exec"
	"regexp"
	"strings"
)

var deviceLine = regexp.MustCompile(
	`^\\s+(.+?):\\s+(.+?)\\s+\\((\\d+)\\s+MiB,\\s+(\\d+)\\s+MiB\\s+free\\)`,
)

var failures = []string{
	"error loading model",
}

func Devices() (names []string, failed string) {
	cmd := exec.Command("llama-server", "--list-devices")
	out, _ := cmd.StderrPipe()
	_ = cmd.Start()
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.Contains(line, "system_info:") {
			break
		}
		for _, marker := range failures {
			if strings.Contains(line, marker) {
				failed = line
			}
		}
		if m := deviceLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	return names, failed
}
"""
COMMON_CPP = """static void list_devices() {
    for (auto * dev : devices) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", name(dev), description(dev), total / MiB, free / MiB);
    }
}

std::string common_params_get_system_info(const common_params & params) {
    std::ostringstream os;
    os << "system_info: n_threads = " << params.n_threads;
    return os.str();
}
"""
LOAD_CPP = """static int llama_model_load(const std::string & fname) {
    try {
        load(fname);
    } catch (const std::exception & err) {
        LLAMA_LOG_ERROR("%s: error loading model: %s\\n", __func__, err.what());
        return -1;
    }
    return 0;
}
"""


@pytest.mark.parametrize("parser", ["discover/devices.go", "internal/gpus/probe/devices.go"])
def test_lines_ollama_reads_with_multiline_regexps_markers_and_streams_are_checked(tmp_path, parser):
    """A multi-line `regexp.MustCompile`, a `[]string` of markers and a line written with `<<`, read by Go
    code in whichever folder it lives."""
    base = {**UPSTREAM, "common/common.cpp": COMMON_CPP, "src/llama-load.cpp": LOAD_CPP}
    b = _history(
        tmp_path,
        [
            (
                "common: say total (#501)",
                {"common/common.cpp": COMMON_CPP.replace("MiB, %zu", "MiB total, %zu")},
            ),
            (
                "llama: reword (#502)",
                {"src/llama-load.cpp": LOAD_CPP.replace("error loading", "failed to load")},
            ),
            (
                "common: system info (#503)",
                {
                    "common/common.cpp": COMMON_CPP.replace("MiB, %zu", "MiB total, %zu").replace(
                        "system_info:", "system info:"
                    )
                },
            ),
        ],
        base=base,
    )
    ollama = {**OLLAMA, parser: DISCOVERY_GO}
    findings, _ = _review(b, ollama=ollama, patches=())
    found = {f.title: f for f in findings if f.title.startswith("llama-server output Ollama parses changed")}
    assert {r.path for f in found.values() for r in f.local_refs} == {parser}
    assert {(t.split("`")[1], f.severity, tuple(r.line for r in f.local_refs)) for t, f in found.items()} == {
        ("^\\s+(.+?):\\s+(.+?)\\s+\\((\\d+)\\s+MiB,\\s+(\\d+)\\s+MiB\\s+free\\)", "high", (11, 33)),
        ("error loading model", "high", (15, 29)),
        ("system_info:", "high", (25,)),
    }
    system_info = found["llama-server output Ollama parses changed: `system_info:` no longer matches"]
    assert [c.subject for c in system_info.upstream_commits] == ["common: system info (#503)"]
    assert "now `system info: n_threads = CUDA0`" in system_info.detail


TOKENIZE_CPP = 'int main() {\n    LOG("using device %s (%s) - %zu MiB free\\n", a, b, c);\n}\n'
TOKENIZE_CMAKE = "set(TARGET llama-tokenize)\nadd_executable(${TARGET} tokenize.cpp)\n"
TOKENIZE_GO = b"""package count

import (
	"bufio"
	"os/exec"
	"regexp"
)

var freeLine = regexp.MustCompile(`using device (\\S+) .* (\\d+) MiB free`)

func Free() (free string) {
	cmd := exec.Command("llama-tokenize")
	out, _ := cmd.StdoutPipe()
	_ = cmd.Start()
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		if m := freeLine.FindStringSubmatch(scanner.Text()); m != nil {
			free = m[2]
		}
	}
	return free
}
"""
# Ollama starting llama-tokenize, and reading its output, from a folder of its own
TOKENIZE_READER = {
    "x/tokens/count/free.go": TOKENIZE_GO,
    "x/tokens/CMakeLists.txt": b"install(TARGETS llama-tokenize RUNTIME DESTINATION bin)\n",
}


@pytest.mark.parametrize(
    "cmake, reader, reported",
    [
        (TOKENIZE_CMAKE, {}, set()),
        ("add_library(tokenize-lib tokenize.cpp)\n", {}, {"llama-server"}),
        (TOKENIZE_CMAKE, TOKENIZE_READER, {"llama-tokenize"}),
    ],
)
def test_log_lines_count_only_in_code_that_writes_to_what_ollama_runs(tmp_path, cmake, reader, reported):
    """Code of a tool that builds only programs counts when Ollama's code, wherever it lives, reads the
    output of one of them, and only for the patterns Ollama applies to that program's output."""
    base = {**UPSTREAM, "tools/tokenize/CMakeLists.txt": cmake, "tools/tokenize/tokenize.cpp": TOKENIZE_CPP}
    b = _history(
        tmp_path,
        [
            (
                "tokenize: reword (#301)",
                {"tools/tokenize/tokenize.cpp": TOKENIZE_CPP.replace("MiB free", "MiB available")},
            )
        ],
        base=base,
    )
    findings, _ = _review(b, ollama={**OLLAMA, **reader}, patches=())
    parsed = {f.title.split()[0] for f in findings if " output Ollama parses changed" in f.title}
    assert parsed == reported


DEVICES_CPP = """void list_devices() {
    std::vector<ggml_backend_dev_t> devices;
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        auto * dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
            devices.push_back(dev);
        }
    }
    for (auto * dev : devices) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", name(dev), description(dev), total / MiB, free / MiB);
    }
}
"""
BENCH_CMAKE = "set(TARGET llama-bench-impl)\nadd_library(${TARGET} bench.cpp)\nset(TARGET llama-bench)\nadd_executable(${TARGET} main.cpp)\n"


@pytest.mark.parametrize("path, reported", [("common/devices.cpp", True), ("tools/bench/bench.cpp", False)])
def test_a_device_list_filled_under_other_conditions_counts_in_the_program_ollama_reads(
    tmp_path, path, reported
):
    """The CPU filter dropped from a device list llama-server prints is medium, at Ollama's pattern and its
    start with `--list-devices`; the same code in a tool whose build names only other programs (a library of
    llama-bench's) is not llama-server's output."""
    base = {**UPSTREAM, path: DEVICES_CPP, "tools/bench/CMakeLists.txt": BENCH_CMAKE}
    unfiltered = DEVICES_CPP.replace(
        "        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {\n"
        "            devices.push_back(dev);\n        }\n",
        "        devices.push_back(dev);\n",
    )
    b = _history(tmp_path, [("devices: list the CPU too (#601)", {path: unfiltered})], base=base)
    findings, _ = _review(b, ollama={**OLLAMA, "discover/devices.go": DISCOVERY_GO}, patches=())
    found = [f for f in findings if f.title.startswith("What llama-server lists changed")]
    assert bool(found) is reported
    if reported:
        (finding,) = found
        assert finding.severity == "medium" and "`devices`" in finding.title
        assert {r.path for r in finding.local_refs} == {"discover/devices.go"}
        assert [c.subject for c in finding.upstream_commits] == ["devices: list the CPU too (#601)"]


def test_what_ollamas_build_never_compiles_or_runs_is_information(tmp_path):
    top = (
        CMAKE
        + 'option(LLAMA_BUILD_UI "llama: build the web UI" ON)\nif (LLAMA_BUILD_UI)\n    add_subdirectory(tools/ui)\nendif()\n'
    )
    ui = 'add_custom_target(ui ALL COMMAND ${CMAKE_COMMAND} -DOUT=x -P "${PROJECT_SOURCE_DIR}/scripts/ui-assets.cmake")\n'
    script = "execute_process(COMMAND ${NPM_EXECUTABLE} run build)\n"
    base = {
        **UPSTREAM,
        "CMakeLists.txt": top,
        "tools/ui/CMakeLists.txt": ui,
        "scripts/ui-assets.cmake": script,
        "ggml/src/ggml-sycl/CMakeLists.txt": "find_package(IntelSYCL REQUIRED)\n",
        "ggml/src/ggml-cuda/CMakeLists.txt": "find_package(CUDAToolkit REQUIRED)\n",
    }
    b = _history(
        tmp_path,
        [
            (
                "sycl: link jobs (#401)",
                {
                    "ggml/src/ggml-sycl/CMakeLists.txt": 'find_package(IntelSYCL REQUIRED)\nset(GGML_SYCL_MAX_PARALLEL_LINK_JOBS "4" CACHE STRING "sycl: link jobs")\n'
                },
            ),
            (
                "sycl: onednn (#402)",
                {
                    "ggml/src/ggml-sycl/CMakeLists.txt": 'find_package(IntelSYCL REQUIRED)\nset(GGML_SYCL_MAX_PARALLEL_LINK_JOBS "4" CACHE STRING "sycl: link jobs")\nfind_package(oneDNN)\n'
                },
            ),
            (
                "cuda: nccl (#403)",
                {
                    "ggml/src/ggml-cuda/CMakeLists.txt": "find_package(CUDAToolkit REQUIRED)\nfind_package(NCCL)\n"
                },
            ),
            (
                "ui: gzip (#404)",
                {"scripts/ui-assets.cmake": "execute_process(COMMAND ${NPM_EXECUTABLE} run build --gzip)\n"},
            ),
        ],
        base=base,
    )
    ollama = {
        **OLLAMA,
        "llama/server/CMakeLists.txt": b'set(GGML_CUDA ON)\nset(LLAMA_CURL OFF)\nset(LLAMA_BUILD_UI OFF CACHE BOOL "" FORCE)\n',
    }
    findings, _ = _review(b, ollama=ollama, patches=())
    severity = {f.title: f.severity for f in findings}
    assert severity["New build dependency: package NCCL"] == "medium"  # CUDA is built
    # SYCL is not built, and only tools/ui runs the generator: information, said only with a place in
    # Ollama's build to point at; a new option of the SYCL backend cannot concern Ollama: nothing
    assert "New build dependency: package oneDNN" not in severity
    assert "New CMake option GGML_SYCL_MAX_PARALLEL_LINK_JOBS: decide its value" not in severity
    assert "Arguments of build-time generator ${NPM_EXECUTABLE} changed" not in severity


HPARAMS = "#pragma once\n#include <cstdint>\nstruct llama_hparams {\n    uint32_t n_layer;\n    uint32_t n_embd;\n};\n"
PARTIAL = "#pragma once\n#include <string>\nstruct common_json_partial {\n    std::string key;\n    int depth;\n};\n"
MODEL_CPP = b'#include "llama-model.h"\n\nvoid build(const llama_model & model) {\n    const std::string key = "x";\n    for (uint32_t il = 0; il < model.hparams.n_layer; ++il) {}\n}\n'


def test_compat_model_code_sees_changes_only_of_the_headers_it_includes(tmp_path):
    base = {
        **UPSTREAM,
        "src/llama-hparams.h": HPARAMS,
        "src/llama-model.h": '#pragma once\n#include "llama-hparams.h"\nstruct llama_model { llama_hparams hparams; };\n',
        "common/json-partial.h": PARTIAL,
    }
    b = _history(
        tmp_path,
        [
            (
                "hparams: n_layer() (#501)",
                {
                    "src/llama-hparams.h": HPARAMS.replace(
                        "    uint32_t n_layer;\n",
                        "    uint32_t n_layer_all;\n    uint32_t n_layer() const { return n_layer_all; }\n",
                    )
                },
            ),
            (
                "json: drop key (#502)",
                {"common/json-partial.h": PARTIAL.replace("    std::string key;\n", "")},
            ),
        ],
        base=base,
    )
    findings, _ = _review(b, ollama={**OLLAMA, "llama/compat/models/laguna.cpp": MODEL_CPP}, patches=())
    (getter,) = [f for f in findings if "`n_layer`" in f.title]
    assert (getter.severity, getter.title) == ("high", "`n_layer` changed from field to function upstream")
    assert LocalRef("llama/compat/models/laguna.cpp", 5) in getter.local_refs
    assert not [
        f for f in findings if "`key`" in f.title
    ]  # a local named like a field of a header compat never includes


def test_a_hunk_the_patch_section_reports_moved_gets_no_near_hunk_item(tmp_path):
    body = "".join(f"    step_{i}();\n" for i in range(60))
    src = f"void run() {{\n{body}}}\n"
    patch = make_patch(
        src, src.replace("    step_30();\n", "    step_30();\n    ollama_hook();\n"), "src/llama.cpp"
    )
    up = RepoBuilder(tmp_path / "m.git")
    up.commit("base", {"src/llama.cpp": src})
    up.tag("v1")
    moved = src.replace("void run() {\n", "void run() {\n" + "".join(f"    pre_{i}();\n" for i in range(40)))
    up.commit("llama: more steps (#601)", {"src/llama.cpp": moved.replace("step_33();", "step_33(true);")})
    up.tag("v2")
    report = run(up, {"llama/compat/0001-hook.patch": patch}, review=True)
    (result,) = report.pins[0].patches
    assert result.hunks[0].status not in ("clean",)  # the hunk moved 40 lines
    assert not [f for f in report.pins[0].findings if f.area == "patch-context"]


def test_a_field_that_became_a_function_is_quiet_once_ollama_calls_it(tmp_path):
    base = {
        **UPSTREAM,
        "src/llama-hparams.h": HPARAMS,
        "src/llama-model.h": '#pragma once\n#include "llama-hparams.h"\nstruct llama_model { llama_hparams hparams; };\n',
    }
    b = _history(
        tmp_path,
        [
            (
                "hparams: n_layer() (#501)",
                {
                    "src/llama-hparams.h": HPARAMS.replace(
                        "    uint32_t n_layer;\n",
                        "    uint32_t n_layer_all;\n    uint32_t n_layer() const { return n_layer_all; }\n",
                    )
                },
            )
        ],
        base=base,
    )
    adapted = MODEL_CPP.replace(b"model.hparams.n_layer;", b"model.hparams.n_layer();")
    findings, _ = _review(b, ollama={**OLLAMA, "llama/compat/models/laguna.cpp": adapted}, patches=())
    assert not [f for f in findings if "`n_layer`" in f.title]


def test_a_deprecated_flag_is_credited_to_the_commit_that_changed_its_entry_only(tmp_path):
    deprecated = ARG.replace(
        'string_format("size of the prompt context (default: %d, 0 = loaded from model)", params.n_ctx)',
        '"DEPRECATED in favor of `--context`: size of the prompt context"',
    )
    tool = (
        '    add_opt(common_arg(\n        {"--tools"}, "LIST",\n        "tools to enable",\n'
        "        [](common_params & params, int value) {\n            params.n_tools = value;\n        }\n    ));\n"
    )
    b = _history(
        tmp_path,
        [
            ("args: deprecate --ctx-size (#301)", {"common/arg.cpp": deprecated}),
            ("server: add tools (#302)", {"common/arg.cpp": deprecated + tool}),
        ],
    )
    findings, _ = _review(b, patches=())
    (item,) = [f for f in findings if "--ctx-size" in f.title]
    assert item.title == "llama-server flag --ctx-size is deprecated or replaced; Ollama passes it"
    assert [c.subject for c in item.upstream_commits] == ["args: deprecate --ctx-size (#301)"]
