"""The service's analysis children start warm: what every analysis would build (the tree-sitter queries,
the glob regexes, the shipped review rules) the forkserver built once, and each child uses its copy.

Each test runs the service's own arrangement in a fresh interpreter (a forkserver is started once per
process, with the preload it was given then), and counts what the child compiles, not how long it takes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pygit2

from tests.conftest import HOOK_PATCH, NEW_SOURCE, OLD_SOURCE, PATCH_PATH, ROOT
from tests.gitutil import upstream_pair

OLD_CMAKE = 'cmake_minimum_required(VERSION 3.14)\nproject(llama)\noption(LLAMA_CURL "curl" ON)\n'
NEW_CMAKE = OLD_CMAKE.replace("LLAMA_CURL", "LLAMA_HTTP") + "add_library(llama src/f.c)\n"
OLD_HEADER = "#pragma once\nGGML_API int ggml_one(int a);\nGGML_API int ggml_two(int a, int b);\n"
NEW_HEADER = OLD_HEADER.replace("ggml_two(int a, int b)", "ggml_two(int a)")
OLLAMA_GO = (
    'package llm\n\nimport "os/exec"\n\nfunc start(port string) *exec.Cmd {\n'
    '\treturn exec.Command("llama-server", "--port", port, "--curl")\n}\n'
)
OLLAMA_CMAKE = "cmake_minimum_required(VERSION 3.14)\nset(LLAMA_CURL OFF)\nadd_subdirectory(llama)\n"
COMPAT_SOURCE = '#include "ggml.h"\nint ollama_two(void) { return ggml_two(1, 2); }\n'


def caches() -> dict[str, int]:
    """How often each cache of what the warm-up builds was missed in this process."""
    from bot.lang import syntax
    from bot.review import ruleset, source

    return {
        "queries": syntax.query.cache_info().misses,
        "globs": source._globs_regex.cache_info().misses,
        "rule regexes": ruleset._compiled.cache_info().misses,
        "rules files": ruleset.shipped_tables.cache_info().misses,
    }


@dataclass(frozen=True)
class CountedAnalysis:
    """A pull request bumping the pin over a llama.cpp-shaped upstream, reviewed in the analysis child:
    the report's statuses and findings, and what the child compiled to make it."""

    upstream: str

    def __call__(self, _channel) -> tuple[dict[str, int], list[str], list[str]]:
        from bot.config import parse_config
        from bot.engine import analyse
        from bot.repos.snapshot import MemorySnapshot
        from bot.repos.upstream import Upstream

        before = caches()
        shared = {PATCH_PATH: HOOK_PATCH, "llm/server.go": OLLAMA_GO.encode()}
        shared |= {"CMakeLists.txt": OLLAMA_CMAKE.encode(), "llama/compat/two.c": COMPAT_SOURCE.encode()}
        report = analyse(
            parse_config(None),
            MemorySnapshot({"LLAMA_CPP_VERSION": b"v1\n", **shared}),
            MemorySnapshot({"LLAMA_CPP_VERSION": b"v2\n", **shared}),
            lambda pin, refs: Upstream(pygit2.Repository(self.upstream), pin.upstream),
            ["LLAMA_CPP_VERSION"],
            review=True,
        )
        after = caches()
        pin = report.pins[0]
        return (
            {name: after[name] - before[name] for name in after},
            [patch.status for patch in pin.patches],
            sorted(finding.title for finding in pin.findings),
        )


RUN_IN_THE_SERVICES_WAY = """
import json, multiprocessing, sys
from bot.child.sandbox import DEFAULT_LIMITS, run_limited
from bot.worker.childanalysis import PRELOADED
from tests.test_forkserver_warm import CountedAnalysis
if sys.argv[2] == "preloaded":
    multiprocessing.set_forkserver_preload(PRELOADED)
print(json.dumps(run_limited(CountedAnalysis(sys.argv[1]), DEFAULT_LIMITS, start_method="forkserver")))
"""


def analysed(upstream: Path, preload: str) -> tuple[dict[str, int], list[str], list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", RUN_IN_THE_SERVICES_WAY, str(upstream), preload],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    compiled, statuses, findings = json.loads(out.stdout.splitlines()[-1])
    return compiled, statuses, findings


def llama_cpp_like(tmp_path: Path) -> Path:
    old = {"src/f.c": OLD_SOURCE, "CMakeLists.txt": OLD_CMAKE, "ggml/include/ggml.h": OLD_HEADER}
    new = {"src/f.c": NEW_SOURCE, "CMakeLists.txt": NEW_CMAKE, "ggml/include/ggml.h": NEW_HEADER}
    return upstream_pair(tmp_path, old, new).path


def test_an_analysis_child_of_the_service_compiles_nothing_the_forkserver_built(tmp_path):
    compiled, statuses, findings = analysed(llama_cpp_like(tmp_path), "preloaded")
    assert compiled == {"queries": 0, "globs": 0, "rule regexes": 0, "rules files": 0}
    assert statuses == ["regenerated"] and findings  # the review did run, over C, CMake and Go


def test_a_cold_child_makes_the_same_report(tmp_path):
    """Without the preload the child compiles all it needs itself, and reports the same."""
    upstream = llama_cpp_like(tmp_path)
    cold, *cold_report = analysed(upstream, "cold")
    _, *warm_report = analysed(upstream, "preloaded")
    assert cold["queries"] > 0 and cold["globs"] > 0 and cold["rules files"] == 1
    assert warm_report == cold_report
