"""A CMake option that only chooses text (a version suffix) is weighed apart from one that changes the build."""

from __future__ import annotations

from bot.model import LocalRef
from bot.review.cmake import option_drafts, options
from bot.review.upstream.optioneffect import text_only

TOP = """project(up C CXX)
set(UP_VERSION_BASE "0.1.0")
option(LLAMA_BUILD_IS_DEV "dev build" ON)
if (LLAMA_BUILD_IS_DEV)
    set(UP_VERSION "${UP_VERSION_BASE}-dev")
else()
    set(UP_VERSION "${UP_VERSION_BASE}")
endif()
message(STATUS "version: ${UP_VERSION}")
set(UP_PACKAGE_VERSION "${UP_VERSION}")
write_basic_package_version_file(up-config-version.cmake VERSION ${UP_PACKAGE_VERSION} COMPATIBILITY SameMajorVersion)
add_subdirectory(src)
"""
SRC = """add_library(up up.cpp)
target_compile_definitions(up PRIVATE UP_VERSION="${UP_VERSION}" UP_COMMIT="${UP_COMMIT}")
"""


def test_an_option_that_only_picks_a_version_string_chooses_text():
    assert text_only({"CMakeLists.txt": TOP, "src/CMakeLists.txt": SRC}, "LLAMA_BUILD_IS_DEV") == (
        "UP_VERSION",
        "UP_PACKAGE_VERSION",
    )


def test_an_option_whose_text_reaches_a_build_input_does_more():
    sources = SRC + 'add_library(extra "${UP_VERSION}.cpp")\n'
    assert text_only({"CMakeLists.txt": TOP, "src/CMakeLists.txt": sources}, "LLAMA_BUILD_IS_DEV") == ()
    condition = SRC + "if (UP_VERSION MATCHES dev)\n  add_definitions(-DDEV)\nendif()\n"
    assert text_only({"CMakeLists.txt": TOP, "src/CMakeLists.txt": condition}, "LLAMA_BUILD_IS_DEV") == ()


def test_an_option_that_gates_a_target_or_is_read_elsewhere_does_more():
    gates = 'option(LLAMA_X "x" ON)\nif (LLAMA_X)\n  add_subdirectory(x)\nendif()\n'
    assert text_only({"CMakeLists.txt": gates}, "LLAMA_X") == ()
    nested = 'option(LLAMA_X "x" ON)\nif (LLAMA_X)\n  if (WIN32)\n    add_compile_options(/W4)\n  endif()\nendif()\n'
    assert text_only({"CMakeLists.txt": nested}, "LLAMA_X") == ()
    generator = 'option(LLAMA_X "x" ON)\ntarget_compile_definitions(up PRIVATE $<$<BOOL:${LLAMA_X}>:X=1>)\n'
    assert text_only({"CMakeLists.txt": generator}, "LLAMA_X") == ()
    unread = 'option(LLAMA_X "x" ON)\n'
    assert text_only({"CMakeLists.txt": unread}, "LLAMA_X") == ()


def test_a_new_option_that_only_chooses_text_is_information_naming_the_text():
    old = options(TOP.replace('option(LLAMA_BUILD_IS_DEV "dev build" ON)\n', ""), "CMakeLists.txt")
    new = options(TOP, "CMakeLists.txt")
    texts = {"CMakeLists.txt": TOP, "src/CMakeLists.txt": SRC}
    anchor = {"GGML_CUDA": [LocalRef("CMakeLists.txt", 4)]}
    (draft,) = option_drafts(
        old, new, anchor, lambda p, n: n, chooses_text=lambda name: text_only(texts, name)
    )
    assert (draft.severity, draft.title) == ("info", "New CMake option LLAMA_BUILD_IS_DEV only chooses text")
    assert "`UP_VERSION`" in draft.detail and "not what is compiled" in draft.detail
    # the same option gating a directory asks for a decision
    gating = TOP.replace('set(UP_VERSION "${UP_VERSION_BASE}-dev")', "add_subdirectory(dev)")
    texts["CMakeLists.txt"] = gating
    (draft,) = option_drafts(
        old,
        options(gating, "CMakeLists.txt"),
        anchor,
        lambda p, n: n,
        chooses_text=lambda name: text_only(texts, name),
    )
    assert (draft.severity, draft.title) == (
        "medium",
        "New CMake option LLAMA_BUILD_IS_DEV: decide its value",
    )


def test_a_re_defaulted_option_that_only_chooses_text_is_information():
    old_top = TOP.replace('"dev build" ON', '"dev build" OFF')
    texts = {"CMakeLists.txt": TOP, "src/CMakeLists.txt": SRC}
    (draft,) = option_drafts(
        options(old_top, "CMakeLists.txt"),
        options(TOP, "CMakeLists.txt"),
        {},
        lambda p, n: n,
        chooses_text=lambda name: text_only(texts, name),
    )
    assert draft.severity == "info" and draft.title == "Default of CMake option LLAMA_BUILD_IS_DEV changed"
