"""A `git fetch` into a mirror killed with SIGKILL halfway through its pack, then an analysis that succeeds.

The upstream is a real local repository served by git itself; its pack-objects hook sends the first bytes
of the pack and then stalls, so the kill lands while the mirror's fetch is writing a pack.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.test_mirror_cli import _ollama, _source

KILL_DEADLINE = 60.0  # seconds to wait for the fetch to start writing its pack before the test gives up


def _stalling_git(tmp_path: Path) -> dict[str, str]:
    """An environment in which the upstream sends 64 bytes of its pack, then nothing for a minute. A pack
    of any size is kept as a pack (`fetch.unpackLimit`), as llama.cpp's always is."""
    hook = tmp_path / "stalling-pack-objects"
    hook.write_text(f'#!/bin/sh\n"$@" > "{tmp_path}/pack"\nhead -c 64 "{tmp_path}/pack"\nsleep 60\n')
    hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n[fetch]\n\tunpackLimit = 1\n")
    return {"GIT_CONFIG_GLOBAL": str(config)}


def _check(tmp_path: Path, data: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            "--repo",
            str(tmp_path / "ollama.git"),
            "--base",
            "HEAD~1",
            "--format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill takes git and its helpers with it
        env={
            **os.environ,
            "LLAMA_BOT_DATA_DIR": str(data),
            "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/src/=https://github.com/",
            **(env or {}),
        },
    )


def _half_written_pack(data: Path) -> list[Path]:
    return list((data / "mirrors").glob("*.git/objects/pack/tmp_pack_*"))


def test_a_fetch_killed_halfway_leaves_a_mirror_the_next_analysis_repairs(tmp_path):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    data = tmp_path / "data"
    killed = _check(tmp_path, data, _stalling_git(tmp_path))
    give_up = time.monotonic() + KILL_DEADLINE
    while not _half_written_pack(data) and killed.poll() is None and time.monotonic() < give_up:
        time.sleep(0.05)
    assert _half_written_pack(data), "the fetch never started writing its pack"
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate()
    assert killed.returncode == -signal.SIGKILL

    out, err = _check(tmp_path, data).communicate()
    fresh_out, _ = _check(tmp_path, tmp_path / "fresh-data").communicate()
    assert json.loads(out) == json.loads(fresh_out)  # the same report as from a mirror never interrupted
    assert "creating a mirror" not in err and "updating the mirror" in err  # the mirror was kept, and fetched
    assert _half_written_pack(data) == []
    mirror = next((data / "mirrors").glob("*.git"))
    fsck = subprocess.run(
        ["git", "--git-dir", str(mirror), "fsck", "--connectivity-only"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr
