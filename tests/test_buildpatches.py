"""Where the build applies patches: Ollama's CMake files read as text, never run."""

import os

import pygit2
import pytest

from bot.config import parse_config
from bot.model import PatchResult, PinReport, Report
from bot.render.checklist import build_checklist
from bot.repos.buildpatches import build_patches, patch_stack
from bot.repos.snapshot import GitSnapshot, MemorySnapshot

LOCAL_CMAKE = b"""include(ExternalProject)
if(OLLAMA_MLX_BACKENDS)
    file(READ "${CMAKE_SOURCE_DIR}/MLX_C_VERSION" OLLAMA_MLX_C_GIT_TAG)
    string(STRIP "${OLLAMA_MLX_C_GIT_TAG}" OLLAMA_MLX_C_GIT_TAG)
    find_package(Git REQUIRED)
    set(OLLAMA_MLX_C_COMPAT_PATCH_COMMAND
        ${GIT_EXECUTABLE} apply ${CMAKE_SOURCE_DIR}/mlx/compat/0001-x.patch
        CACHE INTERNAL "MLX-C carry patch")
    ExternalProject_Add(ollama-mlx-c-source
        GIT_REPOSITORY "https://github.com/ml-explore/mlx-c.git"
        GIT_TAG ${OLLAMA_MLX_C_GIT_TAG}
        CONFIGURE_COMMAND ""
        PATCH_COMMAND ${OLLAMA_MLX_C_COMPAT_PATCH_COMMAND}
        USES_TERMINAL_PATCH TRUE)
endif()
"""

TODAY = {
    "CMakeLists.txt": b"project(ollama)\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/cmake/local.cmake)\n",
    "cmake/local.cmake": LOCAL_CMAKE,
    "MLX_VERSION": b"a" * 40 + b"\n",
    "MLX_C_VERSION": b"b" * 40 + b"\n",
    "mlx/compat/0001-x.patch": b"patch\n",
    "mlx/compat/0002-not-applied.patch": b"patch\n",
}


def test_the_patch_cmake_applies_to_mlx_c_is_found_with_where():
    (found,) = build_patches(MemorySnapshot(TODAY))
    assert found.version_file == "MLX_C_VERSION" and found.patches == ("mlx/compat/0001-x.patch",)
    assert found.origin == "from cmake/local.cmake:13, PATCH_COMMAND git apply"
    stack = patch_stack(MemorySnapshot(TODAY), "MLX_C_VERSION", ["mlx/compat/mlx-c", "mlx/compat/*.patch"])
    assert stack.paths == ("mlx/compat/0001-x.patch",)  # not the file the build never applies


def test_a_directory_walk_through_apply_patch_cmake_keeps_the_file_name_order():
    files = {
        "CMakeLists.txt": b'file(READ "${CMAKE_SOURCE_DIR}/MLX_VERSION" T)\n'
        b"include(mlx/compat/compat.cmake)\n"
        b"FetchContent_Declare(mlx GIT_TAG ${T} PATCH_COMMAND ${MLX_PATCH})\n",
        "mlx/compat/compat.cmake": b"set(MLX_PATCH ${CMAKE_COMMAND} -DPATCH_DIR=${CMAKE_CURRENT_LIST_DIR}/mlx "
        b"-P ${CMAKE_CURRENT_LIST_DIR}/apply-patch.cmake)\n",
        "MLX_VERSION": b"v0.31.0\n",
        "mlx/compat/mlx/b/0001-b.patch": b"",
        "mlx/compat/mlx/0002-a.patch": b"",
    }
    stack = patch_stack(MemorySnapshot(files), "MLX_VERSION", ["mlx/compat/mlx"])
    assert stack.paths == ("mlx/compat/mlx/b/0001-b.patch", "mlx/compat/mlx/0002-a.patch")
    assert stack.origin == "from CMakeLists.txt:3, PATCH_COMMAND apply-patch.cmake over mlx/compat/mlx/"


def test_the_planned_layout_without_cmake_uses_the_default_directories():
    files = {
        "MLX_C_VERSION": b"v0.4.0\n",
        "mlx/compat/mlx-c/0001-c.patch": b"",
        "mlx/compat/mlx/0001-m.patch": b"",
    }
    config = parse_config(None)
    snapshot = MemorySnapshot(files)
    mlx_c, mlx = config.pin("mlx-c"), config.pin("mlx")
    assert patch_stack(snapshot, mlx_c.version_file, mlx_c.patch_sets).paths == (
        "mlx/compat/mlx-c/0001-c.patch",
    )
    assert patch_stack(snapshot, mlx.version_file, mlx.patch_sets).paths == ("mlx/compat/mlx/0001-m.patch",)


