"""What Ollama's build relies on of upstream's build, checked at both refs on a real upstream history (pygit2)
against a small Ollama build: the targets it names, the packages upstream must find with Ollama's settings,
options it sets under a name upstream renames, defaults its presets rely on, and where a new option goes."""

from __future__ import annotations

import json

from bot.model import LocalRef
from tests.fixtures import review_one_commit

WEB = "https://github.com/ggml-org/llama.cpp"

TOP = """cmake_minimum_required(VERSION 3.14)
project("llama.cpp" C CXX)
option(LLAMA_OPENSSL "llama: use openssl to support HTTPS" ON)
option(LLAMA_BUILD_TESTS "llama: build tests" ON)
add_subdirectory(ggml)
add_subdirectory(vendor)
add_subdirectory(tools/server)
"""
GGML = """option(GGML_CPU "ggml: enable CPU backend" ON)
option(GGML_BACKEND_DL "ggml: build backends as dynamic libraries (requires BUILD_SHARED_LIBS)" OFF)
add_subdirectory(src)
"""
GGML_SRC = """function(ggml_add_backend_library backend)
    if (GGML_BACKEND_DL)
        add_library(${backend} MODULE ${ARGN})
    else()
        add_library(${backend} ${ARGN})
    endif()
endfunction()
add_library(ggml-base ggml.c)
"""
HTTPLIB = """find_package(Threads REQUIRED)
add_library(cpp-httplib httplib.cpp)
if (LLAMA_BUILD_BORINGSSL)
    set(CPPHTTPLIB_OPENSSL_SUPPORT TRUE)
elseif (LLAMA_OPENSSL)
    find_package(OpenSSL)
endif()
"""
SERVER = """set(TARGET llama-server-impl)
add_library(${TARGET} server-context.cpp)
set(TARGET llama-server)
add_executable(${TARGET} server.cpp)
target_link_libraries(${TARGET} PRIVATE llama-server-impl)
"""
UPSTREAM = {
    "CMakeLists.txt": TOP,
    "ggml/CMakeLists.txt": GGML,
    "ggml/src/CMakeLists.txt": GGML_SRC,
    "vendor/CMakeLists.txt": "add_subdirectory(cpp-httplib)\n",
    "vendor/cpp-httplib/CMakeLists.txt": HTTPLIB,
    "tools/server/CMakeLists.txt": SERVER,
}

OLLAMA_CMAKE = """cmake_minimum_required(VERSION 3.24)
project(OllamaLlama C CXX)
set(LLAMA_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(LLAMA_CURL OFF CACHE BOOL "" FORCE)
set(LLAMA_OPENSSL OFF CACHE BOOL "" FORCE)
FetchContent_MakeAvailable(llama_cpp)
install(TARGETS llama-server RUNTIME DESTINATION lib)
foreach(_impl IN ITEMS llama-server-impl)
    if(TARGET ${_impl})
        install(TARGETS ${_impl} LIBRARY DESTINATION lib OPTIONAL)
    endif()
endforeach()
"""
PRESETS = json.dumps(
    {
        "version": 3,
        "configurePresets": [
            {
                "name": "default",
                "hidden": True,
                "cacheVariables": {"BUILD_SHARED_LIBS": "ON", "GGML_BACKEND_DL": "ON"},
            },
            {"name": "cpu", "inherits": ["default"]},
            {"name": "cuda", "inherits": ["default"], "cacheVariables": {"GGML_CUDA": "ON"}},
            {"name": "arm", "inherits": ["default"], "cacheVariables": {"GGML_CPU": "OFF"}},
        ],
    },
    indent=2,
)
OLLAMA = {
    "llama/server/CMakeLists.txt": OLLAMA_CMAKE.encode(),
    "llama/server/CMakePresets.json": PRESETS.encode(),
}


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _review(tmp_path, changes: dict[str, str]):
    return review_one_commit(tmp_path, UPSTREAM, changes, OLLAMA)


def _raising(findings):
    return [f for f in findings if f.severity in ("high", "medium")]


def test_a_target_ollama_installs_that_upstream_stops_defining_is_high_at_the_line_that_names_it(tmp_path):
    server = SERVER.replace("llama-server-impl", "llama-server-lib")
    ggml = GGML_SRC.replace("add_library(ggml-base ggml.c)", "add_library(ggml-core ggml.c)")  # not Ollama's
    (item,) = _raising(
        _review(tmp_path, {"tools/server/CMakeLists.txt": server, "ggml/src/CMakeLists.txt": ggml})
    )
    assert (item.severity, item.title) == (
        "high",
        "Upstream's build no longer defines target llama-server-impl; Ollama's build uses it",
    )
    assert LocalRef("llama/server/CMakeLists.txt", _line(OLLAMA_CMAKE, "foreach(_impl")) in item.local_refs
    assert "now defines `llama-server-lib`" in item.detail
    assert (item.upstream_path, item.upstream_line) == ("tools/server/CMakeLists.txt", 2)


