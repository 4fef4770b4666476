"""An option Ollama's build sets that upstream now forces to another value (`build.forced-options`)."""

from __future__ import annotations

import pytest

from bot.review.checks.build.forced_options import _plain_sets
from tests.test_review_e2e import CMAKE, OLLAMA, UPSTREAM, _history, _review

PRESETS = b"""{"version": 3, "configurePresets": [
  {"name": "default", "cacheVariables": {"BUILD_SHARED_LIBS": "ON", "GGML_CUDA": "ON"}}
]}
"""
OLLAMA_PRESETS = {**OLLAMA, "llama/server/CMakePresets.json": PRESETS}


def _findings(tmp_path, added: str):
    top = CMAKE + 'option(BUILD_SHARED_LIBS "build shared libraries" ON)\n'
    b = _history(
        tmp_path,
        [("ggml: static with MinGW (#1)", {"CMakeLists.txt": top + added})],
        base={**UPSTREAM, "CMakeLists.txt": top},
    )
    findings, _ = _review(b, ollama=OLLAMA_PRESETS)
    return [f for f in findings if f.check == "build.forced-options"]


def test_an_option_ollama_sets_forced_to_another_value_is_medium_at_ollamas_setting(tmp_path):
    forced = 'if (MINGW)\n    set(BUILD_SHARED_LIBS OFF CACHE BOOL "shared" FORCE)\nendif()\n'
    (item,) = _findings(tmp_path, forced)
    assert (item.severity, item.title) == (
        "medium",
        "Upstream now forces `BUILD_SHARED_LIBS` to `OFF`, which Ollama's build sets otherwise",
    )
    assert "where `MINGW` holds" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [("llama/server/CMakePresets.json", 2)]


@pytest.mark.parametrize(
    "added",
    [
        'set(BUILD_SHARED_LIBS ON CACHE BOOL "shared" FORCE)\n',  # what Ollama sets
        'if (LLAMA_BUILD_TESTS)\n    set(BUILD_SHARED_LIBS OFF CACHE BOOL "shared" FORCE)\nendif()\n',  # never taken
        'set(GGML_NATIVE OFF CACHE BOOL "native" FORCE)\n',  # not an option Ollama sets
        'set(BUILD_SHARED_LIBS OFF CACHE BOOL "shared")\n',  # a default, not forced
    ],
)
def test_a_forced_value_ollama_asks_for_or_never_meets_is_quiet(tmp_path, added):
    assert _findings(tmp_path, added) == []


RPATH = b'set(CMAKE_INSTALL_RPATH "$ORIGIN")\nset(GGML_CUDA ON)\n'


@pytest.mark.parametrize(("value", "told"), [('"$ORIGIN/../lib"', True), ('"$ORIGIN"', False)])
def test_a_cmake_variable_ollama_sets_that_upstream_now_sets_otherwise_is_medium(tmp_path, value, told):
    """Upstream's files are read in a scope below Ollama's: a plain `set()` there overrides Ollama's."""
    ollama = {**OLLAMA_PRESETS, "llama/server/CMakeLists.txt": RPATH}
    top = CMAKE + 'option(BUILD_SHARED_LIBS "build shared libraries" ON)\n'
    added = f"if (NOT APPLE)\n    set(CMAKE_INSTALL_RPATH {value})\nendif()\n"
    b = _history(
        tmp_path,
        [("tools: rpath (#2)", {"CMakeLists.txt": top + added})],
        base={**UPSTREAM, "CMakeLists.txt": top},
    )
    findings = [f for f in _review(b, ollama=ollama)[0] if f.check == "build.forced-options"]
    assert [f.title for f in findings] == (
        ["Upstream now sets `CMAKE_INSTALL_RPATH` to `$ORIGIN/../lib`, which Ollama's build sets otherwise"]
        if told
        else []
    )
    if told:
        assert [(r.path, r.line) for r in findings[0].local_refs] == [("llama/server/CMakeLists.txt", 1)]


@pytest.mark.parametrize(
    ("path", "added"),
    [
        (
            "CMakeLists.txt",
            'set(CMAKE_INSTALL_RPATH "${CMAKE_INSTALL_RPATH}:$ORIGIN/../lib")\n',
        ),  # adds to it
        ("tools/CMakeLists.txt", 'set(CMAKE_INSTALL_RPATH "$ORIGIN/../lib")\n'),  # its own targets only
    ],
    ids=["appended", "subdirectory"],
)
def test_a_cmake_variable_added_to_or_set_for_one_directory_is_quiet(tmp_path, path, added):
    ollama = {**OLLAMA_PRESETS, "llama/server/CMakeLists.txt": RPATH}
    top = CMAKE + "add_subdirectory(tools)\n"
    base = {**UPSTREAM, "CMakeLists.txt": top, "tools/CMakeLists.txt": "add_executable(t t.c)\n"}
    changed = {path: base[path] + added}
    b = _history(tmp_path, [("rpath (#3)", changed)], base=base)
    assert [f for f in _review(b, ollama=ollama)[0] if f.check == "build.forced-options"] == []


class _PartialTree(dict):
    """An Ollama tree whose files other than CMake ones are not at hand (a partial clone's missing blobs)."""

    def __getitem__(self, path):
        if not path.endswith(("CMakeLists.txt", ".cmake")):
            raise KeyError(path)
        return super().__getitem__(path)


def test_ollamas_cmake_variables_are_read_without_reading_its_other_files():
    tree = _PartialTree({"llama/server/CMakeLists.txt": RPATH.decode(), "testdata/big.txt": "x"})
    (setting,) = _plain_sets(tree)["CMAKE_INSTALL_RPATH"]
    assert (setting.value, setting.ref.line) == ("$ORIGIN", 1)


def test_an_output_directory_moved_cites_where_ollamas_build_spells_the_old_one(tmp_path):
    """`CMAKE_RUNTIME_OUTPUT_DIRECTORY` moved from `${CMAKE_BINARY_DIR}/bin`: Ollama's glob of that directory
    finds nothing now, so the item points there first."""
    ollama_cmake = (
        b"set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/out)\n"
        b'file(GLOB modules "${CMAKE_BINARY_DIR}/bin/libggml-*")\n'
        b"install(FILES ${modules} DESTINATION lib)\n"
    )
    ollama = {**OLLAMA_PRESETS, "llama/server/CMakeLists.txt": ollama_cmake}
    top = CMAKE + "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
    moved = top.replace("${CMAKE_BINARY_DIR}/bin)", "${PROJECT_BINARY_DIR}/bin)")
    b = _history(
        tmp_path,
        [("build: own bin (#4)", {"CMakeLists.txt": moved})],
        base={**UPSTREAM, "CMakeLists.txt": top},
    )
    (item,) = [f for f in _review(b, ollama=ollama)[0] if f.check == "build.forced-options"]
    assert [(r.path, r.line) for r in item.local_refs] == [
        ("llama/server/CMakeLists.txt", 2),
        ("llama/server/CMakeLists.txt", 1),
    ]
    assert "spells the old value" in item.detail
