"""A library a target Ollama installs newly links that Ollama's install does not carry
(`build.runtime-dependencies`), and a re-defaulted option that only lets a build use a package the builder may
have (information, not a break)."""

from __future__ import annotations

import pytest

from bot.review.consumers.bundling import bundlings
from bot.review.upstream.optioneffect import optional_package
from tests.test_review_e2e import CMAKE, OLLAMA, UPSTREAM, _history, _review

INSTALL = b"""set(GGML_CUDA ON)
set(LLAMA_CURL OFF)
if(TARGET ggml-hip)
    install(TARGETS ggml-hip
        RUNTIME_DEPENDENCY_SET hip_deps
        LIBRARY DESTINATION lib COMPONENT runner
    )
    install(RUNTIME_DEPENDENCY_SET hip_deps
        DIRECTORIES ${HIP_LIB_DIR}
        PRE_INCLUDE_REGEXES hipblas rocblas amdhip64
        PRE_EXCLUDE_REGEXES ".*"
        LIBRARY DESTINATION lib COMPONENT runner
    )
endif()
"""
TOP = CMAKE + 'option(GGML_HIP_FAST "ggml: use the fast collectives" OFF)\nadd_subdirectory(ggml/src)\n'
BACKEND = """add_library(ggml-hip ggml-hip.cpp)
target_link_libraries(ggml-hip PRIVATE roc::rocblas roc::hipblas)
if (GGML_HIP_FAST)
    find_package(fastcoll REQUIRED)
    target_link_libraries(ggml-hip PRIVATE roc::fastcoll)
endif()
"""
BASE = {
    **UPSTREAM,
    "CMakeLists.txt": TOP,
    "ggml/src/CMakeLists.txt": "",
    "ggml/src/ggml-hip/CMakeLists.txt": BACKEND,
}
OLLAMA_INSTALLING = {**OLLAMA, "llama/server/CMakeLists.txt": INSTALL}


def _findings(tmp_path, files: dict[str, str], check: str = "build.runtime-dependencies"):
    b = _history(tmp_path, [("ggml-hip: collectives (#1)", files)], base=BASE)
    findings, _ = _review(b, ollama=OLLAMA_INSTALLING)
    return [f for f in findings if f.check == check]


def test_a_link_the_install_filter_drops_is_medium_at_ollamas_install(tmp_path):
    linked = BACKEND.replace(
        "roc::hipblas)", "roc::hipblas)\ntarget_link_libraries(ggml-hip PRIVATE roc::rccl)"
    )
    (item,) = _findings(tmp_path, {"ggml/src/ggml-hip/CMakeLists.txt": linked})
    assert (item.severity, item.upstream_path, item.upstream_line) == (
        "medium",
        "ggml/src/ggml-hip/CMakeLists.txt",
        3,
    )
    assert "`roc::rccl`" in item.title and "`hipblas rocblas amdhip64`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [
        ("llama/server/CMakeLists.txt", 5),
        ("llama/server/CMakeLists.txt", 10),
    ]


def test_a_link_reached_because_an_options_default_changed_counts(tmp_path):
    """Ollama never sets GGML_HIP_FAST: its new default ON takes the branch that links roc::fastcoll."""
    top = TOP.replace('collectives" OFF)', 'collectives" ON)')
    (item,) = _findings(tmp_path, {"CMakeLists.txt": top})
    assert "`roc::fastcoll`" in item.title


@pytest.mark.parametrize(
    "linked",
    [
        "roc::rocblas roc::hipblas roc::hipblaslt",  # the filter keeps it (`hipblas` finds `libhipblaslt.so`)
        "roc::rocblas roc::hipblas ggml-base",  # a library upstream builds itself
    ],
)
def test_a_link_the_install_carries_or_upstream_builds_is_quiet(tmp_path, linked):
    backend = BACKEND.replace("roc::rocblas roc::hipblas", linked) + "add_library(ggml-base base.c)\n"
    assert _findings(tmp_path, {"ggml/src/ggml-hip/CMakeLists.txt": backend}) == []


def test_an_install_that_keeps_every_dependency_carries_any_link():
    text = "install(TARGETS ggml-hip RUNTIME_DEPENDENCIES DIRECTORIES /opt PRE_INCLUDE_REGEXES hipblas)\n"
    assert bundlings({"CMakeLists.txt": text}, ["CMakeLists.txt"]) == {}


@pytest.mark.parametrize("pattern", ["(", "(r+)+x"], ids=["unreadable", "backtracking"])
def test_a_pattern_that_cannot_be_read_or_would_backtrack_is_not_judged(pattern):
    text = (
        f'install(TARGETS t RUNTIME_DEPENDENCIES PRE_INCLUDE_REGEXES "{pattern}" PRE_EXCLUDE_REGEXES ".*")\n'
    )
    (bundling,) = bundlings({"CMakeLists.txt": text}, ["CMakeLists.txt"]).values()
    assert bundling.carries("roc::" + "r" * 60) is None


NCCL = """option(GGML_CUDA_NCCL "ggml: use NCCL" ON)
if (GGML_CUDA_NCCL)
    find_package(NCCL)
    if (NCCL_FOUND)
        target_link_libraries(ggml-cuda PRIVATE NCCL::NCCL)
    else()
        message(STATUS "NCCL not found")
    endif()
endif()
"""


def test_an_option_that_only_lets_a_build_use_an_optional_package_names_it():
    assert optional_package({"CMakeLists.txt": NCCL}, "GGML_CUDA_NCCL") == "NCCL"


