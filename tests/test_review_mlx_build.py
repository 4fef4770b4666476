"""MLX's own build changes against Ollama's build of it: Ollama's real MLX bumps (a new shared library, a
deployment target a Metal preset is below, headers the CUDA JIT needs, an option Ollama sets outside its
root CMake), and each rule on synthetic trees."""

from __future__ import annotations

import json

import pytest

from bot.config import parse_config
from bot.engine import analyse
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.mlxcases import MlxCase, mlx_case


def _items(report, severities=("high", "medium")):
    return [f for f in report.pin("mlx").findings if f.severity in severities]


def test_a_new_shared_library_libmlx_links_is_a_high_item_until_ollama_installs_it(tmp_path):
    """534342e7e: libmlx linked the new standalone libjaccl; the bump commit installed it."""
    case = mlx_case(tmp_path, "mlx-new-library")
    base = case.ollama("base")
    first = case.check(base, case.ollama("first-push"))
    titles = [f.title for f in _items(first)]
    assert "`mlx` now links `jaccl`, a shared library upstream builds: Ollama's payload must carry it" in (
        "\n".join(titles + [f.detail for f in _items(first)])
    )
    merged = case.check(base, case.ollama("head"))
    assert not any("now links `jaccl`" in f.title + f.detail for f in _items(merged))


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return mlx_case(tmp_path_factory.mktemp("target"), "mlx-deployment-target")


def test_a_deployment_target_a_metal_preset_is_below_is_a_high_item_naming_it(target):
    """570679c9e: NAX kernels and the libjaccl link now need CMAKE_OSX_DEPLOYMENT_TARGET >= 26.2; the
    mlx_metal_v4 preset set 26.0 (raised 19 days later); the CUDA JIT needs cute/cutlass headers."""
    base, first = target.ollama("base"), target.ollama("first-push")
    first_report = target.check(base, first)
    (item,) = [f for f in _items(first_report) if f.severity == "high"]
    assert item.title.startswith(
        "Presets `mlx_metal_v3` (CMAKE_OSX_DEPLOYMENT_TARGET=14.0), `mlx_metal_v4` "
        "(CMAKE_OSX_DEPLOYMENT_TARGET=26.0) now build without "
        "`build_kernel(steel/gemm/kernels/steel_gemm_fused_nax)`"
    )
    assert "`CMAKE_OSX_DEPLOYMENT_TARGET VERSION_GREATER_EQUAL 26.2`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs][:2] == [
        ("cmake/mlx/CMakePresets.json", 49),
        ("cmake/mlx/CMakePresets.json", 58),
    ]
    # the excerpt's MLX moves in one commit: the link guard and the JIT headers are parts of the same item
    assert "`target_link_libraries(mlx PRIVATE jaccl)`" in item.detail
    assert "Upstream now installs `${cutlass_SOURCE_DIR}/include/cute" in item.detail
    assert "Nothing to do" not in MlxCase.checklist(first_report, base, first)
    # the preset as Ollama raised it: only the v3 preset, which never built NAX, stays below
    presets = base["cmake/mlx/CMakePresets.json"].replace(b'"26.0"', b'"26.2"')
    raised = target.check(base, {**first, "cmake/mlx/CMakePresets.json": presets})
    (item,) = [f for f in _items(raised) if f.severity == "high"]
    assert "mlx_metal_v4" not in item.title and "`mlx_metal_v3`" in item.title


def test_an_option_ollama_sets_outside_its_root_cmake_renamed_upstream_is_high(tmp_path):
    """x/mlxrunner/mlx/CMakeLists.txt sets MLX_BUILD_GGUF OFF: a rename upstream would switch GGUF on."""
    case = mlx_case(tmp_path, "mlx-breaks-mlx-c")
    root = case.mlx.files["CMakeLists.txt"]
    renamed = case.mlx.commit(
        "rename", {"CMakeLists.txt": root.replace(b"MLX_BUILD_GGUF ", b"MLX_BUILD_GGUF_LOADER ")}
    )
    base = case.ollama("base")
    head = {**base, "MLX_VERSION": f"{renamed}\n".encode()}
    (item,) = [f for f in _items(case.check(base, head)) if "MLX_BUILD_GGUF" in f.title]
    assert item.severity == "high"
    assert item.title == (
        "CMake option MLX_BUILD_GGUF renamed to MLX_BUILD_GGUF_LOADER; Ollama still sets the old name"
    )
    assert ("x/mlxrunner/mlx/CMakeLists.txt", 9) in [(r.path, r.line) for r in item.local_refs]


