"""`python -m bot serve` holds its secrets in its own memory alone: the forkserver, the analysis child and
every git they run see none of them (nor the database's URL), in their environment or their arguments."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import SECRET
from tests.test_service_restart import Served, serve_env, wait_until


def git_that_records(into: Path, bin_dir: Path) -> None:
    """A `git` first on PATH that writes down its environment and its parent's, then runs the real git."""
    bin_dir.mkdir()
    real = "/usr/bin/git" if os.path.exists("/usr/bin/git") else "git"
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'out="{into}/$$"\n'
        'env > "$out.env"\n'
        'cat "/proc/$PPID/environ" > "$out.parent" 2>/dev/null\n'
        'cat "/proc/$PPID/cmdline" >> "$out.parent" 2>/dev/null\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


async def test_no_process_the_service_starts_holds_a_secret(fake_github, scenario, database_url, tmp_path):
    seen = tmp_path / "seen"
    seen.mkdir()
    git_that_records(seen, tmp_path / "bin")
    secrets = {
        "webhook secret": SECRET,
        "private key": fake_github.private_key_pem.strip().splitlines()[1],  # a line of the key's body
        "database URL": database_url,
    }
    env = serve_env(fake_github, scenario, tmp_path / "var", DATABASE_URL=database_url)
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    served = await Served.start(env, tmp_path / "serve.log")
    try:
        assert (await served.deliver("pull_request", scenario.pull_event("opened")))[0] == 202

        async def finished() -> bool:
            return any(r["status"] == "completed" for r in scenario.check_runs())

        await wait_until(finished, timeout=120)
        started = descendants(served.process.pid)
        assert started, "the service started no process (the forkserver is one)"
        held = {pid: _environ(pid) for pid in started}
    finally:
        await served.stop()

    recorded = {p.name: p.read_bytes() for p in seen.iterdir()}
    assert any(name.endswith(".env") for name in recorded), "no git ran: nothing was checked"
    for what, value in secrets.items():
        for pid, environ in held.items():
            assert value.encode() not in environ, f"process {pid} under the service holds the {what}"
        for name, text in recorded.items():
            assert value.encode() not in text, f"a git run ({name}) or its parent held the {what}"
    for name, text in recorded.items():
        if name.endswith(".env"):
            assert b"GITHUB_" not in text, f"a git run ({name}) got the App's settings"


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return b""