@pytest.mark.parametrize(
    "text",
    [
        NCCL.replace("find_package(NCCL)", "find_package(NCCL REQUIRED)"),  # a builder without it fails
        NCCL.replace(
            "    if (NCCL_FOUND)", "    add_compile_definitions(GGML_USE_NCCL)\n    if (NCCL_FOUND)"
        ),
        NCCL + "target_compile_definitions(ggml-cuda PRIVATE NCCL=${GGML_CUDA_NCCL})\n",  # read elsewhere
    ],
)
def test_an_option_that_does_more_permits_no_package(text):
    assert optional_package({"CMakeLists.txt": text}, "GGML_CUDA_NCCL") is None


def test_re_defaulting_such_an_option_is_information(tmp_path):
    option, uses = NCCL.split("\n", 1)
    base = {**BASE, "CMakeLists.txt": TOP + option + "\n", "ggml/src/ggml-cuda/CMakeLists.txt": uses}
    off = {"CMakeLists.txt": TOP + option.replace(" ON)", " OFF)") + "\n"}
    b = _history(tmp_path, [("cuda: NCCL opt-in (#2)", off)], base=base)
    findings, _ = _review(b, ollama=OLLAMA_INSTALLING)
    (item,) = [f for f in findings if "GGML_CUDA_NCCL" in f.title]
    assert item.severity == "info" and "without REQUIRED" in item.detail


# ---- a backend's version floors (build.version-floors on the llama.cpp profile)

VULKAN = "find_package(Vulkan COMPONENTS glslc REQUIRED)\nadd_library(ggml-vulkan ggml-vulkan.cpp)\n"
VULKAN_OLLAMA = {
    **OLLAMA,
    "llama/server/CMakeLists.txt": b"set(GGML_VULKAN ON)\nset(LLAMA_CURL OFF)\n",
    "Dockerfile": b"ARG VULKANVERSION=1.4.321.1\nFROM base AS vulkan-deps\n",
}


def _floors(tmp_path, backend: str, ollama=VULKAN_OLLAMA):
    base = {**UPSTREAM, "ggml/src/ggml-vulkan/CMakeLists.txt": VULKAN}
    b = _history(
        tmp_path, [("vulkan: newer SDK (#3)", {"ggml/src/ggml-vulkan/CMakeLists.txt": backend})], base=base
    )
    findings, _ = _review(b, ollama=ollama)
    return [f for f in findings if f.check == "build.version-floors"]


def test_a_backends_package_floor_above_what_ollamas_dockerfile_installs_is_high(tmp_path):
    raised = VULKAN.replace("find_package(Vulkan COMPONENTS", "find_package(Vulkan 1.4.328 COMPONENTS")
    (item,) = _floors(tmp_path, raised)
    assert item.severity == "high" and "1.4.328" in item.title and "1.4.321.1" in item.title
    assert [(r.path, r.line) for r in item.local_refs] == [("Dockerfile", 1)]


def test_a_floor_ollamas_version_meets_or_a_backend_ollama_never_builds_is_quiet(tmp_path):
    met = VULKAN.replace("find_package(Vulkan COMPONENTS", "find_package(Vulkan 1.4.300 COMPONENTS")
    assert _floors(tmp_path, met) == []
    unbuilt = {**VULKAN_OLLAMA, "llama/server/CMakeLists.txt": b"set(LLAMA_CURL OFF)\n"}
    raised = VULKAN.replace("find_package(Vulkan COMPONENTS", "find_package(Vulkan 1.4.328 COMPONENTS")
    assert _floors(tmp_path / "unbuilt", raised, unbuilt) == []


def test_a_carried_library_the_target_no_longer_loads_is_medium_at_the_filter(tmp_path):
    """The filter keeps `hipblas`: linked statically now, the payload loses the file Ollama carried."""
    static = BACKEND.replace("roc::hipblas)", "roc::hipblas_static)")
    (item,) = _findings(tmp_path, {"ggml/src/ggml-hip/CMakeLists.txt": static})
    assert (item.severity, item.title) == (
        "medium",
        "`ggml-hip` no longer loads `roc::hipblas`, which Ollama's install carries",
    )
    assert "`roc::hipblas_static` instead" in item.detail and "`hipblas`" in item.detail
    assert [(r.path, r.line) for r in item.local_refs] == [
        ("llama/server/CMakeLists.txt", 10),
        ("llama/server/CMakeLists.txt", 5),
    ]


@pytest.mark.parametrize(
    "backend",
    [
        BACKEND.replace("roc::hipblas)", "roc::hipblas roc::hipblaslt)"),  # still loaded, one more beside
        BACKEND.replace("roc::rocblas roc::hipblas)", "roc::hipblas roc::rocblas)"),  # the same, reordered
        BACKEND.replace("roc::hipblas)", "roc::hipblas2)"),  # another library the same pattern keeps
        # no longer linked, while a library the filter keeps, which may load it, still is
        BACKEND.replace("roc::rocblas roc::hipblas)", "roc::hipblas)"),
    ],
)
def test_a_carried_library_still_loaded_or_replaced_by_one_the_filter_keeps_is_quiet(tmp_path, backend):
    assert _findings(tmp_path, {"ggml/src/ggml-hip/CMakeLists.txt": backend}) == []


def test_a_carried_library_no_longer_linked_beside_no_other_the_filter_keeps_is_medium(tmp_path):
    dropped = BACKEND.replace("PRIVATE roc::rocblas roc::hipblas)", "PRIVATE hip::host)")
    (item,) = _findings(tmp_path, {"ggml/src/ggml-hip/CMakeLists.txt": dropped})  # one change, one item
    assert item.title == "`ggml-hip` no longer loads `roc::hipblas`, which Ollama's install carries"
    assert "it no longer links it" in item.detail
    assert "`ggml-hip` no longer loads `roc::rocblas`, which Ollama's install carries" in item.detail
