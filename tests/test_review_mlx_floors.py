"""Raised minimum versions in MLX's and MLX-C's CMake against what Ollama's build declares or installs: the
minimum CMake against Ollama's `cmake_minimum_required`, presets and pinned CMake downloads; version floors
(`find_package(<Pkg> <version>)`, fatal version guards) against the versions its Dockerfile names."""

from __future__ import annotations

import json

from bot.config import parse_config
from bot.engine import analyse
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder

ROOT = """cmake_minimum_required(VERSION {cmake})
project(mlx)
option(MLX_BUILD_CUDA "CUDA" OFF)
option(MLX_BUILD_EXTRAS "extras" OFF)
if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS {cxx})
  message(FATAL_ERROR "compiler too old")
endif()
if(hip_VERSION VERSION_LESS {hip})
  message(FATAL_ERROR "At least ROCM/HIP V{hip} is required")
endif()
if(CUDAToolkit_VERSION VERSION_GREATER_EQUAL {band} AND CUDAToolkit_VERSION VERSION_LESS 13.2)
  message(FATAL_ERROR "this CUDA is broken")
endif()
if(MLX_BUILD_CUDA)
  find_package(CUDAToolkit {cuda} REQUIRED)
  find_package(Widget {widget} REQUIRED)
endif()
if(MLX_BUILD_EXTRAS)
  find_package(Gizmo {gizmo} REQUIRED)
endif()
add_library(mlx)
"""
OLD = {
    "cmake": "3.20",
    "cxx": "9",
    "hip": "6.1",
    "band": "13.1",
    "cuda": "12.0",
    "widget": "2.0",
    "gizmo": "1.0",
}
PRESETS = {
    "version": 3,
    "cmakeMinimumRequired": {"major": 3, "minor": 21, "patch": 0},
    "configurePresets": [{"name": "mlx_cuda", "cacheVariables": {"MLX_BUILD_CUDA": "ON"}}],
}
OLLAMA_CMAKE = "cmake_minimum_required(VERSION 3.24)\nproject(ollama)\n"
DOCKERFILE = """FROM ubuntu:24.04 AS base
ARG CMAKEVERSION=3.26.0
ARG CUDA12VERSION=12.8
ARG ROCMVERSION=6.3
RUN curl -fsSL https://example.com/cmake-${CMAKEVERSION}-linux.tar.gz | tar xz
"""


def _findings(tmp_path, new: dict[str, str], dockerfile: str = DOCKERFILE, pin: str = "mlx"):
    """The high and medium items of a bump of `pin` from the OLD tree to one with `new`'s values."""
    upstream = RepoBuilder(tmp_path / f"{pin}.git")
    old = upstream.commit("old", {"CMakeLists.txt": ROOT.format(**OLD)})
    head = upstream.commit("new", {"CMakeLists.txt": ROOT.format(**{**OLD, **new})})
    version_file = "MLX_VERSION" if pin == "mlx" else "MLX_C_VERSION"
    ollama = {
        "CMakeLists.txt": OLLAMA_CMAKE.encode(),
        "cmake/mlx/CMakeLists.txt": OLLAMA_CMAKE.encode(),
        "cmake/mlx/CMakePresets.json": json.dumps(PRESETS, indent=1).encode(),
        "Dockerfile": dockerfile.encode(),
    }
    report = analyse(
        parse_config(None),
        MemorySnapshot({**ollama, version_file: f"{old}\n".encode()}),
        MemorySnapshot({**ollama, version_file: f"{head}\n".encode()}),
        lambda p, refs: Upstream(upstream.repo, p.upstream),
        [version_file],
    )
    return [f for f in report.pin(pin).findings if f.severity in ("high", "medium")]


def _refs(finding) -> list[tuple[str, int]]:
    return [(r.path, r.line) for r in finding.local_refs]


