"""`make demo` as a newcomer runs it: the checklist, the rebuilt patches in ./demo-out, nothing left behind."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import bot
from tests import demo

SOURCE_ROOT = Path(bot.__file__).resolve().parent.parent


def run(command: list[str], cwd: Path, tmpdir: Path) -> subprocess.CompletedProcess:
    """Run with temporary files under `tmpdir`, importing this checkout's `bot` whatever the cwd."""
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(SOURCE_ROOT)}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def run_demo(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return run([sys.executable, "-m", "tests.demo", *args], tmp_path, tmpdir), tmpdir


def test_demo_writes_the_rebuilt_patches_to_demo_out_and_removes_its_repositories(tmp_path):
    result, tmpdir = run_demo(tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "demo-out"
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert written == [
        "llama",
        "llama/compat",
        "llama/compat/0003-clip-hooks.patch",
        "llama/compat/0004-clip-embd.patch",
    ]
    assert f"Rebuilt patches (regenerated, fuzzy) go to {out}." in result.stdout
    assert f"### llama.cpp: `{demo.OLD_TAG}` → `{demo.NEW_TAG}`" in result.stdout
    assert (
        f"python -m bot check exited 1: some patch needs a change; the rebuilt ones are in {out}"
        in result.stdout
    )
    assert list(tmpdir.iterdir()) == []
    assert "Removed the sample repositories" in result.stdout


def test_demo_keep_leaves_repositories_the_printed_command_runs_on(tmp_path):
    result, tmpdir = run_demo(tmp_path, "--keep")
    assert result.returncode == 0, result.stderr
    (kept,) = tmpdir.iterdir()
    assert sorted(p.name for p in kept.iterdir()) == ["llama.cpp.git", "ollama"]
    assert f"The sample repositories stay in {kept}: remove it when done." in result.stdout
    (shown,) = [line.removeprefix("$ ") for line in result.stdout.splitlines() if line.startswith("$ ")]
    again = run(shlex.split(shown), tmp_path, tmpdir)
    assert again.returncode == 1, again.stderr
    assert again.stdout.startswith("## 🦙 llama-bot: upstream bump checklist")


def test_demo_refuses_an_unknown_option_in_one_line_before_building_anything(tmp_path):
    result, tmpdir = run_demo(tmp_path, "--kep")
    assert result.returncode == 2
    assert result.stderr == "python -m tests.demo: unrecognized arguments: --kep\n"
    assert list(tmpdir.iterdir()) == [] and not (tmp_path / "demo-out").exists()
