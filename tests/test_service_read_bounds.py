"""A fork's pull request adding a 95 MB CMake file (100 kB on the wire) next to a llama.cpp bump, checked by
`python -m bot serve`: the service does not read the file, says so on the pull request, and its memory
stays where it was.

The service runs as its own process so that its memory is its own: the fake GitHub, which builds what it
serves in this process, is not counted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.stores.sqlitejobs import DB_NAME, read_jobs
from tests.conftest import Scenario
from tests.fakegithub import FakeGitHub
from tests.test_service_restart import Served, serve_env, wait_until

HUGE_PATH = "cmake/huge.cmake"
HUGE_BYTES = 95 << 20
# 95 MB of comment lines: gzip takes them to some 100 kB, and they parse as CMake
HUGE_CMAKE = (b"# " + b"x" * 77 + b"\n") * (HUGE_BYTES // 80)
FINISHED = ("done", "failed", "superseded")
PEAK_GROWTH_MB = 50  # what the service's peak RSS may pass its size after a first analysis by


def memory_kb(pid: int, field: str) -> int:
    """A `Vm*` line of /proc/<pid>/status, in kB."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in lines if line.startswith(f"{field}:"))


def reset_peak(pid: int) -> None:
    """The process's peak RSS (VmHWM) back to its RSS now (proc(5), clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


async def analysed(served: Served, data_dir: Path, scenario: Scenario, event: str) -> None:
    """Deliver a pull_request event and wait until its jobs have finished."""
    status, answer = await served.deliver("pull_request", scenario.pull_event(event))
    assert status == 202, answer

    async def finished() -> bool:
        return all(read_jobs(data_dir / DB_NAME, job_id=j)[0].status in FINISHED for j in answer["jobs"])

    await wait_until(finished, timeout=240)


@pytest.mark.timeout(300)
async def test_a_95_mb_file_is_not_read_and_the_service_memory_stays_flat(
    fake_github: FakeGitHub, scenario: Scenario, tmp_path: Path
):
    data_dir = tmp_path / "var"
    served = await Served.start(serve_env(fake_github, scenario, data_dir), tmp_path / "serve.log")
    try:
        await analysed(served, data_dir, scenario, "opened")  # the warm-up: imports, the mirror, caches
        pid = served.process.pid
        idle_kb = memory_kb(pid, "VmRSS")
        reset_peak(pid)
        head = scenario.push({HUGE_PATH: HUGE_CMAKE}, message="cmake: a large file")
        await analysed(served, data_dir, scenario, "synchronize")
        peak_kb = memory_kb(pid, "VmHWM")
    finally:
        await served.stop()
    growth_mb = (peak_kb - idle_kb) / 1024
    print(
        f"service RSS after the first analysis {idle_kb / 1024:.0f} MB, peak with {HUGE_PATH} {peak_kb / 1024:.0f} MB"
    )

    runs = scenario.check_runs(head)
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}
    said = [f"{r['output']['title']}\n{r['output']['summary']}" for r in runs]
    (comment,) = scenario.bot_comments()
    for text in [*said, comment["body"]]:
        assert f"{HUGE_PATH} is 95 MiB, over the 8 MiB llama-bot reads of one file" in text, text
    assert growth_mb < PEAK_GROWTH_MB, f"the service's peak RSS grew by {growth_mb:.0f} MB"
