"""`python -m bot serve` killed with SIGKILL in the middle of a job; the restarted service finishes it, at once:
the SQLite store belongs to one instance, so what it finds running at start was its own, killed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

from bot.stores.jobs import Job
from bot.stores.sqlitejobs import DB_NAME, read_jobs
from tests.conftest import ROOT, SECRET, UPSTREAM_URL, Bot, Scenario, bot_settings
from tests.fakegithub import FakeGitHub, sign

RESTART_BOUND = 20.0  # seconds; a restart that waited out the 60 s lease of the killed claim misses it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_until(predicate: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, f"condition not reached in {timeout:.0f} s"
        await asyncio.sleep(0.05)


def serve_env(fake: FakeGitHub, scenario: Scenario, data_dir: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "LLAMA_BOT_", "DATABASE_"))}
    return {
        **env,
        "GITHUB_APP_ID": str(fake.app_id),
        "GITHUB_PRIVATE_KEY": fake.private_key_pem,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": fake.url,
        "LLAMA_BOT_DATA_DIR": str(data_dir),
        "LLAMA_BOT_URL_INSTEADOF": f"{scenario.upstream_path}={UPSTREAM_URL}",
        "LLAMA_BOT_WORKERS": "1",
        **more,
    }


class Served:
    """One `python -m bot serve` child on a loopback port; its output in `log`."""

    def __init__(self, process: asyncio.subprocess.Process, url: str, log: Path):
        self.process, self.url, self.log = process, url, log

    @classmethod
    async def start(cls, env: dict[str, str], log: Path) -> Served:
        port = free_port()
        with open(log, "wb") as out:  # noqa: ASYNC230 - the child writes it
            process = await asyncio.create_subprocess_exec(
                *(sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)),
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=out,
            )
        served = cls(process, f"http://127.0.0.1:{port}", log)
        async with aiohttp.ClientSession() as session:

            async def healthy() -> bool:
                assert process.returncode is None, f"serve exited: {log.read_text()[-2000:]}"
                try:
                    async with session.get(served.url + "/healthz") as resp:
                        return resp.status == 200
                except aiohttp.ClientError:
                    return False

            await wait_until(healthy, timeout=60)
        return served

    async def deliver(self, event: str, data: dict) -> tuple[int, dict]:
        body = json.dumps(data).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, SECRET),
            "Content-Type": "application/json",
        }
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.url + "/webhook", data=body, headers=headers) as resp,
        ):
            return resp.status, await resp.json()

    async def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                await self.kill()


async def seconds_until_done(job: Callable[[], Awaitable[Job]], since: float, bound: float) -> float:
    """Seconds from `since` (monotonic) until `job` reads done; fails once `bound` seconds have passed."""
    while (await job()).status != "done":
        assert time.monotonic() - since < bound, f"the job was not done {bound:.0f} s on: {await job()}"
        await asyncio.sleep(0.05)
    return time.monotonic() - since


async def test_a_service_killed_right_after_a_delivery_redoes_the_job_at_once_when_restarted(
    fake_github, scenario, tmp_path
):
    """SIGKILL as soon as the delivery's job is claimed; `serve` again on the same data dir finishes that job
    within seconds, not once the dead worker's 60 s lease has run out."""
    data_dir = tmp_path / "var"
    env = serve_env(fake_github, scenario, data_dir)
    fake_github.delay(r"/git/trees/", 1.5)  # the killed run is still at work when it is killed
    first = await Served.start(env, tmp_path / "serve-1.log")
    try:
        status, answer = await first.deliver("pull_request", scenario.pull_event("opened"))
        assert status == 202
        (job_id,) = answer["jobs"]

        async def job() -> Job:
            (found,) = read_jobs(data_dir / DB_NAME, job_id=job_id)
            return found

        async def claimed() -> bool:
            return (await job()).status == "running"

        await wait_until(claimed)
    finally:
        await first.kill()
    assert (await job()).status == "running"  # the kill left it claimed by a worker that is gone
    fake_github.clear_delays()

    restarted_at = time.monotonic()
    second = await Served.start(env, tmp_path / "serve-2.log")
    try:
        seconds = await seconds_until_done(job, restarted_at, RESTART_BOUND)
    finally:
        await second.stop()
    print(f"job {job_id} finished {seconds:.1f} s after the restart")
    assert (await job()).attempts == 2
    runs = scenario.check_runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}  # the same runs, completed
    (comment,) = scenario.bot_comments()
    assert "### Before merging" in comment["body"]


async def test_sigkill_mid_job_then_restart_completes_the_job(fake_github, scenario, tmp_path):
    data_dir = tmp_path / "var"
    fake_github.delay(r"/git/trees/", 1.5)  # the job will sit in its tree listing when it is killed
    server = await Served.start(serve_env(fake_github, scenario, data_dir), tmp_path / "serve.log")
    try:
        assert (await server.deliver("pull_request", scenario.pull_event("opened")))[0] == 202

        async def in_analysis():
            return any("/git/trees/" in r["path"] for r in fake_github.requests)

        await wait_until(in_analysis)
    finally:
        await server.kill()
    assert server.process.returncode == -signal.SIGKILL
    assert [r["status"] for r in scenario.check_runs()] == ["in_progress", "in_progress"]

    # The restarted service, on the same clock: the job the killed worker held is taken back at start.
    restarted = Bot(bot_settings(fake_github, scenario, data_dir, workers=1))
    await restarted.start()
    try:
        await restarted.settle()
        job = await restarted.queue.get(1)
        assert (job.status, job.attempts) == ("done", 2)
    finally:
        await restarted.close()
    runs = scenario.check_runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}  # the same runs, completed
    (comment,) = scenario.bot_comments()
    assert "### Before merging" in comment["body"]
