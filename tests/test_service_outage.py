"""A GitHub outage is ridden out: the job waits with backoff and finishes once GitHub is back.

The job store's clock is the test's: the backoff waits pass when the test moves it, so a minute of
outage takes a second or two, and nothing depends on how fast the machine is.
"""

import asyncio
import json
import os
import sys
import time

import aiohttp
import pytest
from gidgethub import HTTPException
from gidgethub.sansio import decipher_response

from bot.gh.retries import transient
from bot.render.env import MARKER
from bot.stores.jobs import Job
from bot.stores.sqlitejobs import SqliteJobQueue
from bot.worker.runner import JobBackoff, retry_in
from tests.conftest import ROOT, Bot, bot_settings
from tests.test_jobs import Clock

HOUR = JobBackoff()


async def waiting(bot: Bot, job_id: int, retries: int, timeout: float = 60.0) -> Job:
    """The job once it waits for retry number `retries + 1`, i.e. GitHub failed it `retries` times."""
    deadline = time.monotonic() + timeout
    while True:
        job = await bot.queue.get(job_id)
        assert job is not None
        if job.status == "queued" and job.retries == retries:
            return job
        assert job.status in ("queued", "running") and job.retries <= retries, job
        assert time.monotonic() < deadline, f"job never waited for retry {retries + 1}: {job}"
        await asyncio.sleep(0.02)


async def health(bot: Bot) -> dict:
    assert bot.session is not None
    async with bot.session.get(bot.url + "healthz") as resp:
        assert resp.status == 200
        return await resp.json()


async def jobs_command(data_dir, *args: str) -> list[dict]:
    """`python -m bot jobs ...` as an operator runs it next to the service."""
    done = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "jobs",
        *args,
        cwd=ROOT,
        env={**os.environ, "LLAMA_BOT_DATA_DIR": str(data_dir)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await done.communicate()
    assert done.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


@pytest.fixture
async def outage_bot(fake_github, scenario, tmp_path):
    clock = Clock(time.time())
    queue = SqliteJobQueue(tmp_path / "var" / "jobs.sqlite3", clock=clock)
    running = await Bot(
        bot_settings(fake_github, scenario, tmp_path / "var"), queue=queue, backoff=HOUR
    ).start()
    running.clock = clock  # type: ignore[attr-defined]
    yield running
    await running.close()


async def test_a_minute_of_outage_is_ridden_out_and_the_checklist_posted_once(outage_bot, scenario, tmp_path):
    bot, fake, clock = outage_bot, scenario.fake, outage_bot.clock
    assert (await health(bot))["status"] == "ok"
    fake.fail("*", r".", 503, times=10**6)  # GitHub answers every request with 503 ...
    status, answer = await bot.deliver("pull_request", scenario.pull_event("opened"))
    assert status == 202
    (job_id,) = answer["jobs"]
    started = clock.now
    job = await waiting(bot, job_id, retries=1)
    assert "503" in job.error and started < job.retry_at <= started + HOUR.first
    degraded = await health(bot)
    assert degraded["status"] == "degraded" and degraded["github"]["status"] == "failing"
    assert "GitHub answered 503" in degraded["github"]["last_error"]
    (shown,) = await jobs_command(tmp_path / "var", str(job_id))
    assert (shown["status"], shown["retries"], shown["retry_at"]) == ("queued", 1, job.retry_at)
    assert "503" in shown["error"]
    assert [j["id"] for j in await jobs_command(tmp_path / "var", "--status", "queued")] == [job_id]

    fake.clear_faults()
    await fake.go_offline()  # ... then does not answer at all
    while clock.now - started < 60:
        clock.now = job.retry_at
        job = await waiting(bot, job_id, retries=job.retries + 1)
        assert job.retry_at - clock.now <= HOUR.first * 2 ** (job.retries - 1)  # exponential, not faster
    assert job.retries >= 3 and "could not reach GitHub" in job.error
    degraded = await health(bot)
    assert degraded["status"] == "degraded" and "no answer" in degraded["github"]["last_error"]
    assert scenario.bot_comments() == [] and scenario.check_runs() == []

    await fake.go_online()
    clock.now = job.retry_at
    counts = await bot.settle()
    assert (counts["done"], counts["failed"], counts["queued"]) == (1, 0, 0)
    (comment,) = scenario.bot_comments()  # no new delivery, and the checklist came once
    assert comment["body"].startswith(MARKER) and "### Before merging" in comment["body"]
    assert [
        r["status"] for r in fake.requests if r["method"] == "POST" and r["path"].endswith("/comments")
    ] == [201]
    runs = scenario.check_runs(scenario.head_sha)
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}
    assert await health(bot) == {"status": "ok", "jobs": counts, "github": {"status": "ok"}}
    finished = await bot.queue.get(job_id)
    assert finished is not None and finished.error is None and finished.retry_at is None