def test_a_package_now_required_where_an_option_ollama_turns_off_kept_it_out_is_high(tmp_path):
    dropped = HTTPLIB.replace(
        "elseif (LLAMA_OPENSSL)\n    find_package(OpenSSL)", "else()\n    find_package(OpenSSL REQUIRED)"
    )
    dropped += "if (LLAMA_BUILD_BORINGSSL)\n    find_package(BoringSSL REQUIRED)\nendif()\n"  # off for Ollama
    (item,) = _raising(_review(tmp_path, {"vendor/cpp-httplib/CMakeLists.txt": dropped}))
    assert (item.severity, item.title) == (
        "high",
        "Build dependency OpenSSL is now required in Ollama's build",
    )
    assert item.local_refs == [
        LocalRef("llama/server/CMakeLists.txt", _line(OLLAMA_CMAKE, "set(LLAMA_OPENSSL"))
    ]
    assert "only when `LLAMA_OPENSSL` is on" in item.detail and "fails to configure" in item.detail


def test_a_package_required_only_where_ollama_turns_the_option_off_is_not_reported(tmp_path):
    """Beside an option rename Ollama's build is hit by, so that the review is seen to run."""
    required = HTTPLIB.replace("find_package(OpenSSL)", "find_package(OpenSSL REQUIRED)")
    renamed = GGML.replace("GGML_BACKEND_DL ", "GGML_BACKEND_DYNAMIC ")
    findings = _raising(
        _review(
            tmp_path,
            {
                "vendor/cpp-httplib/CMakeLists.txt": required,
                "ggml/CMakeLists.txt": renamed,
                "ggml/src/CMakeLists.txt": GGML_SRC.replace("GGML_BACKEND_DL", "GGML_BACKEND_DYNAMIC"),
            },
        )
    )
    assert [f.title for f in findings] == [
        "CMake option GGML_BACKEND_DL renamed to GGML_BACKEND_DYNAMIC; Ollama still sets the old name"
    ]
    assert findings[0].severity == "high"  # weighed by the name Ollama sets, not the new one it leaves OFF
    assert (
        LocalRef("llama/server/CMakePresets.json", _line(PRESETS, '"GGML_BACKEND_DL"'))
        in findings[0].local_refs
    )


def test_a_default_some_presets_rely_on_is_medium_naming_them_one_ollama_forces_is_not(tmp_path):
    changed = GGML.replace('"ggml: enable CPU backend" ON', '"ggml: enable CPU backend" OFF')
    top = TOP.replace('"llama: build tests" ON', '"llama: build tests" OFF')  # Ollama forces it
    (item,) = _raising(_review(tmp_path, {"ggml/CMakeLists.txt": changed, "CMakeLists.txt": top}))
    assert (item.severity, item.title) == ("medium", "Default of CMake option GGML_CPU changed")
    assert "the builds `cpu`, `cuda` leave it to the default" in item.detail
    assert item.local_refs == [LocalRef("llama/server/CMakePresets.json", _line(PRESETS, '"GGML_CPU"'))]


def test_a_new_option_points_where_ollama_forces_its_options_with_its_default_resolved(tmp_path):
    top = TOP.replace(
        'option(LLAMA_BUILD_TESTS "llama: build tests" ON)\n',
        'option(LLAMA_BUILD_TESTS "llama: build tests" ON)\n'
        'if (CMAKE_SYSTEM_NAME STREQUAL "iOS")\n    set(LLAMA_SUBPROCESS_DEFAULT OFF)\nelse()\n'
        "    set(LLAMA_SUBPROCESS_DEFAULT ON)\nendif()\n"
        'option(LLAMA_SUBPROCESS "llama: use subprocess" ${LLAMA_SUBPROCESS_DEFAULT})\n',
    )
    (item,) = _raising(_review(tmp_path / "a", {"CMakeLists.txt": top}))
    assert (item.severity, item.title) == ("medium", "New CMake option LLAMA_SUBPROCESS: decide its value")
    assert item.local_refs == [
        LocalRef("llama/server/CMakeLists.txt", _line(OLLAMA_CMAKE, "set(LLAMA_OPENSSL"))
    ]
    assert (
        "takes the default `${LLAMA_SUBPROCESS_DEFAULT}`, which is `OFF` where `CMAKE_SYSTEM_NAME STREQUAL iOS`;"
        " `ON` otherwise;" in item.detail
    )

    bucket = TOP + 'set(LLAMA_UI_BUCKET "" CACHE STRING "where prebuilt UI assets come from")\n'
    (empty,) = [
        f for f in _review(tmp_path / "b", {"CMakeLists.txt": bucket}) if "LLAMA_UI_BUCKET" in f.title
    ]
    assert empty.severity == "info" and "``" not in empty.detail
    assert "default empty (false where the build tests it)" in empty.detail


