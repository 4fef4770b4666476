"""A `git fetch` into a mirror killed with SIGKILL halfway through its pack, then an analysis that succeeds;
the check alone killed, its git goes too; and a git that outlives its check keeps the mirror locked.

The upstream is a real local repository served by git itself; its pack-objects hook sends the first bytes
of the pack and then stalls, so the kill lands while the mirror's fetch is writing a pack.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.test_mirror_cli import _ollama, _source
from tests.test_sandbox import hanging_upstream, processes_reading

KILL_DEADLINE = 60.0  # seconds to wait for the fetch to start writing its pack before the test gives up


def _stalling_git(tmp_path: Path, seconds: int = 60) -> dict[str, str]:
    """An environment in which the upstream sends 64 bytes of its pack, then nothing for `seconds`, its pid
    in `stalled`. A pack of any size is kept as a pack (`fetch.unpackLimit`), as llama.cpp's always is."""
    hook = tmp_path / "stalling-pack-objects"
    hook.write_text(
        f'#!/bin/sh\n"$@" > "{tmp_path}/pack"\nhead -c 64 "{tmp_path}/pack"\n'
        f'echo $$ > "{tmp_path}/stalled"\nexec sleep {seconds}\n'
    )
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


def _writing(data: Path, killed: subprocess.Popen) -> None:
    """Wait until the check's fetch is writing its pack."""
    give_up = time.monotonic() + KILL_DEADLINE
    while not _half_written_pack(data) and killed.poll() is None and time.monotonic() < give_up:
        time.sleep(0.05)
    assert _half_written_pack(data), "the fetch never started writing its pack"


def _holding(path: Path) -> list[int]:
    """The processes (this one aside) with a file open under `path`: the mirror's writers and lock holders."""
    found = []
    for fds in Path("/proc").glob("[0-9]*/fd"):
        pid = int(fds.parent.name)
        try:
            if pid != os.getpid() and any(os.readlink(fd).startswith(f"{path}/") for fd in fds.iterdir()):
                found.append(pid)
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped yet does not)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _kill_every(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_fetch_killed_halfway_leaves_a_mirror_the_next_analysis_repairs(tmp_path):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    data = tmp_path / "data"
    killed = _check(tmp_path, data, _stalling_git(tmp_path))
    _writing(data, killed)
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


def test_a_check_killed_alone_takes_its_git_with_it(tmp_path):
    """kill -9 of the check's own process, not its group: the git it started (in a group of its own, in
    the analysis child) is gone at once with every process git started (the upstream's side, stalled
    without a write, would not notice), not left running without a time limit."""
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    data = tmp_path / "data"
    killed = _check(tmp_path, data, _stalling_git(tmp_path))
    _writing(data, killed)
    stalled = int((tmp_path / "stalled").read_text())
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate()
    give_up = time.monotonic() + 10
    while (_holding(data) or _alive(stalled)) and time.monotonic() < give_up:
        time.sleep(0.05)
    left = _holding(data) + [stalled] * _alive(stalled)
    _kill_every(left)
    assert left == [], "processes of the killed check's git still run"


def test_a_check_killed_alone_while_its_upstream_hangs_leaves_nothing_running(tmp_path):
    """The upstream's side of a local fetch blocked for good (git's upload-pack opening a FIFO): killed
    with the git that started it, as the shell leading git's process group kills the whole group."""
    stuck = hanging_upstream(tmp_path / "src" / "ggml-org" / "llama.cpp")
    _ollama(tmp_path / "ollama.git")
    killed = _check(tmp_path, tmp_path / "data")
    give_up = time.monotonic() + KILL_DEADLINE
    while not processes_reading(stuck) and killed.poll() is None and time.monotonic() < give_up:
        time.sleep(0.05)
    assert processes_reading(stuck), "the fetch never reached the upstream"
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate()
    give_up = time.monotonic() + 10
    while processes_reading(stuck) and time.monotonic() < give_up:
        time.sleep(0.05)
    left = processes_reading(stuck)
    _kill_every(left)
    assert left == [], "the upstream's side of the killed check's fetch still runs"


def _git_outliving_its_parent(tmp_path: Path) -> str:
    """A PATH whose `git` runs the real one in a session of its own and waits for it: killed, it leaves
    the real git running, as a helper of git's may outlive it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\nsetsid {shutil.which("git")} "$@" </dev/null >/dev/null 2>&1 &\nwait $!\n'
    )
    wrapper.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def test_a_restarted_check_leaves_alone_what_a_git_still_running_writes(tmp_path):
    """The first check is killed while its git, which outlives it, writes a pack into the mirror: the next
    check waits for that git to end (it holds the mirror's lock) before it removes what it left."""
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    data = tmp_path / "data"
    stalling = _stalling_git(tmp_path, seconds=8)
    killed = _check(tmp_path, data, {**stalling, "PATH": _git_outliving_its_parent(tmp_path)})
    _writing(data, killed)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate()
    writers = _holding(data)
    assert writers, "no git outlived the check"
    restarted = _check(tmp_path, data)
    while any(map(_alive, writers)):
        pack_there = bool(_half_written_pack(data))
        if not pack_there and any(map(_alive, writers)):
            _kill_every([*writers, restarted.pid])
            raise AssertionError("the restarted check removed the pack of a git still writing it")
        time.sleep(0.02)
    out, err = restarted.communicate()
    fresh_out, _ = _check(tmp_path, tmp_path / "fresh-data").communicate()
    assert json.loads(out) == json.loads(fresh_out), err