# -- the rules, on synthetic trees -------------------------------------------------------------------

OLD_ROOT = """
option(MLX_BUILD_CUDA "CUDA" OFF)
option(MLX_BUILD_EXTRAS "extras" OFF)
add_library(mlx)
add_library(helper STATIC helper.cpp)
target_link_libraries(mlx PRIVATE helper dl)
if(CMAKE_OSX_DEPLOYMENT_TARGET VERSION_LESS 14.0)
  message(FATAL_ERROR "too old")
endif()
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/kernels)
if(MLX_BUILD_EXTRAS)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/extras)
endif()
"""
OLD_KERNELS = """
if(MLX_METAL_VERSION GREATER_EQUAL 400)
  build_kernel(fast_kernel)
endif()
add_custom_command(OUTPUT ${OUT}/kernels.lib COMMAND tool link ${AIR} -o ${OUT}/kernels.lib)
"""
NEW_KERNELS = """
if(MLX_METAL_VERSION GREATER_EQUAL 400 AND CMAKE_OSX_DEPLOYMENT_TARGET VERSION_GREATER_EQUAL 26.2)
  build_kernel(fast_kernel)
  build_kernel(other_kernel)
endif()
add_custom_command(OUTPUT ${OUT}/kernels.lib COMMAND tool compile ${AIR} -o ${OUT}/kernels.lib)
"""
EXTRAS = "install(DIRECTORY extra_data DESTINATION share)\n"
PRESETS = {
    "configurePresets": [
        {"name": "base", "hidden": True, "cacheVariables": {"MLX_BUILD_CUDA": "OFF"}},
        {
            "name": "mlx_old_mac",
            "inherits": "base",
            "cacheVariables": {"CMAKE_OSX_DEPLOYMENT_TARGET": "14.0"},
        },
        {
            "name": "mlx_new_mac",
            "inherits": "base",
            "cacheVariables": {"CMAKE_OSX_DEPLOYMENT_TARGET": "26.2"},
        },
    ]
}
OLLAMA_CMAKE = """
set(BUILD_SHARED_LIBS ON CACHE BOOL "" FORCE)
install(TARGETS mlx mlxc dl RUNTIME DESTINATION lib COMPONENT MLX)
install(FILES ${CMAKE_BINARY_DIR}/kernels.lib DESTINATION lib COMPONENT MLX)
"""
OLLAMA_SCRIPT = "cmake --install build --component MLX\n"


_LINKS = (
    "target_link_libraries(mlx PRIVATE helper dl)\n",
    (
        "add_library(fastlib fast.cpp)\nadd_library(staticlib STATIC s.cpp)\n"
        "target_link_libraries(mlx PRIVATE helper $<BUILD_INTERFACE:fastlib> staticlib)\n"
    ),
)
_MINIMUM = ("VERSION_LESS 14.0", "VERSION_LESS 15.0")
_EITHER = (
    "add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/kernels)\n",
    (
        "if(NEW_FEATURE OR CMAKE_OSX_DEPLOYMENT_TARGET VERSION_GREATER_EQUAL 30.0)\n  build_kernel(maybe)\n"
        "endif()\nadd_subdirectory(${CMAKE_CURRENT_LIST_DIR}/kernels)\n"
    ),
)
_INSTALLS = (
    "install(DIRECTORY ${deps_SOURCE_DIR}/include/jit DESTINATION include)\n"
    "install(FILES runtime.dat DESTINATION lib COMPONENT MLX)\n"
)