def test_a_minimum_cmake_raised_above_what_ollama_declares_or_installs_is_high(tmp_path):
    (item,) = _findings(tmp_path, {"cmake": "3.28"})
    assert item.severity == "high"
    assert item.title == (
        "Upstream now needs CMake 3.28 (was 3.20), above the CMake 3.24, 3.21.0, 3.26.0 Ollama's build "
        "declares or installs"
    )
    assert _refs(item) == [
        ("CMakeLists.txt", 1),
        ("cmake/mlx/CMakeLists.txt", 1),
        ("cmake/mlx/CMakePresets.json", 3),
        ("Dockerfile", 2),
    ]
    assert "Configuring the build with that CMake fails" in item.detail
    assert "3.26.0 (`CMAKEVERSION=3.26.0`, `Dockerfile:2`)" in item.detail


def test_a_minimum_cmake_raised_but_still_met_is_nothing(tmp_path):
    assert _findings(tmp_path, {"cmake": "3.21"}) == []


def test_the_minimum_cmake_of_mlx_c_is_weighed_too(tmp_path):
    (item,) = _findings(tmp_path, {"cmake": "3.25"}, pin="mlx-c")
    assert item.title.startswith("Upstream now needs CMake 3.25 (was 3.20), above the CMake 3.24, 3.21.0")
    assert "3.26.0" not in item.title  # the Dockerfile's CMake meets it


def test_a_package_floor_raised_above_the_version_ollama_s_dockerfile_names_is_high(tmp_path):
    (item,) = _findings(tmp_path, {"cuda": "12.9"})
    assert item.severity == "high"
    assert item.title == "Upstream now needs CUDAToolkit 12.9 (was 12.0); Ollama's build provides 12.8"
    assert "`if(MLX_BUILD_CUDA)` (line 14)" in item.detail and "configuring stops" in item.detail
    assert _refs(item) == [("Dockerfile", 3)]


def test_a_package_floor_raised_but_still_met_is_nothing(tmp_path):
    assert _findings(tmp_path, {"cuda": "12.8"}) == []
    newer = DOCKERFILE.replace("CUDA12VERSION=12.8", "CUDA12VERSION=13.0")
    assert _findings(tmp_path / "newer", {"cuda": "12.9"}, newer) == []


def test_a_floor_raised_in_a_configuration_ollama_does_not_build_is_nothing(tmp_path):
    """Gizmo is looked for under MLX_BUILD_EXTRAS, which defaults OFF and Ollama never sets."""
    assert _findings(tmp_path, {"gizmo": "9.0"}) == []


def test_a_floor_raised_where_ollama_names_no_version_is_medium(tmp_path):
    (widget,) = _findings(tmp_path, {"widget": "3.0"})
    (compiler,) = _findings(tmp_path / "compiler", {"cxx": "11"})
    assert (widget.severity, compiler.severity) == ("medium", "medium")
    assert widget.title == "Upstream now needs Widget 3.0 (was 2.0) where Ollama builds it"
    assert "must provide Widget 3.0 or later, or configuring stops" in widget.detail
    assert compiler.title == (
        "Upstream now needs CMAKE_CXX_COMPILER_VERSION 11 (was 9) where Ollama builds it"
    )
    assert "in every configuration" in compiler.detail


def test_a_guard_floor_is_weighed_against_what_its_message_names_when_ollama_names_none_of_the_variable(
    tmp_path,
):
    """`hip_VERSION` is named in no build file of Ollama's; the guard's message says what it demands (`At
    least ROCM/HIP V6.4 is required`), and Ollama's Dockerfile names ROCm's version."""
    (item,) = _findings(tmp_path, {"hip": "6.4"})
    assert item.title == "Upstream now needs hip_VERSION 6.4 (was 6.1); Ollama's build provides 6.3"
    assert _refs(item) == [("Dockerfile", 4)]
    assert _findings(tmp_path / "met", {"hip": "6.2"}) == []


def test_a_version_range_a_guard_refuses_is_no_floor(tmp_path):
    """`X >= 13.0 AND X < 13.2` refuses a band of versions; it raises no floor."""
    assert _findings(tmp_path, {"band": "13.0"}) == []
