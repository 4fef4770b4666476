"""The upstream producer model and its join with the contract inventory: a tiny upstream built here (its
argument table in an unusual directory, a server registering routes and reading fields, CMake options and
targets, print statements) against the Ollama tree of tests/test_contracts.py; and, given the real mirrors,
the share of the real Ollama's contracts resolved at two llama.cpp releases."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from bot.cli import main
from bot.review.consumers.contracts import contract_inventory
from bot.review.source import code_text
from bot.review.upstream.join import NOT_UPSTREAMS, RESOLVED, UNRESOLVED, OllamaBuild, resolve, summary
from bot.review.upstream.producers import read_producers
from bot.review.upstream.tree import read_tree
from tests.fixtures import RepoBuilder
from tests.test_contracts import TREE

ARG_TABLE = """#include "args.h"
void add_args(std::vector<common_arg> & opts) {
    add_opt(common_arg({"--port"}, "PORT", "port", [](int v) {}).set_env("LLAMA_ARG_PORT"));
    add_opt(common_arg({"--host"}, "HOST", "host", [](std::string v) {}));
    add_opt(common_arg({"-t", "--threads"}, "N", "threads", [](int v) {}));
    add_opt(common_arg({"--jinja"}, {"--no-jinja"}, "jinja", [](bool v) {}));
    add_opt(common_arg({"-ctk", "--cache-type-k"}, "TYPE", "k", [](std::string v) {}));
    add_opt(common_arg({"-fa", "--flash-attn"}, "FA", "fa", [](std::string v) {}).set_env("LLAMA_ARG_FLASH_ATTN"));
    add_opt(common_arg({"--list-devices"}, "list", [](void) {
        printf("  %s: %s (%zu MiB, %zu MiB free)\\n", name, desc, total, free);
    }));
}
"""

SERVER = """#include "server.h"
static void handle_completion(const json & body, json & res) {
    std::string prompt = json_value(body, "prompt", std::string());
    bool stream = json_value(body, "stream", false);
    float temp = json_value(body, "temperature", 0.8f);
    int top_k = json_value(body, "top_k", 40);
    res = json {{"content", text}, {"stop", true}, {"timings", json {{"predicted_n", n}}}};
    sink.write("data: " + res.dump());
    sink.write("data: [DONE]");
}
int main(int argc, char ** argv) {
    ctx_http.get("/health", [](const req & r, res & s) { s = json {{"status", "ok"}}; });
    ctx_http.post("/completion", handle_completion);
    LOG_INF("%s: server is listening on %s\\n", __func__, address.c_str());
    return 0;
}
"""

SERVER_CMAKE = """set(TARGET llama-server)
add_executable(${TARGET} server.cpp)
target_link_libraries(${TARGET} PRIVATE common llama)
install(TARGETS ${TARGET} RUNTIME)
"""

ROOT_CMAKE = """cmake_minimum_required(VERSION 3.14)
project(llama.cpp C CXX)
option(GGML_CUDA "ggml: use CUDA" OFF)
find_package(Threads REQUIRED)
add_subdirectory(src)
add_subdirectory(odd/place)
add_subdirectory(tools/server)
add_subdirectory(tools/mtmd)
"""

PRESETS = '{"version": 4, "configurePresets": [{"name": "cpu", "generator": "Ninja"}]}\n'


def upstream_files(arg_dir: str = "odd/place") -> dict[str, str]:
    return {
        "CMakeLists.txt": ROOT_CMAKE.replace("odd/place", arg_dir),
        "CMakePresets.json": PRESETS,
        f"{arg_dir}/CMakeLists.txt": "add_library(common options.cpp)\n",
        f"{arg_dir}/options.cpp": ARG_TABLE,
        "src/CMakeLists.txt": "add_library(llama llama.cpp)\n",
        "src/llama.cpp": "int llama_init(void) { return 0; }\n",
        "tools/mtmd/CMakeLists.txt": "add_library(mtmd mtmd.cpp)\n",
        "tools/mtmd/mtmd.cpp": "int mtmd(void) { return 0; }\n",
        "tools/server/CMakeLists.txt": SERVER_CMAKE,
        "tools/server/server.cpp": SERVER,
    }


@pytest.fixture(scope="module")
def inventory():
    return contract_inventory({path: code_text(text, path) for path, text in TREE.items()})


def _resolved(tmp_path: Path, inventory, files: dict[str, str | None], name: str = "up.git"):
    up = RepoBuilder(tmp_path / name)
    up.commit("upstream", upstream_files())
    commit = up.repo[up.commit("change", files)] if files else up.repo[up.head]
    tree = read_tree(up.repo, commit, "b2")
    producers = read_producers(tree, {s.program for s in inventory.launch})
    return producers, resolve(inventory, producers, OllamaBuild(frozenset(), ("mlx",)))


def _by_label(resolutions):
    return {r.label: r for r in resolutions}


def test_every_contract_of_the_tiny_tree_resolves_to_its_producer(tmp_path, inventory):
    producers, resolutions = _resolved(tmp_path, inventory, {})
    found = _by_label(resolutions)
    assert summary(resolutions) == (len(resolutions) - 2, len(resolutions) - 2)
    assert {r.label for r in resolutions if r.status == NOT_UPSTREAMS} == {"program git", "tool cmake"}
    assert found["llama-server flag --no-jinja"].producers[0].path == "odd/place/options.cpp"
    assert found["llama-server env LLAMA_ARG_FLASH_ATTN"].producers[0].line == 8
    assert found["POST /completion top_k"].why == "read as 'top_k', default 40"
    assert [str(p) for p in found["prefix 'main: server is listening'"].producers] == [
        "tools/server/server.cpp:14"
    ]
    assert found["option GGML_CUDA"].producers[0].path == "CMakeLists.txt"
    assert found["target llama-server"].producers[0].path == "tools/server/CMakeLists.txt"
    assert [r.method + " " + r.path for r in producers.routes] == ["GET /health", "POST /completion"]


def test_what_upstream_removed_has_no_producer_and_says_why(tmp_path, inventory):
    edited = ARG_TABLE.replace(', {"--no-jinja"}', "")
    server = SERVER.replace('int top_k = json_value(body, "top_k", 40);', "")
    _, resolutions = _resolved(
        tmp_path, inventory, {"odd/place/options.cpp": edited, "tools/server/server.cpp": server}
    )
    found = _by_label(resolutions)
    assert found["llama-server flag --no-jinja"].status == UNRESOLVED
    assert found["llama-server flag --no-jinja"].why == (
        "flag --no-jinja is in no argument table nor source of llama-server"
    )
    assert found["POST /completion top_k"].why == "field top_k is read by no source of llama-server"
    behaviour = found["sampler: field top_k of POST /completion"]
    assert behaviour.status == UNRESOLVED and "top_k" in behaviour.why


def test_a_target_ollama_names_only_under_a_guard_needs_none_when_upstream_has_none(tmp_path, inventory):
    _, resolutions = _resolved(tmp_path, inventory, {"tools/mtmd/CMakeLists.txt": None})
    mtmd = _by_label(resolutions)["target mtmd"]
    assert (mtmd.status, mtmd.producers) == (NOT_UPSTREAMS, ())
    assert mtmd.why == (
        "Ollama's build names it only under `if(TARGET mtmd)`, and no CMake file at b2 defines it: "
        "what the guard holds is skipped"
    )
    assert _by_label(resolutions)["target llama"].status == RESOLVED


def test_a_removed_route_leaves_its_fields_without_a_producer(tmp_path, inventory):
    server = SERVER.replace('ctx_http.post("/completion", handle_completion);', "")
    _, resolutions = _resolved(tmp_path, inventory, {"tools/server/server.cpp": server})
    assert _by_label(resolutions)["POST /completion prompt"].why == (
        "no route POST /completion is registered at b2"
    )


def test_the_argument_table_is_found_by_content_after_it_moves(tmp_path, inventory):
    moved = {path: None for path in upstream_files() if path.startswith("odd/")}
    moved.update({p: t for p, t in upstream_files("elsewhere/deeper").items() if p != "CMakePresets.json"})
    producers, resolutions = _resolved(tmp_path, inventory, moved)
    assert producers.anchors.arg_table.paths == ("elsewhere/deeper/options.cpp",)
    assert (
        _by_label(resolutions)["llama-server flag --threads"].producers[0].path
        == "elsewhere/deeper/options.cpp"
    )
    assert all(r.status != UNRESOLVED for r in resolutions)


def test_without_an_argument_table_the_flags_say_so(tmp_path, inventory):
    _, resolutions = _resolved(tmp_path, inventory, {"odd/place/options.cpp": "int nothing;\n"})
    assert _by_label(resolutions)["llama-server flag --port"].why == "no argument table found at b2"


def test_a_missing_blob_is_skipped_not_a_crash(tmp_path, inventory):
    up = RepoBuilder(tmp_path / "partial.git")
    up.commit("upstream", {**upstream_files(), "ggml/big.cpp": "int big;\n"})
    blob = up.repo[up.head].tree["ggml/big.cpp"].id
    (tmp_path / "partial.git" / "objects" / str(blob)[:2] / str(blob)[2:]).unlink()
    repo = pygit2.Repository(str(tmp_path / "partial.git"))
    tree = read_tree(repo, repo[up.head], "b3")
    assert "missing" in tree.skipped["ggml/big.cpp"]
    resolutions = resolve(inventory, read_producers(tree, ["llama-server"]))
    assert _by_label(resolutions)["llama-server flag --port"].status == RESOLVED


def _ollama_repo(tmp_path: Path, version: str) -> Path:
    ollama = RepoBuilder(tmp_path / "ollama.git")
    ollama.commit("ollama", {**TREE, "LLAMA_CPP_VERSION": version + "\n"})
    return tmp_path / "ollama.git"


def test_the_cli_prints_the_share_and_a_table_per_group(tmp_path, capsys):
    up = RepoBuilder(tmp_path / "up.git")
    commit = str(up.commit("upstream", upstream_files()))
    repo = _ollama_repo(tmp_path, commit)
    args = ["contracts", "--repo", str(repo), "--producers", "--upstream-dir", str(tmp_path / "up.git")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "30 of 30 contracts resolved (100.0%); 2 more need no upstream producer" in out
    assert (
        "| `llama-server flag --no-jinja` | runner/server.go:42 | odd/place/options.cpp:6 (taken by the program) |"
        in out
    )
    assert main([*args, "--format", "json"]) == 0
    import json

    body = json.loads(capsys.readouterr().out)["producers"]
    assert (body["resolved"], body["total"], body["commit"]) == (30, 30, commit)
    assert body["launch"][0]["producer"] and body["launch"][0]["why"]


def test_a_ref_that_does_not_resolve_is_one_line_and_exit_2(tmp_path, capsys):
    RepoBuilder(tmp_path / "up.git").commit("upstream", upstream_files())
    repo = _ollama_repo(tmp_path, "b1")
    args = ["contracts", "--repo", str(repo), "--producers", "--upstream-dir", str(tmp_path / "up.git")]
    assert main([*args, "--upstream", "b9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'b9999'" in err


# --- the real Ollama against real llama.cpp releases --------------------------------------------------------

REAL = {name: os.environ.get(name, "") for name in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")}
# (Ollama revision, llama.cpp release, its commit: the nth commit of master is release bn)
REAL_PAIRS = [
    ("cd37044093f1023091975ed9f342dc0ae6283472", "b10488", "9d77fa17254e1dee4b9e92504c91611a60b1359f"),
    ("fb3076099", "b10587", "3f545beccee69d9975f466ec7e45fd9aacd8ba90"),
]


@pytest.mark.skipif(
    not all(REAL.values()),
    reason="needs the real mirrors: set LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP to their git dirs",
)
@pytest.mark.parametrize(("rev", "release", "commit"), REAL_PAIRS)
def test_most_real_contracts_resolve_and_every_other_says_why(rev, release, commit):
    from bot.cli.contracts import ollama_build, pinned
    from bot.review.consumers import SnapshotTexts

    ollama = pygit2.Repository(REAL["LLAMA_BOT_REAL_OLLAMA"])
    snapshot, pin, _ = pinned(ollama, ollama.revparse_single(rev).peel(pygit2.Commit), release)
    inventory = contract_inventory(SnapshotTexts(snapshot))
    upstream = pygit2.Repository(REAL["LLAMA_BOT_REAL_LLAMA_CPP"])
    producers = read_producers(
        read_tree(upstream, upstream[commit], release), {s.program for s in inventory.launch}
    )
    resolutions = resolve(inventory, producers, ollama_build(snapshot, pin))
    resolved, total = summary(resolutions)
    assert resolved / total >= 0.95, [r.label for r in resolutions if r.status == UNRESOLVED]
    assert all(r.why for r in resolutions if r.status != RESOLVED)
