"""CMake `if()` conditions over three values, with one build's variables: comparisons and `MATCHES` evaluated,
what no build gives left unknown (the walks then judge nothing under it)."""

from __future__ import annotations

import pytest

from bot.review.consumers.conditions import condition

MINIMUM = ["ARCH", "MATCHES", '"^([0-9]+)"', "AND", "CMAKE_MATCH_1", "LESS", "61"]


@pytest.mark.parametrize(("arch", "truth"), [("50-virtual", True), ("61", False), ("90a", False)])
def test_a_match_sets_the_groups_the_rest_of_the_condition_reads(arch, truth):
    strings = {"ARCH": arch}
    assert condition(MINIMUM, {}, strings) is truth
    assert strings["CMAKE_MATCH_1"] == arch.rstrip("a").split("-")[0]


@pytest.mark.parametrize(
    ("tokens", "strings", "truth"),
    [
        (["NOT", "DEFINED", "CMAKE_CUDA_ARCHITECTURES"], {"CMAKE_CUDA_ARCHITECTURES": "70"}, False),
        (["NOT", "DEFINED", "CMAKE_CUDA_ARCHITECTURES"], {}, None),  # upstream may set it itself
        (["COMPILER", "STREQUAL", '"MSVC"'], {"COMPILER": "MSVC"}, True),
        (["COMPILER", "STREQUAL", '"MSVC"'], {}, None),  # a word no build gives may be a variable
        (['"${COMPILER}"', "STREQUAL", '"GNU"'], {"COMPILER": "MSVC"}, False),
        (["VERSION", "GREATER_EQUAL", "12"], {"VERSION": "twelve"}, None),  # not a number
        (["ARCH", "MATCHES", '"(("'], {"ARCH": "50"}, None),  # not an expression Python reads
        (["ARCH", "MATCHES", '"^5"'], {}, None),
        (["ARCH", "MATCHES", '"^(a+)+$"'], {"ARCH": "a" * 40 + "!"}, None),  # would backtrack without end
    ],
)
def test_what_a_build_gives_decides_and_the_rest_stays_unknown(tokens, strings, truth):
    assert condition(tokens, {}, strings) is truth


def test_without_a_builds_variables_every_comparison_is_unknown():
    assert condition(MINIMUM, {}) is None
    assert condition(["NOT", "DEFINED", "X"], {}) is None
