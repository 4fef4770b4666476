"""llama-bot as a user installs it: a wheel built with `python -m build`, installed into a fresh virtual
environment, run from a directory outside the source tree. Its templates, rules, profiles and migrations
ship in the wheel, `--version` says which it is, and a check renders its checklist."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests import demo

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = (
    "bot/templates/checklist.md.j2",
    "bot/templates/workflow_dispatch.yml",
    "bot/review/data/profiles.toml",
    "bot/rules.toml",
    "bot/defaults.toml",
    "bot/app.yml",
    "bot/stores/migrations/001_jobs.sql",
)


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed (no source tree on its path); the dependencies are this
    environment's, seen through a path file (they are not what is tested, and CI installs nothing)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("bot", "handlers"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    built = _run(
        sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp / "dist", ".", cwd=source
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("llama_bot-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert [path for path in SHIPPED if path not in names] == []
    venv = tmp / "venv"
    assert _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp).returncode == 0
    python = venv / "bin" / "python"
    site = _run(
        python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        wheel,
        cwd=tmp,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return venv


def test_the_installed_wheel_is_what_runs_and_says_its_version(installed, tmp_path):
    where = _run(installed / "bin" / "python", "-c", "import bot; print(bot.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(installed)), where.stdout  # not the source tree
    for command in ([installed / "bin" / "python", "-m", "bot"], [installed / "bin" / "llama-bot"]):
        shown = _run(*command, "--version", cwd=tmp_path)
        assert (shown.returncode, shown.stdout) == (0, "llama-bot 0.1.0\n"), shown.stderr


def test_the_installed_wheel_renders_the_checklist_and_the_json_report(installed, tmp_path):
    scenario = demo.build(tmp_path / "demo")
    check = [installed / "bin" / "llama-bot", "check", "--repo", scenario.ollama]
    check += ["--upstream-dir", f"llama.cpp={scenario.upstream}"]
    markdown = _run(*check, cwd=tmp_path)
    assert markdown.returncode == 1, markdown.stderr  # a patch needs a change; no internal error
    assert "## 🦙 llama-bot: upstream bump checklist" in markdown.stdout
    report = _run(*check, "--format", "json", cwd=tmp_path)
    assert report.returncode == 1 and '"version": "0.1.0"' in report.stdout
