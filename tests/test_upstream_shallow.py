"""Upstream history the bot cannot trust: a shallow clone given with `--upstream-dir` cuts the commits
between the refs, so their count, the reverts and the attribution would be wrong without a word. It is
refused with one line; the checklist's reproduce block fetches a blobless clone instead, which the CLI
takes. Real git repositories, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.model import PatchResult, PinReport
from bot.render.patches import reproduce_steps
from tests.test_upstream_partial import PATCHES, _ollama, _upstream

ROOT = Path(__file__).resolve().parents[1]


def _check(ollama: Path, upstream_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", "check", "--repo", str(ollama), "--base", "HEAD~1", "--format", "json"]
        + ["--upstream-dir", f"llama.cpp={upstream_dir}", "--quiet"],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "LLAMA_BOT_CACHE_DIR": str(upstream_dir.parent / "cache")},
        timeout=120,
    )


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_shallow_clone_is_refused_with_one_line_saying_how_to_fix_it(tmp_path):
    src = _upstream(tmp_path / "src.git")
    shallow = tmp_path / "shallow"
    shallow.mkdir()
    _git("init", "-q", cwd=shallow)
    _git("fetch", "-q", "--depth", "1", f"file://{src.path}", "tag", "v1", "tag", "v2", cwd=shallow)
    done = _check(_ollama(tmp_path / "ollama"), shallow)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"llama-bot: llama.cpp: --upstream-dir {shallow} is a shallow clone: ")
    assert "its history from v1 to v2 stops at" in line and "git fetch --unshallow" in line
    assert "Traceback" not in done.stderr


def test_the_reproduce_blocks_fetch_gives_a_clone_the_check_takes(tmp_path):
    """The block's own fetch steps, run as written (in a scratch directory) against a local upstream: the
    clone is not shallow, and the check on it reports what it reports on the full repository."""
    src = _upstream(tmp_path / "src.git")
    ollama = _ollama(tmp_path / "ollama")
    full = _check(ollama, src.path)
    assert full.returncode == 1, full.stderr
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "v1", "v2", compare_url=f"file://{src.path}/compare/v1...v2"
    )
    pin.patches = [PatchResult(path, "conflict", "") for path in PATCHES]
    steps = reproduce_steps(pin)
    fetch = steps[1 : next(i for i, s in enumerate(steps) if s.startswith("git fetch")) + 1]
    assert not any("--depth" in s or "clone" in s for s in steps)
    work = "/tmp/llama.cpp-v2"
    assert fetch[0] == f"git init -q {work} && cd {work}"
    script = "\n".join(fetch).replace(work, str(tmp_path / "work"))
    subprocess.run(["bash", "-euc", script], cwd=tmp_path, check=True, capture_output=True, timeout=60)

    fetched = _check(ollama, tmp_path / "work")

    assert fetched.returncode == 1, fetched.stderr
    assert json.loads(fetched.stdout) == json.loads(full.stdout)
