"""CMake cache options, new dependencies, and build-time generators, against what Ollama's build sets."""

import pytest

from bot.model import LocalRef
from bot.review.cmake import (
    build_dirs,
    dependency_drafts,
    ollama_mentions,
    option_drafts,
    options,
    packages_and_tools,
)
from bot.review.generators import generator_drafts, steps, target_sources
from bot.review.source import code_text

CMAKE = """
option(LLAMA_CURL "llama: use libcurl to download model from an URL" ON)
option(GGML_CUDA_FA_ALL_QUANTS "ggml: compile all quants for FlashAttention" OFF)
set(GGML_SCHED_MAX_COPIES "4" CACHE STRING "ggml: max input copies for pipeline parallelism")
set(GGML_NATIVE_DEFAULT ON)  # not a cache variable
cmake_dependent_option(GGML_VULKAN_CHECK "ggml: vulkan checks" FALSE "GGML_VULKAN" OFF)
# option(GGML_COMMENTED "commented out" ON)
"""


def _opts(text, path="CMakeLists.txt"):
    return options(code_text(text, path), path)


def _same(line):
    return line


def test_options_of_every_declaring_command_and_none_from_comments():
    found = {o.name: (o.default, o.line) for o in _opts(CMAKE)}
    assert found == {
        "LLAMA_CURL": ("ON", 2),
        "GGML_CUDA_FA_ALL_QUANTS": ("OFF", 3),
        "GGML_SCHED_MAX_COPIES": ("4", 4),
        "GGML_VULKAN_CHECK": ("OFF", 6),
    }


def test_ollama_mentions_in_cmake_presets_dockerfile_but_not_comments():
    files = {
        "llama/server/CMakeLists.txt": code_text(
            "set(GGML_CUDA ON)\n# LLAMA_CURL is off\n", "llama/server/CMakeLists.txt"
        ),
        "Dockerfile": code_text("RUN cmake -DGGML_VULKAN=ON ..\n", "Dockerfile"),
        "CMakePresets.json": '{"cacheVariables": {"LLAMA_BUILD_TESTS": "OFF"}}\n',
        "docs/build.md": "GGML_METAL\n",
    }
    assert ollama_mentions(files) == {
        "GGML_CUDA": [LocalRef("llama/server/CMakeLists.txt", 1)],
        "GGML_VULKAN": [LocalRef("Dockerfile", 1)],
        "LLAMA_BUILD_TESTS": [LocalRef("CMakePresets.json", 1)],
    }


def test_removed_option_ollama_sets_is_high_and_one_it_ignores_is_info():
    old = _opts(CMAKE)
    new = _opts(
        CMAKE.replace('option(LLAMA_CURL "llama: use libcurl to download model from an URL" ON)\n', "")
    )
    refs = [LocalRef("llama/server/CMakeLists.txt", 7)]
    (high,) = option_drafts(old, new, {"LLAMA_CURL": refs}, lambda path, line: 1)
    assert (high.severity, high.title) == (
        "high",
        "CMake option LLAMA_CURL was removed; Ollama still sets it",
    )
    assert (
        high.local_refs == tuple(refs) and high.removed == ("CMakeLists.txt", "LLAMA_CURL") and high.line == 1
    )
    (info,) = option_drafts(old, new, {}, lambda path, line: 1)
    assert info.severity == "info"


def test_renamed_option_is_one_finding_not_a_removal_and_an_addition():
    old = _opts(CMAKE)
    new = _opts(CMAKE.replace("GGML_CUDA_FA_ALL_QUANTS", "GGML_CUDA_FA_ALL_QUANT"))
    (draft,) = option_drafts(old, new, {"GGML_CUDA_FA_ALL_QUANTS": [LocalRef("CMakePresets.json", 3)]}, _same)
    assert draft.severity == "high" and "renamed to GGML_CUDA_FA_ALL_QUANT" in draft.title


def test_new_option_ollama_does_not_set_asks_to_decide_its_value():
    old = _opts(CMAKE)
    new = _opts(CMAKE + 'option(LLAMA_SUBPROCESS "llama: allow spawning subprocesses" ON)\n')
    anchor = {"GGML_CUDA": [LocalRef("llama/server/CMakeLists.txt", 12)]}
    (draft,) = option_drafts(old, new, anchor, _same)
    assert (draft.severity, draft.title) == ("medium", "New CMake option LLAMA_SUBPROCESS: decide its value")
    assert draft.line == 8 and draft.local_refs == (LocalRef("llama/server/CMakeLists.txt", 12),)
    assert "default `ON`" in draft.detail
    assert option_drafts(old, new, {"LLAMA_SUBPROCESS": [LocalRef("CMakeLists.txt", 1)]}, _same) == []


