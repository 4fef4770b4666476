"""Flags Ollama passes to a program it runs that no upstream source spells any more, end to end: the flag
parsed by a hand-written `argv` loop (no argument table to anchor on), a real upstream history, the review."""

import pytest

from bot.model import LocalRef
from tests.test_review_e2e import OLLAMA, UPSTREAM, _history, _review

MAIN = """int main(int argc, char ** argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-kv-offload") == 0) {
            params.no_kv_offload = true;
        } else if (strcmp(argv[i], "--verbose-prompt") == 0) {
            params.verbose_prompt = true;
        }
    }
    return 0;
}
"""
ARGLESS = {**UPSTREAM, "common/arg.cpp": "void common_params_parse() {}\n"}  # no table: the loop parses


def _flags(tmp_path, main: str, base_extra=None):
    base = {**ARGLESS, "tools/server/main.cpp": MAIN, **(base_extra or {})}
    b = _history(tmp_path, [("server: parse flags (#8)", {"tools/server/main.cpp": main})], base=base)
    findings, _ = _review(b, ollama=OLLAMA, patches=())
    return [f for f in findings if f.check == "server.program-flags"]


def test_a_flag_ollama_passes_that_no_source_spells_any_more_is_high(tmp_path):
    dropped = MAIN.replace('strcmp(argv[i], "--no-kv-offload") == 0', 'strcmp(argv[i], "--offload") == 0')
    (item,) = _flags(tmp_path, dropped)
    assert (item.severity, item.title) == (
        "high",
        "`llama-server` no longer takes --no-kv-offload; Ollama passes it",
    )
    assert item.local_refs == [LocalRef("llm/server.go", 5)]
    assert [c.subject for c in item.upstream_commits] == ["server: parse flags (#8)"]


@pytest.mark.parametrize(
    ("main", "base_extra"),
    [
        (MAIN.replace('"--verbose-prompt"', '"--show-prompt"'), None),  # Ollama never passes it
        (
            MAIN.replace('"--no-kv-offload"', '"--offload"'),
            {"tools/server/compat.cpp": 'const char * k = "--no-kv-offload";\n'},
        ),
        (MAIN.replace("params.no_kv_offload = true;", "params.offload = false;"), None),  # still spelled
    ],
    ids=["a-flag-ollama-never-passes", "still-spelled-by-an-unchanged-file", "its-handling-changed-only"],
)
def test_flags_upstream_still_spells_or_ollama_never_passes_are_quiet(tmp_path, main, base_extra):
    assert _flags(tmp_path, main, base_extra) == []


ENV_GO = b"""package llm

import "os/exec"

func start() error {
	cmd := exec.Command("llama-server", "--port", "8089")
	cmd.Env = append(cmd.Env, "LLAMA_ARG_CTX_SIZE=4096")
	return cmd.Start()
}
"""


def test_a_flag_ollama_sets_through_its_environment_name_is_checked_as_passed(tmp_path):
    """Setting LLAMA_ARG_CTX_SIZE is passing --ctx-size: a changed value set of the flag concerns Ollama."""
    from tests.test_review_e2e import ARG

    changed = ARG.replace('{"-c", "--ctx-size"}, "N",', '{"-c", "--ctx-size"}, "N[k|K]",')
    b = _history(tmp_path, [("arg: ctx size in thousands (#9)", {"common/arg.cpp": changed})])
    ollama = {path: OLLAMA[path] for path in ("go.mod", "llama/server/CMakeLists.txt")} | {
        "llm/env.go": ENV_GO
    }
    findings, _ = _review(b, ollama=ollama, patches=())
    (item,) = [f for f in findings if f.check == "server.flags"]
    assert (item.severity, item.title) == ("medium", "llama-server flag --ctx-size changed its value set")
    assert item.local_refs == [LocalRef("llm/env.go", 7)]


def test_an_argument_table_the_review_cannot_find_any_more_is_said_once(tmp_path):
    """The table's file emptied of entries (moved where the review cannot read it): one item saying the flags
    went unchecked, not a removal per flag."""
    b = _history(
        tmp_path, [("arg: generate the table (#10)", {"common/arg.cpp": '#include "arg-table.inc"\n'})]
    )
    findings, _ = _review(b, ollama=OLLAMA, patches=())
    flags = [f for f in findings if f.check == "server.flags"]
    assert [(f.severity, f.title.split(":")[0]) for f in flags] == [
        ("info", "llama-server's flags not checked")
    ]


def test_the_argument_table_is_found_by_its_entries_wherever_upstream_keeps_it(tmp_path):
    """No table at the profile's hint: the changed file whose old text holds `common_arg(` entries is it."""
    from tests.test_review_e2e import ARG

    moved = {p: t for p, t in UPSTREAM.items() if p != "common/arg.cpp"} | {"common/args/options.cpp": ARG}
    dropped = ARG[: ARG.index('    add_opt(common_arg(\n        {"-nkvo"')]
    b = _history(
        tmp_path, [("common: drop --no-kv-offload (#102)", {"common/args/options.cpp": dropped})], base=moved
    )
    findings, _ = _review(b, ollama=OLLAMA, patches=())
    (item,) = [f for f in findings if f.check == "server.flags"]
    assert (item.title, item.upstream_path) == (
        "llama-server flag --no-kv-offload was removed; Ollama passes it",
        "common/args/options.cpp",
    )
