"""Where the build applies a pin's patches, said as the tree says it: Ollama's real MLX bumps, and the rules
(Dockerfile stages, a fetch without PATCH_COMMAND) on synthetic trees."""

from __future__ import annotations

import pytest

from bot.build import dockerstages, patchwiring
from bot.config import parse_config
from bot.engine import analyse
from bot.render.checklist import render_markdown
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.mlxcases import MlxCase, mlx_case

PATCH = "mlx/compat/0001-mlx-c-regen-0.32.1.patch"


@pytest.fixture(scope="module")
def broke(tmp_path_factory):
    return mlx_case(tmp_path_factory.mktemp("wiring"), "mlx-breaks-mlx-c")


def _highs(report, pin):
    return [f for f in report.pin(pin).findings if f.severity == "high"]


def test_the_advice_says_the_build_applied_no_mlx_c_patch_and_where_one_goes(broke):
    """At #17850's base no PATCH_COMMAND applied a patch to mlx-c: the maintainers wired one into
    cmake/local.cmake and, a day later, copied the patch into the Dockerfile's `mlx` stage."""
    report = broke.check(broke.ollama("base"), broke.ollama("first-push"))
    (advice,) = {
        f.detail.split("carry a mlx-c patch that updates these calls ")[1].split("\n")[0]
        for f in _highs(report, "mlx")
    }
    assert advice.startswith(
        "(the build applies no mlx-c patch yet: wire one in as the `PATCH_COMMAND` of the fetch at "
        "`cmake/local.cmake:183` (`x/mlxrunner/mlx/CMakeLists.txt:24` takes its source from `cmake/local.cmake` "
        "through `FETCHCONTENT_SOURCE_DIR_MLX-C`), and copy it into the Docker stage `mlx` (`Dockerfile:200`)"
    )
    assert "mlx/compat/mlx-c" not in advice and "mlx/compat/*.patch" not in advice


def test_a_carried_patch_the_docker_stage_never_copies_is_a_high_item_until_it_does(broke):
    base, head = broke.ollama("base"), broke.ollama("head")
    report = broke.check(base, head)
    (gap,) = [f for f in _highs(report, "mlx-c") if f.title.startswith("Docker stage")]
    assert gap.title == f"Docker stage `mlx` builds mlx-c without its carried patch: `{PATCH}` not copied"
    assert [(r.path, r.line) for r in gap.local_refs] == [("Dockerfile", 200), ("cmake/local.cmake", 199)]
    checklist = MlxCase.checklist(report, base, head)
    assert "Nothing to do" not in checklist and "Docker stage `mlx`" in checklist
    # what the maintainers committed the day after: the stage copies the patch directory
    fixed = {
        **head,
        "Dockerfile": head["Dockerfile"].replace(b"COPY cmake cmake\n", b"COPY cmake cmake\nCOPY mlx mlx\n"),
    }
    assert not [
        f for f in broke.check(base, fixed).pin("mlx-c").findings if f.title.startswith("Docker stage")
    ]


def test_a_pin_without_patches_says_the_build_applies_none_and_whose_patch_lies_beside_it(tmp_path):
    case = mlx_case(tmp_path, "mlx-quiet")
    base, first = case.ollama("base"), case.ollama("first-push")
    checklist = MlxCase.checklist(case.check(base, first), base, first)
    assert "there are no carried patches" not in checklist
    assert "Nothing to do: mlx carries no patches and the review found nothing" in checklist
    assert (
        "No carried patches below the pin's patch directory; the build applies none to mlx (its fetch at "
        "`cmake/local.cmake:160` has no `PATCH_COMMAND`); "
        f"`{PATCH}` is mlx-c's, applied from cmake/local.cmake:199, PATCH_COMMAND git apply." in checklist
    )


# -- the rules, on synthetic trees -------------------------------------------------------------------

DOCKERFILE = """\
# syntax=docker/dockerfile:1
FROM --platform=linux/amd64 almalinux:8 AS base
RUN dnf install -y cmake
FROM base AS native
COPY LIB_VERSION .
COPY ["cmake", "cmake"]
COPY --from=base /usr/bin/cmake /usr/bin/
RUN --mount=type=cache,target=/root/.ccache \\
    cmake -S . -B build \\
        && cmake --build build
FROM native AS inherits
RUN true
FROM base AS other
COPY cmake cmake
RUN cmake -S . -B build
FROM base AS everything
COPY . .
RUN cmake --build build
"""