def test_a_change_to_a_patch_the_build_applies_selects_its_pin():
    config = parse_config(
        '[[pin]]\nname = "mlx-c"\nversion_file = "MLX_C_VERSION"\npatches = "elsewhere"\nupstream = "u"\n'
    )
    assert config.touched_pins(["mlx/compat/0001-x.patch"]) == []
    assert [p.name for p in config.touched_pins(["mlx/compat/0001-x.patch"], MemorySnapshot(TODAY))] == [
        "mlx-c"
    ]


def _pin(name: str, steps: list[tuple[str, str]] | None = None) -> PinReport:
    return PinReport(
        name,
        "MLX_VERSION",
        "a",
        "b",
        patches=[PatchResult("mlx/compat/0001-x.patch", "clean", "applies")],
        build_steps=steps,
    )


def test_an_mlx_only_bump_gets_its_tree_s_steps_and_no_llama_cpp_steps():
    """A pin whose steps the engine read from the tree shows those; llama.cpp's pin keeps its own."""
    mlx = _pin("mlx", [("build-preset-mlx-metal", "Configure and build the `MLX Metal` preset")])
    ids = [s.id for s in build_checklist(Report(pins=[mlx]), ["MLX_VERSION"]).steps]
    assert ids == ["patches-apply-mlx", "build-preset-mlx-metal", "go-test"]
    both = [s.id for s in build_checklist(Report(pins=[mlx, _pin("llama.cpp")]), []).steps]
    assert "configure" in both and "build-preset-mlx-metal" in both


@pytest.mark.skipif(
    not os.environ.get("LLAMA_BOT_REAL_OLLAMA"), reason="LLAMA_BOT_REAL_OLLAMA names no Ollama git dir"
)
def test_real_ollama_applies_its_mlx_c_patch_from_local_cmake():
    repo = pygit2.Repository(os.environ["LLAMA_BOT_REAL_OLLAMA"])
    head = GitSnapshot(repo, str(repo.revparse_single("e92b7855f").peel(pygit2.Commit).id))
    found = {f.version_file: f for f in build_patches(head) if f.patches}
    assert found["MLX_C_VERSION"].patches == ("mlx/compat/0001-mlx-c-regen-0.32.1.patch",)
    assert (
        found["MLX_C_VERSION"].origin.startswith("from cmake/local.cmake:")
        and "git apply" in found["MLX_C_VERSION"].origin
    )
    assert found["LLAMA_CPP_VERSION"].patches[0] == "llama/compat/001-llama-cpp-hooks.patch"
    assert "MLX_VERSION" not in found  # the build carries no MLX patch today


def test_the_checklist_names_where_the_patches_were_found():
    from bot.render.checklist import render_markdown

    pin = _pin("mlx-c")
    pin.patch_source = "from cmake/local.cmake:13, PATCH_COMMAND git apply"
    text = render_markdown(Report(pins=[pin]), ["MLX_C_VERSION"])
    assert "patches: `mlx/compat/0001-x.patch` (from cmake/local.cmake:13, PATCH_COMMAND git apply)" in text


@pytest.mark.parametrize("profile", ["mlx", "none"])
def test_llama_cpp_detectors_never_run_on_another_pins_bump(tmp_path, profile):
    import dataclasses

    from bot.patches.patchfile import parse
    from bot.repos.history import History
    from bot.repos.upstream import Upstream
    from bot.review import ReviewContext, review
    from tests.test_review_e2e import LAGUNA_PATCH, OLLAMA, WEB, _real_bump

    b = _real_bump(tmp_path)
    up = Upstream(b.repo, WEB)
    old, new = up.commit("b1", "V"), up.commit("b2", "V")
    llama = parse_config(None).pin("llama.cpp")

    def findings(pin):
        ctx = ReviewContext(
            pin,
            GitSnapshot(b.repo, old),
            GitSnapshot(b.repo, new),
            History(up, old, new),
            MemorySnapshot(OLLAMA),
            [("llama/compat/0001-laguna.patch", parse(LAGUNA_PATCH))],
            {},
        )
        return review(ctx)

    assert {f.area for f in findings(llama)} >= {"server", "models", "build"}
    other = findings(dataclasses.replace(llama, name="mlx", review=profile))
    assert {f.area for f in other} <= ({"patch-context"} if profile == "mlx" else set())
    assert bool(other) == (profile == "mlx")  # the carried patch's neighbourhood still changed upstream


