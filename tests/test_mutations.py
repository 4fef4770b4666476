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
    # build
    "build-openssl-required-always": "the dependency detector reports packages newly looked for; OpenSSL was looked for before (under LLAMA_OPENSSL), and a dropped condition or a new REQUIRED is not weighed",
    "build-backend-dl-option-renamed": "a rename is weighed by the new name, which Ollama's build leaves OFF, so the code it guards counts as not built: information only",
    "build-cpu-default-off": "default changes are skipped for options Ollama mentions anywhere; one preset sets GGML_CPU, the presets relying on the default are not weighed",
    "build-server-impl-target-renamed": "no detector reads the target names Ollama's CMake installs or extends (if(TARGET ...), install(TARGETS ...), target_sources)",
    "build-common-target-renamed": "no detector reads the target names Ollama's CMake installs or extends (if(TARGET ...), install(TARGETS ...))",
    "build-mtmd-target-renamed": "no detector reads the target names Ollama's CMake extends (foreach ... IN ITEMS llama mtmd, target_sources)",
    # discovery
    "discovery-list-devices-format": "logformats does not read Ollama regexps written regexp.MustCompile(\\n `...`,\\n) (trailing comma), like deviceLineRegex",
    "discovery-list-devices-lists-cpu": "a behaviour change (the CPU filter removed) changes no text any detector compares",
    "discovery-system-info-renamed": "the line is written with std::ostream << in common.cpp, not a printf-style call, so logformats never renders it",
    "discovery-cuda-cc-line": "logformats does not read Ollama regexps written regexp.MustCompile(\\n `...`,\\n) (trailing comma), like cudaCCRegex",
    "discovery-cuda-archs-feature": "'CUDA : ARCHS = ...' is assembled from a backend feature name ({\"ARCHS\", ...}) that nothing follows into system_info; cudaArchsRegex is also the multi-line kind logformats skips",
    "discovery-rocm-gfx-line": "logformats does not read Ollama regexps written regexp.MustCompile(\\n `...`,\\n) (trailing comma), like gfxTargetRegex",
    "discovery-vulkan-uma-line": "logformats does not read Ollama regexps written regexp.MustCompile(\\n `...`,\\n) (trailing comma), like vulkanUMARegex",
    "discovery-vk-visible-devices-renamed": "the old name survives in an error message of the same file, so the visible-devices rule sees only a new variable Ollama does not set: information",
    "discovery-backend-path-env-renamed": "no detector compares the environment variables upstream reads (getenv) with those Ollama sets, beyond *_VISIBLE_DEVICES",
    "discovery-metal-tensor-env-renamed": "no detector compares the environment variables upstream reads (getenv) with those Ollama sets, beyond *_VISIBLE_DEVICES",
    "discovery-backend-search-no-exe-dir": "the backend-registry rule fires (high) but points at native_probe's dlsym calls, not at the runner layout that relies on the executable's directory",
    # server: launch args and defaults
    "server-flash-attn-auto-rejected": "the flag detector compares flag names and aliases, not the values a flag accepts",
    "server-load-mode-dio-renamed": "the flag detector compares flag names and aliases, not the values a flag accepts",
    "server-fit-target-env-renamed": "flags' environment variables (set_env) are not compared with the LLAMA_ARG_* variables Ollama sets",
    "server-default-context-shift-on": "no detector tracks the common_params defaults Ollama relies on by leaving a flag out",
    "server-default-ngl-zero": "no detector tracks the common_params defaults Ollama relies on by leaving a flag out",
    "server-default-jinja-off": "no detector tracks the common_params defaults Ollama relies on by leaving a flag out",
    # server: log lines and payloads
    "server-log-fit-overflowing": "format strings spliced with PRIu32/PRId64 macros are not rendered, so the fit line Ollama's regexp matches is never compared",
    "server-log-error-loading-model": "Ollama's error prefixes are a Go string slice (llm/status.go), not a regexp or Contains/HasPrefix literal, so logformats never reads them",
    # models
    "models-chat-template-chatml-renamed": "no detector compares the built-in chat template names (LLM_CHAT_TEMPLATES) with the --chat-template value Ollama passes",
    "models-spec-type-mtp-renamed": "the speculative rule is information only, and no detector compares --spec-type's value names with the value Ollama passes",
    "models-sampler-dry-default-on": "the sampler-defaults rule is information only and does not ask whether Ollama sends the parameter (it never sends dry_multiplier)",
    "models-sampler-xtc-default-on": "the sampler-defaults rule is information only and does not ask whether Ollama sends the parameter (it never sends xtc_probability)",
    "models-clip-image-size-key-renamed": "the key is a #define in tools/mtmd/clip-impl.h; the GGUF-key rule reads src/llama-arch.cpp only and nothing follows KEY_* macros to the strings the compat code writes",
}

# The harmless edits the review raises a high or medium finding on today, each with why.
KNOWN_FALSE_ALARMS: dict[str, str] = {}


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
