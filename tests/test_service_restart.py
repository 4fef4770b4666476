"""`python -m bot serve` killed with SIGKILL in the middle of a job; the restarted service finishes it."""

import asyncio
import json
import os
import signal
import socket
import sys
import time
import uuid

import aiohttp

from bot.sqlitejobs import SqliteJobQueue
from tests.conftest import ROOT, SECRET, UPSTREAM_URL, Bot, bot_settings
from tests.fakegithub import sign


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_until(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


async def test_sigkill_mid_job_then_restart_completes_the_job(fake_github, scenario, tmp_path):
    data_dir, port = tmp_path / "var", free_port()
    env = {
        **os.environ,
        "GITHUB_APP_ID": str(fake_github.app_id),
        "GITHUB_PRIVATE_KEY": fake_github.private_key_pem,
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": fake_github.url,
        "LLAMA_BOT_DATA_DIR": str(data_dir),
        "LLAMA_BOT_URL_INSTEADOF": f"{scenario.upstream_path}={UPSTREAM_URL}",
        "LLAMA_BOT_WORKERS": "1",
    }
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    fake_github.delay(r"/git/trees/", 1.5)  # the job will sit in its tree listing when it is killed
    try:
        async with aiohttp.ClientSession() as session:

            async def healthy():
                try:
                    async with session.get(url + "/healthz") as resp:
                        return resp.status == 200
                except aiohttp.ClientError:
                    return False

            await wait_until(healthy)
            body = json.dumps(scenario.pull_event("opened")).encode()
            headers = {
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": str(uuid.uuid4()),
                "X-Hub-Signature-256": sign(body, SECRET),
                "Content-Type": "application/json",
            }
            async with session.post(url + "/webhook", data=body, headers=headers) as resp:
                assert resp.status == 202

            async def in_analysis():
                return any("/git/trees/" in r["path"] for r in fake_github.requests)

            await wait_until(in_analysis)
    finally:
        server.send_signal(signal.SIGKILL)
        await server.wait()
    assert server.returncode == -signal.SIGKILL
    assert [r["status"] for r in scenario.check_runs()] == ["in_progress", "in_progress"]

    # The restarted service; its clock is two minutes on, so the dead worker's lease has expired.
    queue = SqliteJobQueue(data_dir / "jobs.sqlite3", clock=lambda: time.time() + 120)
    restarted = Bot(bot_settings(fake_github, scenario, data_dir, workers=1), queue=queue)
    await restarted.start()
    try:
        await restarted.settle()
        job = await queue.get(1)
        assert (job.status, job.attempts) == ("done", 2)
    finally:
        await restarted.close()
    runs = scenario.check_runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}  # the same runs, completed
    (comment,) = scenario.bot_comments()
    assert "### Before merging" in comment["body"]