async def test_a_job_is_failed_only_once_the_backoff_is_used_up(fake_github, scenario, tmp_path):
    clock = Clock(time.time())
    queue = SqliteJobQueue(tmp_path / "var" / "jobs.sqlite3", clock=clock)
    short = JobBackoff(first=10.0, cap=20.0, total=40.0)  # waits of 10, 20, 20: failed at the fourth failure
    bot = await Bot(bot_settings(fake_github, scenario, tmp_path / "var"), queue=queue, backoff=short).start()
    try:
        fake_github.fail("GET", r"/pulls/7$", 502, times=10**6)
        (job_id,) = (await bot.deliver("pull_request", scenario.pull_event("opened")))[1]["jobs"]
        for retries in (1, 2, 3):
            job = await waiting(bot, job_id, retries)
            clock.now = job.retry_at
        counts = await bot.settle()
        assert counts["failed"] == 1
        job = await queue.get(job_id)
        assert job is not None and job.retries == 3
        assert "GitHub answered 502" in job.error and "gave up after retrying 3 times" in job.error
    finally:
        await bot.close()


async def test_an_answer_that_would_be_the_same_next_time_is_not_retried(outage_bot, scenario):
    scenario.fake.fail("GET", r"/pulls/7$", 404, times=1)
    (job_id,) = (await outage_bot.deliver("pull_request", scenario.pull_event("opened")))[1]["jobs"]
    counts = await outage_bot.settle()
    job = await outage_bot.queue.get(job_id)
    assert counts["failed"] == 1 and job is not None and job.retries == 0 and "404" in job.error
    assert (await health(outage_bot))["status"] == "ok"  # GitHub answered: it is not down


def test_the_backoff_doubles_with_jitter_and_gives_up_after_about_an_hour():
    waits = [retry_in(HOUR, n, 0.0) for n in range(20)]
    longest = [retry_in(HOUR, n, 0.999999) for n in range(20)]
    tries = [w for w in waits if w is not None]
    assert tries[:4] == [HOUR.first / 2, HOUR.first, HOUR.first * 2, HOUR.first * 4]  # half of each step
    assert all(w is None for w in waits[len(tries) :])  # once given up, always given up
    assert max(w for w in longest if w is not None) < HOUR.cap
    assert 3000 < sum(w for w in longest if w is not None) < 4000  # up to about an hour in all
    assert sum(tries) * 2 == pytest.approx(sum(w for w in longest if w is not None), rel=1e-5)


def raised(status: int, message: str, **headers: str) -> Exception:
    """The exception gidgethub raises for this answer."""
    body = json.dumps({"message": message}).encode()
    try:
        decipher_response(status, {"content-type": "application/json", **headers}, body)
    except HTTPException as exc:
        return exc
    raise AssertionError(f"{status} raised nothing")


def test_only_outages_and_rate_limits_are_worth_retrying():
    exhausted = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000"}
    assert transient(aiohttp.ClientConnectionError("refused"))
    assert transient(TimeoutError())
    assert transient(raised(503, "Service Unavailable"))
    assert transient(raised(403, "API rate limit exceeded", **exhausted))
    assert transient(raised(429, "Too Many Requests"))
    assert transient(raised(403, "You have exceeded a secondary rate limit"))
    assert not transient(raised(403, "Resource not accessible by integration"))
    assert not transient(raised(404, "Not Found"))
    assert not transient(raised(422, "Validation Failed"))
    assert not transient(ValueError("a bug"))