def test_dockerfile_stages_their_copies_and_runs():
    found = dockerstages.stages("Dockerfile", DOCKERFILE)
    assert [(s.name, s.parent, s.line) for s in found] == [
        ("base", "almalinux:8", 2),
        ("native", "base", 4),
        ("inherits", "native", 11),
        ("other", "base", 13),
        ("everything", "base", 16),
    ]
    native = found[1]
    assert native.copies == ["LIB_VERSION", "cmake"]  # `--from` copies nothing from the build context
    assert native.runs[0].endswith("cmake -S . -B build && cmake --build build")
    by_name = {s.name: s for s in found}
    chain = dockerstages.lineage(by_name["inherits"], by_name)
    ctx = dockerstages.Context()
    assert dockerstages.copied("cmake/fetch.cmake", chain, ctx) and dockerstages.runs(chain, "cmake")
    assert not dockerstages.copied("patches/1.patch", chain, ctx)
    everything = dockerstages.lineage(by_name["everything"], by_name)
    assert dockerstages.copied("patches/1.patch", everything, ctx)
    ignored = dockerstages.Context(((False, "patches"), (True, "patches/keep.patch")))
    assert not dockerstages.copied("patches/1.patch", everything, ignored)
    assert dockerstages.copied("patches/keep.patch", everything, ignored)


FETCH = """\
file(READ "${CMAKE_SOURCE_DIR}/LIB_VERSION" LIB_TAG)
include(ExternalProject)
ExternalProject_Add(lib-source
    GIT_REPOSITORY "https://example.com/lib.git"
    GIT_TAG ${LIB_TAG}
    PATCH_COMMAND git apply ${CMAKE_SOURCE_DIR}/patches/1.patch)
"""
PIN = '[[pin]]\nname = "lib"\nversion_file = "LIB_VERSION"\npatches = "patches"\nupstream = "https://example.com/lib"\nreview = "none"\n'


def _tree(fetch: str = FETCH, dockerfile: str = DOCKERFILE) -> MemorySnapshot:
    return MemorySnapshot(
        {
            "LIB_VERSION": b"v1\n",
            "cmake/fetch.cmake": fetch.encode(),
            "patches/1.patch": b"",
            "Dockerfile": dockerfile.encode(),
        }
    )


def test_every_stage_that_fetches_the_pin_must_copy_its_patches():
    (pin,) = parse_config(PIN).pins
    gaps = patchwiring.docker_gaps(_tree(), "LIB_VERSION")
    # `other` copies the CMake file but not the version file its fetch reads: it never fetches the pin
    assert [(g.stage.name, g.missing) for g in gaps] == [
        ("native", ("patches/1.patch",)),
        ("inherits", ("patches/1.patch",)),
    ]
    (first, _) = patchwiring.gap_findings(_tree(), pin)
    assert first.severity == "high" and first.title == (
        "Docker stage `native` builds lib without its carried patch: `patches/1.patch` not copied"
    )
    copying = DOCKERFILE.replace(
        'COPY ["cmake", "cmake"]\n', 'COPY ["cmake", "cmake"]\nCOPY patches patches\n'
    )
    assert patchwiring.docker_gaps(_tree(dockerfile=copying), "LIB_VERSION") == []


def test_a_carried_patch_no_patch_command_applies_is_a_high_item(tmp_path):
    lib = RepoBuilder(tmp_path / "lib.git")
    v1 = lib.commit("v1", {"src/a.c": b"int a;\n"})
    unwired = FETCH.replace("\n    PATCH_COMMAND git apply ${CMAKE_SOURCE_DIR}/patches/1.patch)", ")")
    patch = b"--- a/src/a.c\n+++ b/src/a.c\n@@ -1 +1 @@\n-int a;\n+int b;\n"
    files = {
        "LIB_VERSION": f"{v1}\n".encode(),
        "cmake/fetch.cmake": unwired.encode(),
        "patches/1.patch": patch,
    }
    report = analyse(
        parse_config(PIN),
        MemorySnapshot({k: v for k, v in files.items() if k != "patches/1.patch"}),
        MemorySnapshot(files),
        lambda pin, refs: Upstream(lib.repo, pin.upstream),
        ["patches/1.patch"],
    )
    (unapplied,) = [f for f in report.pin("lib").findings if f.severity == "high"]
    assert unapplied.title == "The build applies none of lib's carried patches"
    assert "`cmake/fetch.cmake:4`" in unapplied.detail
    assert "wire" in render_markdown(report, ["patches/1.patch"]).lower()
