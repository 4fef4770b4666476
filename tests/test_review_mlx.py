"""MLX and mlx-c pins on Ollama's real MLX bumps, and the cross-pin rules on synthetic code."""

from __future__ import annotations

import pytest

from bot.config import parse_config
from bot.model import AnalysisError
from bot.render.checklist import render_markdown
from bot.review import api
from bot.review.cppapi import Use
from tests.gitutil import make_patch
from tests.mlxcases import MlxCase, mlx_case

PATCH = "mlx/compat/0001-mlx-c-regen-0.32.1.patch"
VENDORED = "x/mlxrunner/mlx/include/mlx/c"


@pytest.fixture(scope="module")
def broke(tmp_path_factory):
    return mlx_case(tmp_path_factory.mktemp("mlx"), "mlx-breaks-mlx-c")


def _highs(report, pin):
    return [f for f in report.pin(pin).findings if f.severity == "high"]


def test_the_mlx_bump_that_broke_mlx_c_names_each_changed_function_and_its_mlx_c_call(broke):
    """The excerpt's MLX moves in one commit: one cause, one item, which names every broken function."""
    base, first = broke.ollama("base"), broke.ollama("first-push")
    report = broke.check(base, first)
    assert [p.name for p in report.pins] == ["mlx"]
    (erase,) = _highs(report, "mlx")
    assert erase.title == (
        "mlx changed the signature of `mlx::core::detail::compile_erase` (new parameter "
        "`const CompileCacheWeakPtr& cache` before `fun_id`), which mlx-c still uses the old way"
    )
    assert "Before: `mlx::core::detail::compile_erase(std::uintptr_t fun_id)`" in erase.detail
    assert (
        "Now: `mlx::core::detail::compile_erase(const CompileCacheWeakPtr& cache, std::uintptr_t fun_id)`"
        in erase.detail
    )
    assert "`mlx-c:mlx/c/compile.cpp:54`" in erase.detail and "with 1 argument" in erase.detail
    assert erase.detail.startswith(f"mlx-c at `{broke.pin[:12]}` no longer compiles against the new mlx.")
    assert "Bump `MLX_C_VERSION`" in erase.detail and "carry a mlx-c patch" in erase.detail
    assert (erase.upstream_path, erase.upstream_line) == ("mlx/compile_impl.h", 36)
    # the same commit's other breaks, each with the parameter it gained
    assert "`mlx::core::detail::compile_clear_cache` (new parameter `const CompileCacheWeakPtr& cache`)" in (
        erase.detail
    )
    # a parameter inserted before the stream the old call passes last
    assert (
        "`mlx::core::fast::scaled_dot_product_attention` (new parameter `bool force_fused = …` before `s`)"
        in erase.detail
    )
    checklist = MlxCase.checklist(report, base, first)
    assert "1 high review item to check." in checklist
    assert "platform-mlx-metal" in checklist
    assert "llama/server" not in checklist and "id:platform-cuda -->" not in checklist
    assert "id:platform-metal -->" not in checklist


def docker_fixed(files: dict[str, bytes]) -> dict[str, bytes]:
    """The Dockerfile as the maintainers fixed it the day after the bump: its MLX stage copies the patch."""
    return {
        **files,
        "Dockerfile": files["Dockerfile"].replace(b"COPY cmake cmake\n", b"COPY cmake cmake\nCOPY mlx mlx\n"),
    }


def test_with_its_carried_mlx_c_patch_the_same_pr_is_found_checked_and_quiet(broke):
    report = broke.check(broke.ollama("base"), docker_fixed(broke.ollama("head")))
    assert [p.name for p in report.pins] == ["mlx", "mlx-c"]
    mlx_c = report.pin("mlx-c")
    assert [(p.path, p.status) for p in mlx_c.patches] == [(PATCH, "clean")]
    assert mlx_c.patch_source.startswith("from cmake/local.cmake:")
    assert _highs(report, "mlx") == [] and _highs(report, "mlx-c") == []