def test_changed_default_matters_only_when_ollama_relies_on_it():
    old = _opts(CMAKE)
    new = _opts(
        CMAKE.replace(
            'GGML_CUDA_FA_ALL_QUANTS "ggml: compile all quants for FlashAttention" OFF',
            'GGML_CUDA_FA_ALL_QUANTS "ggml: compile all quants for FlashAttention" ON',
        )
    )
    (draft,) = option_drafts(old, new, {}, _same)
    assert (
        draft.title == "Default of CMake option GGML_CUDA_FA_ALL_QUANTS changed"
        and "`OFF` to `ON`" in draft.detail
    )
    assert option_drafts(old, new, {"GGML_CUDA_FA_ALL_QUANTS": [LocalRef("Dockerfile", 2)]}, _same) == []
    assert option_drafts(old, _opts(CMAKE.replace(" OFF)", " FALSE)")), {}, _same) == []  # same boolean


def test_new_packages_and_tools_are_medium():
    old = packages_and_tools(code_text("find_package(Threads REQUIRED)\n", "x.cmake"), "x.cmake")
    new_text = "find_package(Threads REQUIRED)\nfind_package(OpenSSL)\nfind_program(GLSLC_EXECUTABLE NAMES glslc HINTS /x)\n"
    new = packages_and_tools(code_text(new_text, "x.cmake"), "x.cmake")
    assert [d.title for d in dependency_drafts(old, new)] == [
        "New build dependency: package OpenSSL",
        "New build dependency: tool glslc",
    ]
    assert dependency_drafts(old, old) == []


SERVER_CMAKE = """
add_executable(embed-assets embed.cpp)
add_custom_command(
    OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/index.html.gz.hpp"
    DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/public/index.html.gz"
    COMMAND "${CMAKE_COMMAND}" "-DINPUT=index.html.gz" -P "${PROJECT_SOURCE_DIR}/scripts/xxd.cmake"
)
add_custom_command(OUTPUT shaders.hpp COMMAND $<TARGET_FILE:embed-assets> --in shaders --out shaders.hpp)
"""


def _steps(text, path="tools/server/CMakeLists.txt"):
    return steps(code_text(text, path), path)


def test_generator_steps_name_the_program_they_really_run():
    found = [(s.program, s.outputs) for s in _steps(SERVER_CMAKE)]
    assert found == [("scripts/xxd.cmake", ("index.html.gz.hpp",)), ("embed-assets", ("shaders.hpp",))]
    assert target_sources(code_text(SERVER_CMAKE, "x"), "tools/server/CMakeLists.txt") == {
        "embed-assets": {"tools/server/embed.cpp"}
    }


def test_generator_arguments_behaviour_and_new_tools():
    old = _steps(SERVER_CMAKE)
    sources = {"embed-assets": {"tools/server/embed.cpp"}}
    assert generator_drafts(old, old, sources, set()) == []
    args = _steps(SERVER_CMAKE.replace("--in shaders", "--in shaders --compress"))
    assert [d.title for d in generator_drafts(old, args, sources, set())] == [
        "Arguments of build-time generator embed-assets changed"
    ]
    assert [
        d.title for d in generator_drafts(old, old, sources, {"tools/server/embed.cpp", "scripts/xxd.cmake"})
    ] == [
        "Build-time generator scripts/xxd.cmake changed behaviour",
        "Build-time generator embed-assets changed behaviour",
    ]
    tool = _steps(SERVER_CMAKE + "add_custom_command(OUTPUT a.spv COMMAND glslc a.comp -o a.spv)\n")
    assert [d.title for d in generator_drafts(old, tool, sources, set())] == [
        "New build-time tool or generator: glslc",
        "New generated asset a.spv",
    ]


def test_moved_generated_asset():
    old = _steps(SERVER_CMAKE)
    moved = _steps(
        SERVER_CMAKE.replace("OUTPUT shaders.hpp", "OUTPUT gen/shaders.hpp").replace(
            "--out shaders.hpp", "--out gen/shaders.hpp"
        )
    )
    titles = [d.title for d in generator_drafts(old, moved, {}, set())]
    assert "Generated asset shaders.hpp moved" in titles


def test_a_new_option_that_defaults_off_is_information_and_one_of_an_unbuilt_backend_says_nothing():
    old = _opts(CMAKE)
    off = _opts(CMAKE + 'option(LLAMA_BUILD_MTMD "llama: build tools/mtmd library standalone" OFF)\n')
    assert [d.severity for d in option_drafts(old, off, {}, _same)] == ["info"]
    sycl_text = 'set(GGML_SYCL_MAX_PARALLEL_LINK_JOBS "4" CACHE STRING "sycl: link jobs")\n'
    sycl = old + _opts(sycl_text, "ggml/src/ggml-sycl/CMakeLists.txt")
    assert option_drafts(old, sycl, {}, _same, built=lambda o: "sycl" not in o.path) == []
    (built,) = option_drafts(old, sycl, {}, _same)
    assert (built.severity, built.title) == (
        "medium",
        "New CMake option GGML_SYCL_MAX_PARALLEL_LINK_JOBS: decide its value",
    )