def test_a_tool_looked_for_only_in_a_branch_ollamas_options_never_take_is_not_raised(tmp_path):
    fetch = GGML.replace(
        "add_subdirectory(src)\n",
        'option(GGML_OPENMP_FETCH "ggml: fetch LLVM OpenMP" OFF)\nadd_subdirectory(src)\n',
    )
    guarded = GGML_SRC + (
        "if (GGML_OPENMP_FETCH)\n"
        '    if (NOT EXISTS "${ROOT}/libomp.lib" OR\n        NOT EXISTS "${ROOT}/libomp.dll")\n'
        "        find_program(GGML_OPENMP_7Z NAMES 7z 7za)\n"
        "    endif()\n"
        "endif()\n"
    )
    findings = _review(tmp_path / "a", {"ggml/CMakeLists.txt": fetch, "ggml/src/CMakeLists.txt": guarded})
    assert _raising(findings) == []  # the option defaults OFF and Ollama never sets it

    reached = GGML_SRC + "find_program(GGML_OPENMP_7Z NAMES 7z 7za)\n"
    (item,) = _raising(
        _review(tmp_path / "b", {"ggml/CMakeLists.txt": fetch, "ggml/src/CMakeLists.txt": reached})
    )
    assert (item.severity, item.title) == ("medium", "New build dependency: tool 7z")


# Ollama's llama.cpp build in a folder of its own naming, with its presets beside it; a helper that only
# downloads the source (CONFIGURE_COMMAND "") passes a longer block of options elsewhere
ENGINE_CMAKE = """cmake_minimum_required(VERSION 3.24)
project(Engine C CXX)
include(FetchContent)
file(READ "${CMAKE_CURRENT_SOURCE_DIR}/../../LLAMA_CPP_VERSION" LLAMA_CPP_GIT_TAG)
string(STRIP "${LLAMA_CPP_GIT_TAG}" LLAMA_CPP_GIT_TAG)
set(LLAMA_BUILD_TESTS OFF CACHE BOOL "" FORCE)
set(LLAMA_OPENSSL OFF CACHE BOOL "" FORCE)
FetchContent_Declare(llama_cpp
    GIT_REPOSITORY https://github.com/ggml-org/llama.cpp.git
    GIT_TAG ${LLAMA_CPP_GIT_TAG})
FetchContent_MakeAvailable(llama_cpp)
"""
SOURCE_ONLY_CMAKE = """file(READ "${CMAKE_SOURCE_DIR}/LLAMA_CPP_VERSION" TAG)
ExternalProject_Add(llama-source
    GIT_REPOSITORY https://github.com/ggml-org/llama.cpp.git
    GIT_TAG ${TAG}
    CONFIGURE_COMMAND ""
    BUILD_COMMAND "")
set(_args
    -DLLAMA_BUILD_TESTS=OFF
    -DLLAMA_OPENSSL=OFF
    -DLLAMA_CURL=OFF
    -DLLAMA_BUILD_EXAMPLES=OFF)
"""
ELSEWHERE = {
    "LLAMA_CPP_VERSION": b"b1\n",
    "third_party/engine/CMakeLists.txt": ENGINE_CMAKE.encode(),
    "third_party/engine/CMakePresets.json": PRESETS.encode(),
    "dev/source.cmake": SOURCE_ONLY_CMAKE.encode(),
}


def test_a_new_option_points_into_the_folder_whose_cmake_fetches_and_configures_the_pin(tmp_path):
    top = TOP.replace(
        'option(LLAMA_BUILD_TESTS "llama: build tests" ON)\n',
        'option(LLAMA_BUILD_TESTS "llama: build tests" ON)\noption(LLAMA_SUBPROCESS "llama: use subprocess" ON)\n',
    )
    (item,) = _raising(review_one_commit(tmp_path, UPSTREAM, {"CMakeLists.txt": top}, ELSEWHERE))
    assert (item.severity, item.title) == ("medium", "New CMake option LLAMA_SUBPROCESS: decide its value")
    assert item.local_refs == [
        LocalRef("third_party/engine/CMakeLists.txt", _line(ENGINE_CMAKE, "set(LLAMA_OPENSSL"))
    ]


def test_an_option_renamed_that_presets_in_any_folder_set_is_high_at_their_line(tmp_path):
    renamed = GGML.replace("GGML_BACKEND_DL ", "GGML_BACKEND_DYNAMIC ")
    changes = {
        "ggml/CMakeLists.txt": renamed,
        "ggml/src/CMakeLists.txt": GGML_SRC.replace("GGML_BACKEND_DL", "GGML_BACKEND_DYNAMIC"),
    }
    (item,) = _raising(review_one_commit(tmp_path, UPSTREAM, changes, ELSEWHERE))
    assert item.title.startswith("CMake option GGML_BACKEND_DL renamed to GGML_BACKEND_DYNAMIC; Ollama still")
    assert item.local_refs == [
        LocalRef("third_party/engine/CMakePresets.json", _line(PRESETS, '"GGML_BACKEND_DL"'))
    ]