def test_a_vendored_header_the_patch_changed_but_ollama_did_not_refresh_is_a_high_item(broke):
    base, head = broke.ollama("base"), docker_fixed(broke.ollama("head"))
    stale = {**head, f"{VENDORED}/fast.h": base[f"{VENDORED}/fast.h"]}
    (drift,) = _highs(broke.check(base, stale), "mlx-c")
    assert drift.title == f"1 vendored mlx-c file in `{VENDORED}` differs from mlx-c at the new pin: `fast.h`"
    assert "+    bool force_fused," in drift.detail and "<details>" in drift.detail
    assert [(r.path, r.line) for r in drift.local_refs] == [(f"{VENDORED}/fast.h", 198)]


def test_a_later_mlx_only_bump_that_broke_nothing_has_no_high_finding(tmp_path):
    case = mlx_case(tmp_path, "mlx-quiet")
    report = case.check(case.ollama("base"), case.ollama("head"))
    assert [p.name for p in report.pins] == ["mlx"]
    assert _highs(report, "mlx") == []


def test_the_planned_layout_needs_no_configuration(broke):
    """mlx-c patches in mlx/compat/mlx-c/, MLX patches in mlx/compat/mlx/, the headers under mlx/."""

    def moved(files):
        out = {}
        for path, data in files.items():
            path = path.replace("mlx/compat/0001", "mlx/compat/mlx-c/0001").replace(
                "x/mlxrunner/mlx/", "mlx/"
            )
            if path == "cmake/local.cmake":
                data = data.replace(b"mlx/compat/0001", b"mlx/compat/mlx-c/0001").replace(
                    b"x/mlxrunner/mlx/", b"mlx/"
                )
            out[path] = data
        return out

    base, head = moved(broke.ollama("base")), moved(docker_fixed(broke.ollama("head")))
    fast = broke.mlx.files["mlx/fast.h"]
    head["mlx/compat/mlx/0001-mlx-note.patch"] = make_patch(
        fast, fast.replace(b"namespace", b"namespace /* ollama */", 1), "mlx/fast.h"
    )
    report = broke.check(base, head)
    assert [(p.path, p.status) for p in report.pin("mlx").patches] == [
        ("mlx/compat/mlx/0001-mlx-note.patch", "clean")
    ]
    assert [(p.path, p.status) for p in report.pin("mlx-c").patches] == [
        (PATCH.replace("compat/", "compat/mlx-c/"), "clean")
    ]
    # compile.h differs from the patched copy by blank lines only: the bindings are the same, no item
    blank = {**head, "mlx/include/mlx/c/compile.h": base["mlx/include/mlx/c/compile.h"]}
    assert _highs(broke.check(base, blank), "mlx-c") == []
    stale = {**blank, "mlx/include/mlx/c/fast.h": base["mlx/include/mlx/c/fast.h"]}
    (drift,) = _highs(broke.check(base, stale), "mlx-c")
    assert "`mlx/include/mlx/c`" in drift.title and drift.title.endswith(": `fast.h`")


# -- the rules, on synthetic declarations ------------------------------------------------------------

OLD = b"""namespace mlx::core {
MLX_API array sdpa(const array& q, float scale, StreamOrDevice s = {});
MLX_API void erase(std::uintptr_t id);
MLX_API int sum(const array& a);
MLX_API array qmm(array w, const char* name);
class MLX_API Gone { };
namespace detail { MLX_API void keep(int x); }
}
int mlx_c_call(int a);
"""
NEW = b"""namespace mlx::core {
MLX_API array sdpa(const array& q, float scale, bool fused = false, StreamOrDevice s = {});
MLX_API void erase(const Cache& cache, std::uintptr_t id);
MLX_API int sum(const array& a);
MLX_API int sum(const array& a, int axis);
MLX_API array qmm(const array& w, char* name);
namespace detail { MLX_API void keep(int renamed_parameter); }
}
int mlx_c_call(int a, int b);
"""


def _changes():
    return {c.name: c for c in api.api_changes({"mlx/ops.h": OLD}, {"mlx/ops.h": NEW})}


