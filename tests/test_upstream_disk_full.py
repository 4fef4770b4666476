"""A full disk while a mirror is created or fetched into is one clear line, in the check run and on the CLI's
stderr (exit 2), never "internal error ... a bug", and names no server path: from git's stderr (a `git` that
says so, in front of the real one) and from libgit2's and our own writes (a full tmpfs, where one can be
mounted)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_mirror_cli import _ollama, _source

FULL = re.compile(
    r"llama-bot: llama\.cpp: no space left on the device holding LLAMA_BOT_DATA_DIR \([^)]+ free\)"
)


def _git_on_a_full_disk(tmp_path: Path) -> str:
    """A PATH whose `git` fails every fetch as git does on a full disk; the rest it leaves to the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do if [ "$arg" = fetch ]; then\n'
        "  echo 'error: cannot write the pack' >&2\n"
        "  echo 'fatal: write error: No space left on device' >&2\n"
        "  exit 128\n"
        "fi; done\n"
        f'exec {shutil.which("git")} "$@"\n'
    )
    wrapper.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def _check(tmp_path: Path, data: Path, **env: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "bot",
        "check",
        "--repo",
        str(tmp_path / "ollama.git"),
        "--base",
        "HEAD~1",
    ]
    return subprocess.run(
        [*command, "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "LLAMA_BOT_DATA_DIR": str(data),
            "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/src/=https://github.com/",
            **env,
        },
    )


def test_a_fetch_on_a_full_disk_is_one_clear_line_and_exit_2(tmp_path):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    done = _check(tmp_path, tmp_path / "data", PATH=_git_on_a_full_disk(tmp_path))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert FULL.fullmatch(line), line


@pytest.fixture
def full_tmpfs(tmp_path):
    """A 64 KiB tmpfs with no byte free, or a skip where none can be mounted (mounting needs root)."""
    mount = tmp_path / "data"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs to fill: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        with open(mount / "filler", "wb") as filler, pytest.raises(OSError):
            filler.write(bytes(1 << 20))
            filler.flush()
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_creating_a_mirror_on_a_full_disk_is_one_clear_line_not_a_bug(tmp_path, full_tmpfs):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    done = _check(tmp_path, full_tmpfs)
    assert done.returncode == 2
    assert "internal error" not in done.stderr and "a bug" not in done.stderr, done.stderr
    assert any(FULL.fullmatch(line) for line in done.stderr.splitlines()), done.stderr


async def test_the_check_run_says_the_disk_is_full_and_where_by_its_setting_only(
    bot, scenario, tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", _git_on_a_full_disk(tmp_path))
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (run,) = [r for r in scenario.check_runs(scenario.head_sha) if r["name"] == "llama.cpp: patches"]
    summary = run["output"]["summary"]
    assert "no space left on the device holding LLAMA_BOT_DATA_DIR (" in summary, summary
    assert str(tmp_path) not in summary