def test_a_default_naming_a_variable_is_given_as_the_values_the_file_sets_it_to_when_only_set_writes_it():
    text = """if (IOS)
    set(LLAMA_SUBPROCESS_DEFAULT OFF)
else()
    set(LLAMA_SUBPROCESS_DEFAULT ON)
endif()
option(LLAMA_SUBPROCESS "llama: use subprocess" ${LLAMA_SUBPROCESS_DEFAULT})
ProcessorCount(_nproc)
set(_nproc 1)
set(GGML_SYCL_LINK_JOBS ${_nproc} CACHE STRING "parallel link jobs")
"""
    found = {o.name: (o.default, o.expression) for o in _opts(text)}
    assert found == {
        "LLAMA_SUBPROCESS": (
            "OFF or ON",
            "`${LLAMA_SUBPROCESS_DEFAULT}`, which is `OFF` where `IOS`; `ON` otherwise",
        ),
        "GGML_SYCL_LINK_JOBS": ("${_nproc}", ""),  # ProcessorCount() writes it too: not known
    }


def test_a_files_commands_and_branches_are_read_once_per_facts_store(tmp_path, monkeypatch):
    from bot.cache import facts
    from bot.lang import cmakelang
    from bot.review import buildcontracts, cmake

    text = "if (IOS)\n    set(D OFF)\nelse()\n    set(D ON)\n    find_package(X)\nendif()\noption(LLAMA_Y y ${D})\n"
    with facts.using(facts.FactStore(tmp_path / "facts")):
        read = _opts(text), buildcontracts._guards_a_lookup(text, {3})
        for cached in (cmake.commands, cmake._branch_conditions, buildcontracts._lookup_guards):
            cached.cache_clear()
        monkeypatch.setattr(cmakelang, "parse", lambda *args: pytest.fail("parsed again"))
        assert (_opts(text), buildcontracts._guards_a_lookup(text, {3})) == read
    assert read[0][0].expression == "`${D}`, which is `OFF` where `IOS`; `ON` otherwise" and read[1]


def test_a_new_option_is_set_where_a_fetch_configures_the_pin_else_beside_any_fetch_else_anywhere():
    source_only = (
        'ExternalProject_Add(src\n    GIT_TAG ${TAG}\n    CONFIGURE_COMMAND ""\n    BUILD_COMMAND "")\n'
    )
    configuring = "FetchContent_Declare(up\n    GIT_TAG ${TAG})\nFetchContent_MakeAvailable(up)\n"
    files = {
        "dev/src.cmake": source_only,
        "engine/llama/CMakeLists.txt": configuring,
        "CMakeLists.txt": configuring,
    }
    assert build_dirs([("dev/src.cmake", 2), ("engine/llama/CMakeLists.txt", 2)], files) == ("engine/llama/",)
    assert build_dirs([("dev/src.cmake", 2)], files) == ("dev/",)
    assert build_dirs([("CMakeLists.txt", 2)], files) == ("",)  # the top-level project: the whole tree
    assert build_dirs([], files) == ("",)


def test_an_item_about_lines_only_a_branch_ollamas_options_never_take_runs_says_nothing():
    from bot.review.buildreach import reached_by_build
    from bot.review.changes import Draft
    from bot.review.consumers.upstream_build import unbuilt_commands

    text = (
        'option(LLAMA_FETCH_OMP "fetch omp" OFF)\n'
        "add_library(llama llama.cpp)\n"
        "if (LLAMA_FETCH_OMP)\n"
        "    set(OMP_RUNTIME libomp.dll)\n"
        "    file(DOWNLOAD https://x/omp.zip omp.zip)\n"
        "endif()\n"
        "set(OMP_OTHER libomp.dll)\n"
    )
    unbuilt = unbuilt_commands({"CMakeLists.txt": text}, ["CMakeLists.txt"], {})

    def about(*lines: int, path: str = "CMakeLists.txt") -> Draft:
        return Draft("build", "medium", "t", "d", path, lines[0], blame=tuple((n, n) for n in lines))

    assert not reached_by_build(about(4, 5), unbuilt)  # the download branch: the option stays OFF
    assert reached_by_build(about(4, 7), unbuilt)  # one line Ollama's build runs is enough
    assert reached_by_build(about(4, path="ggml/CMakeLists.txt"), unbuilt)
    assert reached_by_build(Draft("build", "info", "t", "d", "CMakeLists.txt", None), unbuilt)


def test_a_re_defaulted_option_of_code_ollama_does_not_build_says_nothing():
    old = _opts(CMAKE) + _opts(
        'option(GGML_SYCL_F16 "sycl: 16 bit" OFF)\n', "ggml/src/ggml-sycl/CMakeLists.txt"
    )
    new = _opts(CMAKE) + _opts(
        'option(GGML_SYCL_F16 "sycl: 16 bit" ON)\n', "ggml/src/ggml-sycl/CMakeLists.txt"
    )
    assert option_drafts(old, new, {}, _same, built=lambda o: "sycl" not in o.path) == []
    (built,) = option_drafts(old, new, {}, _same)
    assert (built.severity, built.title) == ("medium", "Default of CMake option GGML_SYCL_F16 changed")
