"""One item per upstream cause on the MLX pins, signature findings that name the parameter, vendored copies
with their upstream commits, and `check --fail-on high` on Ollama's real MLX bump."""

from __future__ import annotations

import subprocess
import sys

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Commit
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from bot.review import api, vendored
from bot.review.cppapi import Declared
from tests.fixtures import RepoBuilder
from tests.mlxcases import mlx_case

NAMES = [f"mlx_op{n}" for n in range(12)]


def _header(resigned: set[str], other_resigned: bool) -> bytes:
    lines = [
        f"int {name}(mlx_array* res, const mlx_array a{', const mlx_stream s' if name in resigned else ''});"
        for name in NAMES
    ]
    lines.append(f"int mlx_other(mlx_array* res{', int axis' if other_resigned else ''});")
    return ("\n".join(lines) + "\n").encode()


GO = (
    'package mlx\n\n// #include "generated.h"\nimport "C"\n\nfunc Ops(a *Array) {\n'
    + "".join(f"\tC.{name}(&out.ctx, a.ctx)\n" for name in NAMES)
    + "\tC.mlx_other(&out.ctx)\n}\n"
)


def test_one_upstream_commit_that_re_signs_twelve_functions_is_one_item(tmp_path):
    mlx_c = RepoBuilder(tmp_path / "mlx-c.git")
    old = mlx_c.commit("v1", {"mlx/c/ops.h": _header(set(), False)})
    mlx_c.commit("streams everywhere", {"mlx/c/ops.h": _header(set(NAMES), False)})
    new = mlx_c.commit("an axis for mlx_other", {"mlx/c/ops.h": _header(set(NAMES), True)})
    ollama = {"x/mlxrunner/mlx/ops.go": GO.encode()}
    report = analyse(
        parse_config(None),
        MemorySnapshot({**ollama, "MLX_C_VERSION": f"{old}\n".encode()}),
        MemorySnapshot({**ollama, "MLX_C_VERSION": f"{new}\n".encode()}),
        lambda pin, refs: Upstream(mlx_c.repo, pin.upstream),
        ["MLX_C_VERSION"],
    )
    highs = [f for f in report.pin("mlx-c").findings if f.severity == "high"]
    assert len(highs) == 2
    streams, axis = sorted(highs, key=lambda f: len(f.detail), reverse=True)
    assert [c.subject for c in streams.upstream_commits] == ["streams everywhere"]
    assert streams.title.startswith("mlx-c changed the signature of `mlx_op")
    assert streams.title.endswith("(new parameter `const mlx_stream s`), which Ollama still uses the old way")
    assert streams.detail.count("(new parameter `const mlx_stream s`)") == 11  # the other eleven, listed
    assert axis.title == (
        "mlx-c changed the signature of `mlx_other` (new parameter `int axis`), which Ollama still uses the old way"
    )


def _declared(parameters: tuple[str, ...], names: tuple[str, ...]) -> Declared:
    return Declared(1, "function", "f", "", parameters, parameter_names=names)


def test_a_signature_change_names_each_parameter_and_its_old_and_new_type():
    before = _declared(("const array&", "int", "StreamOrDevice="), ("a", "axis", "s"))
    after = _declared(("const array&", "long", "bool=", "StreamOrDevice="), ("a", "axis", "keepdims", "s"))
    assert api.parameter_changes(before, after) == [
        "parameter `axis`: `int` became `long`",
        "new parameter `bool keepdims = …` before `s`",
    ]
    gone = _declared(("const array&",), ("a",))
    assert api.parameter_changes(before, gone) == [
        "parameter `int axis` removed",
        "parameter `StreamOrDevice s = …` removed",
    ]
    unnamed = api.parameter_changes(
        _declared(("int", "float"), ("", "")), _declared(("int", "double"), ("", ""))
    )
    assert unnamed == ["parameter 2: `float` became `double`"]


def test_the_vendored_item_skips_whitespace_only_copies_and_lists_the_upstream_commits():
    changed = [
        vendored.Copy("a.h", "mlx/c/a.h", b"int a(int x);\n", b"int a(void);\n"),
        vendored.Copy("b.h", "mlx/c/b.h", b"int b(void);\n\nint c(void);\n", b"int b(void);\nint c(void);\n"),
    ]
    commits = {
        "mlx/c/a.h": [Commit("1" * 40, "change a", "u/commit/1"), Commit("2" * 40, "again", "u/commit/2")]
    }
    finding = vendored.drift_finding("mlx-c", "inc/mlx/c", changed, lambda path: commits.get(path, []))
    assert finding is not None
    assert finding.title == "1 vendored mlx-c file in `inc/mlx/c` differs from mlx-c at the new pin: `a.h`"
    assert [c.subject for c in finding.upstream_commits] == ["change a", "again"]
    assert vendored.drift_finding("mlx-c", "inc/mlx/c", changed[1:]) is None


def test_check_fail_on_high_counts_the_mlx_items(tmp_path):
    """#17850's first push: mlx-c at its pin no longer compiles, a high item; a CI gating on high fails."""
    case = mlx_case(tmp_path, "mlx-breaks-mlx-c")
    ollama = RepoBuilder(tmp_path / "ollama.git")
    base = ollama.commit("base", case.ollama("base"))
    head = ollama.commit("mlx update", case.ollama("first-push"))

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "bot",
                "check",
                "--repo",
                str(ollama.path),
                "--base",
                str(base),
                "--head",
                str(head),
                "--upstream-dir",
                f"mlx={case.mlx.path}",
                "--upstream-dir",
                f"mlx-c={case.mlx_c.path}",
                *extra,
            ],
            capture_output=True,
            text=True,
            check=False,
        )

    assert check().returncode == 0, check().stderr  # every patch applies: the default gate passes
    gated = check("--fail-on", "high")
    assert gated.returncode == 1, gated.stderr
    assert "no longer compiles against the new mlx" in gated.stdout
