"""The review's recall on plausible upstream edits designed from Ollama's consuming code (tests/mutations/).

Each edit of tests/mutations/mutations.toml is applied to llama.cpp's files at b10488 and the real review of
the bump pull request runs on it (tests/mutations/suite.py). These tests pin today's behaviour exactly, both
ways: a harmless edit must raise nothing above info; a breaking edit the review catches must stay caught (a
regression fails); one it misses is listed in KNOWN_MISSES with why, and the test fails when it starts being
caught, so the list stays true. `make bench` prints the same suite as recall per area.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from bench.mutations import recall_table
from tests.mutations import suite
from tests.mutations.table import AREAS, load

MUTATIONS = load()
BREAKING = [m.id for m in MUTATIONS if m.breaking]
HARMLESS = [m.id for m in MUTATIONS if not m.breaking]


# The breaking edits the review misses today (no high or medium finding that names the thing and points at
# the Ollama line), each with why: what the detector work starts from.
KNOWN_MISSES = {
    # discovery
    "discovery-backend-search-no-exe-dir": "the backend-registry rule fires (high) but points at native_probe's dlsym calls, not at the runner layout that relies on the executable's directory",
    # the fresh-eyes round (tests/mutations/fresh.toml), as its first scoring left them
    "fresh-reasoning-format-default-none": "named by a medium item on the default of reasoning_format, but it points at the request struct, not at where Ollama reads reasoning_content",
    "fresh-fit-default-off": "named by a medium item (a default that turns what it sets off, of a flag Ollama never passes), but it points at the lines that pass llama-server's flags, not at the comments that leave -ngl to the fit",
    "fresh-chat-include-usage-default-on": "named by a medium item on the default of include_usage (it decides whether the chat stream writes an extra `choices` chunk), but it points at where Ollama reads `choices`, not at the timings reads the extra chunk empties",
    "fresh-return-progress-default-on": "told by an information item (a changed default of a field Ollama never sends): the value guards a call that sends progress chunks, not an entry Ollama decodes",
    "fresh-quantize-tensor-type-substring": "no check reads this shape yet (fresh-eyes round, first scoring)",
    # the second fresh-eyes round (tests/mutations/fresh2.toml), after its first scoring and the fixes since
    "fresh2-build-backend-modules-subdir": "the backend-registry rule fires (high) but points at native_probe's dlsym calls, not at Ollama's install globs of the build's bin/",
    "fresh2-discovery-system-info-features-next-line": "which line a printed text lands on, relative to the one Ollama stops at, is not compared",
    "fresh2-server-kv-cache-q4-0-dropped": "the accepted values of a flag come from a type list the argument table's handler searches, not from the table",
    "fresh2-streaming-tool-call-id-name-repeated": "which chunks carry a field (every delta, not the first) is not compared",
    "fresh2-models-gemma4-add-bos-override-removed": "a removed special case for an architecture Ollama ships is not read",
    "fresh2-models-sampler-chain-drops-min-p": "the order and members of the default sampler chain are not compared",
    "fresh2-models-reasoning-effort-kwarg-ignored": "a nested request field (chat_template_kwargs) no longer read is not followed",
    # the third fresh-eyes round (tests/mutations/fresh3.toml), as its first scoring left them
    "fresh3-discovery-cuda-kernels-side-library": "first scoring: named by medium 'Runtime library names changed in CMakeLists.txt', but it points at discover/native_probe_linux.go:180, discover/native_probe_platform.go:78, discover/native_probe_platform.go:79, discover/native_probe_platform.go:80, discover/native_probe_plat",
    "fresh3-server-quantized-v-needs-explicit-fa": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-server-sleep-idle-default-300": "named by a medium item (a default that turns what it sets on, of a flag Ollama never passes), but it points at the lines that pass llama-server's flags, not at the comment above them or the health check",
    "fresh3-server-lora-opt-in-per-request": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-streaming-stop-string-kept": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-streaming-streams-resumable-by-default": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-streaming-no-utf8-holdback": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-models-gguf-tensor-name-index": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-models-loader-indexed-tensor-count-check": "first scoring: information only: info 'Upstream changed src/llama-model-loader.cpp near hunk 3 of 001-llama-cpp-hooks.patch'",
    "fresh3-models-mmproj-same-as-model-rejected": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-models-quantize-refuses-existing-output": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    "fresh3-models-quantize-tensor-type-full-match": "no check reads this shape yet (third fresh-eyes round, first scoring)",
    # the fourth fresh-eyes round (tests/mutations/fresh4.toml), as its first scoring left them
    "fresh4-build-cuda-toolkit-12-required": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-build-cuda-blackwell-family-specific-arch": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-discovery-vulkan-integrated-only-as-fallback": "first scoring: information only: info 'What environment variable GGML_VK_VISIBLE_DEVICES decides changed upstream; Ollama sets it'",
    "fresh4-discovery-vulkan-info-at-backend-init": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-discovery-blas-reports-host-memory": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-server-multimodal-data-requires-data-url": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-streaming-sse-array-one-event": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-models-loader-use-mmap-resolved-late": "first scoring: information only: info 'Upstream changed src/llama-model-loader.cpp near hunks 2, 3 of 001-llama-cpp-hooks.patch'",
    "fresh4-models-quantize-tensor-type-skips-embd-output": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-models-lfm2-bos-from-metadata": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-models-sampler-prompt-not-replayed": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    "fresh4-server-embedding-overlong-input-truncated": "no check reads this shape yet (fourth fresh-eyes round, first scoring)",
    # the fifth fresh-eyes round (tests/mutations/fresh5.toml), as its first scoring left them
    "fresh5-build-cuda-fa-q4-0-vec-not-default": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-build-backend-use-defines-private": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-discovery-vulkan-igpu-reported-as-gpu": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-models-quantize-tensor-type-must-match": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-models-quantize-atomic-output-rename": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-models-loader-tensor-size-matches-gguf-info": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-server-detokenize-special-default-off": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    "fresh5-streaming-logprob-impossible-null": "no check reads this shape yet (fifth fresh-eyes round, first scoring)",
    # the sixth fresh-eyes round (tests/mutations/fresh6.toml), as its first scoring left them
    "fresh6-discovery-cuda-device-id-nvml-domain": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-discovery-router-mode-requires-subprocess": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-discovery-cuda-uma-free-includes-swap": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-build-clip-object-library": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-models-quantize-reads-tensor-data-directly": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-models-quantize-copy-file-type-reset": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-server-parallel-tool-calls-default-off": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-server-request-body-16mib-limit": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-server-api-key-from-openai-env": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-streaming-preserved-tokens-rendered-for-chat-only": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    "fresh6-streaming-context-full-is-error": "no check reads this shape yet (sixth fresh-eyes round, first scoring)",
    # the seventh fresh-eyes round (tests/mutations/fresh7.toml), as its first scoring left them
    "fresh7-discovery-backend-dll-safe-search-path": "first scoring: named by high 'Backend registry loading changed in ggml-backend-dl.cpp', but it points at discover/native_probe_linux.go:190, discover/native_probe_linux.go:194, discover/native_probe_linux.go:198, discover/native_probe_linux.go:202, discover/native_probe_linux.go:477, discover/native_probe_linux.go",
    "fresh7-discovery-cuda-hides-devices-without-kernels": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    "fresh7-models-quantize-keeps-input-split": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    "fresh7-models-clip-loader-rejects-non-clip-arch": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    "fresh7-models-moe-up-scale-folded-into-router-weights": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    "fresh7-models-quantize-copy-skips-hparams": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    "fresh7-server-fit-shrinks-user-ctx": "a bound by its shape (`if (n_ctx > n_ctx_min) { n_ctx = n_ctx_min; }`): server.flag-overrides leaves a bound on a value Ollama passes alone, as server.flag-limits does a number's new bounds (a real bump clamps the draft size so)",
    "fresh7-server-load-failure-keeps-serving": "no check reads this shape yet (seventh fresh-eyes round, first scoring)",
    # the eighth fresh-eyes round (tests/mutations/fresh8.toml), as its first scoring left them
    "fresh8-build-backend-modules-not-ggml-dependencies": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-build-cpu-variants-x64-baseline-dropped": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-discovery-router-skips-backend-load": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-discovery-cuda-redundant-virtual-archs-pruned": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-discovery-cuda-score-rejects-older-driver": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-discovery-backend-load-path-utf8": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-models-quantize-output-gets-gguf-extension": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-server-tool-parameters-properties-must-be-object": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-server-mmproj-load-failure-text-only": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-server-tools-with-response-format-rejected": "first scoring: named by high 'llama-server now rejects some values of `grammar`, which Ollama forwards', but it points at llm/llama_server.go:1411, llm/llama_server.go:1589, llm/llama_server.go:1598",
    "fresh8-server-orphan-tool-message-rejected": "first scoring: named by high 'llama-server now rejects some values of `role`, which Ollama forwards', but it points at llm/llama_server.go:2207",
    "fresh8-server-image-decoders-png-jpeg-only": "no check reads this shape yet (eighth fresh-eyes round, first scoring)",
    "fresh8-server-prefill-assistant-default-off": "first scoring: named by medium 'Default of llama-server parameter prefill_assistant changed; Ollama never passes --prefill-assistant', but it points at discover/llama_server.go:60, llm/llama_server.go:370",
    "fresh8-server-tokenize-rejects-over-context": "named by a high item (a new error answer on the `content` it tokenizes), cited where Ollama sends the field and makes the request, not at the callers of its tokenize",
    # the ninth fresh-eyes round (tests/mutations/fresh9.toml), as its first scoring left them
    "fresh9-discovery-ggml-default-logger-stdout": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-discovery-cuda-archs-sass-only": "first scoring: named by high 'llama-server output Ollama parses changed: `CUDA\\s*:\\s*ARCHS\\s*=\\s*([\\d,]+)` no longer matches', but it points at discover/llama_server.go:193, discover/llama_server.go:245",
    "fresh9-discovery-metal-total-is-physical-memory": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-discovery-cuda-device-id-uuid": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-build-llama-limits-generated-header": "first scoring: named by medium 'New CMake option LLAMA_MAX_LAYERS: decide its value', but it points at llama/server/CMakeLists.txt:179",
    "fresh9-models-qwenvl-gguf-min-pixels-override": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-models-gguf-set-arr-type-change-asserts": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-models-bpe-default-pretokenizer-dropped": "first scoring: named by high 'Pre-tokenizer type `default` removed or renamed upstream', but it points at app/server/server.go:260, app/server/server.go:396, app/store/database.go:502, app/tools/browser_websearch.go:71, app/tools/browser_websearch.go:72, llama/compat/llama-ollama-compat.cpp:209",
    "fresh9-server-completion-raw-prompt-bos-opt-in": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-server-exits-on-stdin-eof": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-server-gpus-ordered-by-free-memory": "first scoring: information only: info 'Device ordering or selection changed in llama.cpp'",
    "fresh9-server-env-overrides-command-line": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    "fresh9-server-completion-json-schema-oai-wrapper": "no check reads this shape yet (ninth fresh-eyes round, first scoring)",
    # the tenth fresh-eyes round (tests/mutations/fresh10.toml), as its first scoring left them
    "fresh10-server-health-waits-for-inference-loop": "no check reads this shape yet (tenth fresh-eyes round, first scoring)",
    "fresh10-server-windows-argv-utf8-repair-dropped": "no check reads this shape yet (tenth fresh-eyes round, first scoring)",
    "fresh10-models-load-tensors-size-check": "no check reads this shape yet (tenth fresh-eyes round, first scoring)",
    "fresh10-models-convert-pooling-type-none": "no check reads this shape yet (tenth fresh-eyes round, first scoring)",
    "fresh10-build-cpu-getcpu-glibc-2-29": "no check reads this shape yet (tenth fresh-eyes round, first scoring)",
    # the eleventh fresh-eyes round (tests/mutations/fresh11.toml), as its first scoring left them
    "fresh11-build-cuda-nvcc-threads-forced": "no check reads this shape yet (eleventh fresh-eyes round, first scoring)",
    "fresh11-build-metal-embed-syntax-check": "first scoring: named by medium 'Arguments of build-time generator xcrun changed', but it points at no Ollama line",
    "fresh11-discovery-list-devices-quick-exit": "no check reads this shape yet (eleventh fresh-eyes round, first scoring)",
    "fresh11-server-metal-mapped-buffer-renamed": "no check reads this shape yet (eleventh fresh-eyes round, first scoring)",
    "fresh11-server-cpu-mapped-buffer-renamed": "first scoring: named by medium '`ggml/src/ggml-backend.cpp` no longer holds `_Mapped`, which Ollama looks for', but it points at llm/llama_server.go:2765, llm/llama_server.go:2766",
    "fresh11-streaming-sse-event-ids": "first scoring: named by high 'llama-server's stream frames changed in server-common.cpp: `id: ` new', but it points at llm/llama_server.go:1678, :1682, :1968, :1972, :1976",
    "fresh11-models-tool-message-name-dropped": "no check reads this shape yet (eleventh fresh-eyes round, first scoring)",
}

# The harmless edits the review raises a high or medium finding on today, each with why.
KNOWN_FALSE_ALARMS: dict[str, str] = {
    # the third fresh-eyes round, as its first scoring left them
    "fresh3-harmless-backend-path-list": "first scoring: false alarm: high 'Backend registry loading changed in ggml-backend-reg.cpp'",
    # the sixth
    "fresh6-harmless-cuda-compression-balance": "first scoring: false alarm: medium 'Default of CMake option GGML_CUDA_COMPRESSION_MODE changed' (Ollama leaves it to upstream's default; the mode only trades fatbin size for load time)",
}


# The first test that asks for `result` reviews all 130 edits (about a minute on two cores, twice that on a
# loaded machine): the hang limit covers that.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> suite.SuiteResult:
    return suite.run_suite(mutations=MUTATIONS, where=tmp_path_factory.mktemp("mutations") / "repo.git")


def test_the_table_covers_every_area_and_its_lists_name_its_mutations():
    breaking = Counter(m.area for m in MUTATIONS if m.breaking)
    assert len(BREAKING) >= 40 and len(HARMLESS) >= 10
    assert {area: breaking[area] >= 6 for area in AREAS} == dict.fromkeys(AREAS, True)
    assert set(KNOWN_MISSES) <= set(BREAKING), set(KNOWN_MISSES) - set(BREAKING)
    assert set(KNOWN_FALSE_ALARMS) <= set(HARMLESS), set(KNOWN_FALSE_ALARMS) - set(HARMLESS)


def test_an_unchanged_upstream_gives_no_finding_and_every_patch_applies(result):
    """Else the excerpts lack a file the review or the patch stage needs."""
    assert result.control.error is None
    assert result.control.findings == ()
    assert {status for _, status in result.control.patches} <= {"clean", "offset"}
    assert result.control.patches, "the carried patches are part of the excerpts"


@pytest.mark.parametrize("ident", HARMLESS)
def test_a_harmless_edit_raises_nothing_above_info(result, ident):
    v = result.verdicts[ident]
    if ident in KNOWN_FALSE_ALARMS:
        assert v.false_alarm, f"{ident} is quiet now: take it out of KNOWN_FALSE_ALARMS"
    else:
        assert not v.false_alarm, f"{ident} ({v.mutation.what}): {v.why}"


@pytest.mark.parametrize("ident", BREAKING)
def test_a_breaking_edit_is_caught_unless_known_missed(result, ident):
    v = result.verdicts[ident]
    if ident in KNOWN_MISSES:
        assert not v.caught, f"{ident} is caught now ({v.why}): take it out of KNOWN_MISSES"
    else:
        assert v.caught, (
            f"{ident} ({v.mutation.what}) is not caught: {v.why} (a regression, or a new miss for KNOWN_MISSES)"
        )


def test_the_cli_reviews_a_mutation_as_the_suite_does(result):
    """`python -m bot check` on one mutation's pull request gives the findings the suite saw in process."""
    ident = "server-flag-no-webui-dropped"
    case, repo = result.cases[ident], result.repo
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            "--repo",
            str(repo),
            "--base",
            result.ollama_base,
            "--head",
            case.ollama_head,
            "--upstream-dir",
            f"llama.cpp={repo}",
            "--format",
            "json",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode in (0, 1), run.stderr
    (pin,) = json.loads(run.stdout)["pins"]
    assert (pin["old_ref"], pin["new_ref"]) == (suite.OLD_TAG, case.tag)
    seen = sorted((f["severity"], f["title"]) for f in result.verdicts[ident].outcome.findings)
    assert sorted((f["severity"], f["title"]) for f in pin["findings"]) == seen
    assert ("high", "llama-server flag --no-webui was removed; Ollama passes it") in seen


def test_the_bench_table_counts_each_area_and_lists_every_miss(result):
    lines = recall_table(result)
    rows = {line.split()[0]: line.split()[1:] for line in lines[1 : len(AREAS) + 2]}
    assert list(rows) == [*AREAS, "all"]
    caught = len(BREAKING) - len(KNOWN_MISSES)
    assert rows["all"][:3] == [str(len(BREAKING)), str(caught), str(len(KNOWN_MISSES))]
    assert rows["all"][4:] == [str(len(HARMLESS)), str(len(KNOWN_FALSE_ALARMS))]
    listed = {line.split(":")[0].strip() for line in lines[len(AREAS) + 3 :]}
    assert listed == set(KNOWN_MISSES) | set(KNOWN_FALSE_ALARMS)