def test_only_removed_and_re_signed_declarations_are_changes():
    """An added overload and a renamed parameter change nothing a caller passes."""
    assert sorted(_changes()) == [
        "mlx::core::Gone",
        "mlx::core::erase",
        "mlx::core::qmm",
        "mlx::core::sdpa",
        "mlx_c_call",
    ]


@pytest.mark.parametrize(
    ("name", "use", "broken"),
    [
        ("mlx::core::erase", Use(1, "mlx::core::erase", 1), True),  # no new overload takes one argument
        ("mlx::core::erase", Use(1, "core::erase", 2), False),  # written for the new signature
        ("mlx::core::sdpa", Use(1, "mlx::core::sdpa", 3), True),  # the stream now binds to `bool fused`
        ("mlx::core::sdpa", Use(1, "mlx::core::sdpa", 2), False),  # passes only what did not move
        ("mlx::core::sdpa", Use(1, "mlx::core::sdpa", 4), False),  # passes the new parameter
        ("mlx::core::Gone", Use(1, "mlx::core::Gone", None), True),  # a type that is gone
        ("mlx_c_call", Use(1, "mlx_c_call", 1), True),  # a C function, unqualified
        ("mlx::core::qmm", Use(1, "mlx::core::qmm", 1), False),  # `array` and `const array&` take the same
        ("mlx::core::qmm", Use(1, "mlx::core::qmm", 2), True),  # a `const char*` does not bind to `char*`
    ],
)
def test_a_use_is_broken_when_it_compiled_against_the_old_declaration_and_no_longer_does(name, use, broken):
    assert api.breaks(_changes()[name], use) is broken


def test_only_qualified_names_or_c_functions_refer_to_a_declaration():
    """An unqualified call or a member call `.erase` could be anyone's (mlx-c calls std containers' too)."""
    consumer = api.ConsumerCode(
        "mlx-c",
        "mlx-c at `abc`",
        "Bump it.",
        {"mlx/c/a.cpp": b"void f() { erase(1); other::erase(1); set.erase(1); mlx::core::erase(1); }\n"},
    )
    broken = api.broken_uses(list(_changes().values()), consumer)
    assert [(u.path, u.use.name) for u in broken["mlx::core::erase"]] == [("mlx/c/a.cpp", "mlx::core::erase")]


def test_consumers_and_vendored_copies_are_checked_configuration():
    pin = '[[pin]]\nname = "a"\nversion_file = "A"\npatches = "p"\nupstream = "u"\n'
    with pytest.raises(
        AnalysisError, match=r"pin\[0\].consumers\[0\].pin: 'b' is not another configured pin"
    ):
        parse_config(pin + 'consumers = [{ pin = "b", sources = ["src/**"] }]\n')
    with pytest.raises(AnalysisError, match=r"pin\[0\].consumers\[0\]: missing key 'sources'"):
        parse_config(pin + 'consumers = [{ pin = "a" }]\n')
    with pytest.raises(AnalysisError, match=r"pin\[0\].vendored\[0\].copies: must name at least one path"):
        parse_config(pin + 'vendored = [{ upstream = "inc", copies = [] }]\n')
    (parsed,) = parse_config(pin + 'consumers = [{ sources = ["x/*.cpp"] }]\n').pins
    assert parsed.consumers[0].pin is None  # Ollama's own code


