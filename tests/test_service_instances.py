"""Two service instances behind one webhook URL, sharing one PostgreSQL database (DATABASE_URL): any
instance takes deliveries, any worker takes jobs, and what a dead instance started another finishes."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid

import psycopg
import pytest

from bot.render.env import MARKER
from bot.stores.jobs import Job, JobRequest, pull_key
from bot.stores.pgstore import PostgresJobQueue, read_jobs
from tests.conftest import NAME, OWNER, Bot, bot_settings
from tests.test_service_e2e import runs_by_name
from tests.test_service_restart import Served, seconds_until_done, serve_env, wait_until

TAKEOVER_BOUND = 20.0  # seconds from the kill: a 12 s lease, a poll, the job itself; a 60 s lease misses it


@pytest.fixture
async def instances(fake_github, scenario, tmp_path, database_url):
    started = []
    for name in ("a", "b"):
        settings = dataclasses.replace(
            bot_settings(fake_github, scenario, tmp_path / name), database_url=database_url
        )
        started.append(await Bot(settings).start())
    yield started
    for bot in started:
        await bot.close()


async def _settle(*bots: Bot) -> None:
    for _ in range(2):  # a job one instance finished may let the other's next job run
        for bot in bots:
            await bot.settle()


async def test_deliveries_spread_over_two_instances_make_one_checklist(instances, scenario):
    first, second = instances
    opened = str(uuid.uuid4())
    assert (await first.deliver("pull_request", scenario.pull_event("opened"), delivery=opened))[0] == 202
    assert await second.deliver("pull_request", scenario.pull_event("opened"), delivery=opened) == (
        200,
        {"status": "duplicate"},
    )  # the redelivery reached the other instance
    new_sha = scenario.push({"README.md": "ollama, now with more words\n"})
    await second.deliver("pull_request", scenario.pull_event("synchronize"))
    await first.deliver("issue_comment", scenario.comment_event("/llama help"))
    await _settle(first, second)
    checklists = [c for c in scenario.bot_comments() if c["body"].startswith(MARKER)]
    assert len(checklists) == 1 and new_sha[:12] in checklists[0]["body"]
    runs = runs_by_name(scenario, new_sha)
    assert {r["status"] for r in runs.values()} == {"completed"} and len(runs) == 2
    replies = [c for c in scenario.bot_comments() if not c["body"].startswith(MARKER)]
    assert len(replies) == 1 and "/llama recheck" in replies[0]["body"]


async def test_the_job_of_a_dead_instance_is_finished_by_another(
    fake_github, scenario, tmp_path, database_url
):
    """An instance claimed the analysis and died (no renewal): once its lease is over, an instance started
    later runs it, and the pull request still gets exactly one checklist."""
    dead = await PostgresJobQueue.open(
        database_url, clock=lambda: time.time() - 120
    )  # its lease is long over
    payload = {
        "owner": OWNER,
        "repo": NAME,
        "number": scenario.number,
        "head_sha": scenario.head_sha,
        "installation_id": scenario.fake.installation_id,
        "reason": "pull_request.opened",
    }
    await dead.enqueue(
        "from-the-dead", "pull_request", [JobRequest("analysis", pull_key(OWNER, NAME, 7), payload)]
    )
    job = await dead.claim("dead-host:1:0")
    await dead.close()
    settings = dataclasses.replace(
        bot_settings(fake_github, scenario, tmp_path / "b"), database_url=database_url
    )
    living = await Bot(settings).start()
    try:
        await _settle(living)
        finished = await living.queue.get(job.id)
    finally:
        await living.close()
    assert (finished.status, finished.attempts) == ("done", 2)
    (comment,) = scenario.bot_comments()
    assert comment["body"].startswith(MARKER) and scenario.head_sha[:12] in comment["body"]


async def test_a_surviving_instance_finishes_a_killed_instances_job_within_seconds(
    fake_github, scenario, tmp_path, database_url
):
    """Two `serve` processes on one database; the one that claimed the analysis is killed mid-job. The other
    takes the job over once the dead one's short lease has lapsed: seconds, not a minute."""
    fake_github.delay(r"/git/trees/", 1.5)  # the killed run is still at work when it is killed
    served = {}
    for name in ("a", "b"):
        env = serve_env(fake_github, scenario, tmp_path / name, DATABASE_URL=database_url)
        served[name] = await Served.start(env, tmp_path / f"serve-{name}.log")
    try:
        status, answer = await served["a"].deliver("pull_request", scenario.pull_event("opened"))
        assert status == 202
        (job_id,) = answer["jobs"]

        async def job() -> Job:
            (found,) = await asyncio.to_thread(read_jobs, database_url, job_id=job_id)
            return found

        async def claimed() -> bool:
            return (await job()).status == "running"

        await wait_until(claimed)
        owner = (await asyncio.to_thread(_lease_owner, database_url, job_id)).split(":")[1]
        (victim,) = [s for s in served.values() if str(s.process.pid) == owner]
        (survivor,) = [s for s in served.values() if s is not victim]
        await victim.kill()
        killed_at = time.monotonic()
        fake_github.clear_delays()
        seconds = await seconds_until_done(job, killed_at, TAKEOVER_BOUND)
    finally:
        for instance in served.values():
            await instance.stop()
    print(f"job {job_id} finished by the surviving instance {seconds:.1f} s after the kill")
    assert survivor.process.returncode == 0 and (await job()).attempts == 2
    runs = scenario.check_runs()
    assert len(runs) == 2 and {r["status"] for r in runs} == {"completed"}  # the same runs, completed
    (comment,) = scenario.bot_comments()
    assert comment["body"].startswith(MARKER) and "### Before merging" in comment["body"]


def _lease_owner(url: str, job_id: int) -> str:
    """The worker holding the job's lease, `host:pid:n`."""
    with psycopg.connect(url) as db:
        row = db.execute("SELECT lease_owner FROM jobs WHERE id = %s", (job_id,)).fetchone()
    assert row is not None and row[0]
    return row[0]
