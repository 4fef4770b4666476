"""A shared library a target Ollama installs newly loads, which Ollama's install leaves out
(`build.installed-libraries`): Ollama installs named targets and what its globs find, so the shipped program
no longer starts."""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from bot.cache import facts
from bot.cache.facts import FactStore
from bot.review.consumers.libraries import library_graph
from bot.review.consumers.upstream_build import unbuilt_commands, upstream_build
from tests.test_review_e2e import CMAKE, OLLAMA, UPSTREAM, _history, _review

INSTALL = b"""set(LLAMA_CURL OFF)
set(_base_libs llama common)
install(TARGETS llama-server RUNTIME DESTINATION bin)
install(TARGETS ${_base_libs} LIBRARY DESTINATION lib)
"""
TOP = CMAKE + "add_subdirectory(src)\nadd_subdirectory(common)\nadd_subdirectory(vendor/http)\n"
SERVER = """set(TARGET llama-server)
add_executable(${TARGET} main.cpp)
target_link_libraries(${TARGET} PRIVATE common)
"""
COMMON = """set(TARGET common)
add_library(${TARGET} common.cpp)
target_link_libraries(${TARGET} PUBLIC llama PRIVATE http)
"""
HTTP = "set(TARGET http)\nadd_library(${TARGET} STATIC httplib.cpp)\n"
BASE = {
    **UPSTREAM,
    "CMakeLists.txt": TOP + "add_subdirectory(tools/server)\n",
    "src/CMakeLists.txt": "add_library(llama llama.cpp)\n",
    "common/CMakeLists.txt": COMMON,
    "vendor/http/CMakeLists.txt": HTTP,
    "tools/server/CMakeLists.txt": SERVER,
}
PRESETS = b"""{"version": 3, "configurePresets": [
  {"name": "default", "cacheVariables": {"BUILD_SHARED_LIBS": "ON"}}
]}
"""
OLLAMA_INSTALLING = {
    **OLLAMA,
    "llama/server/CMakeLists.txt": INSTALL,
    "llama/server/CMakePresets.json": PRESETS,
}


def _findings(tmp_path, files: dict[str, str], ollama=OLLAMA_INSTALLING):
    b = _history(tmp_path, [("http: follow BUILD_SHARED_LIBS (#1)", files)], base=BASE)
    findings, _ = _review(b, ollama=ollama)
    return [f for f in findings if f.check == "build.installed-libraries"]


def test_a_static_library_turned_shared_that_the_install_leaves_out_is_high(tmp_path):
    (item,) = _findings(tmp_path, {"vendor/http/CMakeLists.txt": HTTP.replace(" STATIC", "")})
    assert item.severity == "high" and "`http`" in item.title
    assert (item.upstream_path, item.upstream_line) == ("vendor/http/CMakeLists.txt", 2)
    assert "`common` links `http` (`common/CMakeLists.txt:3`)" in item.detail
    assert "`BUILD_SHARED_LIBS` ON (`llama/server/CMakePresets.json:2`)" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [
        ("llama/server/CMakeLists.txt", 2),
        ("llama/server/CMakeLists.txt", 4),
    ]


def test_a_new_shared_library_a_static_one_takes_in_names_the_shipped_target(tmp_path):
    """The executable links a static library, which links a new SHARED one: the executable loads it."""
    server = SERVER.replace("PRIVATE common)", "PRIVATE context)") + (
        "add_library(context STATIC context.cpp)\ntarget_link_libraries(context PUBLIC common json)\n"
        "add_library(json SHARED json.cpp)\n"
    )
    (item,) = _findings(tmp_path, {"tools/server/CMakeLists.txt": server})
    assert "`json`" in item.title and "`llama-server` reaches `context`" in item.detail


@pytest.mark.parametrize(
    "ollama_install",
    [
        INSTALL.replace(b"llama common)", b"llama common http)"),  # installed by name
        INSTALL + b'install(CODE "file(GLOB _libs \\"${_dir}/libhttp*\\")")\n',  # a glob finds its file
    ],
    ids=["named", "globbed"],
)
def test_a_library_the_install_carries_is_quiet(tmp_path, ollama_install):
    ollama = {**OLLAMA_INSTALLING, "llama/server/CMakeLists.txt": ollama_install}
    assert _findings(tmp_path, {"vendor/http/CMakeLists.txt": HTTP.replace(" STATIC", "")}, ollama) == []


def test_a_library_built_static_where_ollama_sets_no_shared_build_is_quiet(tmp_path):
    ollama = {**OLLAMA_INSTALLING, "llama/server/CMakePresets.json": PRESETS.replace(b'"ON"', b'"OFF"')}
    assert _findings(tmp_path, {"vendor/http/CMakeLists.txt": HTTP.replace(" STATIC", "")}, ollama) == []


def test_only_what_the_bump_changes_is_told(tmp_path):
    """A library already shared and left out at the old ref is not the bump's doing."""
    base = {**BASE, "vendor/http/CMakeLists.txt": HTTP.replace(" STATIC", "")}
    b = _history(tmp_path, [("common: comment (#2)", {"common/CMakeLists.txt": COMMON + "# x\n"})], base=base)
    findings, _ = _review(b, ollama=OLLAMA_INSTALLING)
    assert [f for f in findings if f.check == "build.installed-libraries"] == []


def test_a_link_under_an_option_ollama_keeps_off_is_not_followed():
    top = CMAKE + "add_subdirectory(common)\n"
    common = "add_library(common common.cpp)\nif (LLAMA_BUILD_TESTS)\n  target_link_libraries(common PRIVATE t)\nendif()\n"
    upstream = {"CMakeLists.txt": top, "common/CMakeLists.txt": common + "add_library(t SHARED t.cpp)\n"}
    graph = library_graph(upstream, list(upstream), {})
    assert graph.loaded(frozenset({"common"}), True) == {}
    assert [t.kind for t in graph.targets["t"]] == ["SHARED"]


class _PartialTree(dict):
    """A tree whose files other than CMake ones are not at hand (a partial clone's missing blobs)."""

    def __getitem__(self, path):
        if not path.endswith("CMakeLists.txt"):
            raise KeyError(path)
        return super().__getitem__(path)


def test_the_walks_of_a_whole_tree_read_only_what_they_walk(tmp_path):
    """The consumer model walks the whole upstream tree: a file it never reads (a missing blob) is no
    error, with a facts store in use or not."""
    tree = _PartialTree({**BASE, "models/vocab.gguf": "binary"})
    for store in (None, FactStore(tmp_path / "facts")):
        with facts.using(store) if store else nullcontext():
            assert upstream_build(tree, list(tree), {}).off_dirs == {}
            assert unbuilt_commands(tree, list(tree), {}) is not None