def _history(mlx: RepoBuilder) -> tuple[str, str]:
    """The old tree, then each change of the new one in a commit of its own; (old commit, new commit)."""
    old = mlx.commit(
        "old",
        {"CMakeLists.txt": OLD_ROOT, "kernels/CMakeLists.txt": OLD_KERNELS, "extras/CMakeLists.txt": "\n"},
    )
    root = OLD_ROOT
    for message, (before, after) in (("links", _LINKS), ("minimum", _MINIMUM), ("either", _EITHER)):
        root = root.replace(before, after)
        mlx.commit(message, {"CMakeLists.txt": root})
    mlx.commit("installs", {"CMakeLists.txt": root + _INSTALLS})
    mlx.commit("kernels guard", {"kernels/CMakeLists.txt": NEW_KERNELS.replace("compile", "link")})
    mlx.commit("kernels linker", {"kernels/CMakeLists.txt": NEW_KERNELS})
    new = mlx.commit("extras", {"extras/CMakeLists.txt": EXTRAS})
    return str(old), str(new)


def _review(tmp_path, ollama_cmake: str = OLLAMA_CMAKE, script: str = OLLAMA_SCRIPT):
    mlx = RepoBuilder(tmp_path / "mlx.git")
    old, new = _history(mlx)
    ollama = {
        "cmake/mlx/CMakeLists.txt": ollama_cmake.encode(),
        "cmake/mlx/CMakePresets.json": json.dumps(PRESETS, indent=1).encode(),
        "scripts/build.sh": script.encode(),
    }
    report = analyse(
        parse_config(None),
        MemorySnapshot({**ollama, "MLX_VERSION": f"{old}\n".encode()}),
        MemorySnapshot({**ollama, "MLX_VERSION": f"{new}\n".encode()}),
        lambda pin, refs: Upstream(mlx.repo, pin.upstream),
        ["MLX_VERSION"],
    )
    return report.pin("mlx").findings


def _all_text(findings) -> str:
    return "\n".join(f"{f.severity} {f.title}\n{f.detail}" for f in findings)


def test_each_build_rule_on_a_synthetic_bump(tmp_path):
    text = _all_text(_review(tmp_path))
    # a guard a preset is below: it loses what is guarded, naming the preset (and only it)
    assert (
        "Preset `mlx_old_mac` (CMAKE_OSX_DEPLOYMENT_TARGET=14.0) now builds without `build_kernel(fast_kernel)`, "
        "`build_kernel(other_kernel)`" in text
    )
    # a raised minimum: the preset it now stops at no longer configures
    assert (
        "Preset `mlx_old_mac` (CMAKE_OSX_DEPLOYMENT_TARGET=14.0) no longer configures: upstream stops at "
        "`CMAKE_OSX_DEPLOYMENT_TARGET VERSION_LESS 15.0`" in text
    )
    assert "mlx_new_mac" not in text  # it meets both; a condition with OR is not judged
    assert "build_kernel(maybe)" not in text
    # a shared library mlx newly links; a static one needs nothing; an installed one no longer linked
    assert "`mlx` now links `fastlib`, a shared library upstream builds" in text
    assert "staticlib" not in text
    assert "`mlx` no longer links `dl`, which Ollama still installs" in text  # same commit: a part
    # new installed files the component install skips; one in Ollama's component, or under an option
    # Ollama leaves off, is not
    assert "Upstream now installs `${deps_SOURCE_DIR}/include/jit` beside the library" in text
    assert "runtime.dat" not in text and "extra_data" not in text
    # a file Ollama ships, made by another command
    assert "Upstream now makes `kernels.lib`, which Ollama ships, with another command" in text
    assert (
        "was made by `COMMAND tool link ${AIR} -o ${OUT}/kernels.lib` and now by `COMMAND tool compile"
        in text
    )


def test_ollama_s_own_settings_quiet_the_rules(tmp_path):
    """Installing the new library, naming the new files, installing every component: nothing to say."""
    ollama_cmake = OLLAMA_CMAKE.replace("mlx mlxc dl", "mlx mlxc dl fastlib") + "# include/jit\n"
    text = _all_text(
        _review(tmp_path, ollama_cmake + "install(DIRECTORY jit DESTINATION include COMPONENT MLX)\n")
    )
    assert "now links `fastlib`" not in text
    assert "include/jit` beside the library" not in text or "info Upstream now installs" in text
    every = _all_text(_review(tmp_path / "all", script="cmake --install build\n"))
    assert "beside the library" not in every