def _fetching(version_file: str, repository: str) -> bytes:
    return (
        f'file(READ "${{CMAKE_SOURCE_DIR}}/{version_file}" TAG)\n'
        f'FetchContent_Declare(dep\n    GIT_REPOSITORY "{repository}"\n    GIT_TAG ${{TAG}})\n'
    ).encode()


def test_the_repository_a_version_file_is_fetched_from_is_read():
    from bot.repos.buildpatches import fetch_sources

    snapshot = MemorySnapshot(
        {
            "CMakeLists.txt": _fetching("MLX_VERSION", "https://github.com/ml-explore/mlx-c.git"),
            "MLX_VERSION": b"v0.5.0\n",
        }
    )
    (source,) = fetch_sources(snapshot, "MLX_VERSION")
    assert (source.repository, source.cmake_file, source.line) == (
        "https://github.com/ml-explore/mlx-c.git",
        "CMakeLists.txt",
        3,
    )
    assert fetch_sources(snapshot, "MLX_C_VERSION") == []


def test_a_version_file_that_pinned_another_repository_is_not_compared_with_it(tmp_path):
    """The base's build fetched MLX_VERSION from mlx-c: its ref is no MLX ref, so the new ref stands alone;
    a head whose build fetches it from elsewhere than the pin's upstream is an error naming where."""
    from bot.engine import analyse
    from bot.repos.upstream import Upstream
    from tests.fixtures import RepoBuilder

    mlx = RepoBuilder(tmp_path / "mlx.git")
    new = mlx.commit("mlx", {"mlx/fast.h": "int f();\n"})
    mlx.tag("v0.5.0")  # a tag of the same name as the mlx-c one: comparing with it would be wrong
    base = {
        "CMakeLists.txt": _fetching("MLX_VERSION", "https://github.com/ml-explore/mlx-c.git"),
        "MLX_VERSION": b"v0.5.0\n",
    }
    head = {
        "CMakeLists.txt": _fetching("MLX_VERSION", "https://github.com/ml-explore/mlx"),
        "MLX_VERSION": f"{new}\n".encode(),
    }

    def check(head_files):
        return analyse(
            parse_config(None),
            MemorySnapshot(base),
            MemorySnapshot(head_files),
            lambda pin, refs: Upstream(mlx.repo, pin.upstream),
            ["MLX_VERSION"],
            errors={},
        )

    (pin,) = check(head).pins
    assert pin.old_ref == pin.new_ref == str(new)
    (note,) = pin.findings
    assert (
        note.severity == "info"
        and "`CMakeLists.txt:3` fetched `v0.5.0` from https://github.com/ml-explore/mlx-c.git"
        in (note.detail)
    )
    (failed,) = check({**base, "MLX_VERSION": f"{new}\n".encode()}).failed
    assert failed.error == (
        f"MLX_VERSION names `{new}`, which CMakeLists.txt:3 fetches from "
        "https://github.com/ml-explore/mlx-c.git, not from https://github.com/ml-explore/mlx: set "
        "this pin's `upstream` in .github/llama-bot.toml"
    )


def test_a_reading_is_kept_with_the_answers_it_was_read_from(tmp_path, monkeypatch):
    """Another snapshot that answers the same (a pull request's base and head, a re-check) is not interpreted
    again; one whose CMake file, listed directory or version file's presence differs is."""
    from bot.cache import facts
    from bot.repos import buildpatches

    base = {**TODAY, "MLX_C_VERSION": b"c" * 40 + b"\n"}  # what the bump changes: a file the build reads
    store = facts.FactStore(tmp_path / "facts")
    with facts.using(store):
        found = {
            name: build_patches(MemorySnapshot(files)) for name, files in (("head", TODAY), ("base", base))
        }
        interpret = buildpatches._Interpreter
        monkeypatch.setattr(buildpatches, "_Interpreter", lambda _: pytest.fail("interpreted again"))
        assert build_patches(MemorySnapshot(TODAY)) == found["head"]
        assert build_patches(MemorySnapshot(base)) == found["base"]
        monkeypatch.setattr(buildpatches, "_Interpreter", interpret)
        moved = {**TODAY, "cmake/local.cmake": LOCAL_CMAKE.replace(b"0001-x", b"0003-y")}
        assert build_patches(MemorySnapshot(moved))[0].patches == ("mlx/compat/0003-y.patch",)
        gone = {k: v for k, v in TODAY.items() if k != "MLX_C_VERSION"}
        gone["MLX_C_VERSION.txt"] = b"same listing size\n"
        assert build_patches(MemorySnapshot(gone)) == []  # the version file the GIT_TAG is read from is gone
    assert store.hits == 2
