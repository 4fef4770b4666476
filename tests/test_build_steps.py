"""The "Before merging" steps of the MLX pins, read from the tree at the head: Ollama's real MLX bumps on an
old base and on a recent one, the Go packages the mlx-c check covers, and the rules on synthetic trees."""

from __future__ import annotations

import json

from bot.build import presets
from bot.config import parse_config
from bot.engine import analyse
from bot.ollama import buildsteps, gobindings
from bot.render.steps import merge_steps
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.mlxcases import MlxCase, mlx_case


def _steps(case: MlxCase) -> tuple[dict[str, str], str]:
    base, first = case.ollama("base"), case.ollama("first-push")
    report = case.check(base, first)
    changed = sorted(p for p in set(base) | set(first) if base.get(p) != first.get(p))
    return {s.id: s.text for s in merge_steps(report, changed)}, MlxCase.checklist(report, base, first)


def test_on_an_old_base_the_steps_name_only_what_that_base_has(tmp_path):
    """534342e7e's base built MLX from the root project's `MLX` presets; both binding packages were
    generated from the vendored headers, and no target refreshed them."""
    steps, checklist = _steps(mlx_case(tmp_path, "mlx-new-library"))
    assert list(steps) == [
        "build-preset-mlx",
        "build-preset-mlx-cuda-12",
        "build-preset-mlx-cuda-13",
        "bindings",
        "go-test",
    ]
    assert steps["build-preset-mlx-cuda-13"].startswith(
        "Configure and build the `MLX CUDA 13` preset: `cmake --preset 'MLX CUDA 13' && "
        "cmake --build --preset 'MLX CUDA 13'`"
    )
    assert steps["bindings"] == (
        "Refresh the vendored mlx-c files in `x/mlxrunner/mlx/include/mlx/c` (copy mlx-c's `mlx/c/*.h` at the "
        "new pin); regenerate the Go bindings of `x/imagegen/mlx`, `x/mlxrunner/mlx` "
        "(`go generate ./x/imagegen/mlx ./x/mlxrunner/mlx`); commit what changed"
    )
    said = "\n".join(steps.values())
    for absent in ("MLX Metal", "ollama-mlx-vendor-headers", "ollama-mlx-backends", "OLLAMA_MLX_BACKENDS"):
        assert absent not in said
    assert steps["bindings"] in checklist


def test_on_a_recent_base_the_steps_follow_its_superbuild(tmp_path):
    steps, checklist = _steps(mlx_case(tmp_path, "mlx-breaks-mlx-c"))
    assert list(steps) == [
        "build-preset-mlx-metal",
        "build-ollama-mlx-backends-cuda-v13",
        "bindings",
        "go-test",
    ]
    assert steps["build-ollama-mlx-backends-cuda-v13"] == (
        "Build `OLLAMA_MLX_BACKENDS=cuda_v13`, which no preset builds: `cmake -S . -B "
        "build/ollama-mlx-backends-cuda_v13 -DOLLAMA_MLX_BACKENDS=cuda_v13 && cmake --build "
        "build/ollama-mlx-backends-cuda_v13 --target ollama-mlx-backends`"
    )
    assert "`cmake --build build --target ollama-mlx-vendor-headers`" in steps["bindings"]
    assert (
        "`go generate ./x/mlxrunner/mlx`, or `cmake --build build --target ollama-mlx-generate-wrappers`"
        in (steps["bindings"])
    )
    assert "x/imagegen/mlx" not in checklist and "MLX CUDA 13" not in "\n".join(steps.values())


# -- the rules, on synthetic trees -------------------------------------------------------------------

HEADER = b"int mlx_op(mlx_array* res, const mlx_array a);\n"
NEW_HEADER = b"int mlx_op(mlx_array* res, const mlx_array a, const mlx_stream s);\n"
OLLAMA = {
    "x/runner/mlx/include/mlx/c/ops.h": HEADER,
    "x/runner/mlx/mlx.go": b"package mlx\n\n//go:generate go run gen.go ./include/mlx/c/*.h\n\n"
    b'// #cgo CPPFLAGS: -I${SRCDIR}/include\n// #include "generated.h"\nimport "C"\n',
    "x/runner/mlx/generated.h": b'#include "mlx/c/ops.h"\n',
    "x/images/mlx/doc.go": b"package mlx\n\n//go:generate go run gen.go ../../runner/mlx/include/mlx/c mlx.h\n",
    "x/images/mlx/mlx.h": b'#include "mlx/c/ops.h"\n',
    "x/images/mlx/ops.go": b'package mlx\n\n// #include "mlx.h"\nimport "C"\n\nfunc Op(a *Array) {\n'
    b"\tC.mlx_op(&out.c, a.c)\n}\n",
    "x/other/c.go": b'package other\n\n// #cgo CFLAGS: -I${SRCDIR}/../..\nimport "C"\n',
    "x/other/c.h": b"int other(void);\n",
}
CONFIG = """
[[pin]]
name = "mlx-c"
version_file = "MLX_C_VERSION"
patches = "mlx/compat/mlx-c"
upstream = "https://github.com/ml-explore/mlx-c"
review = "mlx-c"
consumers = [{ sources = ["x/runner/mlx/**/*.go"] }]
vendored = [{ upstream = "mlx/c", files = "*.h", copies = ["x/runner/mlx/include/mlx/c"] }]
"""


