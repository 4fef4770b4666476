"""Output Ollama parses: its own patterns (from the contract inventory) against what upstream prints at both refs.

A small Ollama-like Go package starts llama-server and reads its stderr with multi-line regular expressions, a
`strings.Contains` literal and a `[]string` of markers; small upstream sources print the lines with printf-style
calls (PRI macros, `__func__`), `<<` chains, `+=` chains and a name/value table. Each test edits one upstream
file the way a release might and asks the detector, as the review calls it, what Ollama loses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from bot.model import LocalRef
from bot.review.changes import FileChange
from bot.review.consumers.contracts import contract_inventory
from bot.review.consumers.contracts.model import OutputPattern
from bot.review.gopatterns import output_searches
from bot.review.logformats import Program, log_line_drafts, new_printer_drafts, printed_patterns
from bot.review.source import code_text

GO_MOD = "module example.com/ollama\n\ngo 1.22\n"
CMAKE = "set(GGML_CUDA ON)\ninstall(TARGETS llama-server RUNTIME DESTINATION bin)\n"
DISCOVER_GO = """package llm

import (
	"bufio"
	"os/exec"
	"regexp"
	"strings"
)

var (
	deviceLine = regexp.MustCompile(
		`^\\s+(.+?):\\s+(.+?)\\s+\\((\\d+)\\s+MiB,\\s+(\\d+)\\s+MiB\\s+free\\)`,
	)
	ccLine    = regexp.MustCompile(`Device\\s+(\\d+):.*compute capability\\s+(\\d+)\\.(\\d+)`)
	gfxLine   = regexp.MustCompile(`Device\\s+(\\d+):.*,\\s+(gfx[0-9a-f]+)[\\s:(]`)
	umaLine   = regexp.MustCompile(`ggml_vulkan:\\s+(\\d+)\\s+=.*\\|\\s+uma:\\s+([01])\\s+\\|`)
	archsLine = regexp.MustCompile(`CUDA\\s*:\\s*ARCHS\\s*=\\s*([\\d,]+)`)
	fitLine   = regexp.MustCompile(`fit_params:\\s+-\\s+.+:\\s+\\d+\\s+layers\\s+\\(\\s*(\\d+)\\s+overflowing\\)`)
	bufLine   = regexp.MustCompile(`(\\S+)\\s+(model|KV)\\s+buffer size\\s*=\\s*([\\d.]+)\\s*MiB`)
)

var errorMarkers = []string{
	"error loading model",
	"out of memory",
}

type Device struct{ Name, Free, CC, GFX, UMA, Archs, Overflow, Buffer string }

func Discover(dev *Device) error {
	cmd := exec.Command("llama-server", "--verbose")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			line := scanner.Text()
			if strings.Contains(line, "system_info:") {
				return
			}
			for _, marker := range errorMarkers {
				if strings.Contains(line, marker) {
					dev.Name = line
				}
			}
			read(dev, line)
		}
	}()
	return cmd.Start()
}

func read(dev *Device, line string) {
	if m := deviceLine.FindStringSubmatch(line); m != nil {
		dev.Name, dev.Free = m[1], m[4]
	}
	if m := ccLine.FindStringSubmatch(line); m != nil {
		dev.CC = m[2]
	}
	if m := gfxLine.FindStringSubmatch(line); m != nil {
		dev.GFX = m[2]
	}
	if m := umaLine.FindStringSubmatch(line); m != nil {
		dev.UMA = m[2]
	}
	if m := archsLine.FindStringSubmatch(line); m != nil {
		dev.Archs = m[1]
	}
	if m := fitLine.FindStringSubmatch(line); m != nil {
		dev.Overflow = m[1]
	}
	if m := bufLine.FindStringSubmatch(line); m != nil {
		dev.Buffer = m[3]
	}
}