def test_mlx_cmake_options_and_build_requirements_are_weighed_against_what_ollama_sets(tmp_path):
    from bot.engine import analyse
    from bot.repos.snapshot import MemorySnapshot
    from bot.repos.upstream import Upstream
    from tests.fixtures import RepoBuilder

    mlx = RepoBuilder(tmp_path / "mlx.git")
    old = mlx.commit(
        "old", {"CMakeLists.txt": 'option(MLX_BUILD_METAL "Build Metal" ON)\noption(MLX_JIT "JIT" OFF)\n'}
    )
    # three upstream changes, one commit each: three causes, three items
    mlx.commit("drop MLX_JIT", {"CMakeLists.txt": 'option(MLX_BUILD_METAL "Build Metal" ON)\n'})
    mlx.commit(
        "add NAX",
        {
            "CMakeLists.txt": 'option(MLX_BUILD_METAL "Build Metal" ON)\noption(MLX_BUILD_NAX "NAX kernels" ON)\n'
        },
    )
    new = mlx.commit(
        "need CUDA",
        {
            "CMakeLists.txt": 'option(MLX_BUILD_METAL "Build Metal" ON)\noption(MLX_BUILD_NAX "NAX kernels" ON)\n'
            "find_package(CUDAToolkit 12.8 REQUIRED)\n"
        },
    )
    ollama = {"cmake/local.cmake": b'set(MLX_JIT ON CACHE BOOL "" FORCE)\n'}  # no mlx-c pin to check
    report = analyse(
        parse_config(None),
        MemorySnapshot({**ollama, "MLX_VERSION": f"{old}\n".encode()}),
        MemorySnapshot({**ollama, "MLX_VERSION": f"{new}\n".encode()}),
        lambda pin, refs: Upstream(mlx.repo, pin.upstream),
        ["MLX_VERSION"],
    )
    found = {(f.severity, f.title) for f in report.pin("mlx").findings}
    assert found == {
        ("high", "CMake option MLX_JIT was removed; Ollama still sets it"),
        ("medium", "New CMake option MLX_BUILD_NAX: decide its value"),
        ("medium", "New build dependency: package CUDAToolkit"),
    }
    # a consumer whose pin cannot be read is said once, and the producer's own review stands
    pinned = {**ollama, "MLX_C_VERSION": b"1" * 40 + b"\n"}
    report = analyse(
        parse_config(None),
        MemorySnapshot({**pinned, "MLX_VERSION": f"{old}\n".encode()}),
        MemorySnapshot({**pinned, "MLX_VERSION": f"{new}\n".encode()}),
        lambda pin, refs: Upstream(mlx.repo, pin.upstream),
        ["MLX_VERSION"],
    )
    (problem,) = report.pin("mlx").unchecked
    assert problem.startswith("mlx-c, which compiles against mlx's headers, against this bump: ")
    assert "1111111111" in problem
    assert len(report.pin("mlx").findings) == 3
    assert report.to_json()["pins"][0]["unchecked"] == [problem]
    verdict = render_markdown(report, ["MLX_VERSION"]).split("\n\n")[1]
    assert verdict.startswith("Not everything of **mlx** could be checked (see below)")
    assert "Nothing to do" not in render_markdown(report, ["MLX_VERSION"])


def test_ollama_go_code_calling_a_re_signed_c_function_through_cgo_is_a_consumer():
    old = b"int mlx_fast_sdpa(mlx_array* res, const mlx_array q, const mlx_stream s);\nint mlx_free(mlx_array a);\n"
    new = b"int mlx_fast_sdpa(mlx_array* res, const mlx_array q, bool fused, const mlx_stream s);\n"
    new += b"int mlx_free(mlx_array a);\n"
    go = b"""package mlx
// #include "generated.h"
import "C"

func SDPA(q *Array) *Array {
	C.mlx_free(q.ctx)
	C.mlx_fast_sdpa(&out.ctx, q.ctx, DefaultStream().ctx)
	return out
}
"""
    assert [(u.line, u.name, u.arguments) for u in api.cgo_uses(go)] == [
        (6, "mlx_free", 1),
        (7, "mlx_fast_sdpa", 3),
    ]
    changes = api.api_changes({"mlx/c/fast.h": old}, {"mlx/c/fast.h": new})
    ollama = api.ConsumerCode(
        "Ollama", "Ollama's code", "Update these calls in Ollama.", {"x/mlxrunner/mlx/fast.go": go}
    )
    (draft,) = api.consumer_drafts("mlx-c", changes, ollama, lambda path, line: line)
    assert (
        draft.title
        == "mlx-c changed the signature of `mlx_fast_sdpa` (new parameter `bool fused` before `s`), "
        "which Ollama still uses the old way"
    )
    assert "`Ollama:x/mlxrunner/mlx/fast.go:7` calls `mlx_fast_sdpa` with 3 arguments" in draft.detail