def test_every_go_package_generated_from_or_compiled_against_the_copies_is_a_binding():
    found = gobindings.bindings(MemorySnapshot(OLLAMA), [("x/runner/mlx/include/mlx/c", "mlx/c")])
    # x/other's include root is the repository's: `mlx/c/...` does not resolve into the copies from it
    assert [(b.directory, b.generates) for b in found] == [("x/images/mlx", True), ("x/runner/mlx", True)]


def test_the_go_calls_checked_against_mlx_c_cover_every_binding_package(tmp_path):
    mlx_c = RepoBuilder(tmp_path / "mlx-c.git")
    old = mlx_c.commit("v1", {"mlx/c/ops.h": HEADER})
    new = mlx_c.commit("streams", {"mlx/c/ops.h": NEW_HEADER})
    head = {**OLLAMA, "x/runner/mlx/include/mlx/c/ops.h": NEW_HEADER}
    report = analyse(
        parse_config(CONFIG),
        MemorySnapshot({**OLLAMA, "MLX_C_VERSION": f"{old}\n".encode()}),
        MemorySnapshot({**head, "MLX_C_VERSION": f"{new}\n".encode()}),
        lambda pin, refs: Upstream(mlx_c.repo, pin.upstream),
        ["MLX_C_VERSION"],
    )
    (broken,) = [f for f in report.pin("mlx-c").findings if f.severity == "high"]
    assert "`Ollama:x/images/mlx/ops.go:7` calls `mlx_op` with 2 arguments" in broken.detail
    steps = {sid: text for sid, text in report.pin("mlx-c").build_steps or []}
    assert "(`go generate ./x/images/mlx ./x/runner/mlx`)" in steps["bindings"]


PRESETS = {
    "configurePresets": [
        {
            "name": "Default",
            "binaryDir": "${sourceDir}/out",
            "cacheVariables": {"CMAKE_BUILD_TYPE": "Release"},
        },
        {"name": "Lib base", "hidden": True, "inherits": "Default", "cacheVariables": {"LIB_BACKENDS": "a"}},
        {
            "name": "Lib",
            "inherits": ["Lib base"],
            "cacheVariables": {"LIB_FAST": {"type": "BOOL", "value": True}},
        },
        {"name": "Other", "inherits": "Default"},
    ],
    "buildPresets": [
        {"name": "Lib", "configurePreset": "Lib", "targets": ["lib-all"]},
        {"name": "Other", "configurePreset": "Other", "targets": "other"},
        {"name": "Hidden lib", "hidden": True, "configurePreset": "Lib"},
    ],
}
LOOP = """
foreach(_b IN LISTS LIB_BACKENDS)
  if(_b STREQUAL "a")
    add_subdirectory(a)
  elseif("${_b}" STREQUAL "b")
    add_subdirectory(b)
  elseif(_b STREQUAL "c")
  endif()
endforeach()
"""


def test_presets_inherit_cache_variables_and_the_pin_s_build_presets_are_chosen_by_its_project_word():
    tree = MemorySnapshot(
        {
            "CMakePresets.json": json.dumps(PRESETS).encode(),
            "cmake/lib.cmake": LOOP.encode(),
            "nested/CMakePresets.json": json.dumps({"buildPresets": [{"name": "lib-nested"}]}).encode(),
        }
    )
    (lib,) = [p for p in presets.configure_presets(tree, "CMakePresets.json") if p.name == "Lib"]
    assert lib.cache == {"CMAKE_BUILD_TYPE": "Release", "LIB_BACKENDS": "a", "LIB_FAST": "ON"}
    assert lib.binary_dir == "${sourceDir}/out"
    (pin,) = parse_config(
        '[[pin]]\nname = "lib-c"\nversion_file = "V"\npatches = "p"\nupstream = "u"\nreview = "none"\n'
    ).pins
    chosen = buildsteps.pin_presets(tree, pin)
    assert [p.name for p in chosen] == ["Lib"]  # the top-level file's; `Other` names no `lib`
    assert buildsteps.list_values(tree, "LIB_BACKENDS") == ["a", "b", "c"]
    steps = buildsteps.derived_steps(tree, pin, parse_config(None))
    assert [s.text for s in steps] == [
        (
            "Configure and build the `Lib` preset: `cmake --preset Lib && cmake --build --preset Lib` "
            "(sets `LIB_BACKENDS=a`, `LIB_FAST=ON`; target `lib-all`)"
        ),
        (
            "Build `LIB_BACKENDS=b`, which no preset builds: `cmake -S . -B build/lib-backends-b -DLIB_BACKENDS=b "
            "&& cmake --build build/lib-backends-b --target lib-all`"
        ),
        (
            "Build `LIB_BACKENDS=c`, which no preset builds: `cmake -S . -B build/lib-backends-c -DLIB_BACKENDS=c "
            "&& cmake --build build/lib-backends-c --target lib-all`"
        ),
    ]
    nested_only = MemorySnapshot({"nested/CMakePresets.json": json.dumps(PRESETS).encode()})
    (step,) = [s.text for s in buildsteps.derived_steps(nested_only, pin, parse_config(None))]
    assert "`(cd nested && cmake --preset Lib && cmake --build --preset Lib)`" in step
    assert (
        buildsteps.derived_steps(MemorySnapshot({"CMakePresets.json": b"{not json"}), pin, parse_config(None))
        == []
    )