func IsLibraryModel(name string) bool {
	return strings.HasPrefix(name, "library/")
}
"""
OLLAMA = {"go.mod": GO_MOD, "llama/server/CMakeLists.txt": CMAKE, "llm/discover.go": DISCOVER_GO}

ARG = """static void list_devices() {
    printf("Available devices:\\n");
    for (auto * dev : devices) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", dev_name(dev), dev_description(dev), total / MiB, free / MiB);
    }
}
"""
CUDA = """static void info(int id) {
#if defined(GGML_USE_HIP)
    GGML_LOG_INFO("  Device %d: %s, %s (0x%x), VMM: %s\\n", id, prop.name, prop.gcnArchName, cc, vmm);
#elif defined(GGML_USE_MUSA)
    GGML_LOG_INFO("  Device %d: %s, compute capability %d.%d, VMM: %s\\n", id, prop.name, prop.major, prop.minor, vmm);
#else
    GGML_LOG_INFO("  Device %d: %s, compute capability %d.%d, VMM: %s\\n", id, prop.name, prop.major, prop.minor, vmm);
#endif
}

static ggml_backend_feature * get_features(ggml_backend_reg_t reg) {
    static std::vector<ggml_backend_feature> features = []() {
        std::vector<ggml_backend_feature> features;
        features.push_back({ "ARCHS", STRINGIFY(__CUDA_ARCH_LIST__) });
        features.push_back({ "USE_GRAPHS", "1" });
        return features;
    }();
    return features.data();
}
"""
VULKAN = """static void print_gpu_info(size_t idx) {
    GGML_LOG_DEBUG("ggml_vulkan: %zu = %s (%s) | uma: %d | fp16: %s | warp size: %zu\\n",
              idx, name.c_str(), driver, uma, fp16, warp);
}
"""
FIT = """static void fit_params(int nd) {
    for (int id = 0; id < nd; id++) {
        LOG_TRC(
            "%s:   - %s: %2" PRIu32 " layers (%2" PRIu32 " overflowing), %6" PRId64 " MiB used\\n",
            __func__, names[id].c_str(), n_layer[id], n_part[id], mem[id]/MiB);
    }
}
"""
COMMON = """std::string common_params_get_system_info(const common_params & params) {
    std::ostringstream os;
    os << "system_info: n_threads = " << params.n_threads;
    return os.str();
}
"""
LLAMA = """static int llama_model_load(const std::string & fname) {
    try {
        load(fname);
    } catch (const std::exception & err) {
        LLAMA_LOG_ERROR("%s: error loading model: %s\\n", __func__, err.what());
        return -1;
    }
    return 0;
}
"""
MODEL = """bool llama_model::load_tensors() {
    for (auto & buf : bufs) {
        LLAMA_LOG_INFO("%s: %12s model buffer size = %8.2f MiB\\n", __func__, buf_name(buf), size(buf));
    }
    return true;
}
"""
KV = """llama_kv_cache::llama_kv_cache() {
    LLAMA_LOG_INFO("%s: %10s KV buffer size = %8.2f MiB\\n", __func__, buf_name(buf), size(buf));
}
"""
QUANT = """static void quantize(llama_model_loader & ml) {
    int idx = 0;
    for (auto * tensor : tensors) {
        LLAMA_LOG_INFO("[%4d/%4d] %-36s - [%s], type = %6s, ",
               ++idx, ml.n_tensors, ggml_get_name(tensor), shape(tensor).c_str(), ggml_type_name(tensor->type));
    }
}
"""
UPSTREAM = {
    "src/llama-quant.cpp": QUANT,
    "common/arg.cpp": ARG,
    "ggml/src/ggml-cuda/ggml-cuda.cu": CUDA,
    "ggml/src/ggml-vulkan/ggml-vulkan.cpp": VULKAN,
    "common/fit.cpp": FIT,
    "common/common.cpp": COMMON,
    "src/llama.cpp": LLAMA,
    "src/llama-model.cpp": MODEL,
    "src/llama-kv-cache.cpp": KV,
}


def _drafts(
    new: dict[str, str | None],
    ollama: dict[str, str] = OLLAMA,
    built: dict[str, bytes] | None = None,
    writes_to=lambda path: None,
    detector=log_line_drafts,
):
    """The detector's drafts for a bump that changes the given upstream files (None: deleted, a path not in
    UPSTREAM: added), with the other built files at the new ref in `built`."""
    changes = [FileChange.from_texts(path, UPSTREAM.get(path), text) for path, text in new.items()]
    local = {path: code_text(text, path) for path, text in ollama.items()}
    asked: list[Collection[bytes]] = []

    def sources(needles: Collection[bytes]) -> Iterator[tuple[str, bytes | None]]:
        asked.append(needles)
        yield from (built or {}).items()

    program = Program(writes_to, lambda: printed_patterns(contract_inventory(local).output_patterns), sources)
    return detector(changes, local, program)


def test_a_device_line_ollama_reads_with_a_multiline_regexp_is_high_when_its_format_changes():
    (draft,) = _drafts({"common/arg.cpp": ARG.replace("MiB, %zu MiB free", "MiB total, %zu MiB free")})
    assert (draft.area, draft.severity, draft.path, draft.line) == ("server", "high", "common/arg.cpp", 4)
    assert draft.title.startswith("llama-server output Ollama parses changed: `^\\s+(.+?):")
    assert draft.local_refs == (LocalRef("llm/discover.go", 12), LocalRef("llm/discover.go", 54))
    assert "before `  CUDA0: CUDA0 (1024 MiB, 1024 MiB free)`" in draft.detail
    assert "now `  CUDA0: CUDA0 (1024 MiB total, 1024 MiB free)`" in draft.detail
    assert (
        "llama-server's `--verbose` stderr: `read` (`llm/discover.go:54`) goes without the 4 values"
        in draft.detail
    )


def test_a_line_printed_with_pri_macros_and_the_functions_name_is_rendered_as_printed():
    (draft,) = _drafts({"common/fit.cpp": FIT.replace(" overflowing)", " spilled)")})
    assert "before `fit_params:   - CUDA0: 1024 layers (1024 overflowing), 1024 MiB used`" in draft.detail
    assert "now `fit_params:   - CUDA0: 1024 layers (1024 spilled), 1024 MiB used`" in draft.detail
    assert draft.local_refs[0] == LocalRef("llm/discover.go", 18)


def test_a_line_written_on_a_stream_is_a_marker_ollama_waits_for():
    (draft,) = _drafts({"common/common.cpp": COMMON.replace('"system_info: ', '"system info: ')})
    assert draft.title == "llama-server output Ollama parses changed: `system_info:` no longer matches"
    assert 'written by `os << "system_info: n_threads = " << params.n_threads;`' in draft.detail
    assert "Ollama will no longer see it in llama-server's `--verbose` stderr" in draft.detail
    assert draft.local_refs == (LocalRef("llm/discover.go", 39),)


def test_a_marker_of_a_go_string_slice_is_checked_like_a_literal():
    (draft,) = _drafts({"src/llama.cpp": LLAMA.replace("error loading model", "failed to load model")})
    assert "`error loading model` (`llm/discover.go:23`)" in draft.detail
    assert "before `llama_model_load: error loading model: CUDA0`" in draft.detail


def test_the_name_a_table_entry_gives_the_value_ollama_reads_after_it_is_checked():
    (draft,) = _drafts({"ggml/src/ggml-cuda/ggml-cuda.cu": CUDA.replace('{ "ARCHS",', '{ "ARCH_LIST",')})
    assert draft.title.startswith("llama-server output Ollama parses changed: `CUDA\\s*:\\s*ARCHS")
    assert 'the entry `{ "ARCHS", STRINGIFY(__CUDA_ARCH_LIST__) }`' in draft.detail
    assert 'now `{ "ARCH_LIST", STRINGIFY(__CUDA_ARCH_LIST__) }`' in draft.detail
    assert draft.line == 14


def test_values_ollama_captures_may_come_from_a_conversion():
    hip = CUDA.replace("%s, %s (0x%x)", "%s arch: %s (0x%x)")
    (gfx,) = _drafts({"ggml/src/ggml-cuda/ggml-cuda.cu": hip})
    assert "before `  Device 1024: CUDA0, gfx0 (0x1f), VMM: CUDA0`" in gfx.detail
    (uma,) = _drafts({"ggml/src/ggml-vulkan/ggml-vulkan.cpp": VULKAN.replace("| uma: %d", "| unified: %d")})
    assert "| uma: 0 |" in uma.detail and uma.local_refs[0] == LocalRef("llm/discover.go", 16)


def test_a_rewording_the_pattern_still_matches_raises_nothing():
    assert (
        _drafts(
            {"ggml/src/ggml-vulkan/ggml-vulkan.cpp": VULKAN.replace("warp size: %zu", "warp: %zu | fp8: 0")}
        )
        == []
    )
    assert (
        _drafts(
            {
                "common/arg.cpp": ARG.replace("MiB free)\\n", "MiB free) [%s]\\n").replace(
                    "/ MiB);", "/ MiB, t);"
                )
            }
        )
        == []
    )
    assert _drafts({"common/arg.cpp": ARG.replace('"Available devices:\\n"', '"Devices:\\n"')}) == []


def test_a_line_that_still_matches_but_gives_a_group_other_text_is_medium_with_both_captures():
    """`[%zu] ` put before the device name: the lazy first group now captures the index with the name."""
    indexed = ARG.replace('printf("  %s: %s', 'printf("  [%zu] %s: %s').replace(
        "dev_name(dev),", "i, dev_name(dev),"
    )
    (draft,) = _drafts({"common/arg.cpp": indexed})
    assert (draft.severity, draft.path, draft.line) == ("medium", "common/arg.cpp", 4)
    assert draft.title.endswith("captures other text")
    assert "group 1: before `%s`, now `[%d] %s`" in draft.detail
    assert "llama-server's `--verbose` stderr" in draft.detail
    assert draft.local_refs == (LocalRef("llm/discover.go", 12), LocalRef("llm/discover.go", 54))


def test_a_group_that_captures_what_it_did_is_quiet_whatever_the_text_around_it_or_the_value_printed():
    """More leading spaces (the pattern's `\\s+` takes them), a trailing note outside the groups, another
    value printed in the same conversion: each group captures what it did."""
    assert _drafts({"common/arg.cpp": ARG.replace('printf("  %s: %s', 'printf("    %s: %s')}) == []
    assert (
        _drafts(
            {
                "common/arg.cpp": ARG.replace(
                    "dev_name(dev), dev_description(dev)", "dev_id(dev), dev_description(dev)"
                )
            }
        )
        == []
    )


def test_the_preprocessor_branch_that_printed_a_line_must_still_print_it():
    cuda_only = CUDA.replace(
        '#else\n    GGML_LOG_INFO("  Device %d: %s, compute capability',
        '#else\n    GGML_LOG_INFO("  Device %d: %s, cc',
    )
    (draft,) = _drafts({"ggml/src/ggml-cuda/ggml-cuda.cu": cuda_only})  # the other branch's line is no help
    assert draft.line == 7 and "compute capability" in draft.title
    unwrapped = CUDA.replace("#if defined(GGML_USE_HIP)", "#if defined(GGML_USE_HIP) && !defined(X)")
    assert _drafts({"ggml/src/ggml-cuda/ggml-cuda.cu": unwrapped}) == []  # no line changed


def test_a_line_ollama_tells_apart_by_a_fixed_word_is_lost_even_while_another_kind_prints():
    (draft,) = _drafts({"src/llama-kv-cache.cpp": KV.replace("KV buffer size", "KV cache buffer size")})
    assert "before `llama_kv_cache: CUDA0 KV buffer size = 1.50 MiB`" in draft.detail


def test_a_line_moved_to_another_file_is_still_printed():
    moved = "void print_devices() {\n" + ARG.split("\n", 1)[1]
    assert (
        _drafts({"common/arg.cpp": ARG.replace("MiB, %zu MiB free", "MiB"), "common/devices.cpp": moved})
        == []
    )


def test_a_marker_another_file_ollama_builds_still_prints_is_not_lost():
    reworded = {"src/llama.cpp": LLAMA.replace("error loading model", "failed to load model")}
    other = b'void f() { LOG_ERR("%s: error loading model: %s\\n", __func__, e); }\n'
    assert _drafts(reworded, built={"tools/server/server.cpp": other}) == []
    (draft,) = _drafts(reworded, built={"ggml/src/x.cpp": None})
    assert "1 upstream files the clone lacks were not searched" in draft.detail


def test_what_ollama_does_not_compare_with_a_programs_output_or_code_it_does_not_run_raises_nothing():
    library = {
        "src/llama.cpp": LLAMA.replace('"%s: error', '"library/%s: error').replace("error loading", "failed")
    }
    assert [d.local_refs[0] for d in _drafts(library)] == [LocalRef("llm/discover.go", 23)]  # not library/
    no_launch = {
        **OLLAMA,
        "llm/discover.go": DISCOVER_GO.replace('exec.Command("llama-server"', 'exec.Command("other"'),
    }
    assert _drafts({"common/arg.cpp": ARG.replace("MiB free", "MiB avail")}, ollama=no_launch) == []
    assert (
        _drafts(
            {"common/arg.cpp": ARG.replace("MiB free", "MiB avail")},
            writes_to=lambda path: frozenset({"llama-bench"}),
        )
        == []
    )


def test_the_patterns_are_the_inventorys_searches_of_what_a_program_prints():
    """A regular expression or a telling literal compared with a program's printed output is a pattern, with
    its contract; an equality, a short literal, an HTTP answer's text or a Go-only construct is not."""
    at = LocalRef("internal/probe/read.go", 7)

    def contract(kind: str, value: str, source: str = "llama-server stderr") -> OutputPattern:
        return OutputPattern(kind, value, (source,), at, (at,), ("line",))

    searched = [
        contract("regexp", r"offloaded (\d+)/(\d+) layers"),
        contract("suffix", "MiB free"),
        contract("equals", "model buffer"),
        contract("substring", "gfx"),
        contract("substring", "loading model", "POST /completion response"),
        contract("regexp", r"(?P<x>a)\C"),
    ]
    patterns = output_searches(searched)
    assert [(p.source, p.contract) for p in patterns] == [(c.value, c) for c in searched[:2]]
    assert patterns[0].extracts and not patterns[1].extracts


def test_a_re_check_finds_what_a_changes_templates_print_in_the_facts_store(tmp_path, monkeypatch):
    """What a change's removed and added templates print of Ollama's patterns is kept by the change's texts
    and the patterns: a second review of the same change renders nothing, and says the same; a pattern that
    matches differently is not served what another pattern matched."""
    from bot.cache import facts
    from bot.review import logformats

    bump = {"common/arg.cpp": ARG.replace("MiB, %zu MiB free", "MiB total, %zu MiB free")}
    uncached = _drafts(bump)
    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        assert _drafts(bump) == uncached
        rendered = []
        monkeypatch.setattr(logformats, "matched_templates", lambda *a: rendered.append(a) or [])
        assert _drafts(bump) == uncached
        assert not rendered
        monkeypatch.undo()
        widened = DISCOVER_GO.replace(r"\s+MiB,", r"\s+MiB(?:\s+total)?,")  # matches the new line too
        assert widened != DISCOVER_GO and _drafts_uncached(bump, widened) == []
        assert _drafts(bump, {**OLLAMA, "llm/discover.go": widened}) == []


def _drafts_uncached(bump, discover):
    from bot.cache import facts

    with facts.using(None):
        return _drafts(bump, {**OLLAMA, "llm/discover.go": discover})


def test_an_error_text_ollama_finds_in_an_answer_is_compared_like_a_log_line():
    contract = OutputPattern(
        "substring",
        "too large",
        ("POST /v1/embeddings response",),
        LocalRef("llm/server.go", 4),
        (),
        ("err",),
    )
    old = 'void f(int n) {\n    send_error(slot, string_format("input (%d tokens) is too large to process", n));\n}\n'
    new = old.replace("is too large to process", "exceeds the batch")
    program = Program(lambda p: None, lambda: printed_patterns([contract]), lambda n: iter(()))
    (draft,) = log_line_drafts([FileChange.from_texts("tools/server/ctx.cpp", old, new)], {}, program)
    assert draft.title.startswith("The answer to POST /v1/embeddings Ollama parses changed: `too large`")
    assert draft.local_refs == (LocalRef("llm/server.go", 4),)
    kept = old.replace("is too large to process", "is too large to process now")
    assert log_line_drafts([FileChange.from_texts("tools/server/ctx.cpp", old, kept)], {}, program) == []


QUANTIZE_GO = """package server

import (
	"bufio"
	"os/exec"
	"regexp"
	"strconv"
)

var (
	progressRegex = regexp.MustCompile(`\\[\\s*(\\d+)/\\s*(\\d+)\\]`)
	countRegex    = regexp.MustCompile(`(\\d+)/(\\d+)`)
)

func Quantize(progress func(n, total uint64)) error {
	cmd := exec.Command("llama-quantize", "in.gguf", "out.gguf", "Q4_K_M")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		line := scanner.Text()
		if m := progressRegex.FindStringSubmatch(line); len(m) == 3 {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			total, _ := strconv.ParseUint(m[2], 10, 64)
			progress(n, total)
		}
		if m := countRegex.FindStringSubmatch(line); len(m) == 3 {
			progress(0, 0)
		}
	}
	return cmd.Wait()
}
"""


def test_a_pattern_of_short_fixed_runs_is_tested_by_those_runs_in_order():
    """`\\[\\s*(\\d+)/\\s*(\\d+)\\]` holds no run long enough to search code for; its runs in order (`[`, `/`,
    `]`) find the format that prints it, and a format it no longer matches is high. A pattern with fewer fixed
    characters than that is not judged."""
    ollama = {
        "go.mod": GO_MOD,
        "CMakeLists.txt": "install(TARGETS llama-quantize RUNTIME DESTINATION bin)\n",
        "server/quantize.go": QUANTIZE_GO,
    }
    percent = QUANT.replace('"[%4d/%4d] %-36s', '"[%5.1f%%] %-36s').replace(
        "++idx, ml.n_tensors,", "100.0 * ++idx / ml.n_tensors,"
    )
    (draft,) = _drafts({"src/llama-quant.cpp": percent}, ollama)
    assert (draft.severity, draft.path, draft.line) == ("high", "src/llama-quant.cpp", 4)
    assert (
        draft.title
        == "llama-quantize output Ollama parses changed: `\\[\\s*(\\d+)/\\s*(\\d+)\\]` no longer matches"
    )
    assert "before `[1024/1024] CUDA0 - [CUDA0], type = CUDA0,`" in draft.detail
    assert draft.local_refs[0] == LocalRef("server/quantize.go", 11)
    # wider columns print what the pattern still matches
    wider = QUANT.replace('"[%4d/%4d] %-36s', '"[%5d/%5d] %-40s')
    assert _drafts({"src/llama-quant.cpp": wider}, ollama) == []


def test_a_value_printed_where_ollama_captures_one_now_another_expression_is_medium():
    """The format is the same; the slot Ollama's pattern captures the device index from is filled by another
    value: Ollama now keys what it reads by a number that means something else."""
    vulkan = "ggml/src/ggml-vulkan/ggml-vulkan.cpp"
    physical = VULKAN.replace(
        "size_t idx) {\n", "size_t idx) {\n    const size_t dev_num = device_indices[idx];\n"
    ).replace("idx, name.c_str()", "dev_num, name.c_str()")
    (draft,) = _drafts({vulkan: physical})
    assert (draft.severity, draft.path) == ("medium", vulkan)
    assert draft.title.endswith("captures another value")
    assert "group 1: before `idx`, now `dev_num`" in draft.detail
    assert draft.local_refs[0] == LocalRef("llm/discover.go", 16)
    # a value Ollama does not capture, and a variable renamed all through the file, say nothing
    assert _drafts({vulkan: VULKAN.replace("driver, uma", "driver_name, uma")}) == []
    assert _drafts({vulkan: VULKAN.replace("idx", "dev")}) == []


def test_a_captured_value_is_compared_as_arithmetic_through_the_files_constants():
    """`total / MiB` with `constexpr size_t MiB = 1024 * 1024;` is `total / 1024 / 1024`; `total / 1000 /
    1000` is another value; a name the file neither declares nor defines (another file's constant) is not
    judged."""
    args = "common/arg.cpp"
    defined = ARG.replace(
        "static void list_devices() {\n",
        "static void list_devices() {\n    constexpr size_t MiB = 1024 * 1024;\n",
    )
    same = defined.replace("total / MiB, free / MiB", "total / 1024 / 1024, free / 1024 / 1024")
    other = defined.replace("total / MiB, free / MiB", "total / 1000 / 1000, free / 1000 / 1000")
    assert _drafts_from({args: defined}, {args: same}) == []
    (draft,) = _drafts_from({args: defined}, {args: other})
    assert "group 3: before `total / MiB`, now `total / 1000 / 1000`" in draft.detail
    undeclared = ARG.replace("total / MiB, free / MiB", "total / 1024 / 1024, free / 1024 / 1024")
    assert _drafts({args: undeclared}) == []


def _drafts_from(base: dict[str, str], new: dict[str, str]):
    """`_drafts` of a bump from UPSTREAM with `base` put in."""
    changes = [FileChange.from_texts(path, base[path], text) for path, text in new.items()]
    local = {path: code_text(text, path) for path, text in OLLAMA.items()}
    program = Program(
        lambda path: None,
        lambda: printed_patterns(contract_inventory(local).output_patterns),
        lambda needles: iter(()),
    )
    return log_line_drafts(changes, local, program)


SECOND_DEVICE_LINE = """static void report(int i) {
    printf("  %s: %s (%zu MiB, %zu MiB free)\\n", name(i), description(i), total(i), free_after_load(i));
}
"""


def _second_printers(new: dict[str, str | None], built: dict[str, bytes] | None = None):
    still = {"common/arg.cpp": ARG.encode()} if built is None else built
    return _drafts(new, built=still, detector=new_printer_drafts)


def test_a_line_ollama_reads_values_from_now_printed_by_other_code_too_is_medium():
    (draft,) = _second_printers({"tools/mtmd/report.cpp": SECOND_DEVICE_LINE})
    assert (draft.area, draft.severity, draft.path, draft.line) == (
        "server",
        "medium",
        "tools/mtmd/report.cpp",
        2,
    )
    assert draft.title.endswith("now also matches a line `tools/mtmd/report.cpp` prints")
    assert "a line it matches too: `  CUDA0: CUDA0 (1024 MiB, 1024 MiB free)`" in draft.detail
    assert draft.local_refs == (LocalRef("llm/discover.go", 12), LocalRef("llm/discover.go", 54))


def test_a_line_that_moves_is_printed_twice_only_by_one_or_only_for_markers_raises_no_second_printer():
    moved = {
        "common/arg.cpp": ARG.replace("MiB, %zu MiB free", "MiB"),
        "tools/mtmd/report.cpp": SECOND_DEVICE_LINE,
    }
    assert _second_printers(moved) == []  # the old printer stops: the line moved (the log-lines check's)
    assert (
        _second_printers({"tools/mtmd/report.cpp": SECOND_DEVICE_LINE}, built={}) == []
    )  # nothing else prints it
    again = ARG.replace(
        "    }\n}", '    }\n    printf("  %s: %s (%zu MiB, %zu MiB free)\\n", a, b, c, d);\n}'
    )
    assert again != ARG and _second_printers({"common/arg.cpp": again}) == []  # the file printed it before
    marker = 'void f() { LOG_ERR("%s: error loading model: %s\\n", __func__, e); }\n'
    built = {"src/llama.cpp": LLAMA.encode()}
    assert (
        _second_printers({"tools/mtmd/report.cpp": marker}, built=built) == []
    )  # Ollama reads no value from it
