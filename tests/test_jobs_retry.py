"""Jobs that wait to be retried, and job stores an older version wrote."""

import sqlite3
from pathlib import Path

import pytest

from bot.stores.jobs import JobRequest
from bot.stores.sqlitejobs import SqliteJobQueue, read_jobs
from tests.test_jobs import Clock

OLD_STORE = Path(__file__).parent / "data" / "jobs-before-retries.sql"
RETRY_EPOCH = 1_700_000_120.0  # a minute after the old store's newest job


@pytest.fixture
async def clock():
    return Clock(RETRY_EPOCH)


@pytest.fixture
async def queue(tmp_path, clock):
    q = SqliteJobQueue(tmp_path / "jobs.sqlite3", lease_seconds=30, clock=clock)
    yield q
    await q.close()


def analysis(key="o/r#1"):
    return JobRequest("analysis", key, {"head_sha": "a" * 40}, supersedes=True)


async def test_a_job_put_back_waits_until_its_time_then_runs_again(queue, clock):
    (job_id,) = await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("w1")
    assert await queue.retry(job.id, "w1", 15.0, "GitHub answered 503 Service Unavailable")
    waiting = await queue.get(job_id)
    assert (waiting.status, waiting.retries, waiting.retry_at) == ("queued", 1, clock.now + 15.0)
    assert waiting.error == "GitHub answered 503 Service Unavailable"
    assert await queue.claim("w2") is None
    clock.now += 14.9
    assert await queue.claim("w2") is None
    clock.now += 0.1
    again = await queue.claim("w2")
    assert (again.id, again.attempts, again.retries, again.retry_at) == (job_id, 2, 1, None)
    assert await queue.finish(again.id, "w2", "done")
    done = await queue.get(job_id)
    assert (done.status, done.error) == ("done", None)


async def test_a_waiting_job_does_not_hold_up_other_pull_requests(queue, clock):
    first, second = (
        (await queue.enqueue("d1", "pull_request", [analysis("o/r#1")]))[0],
        (await queue.enqueue("d2", "pull_request", [analysis("o/r#2")]))[0],
    )
    job = await queue.claim("w1")
    assert job.id == first and await queue.retry(first, "w1", 60.0, "could not reach GitHub")
    assert (await queue.claim("w1")).id == second


async def test_a_newer_push_supersedes_a_job_waiting_to_retry(queue):
    (old,) = await queue.enqueue("d1", "pull_request", [analysis()])
    await queue.retry((await queue.claim("w1")).id, "w1", 60.0, "could not reach GitHub")
    (new,) = await queue.enqueue("d2", "pull_request", [analysis()])
    assert (await queue.get(old)).status == "superseded"
    assert (await queue.claim("w1")).id == new


async def test_only_the_worker_holding_a_job_puts_it_back(queue):
    await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("w1")
    assert not await queue.retry(job.id, "someone-else", 5.0, "x")
    assert (await queue.get(job.id)).status == "running"


def old_store(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(OLD_STORE.read_text())
    db.close()
    return path


async def test_a_store_the_previous_version_wrote_is_upgraded_in_place_and_keeps_working(tmp_path):
    path = old_store(tmp_path / "jobs.sqlite3")
    # An operator's `jobs` command may read it before any new service opened it.
    assert [(j.id, j.status, j.retries, j.retry_at) for j in read_jobs(path)] == [
        (4, "queued", 0, None),
        (3, "running", 0, None),
        (2, "failed", 0, None),
        (1, "done", 0, None),
    ]
    clock = Clock(RETRY_EPOCH)
    queue = SqliteJobQueue(path, lease_seconds=60, clock=clock)
    try:
        first = await queue.claim("new-host:1:0")  # the queued job, and the killed worker's, still run
        second = await queue.claim("new-host:1:1")
        assert (first.id, second.id) == (3, 4)
        assert (first.progress, first.attempts) == ({"comment_id": 1001}, 2)
        assert await queue.retry(first.id, "new-host:1:0", 30.0, "GitHub answered 502 Bad Gateway")
        assert await queue.finish(second.id, "new-host:1:1", "done")
        assert (await queue.get(2)).error == "GitHub answered 502 Bad Gateway"  # old rows read as they were
    finally:
        await queue.close()
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(jobs)")]
    assert columns[-2:] == ["retry_at", "retries"]
    (waiting,) = read_jobs(path, status="queued")
    assert (waiting.id, waiting.retries, waiting.retry_at) == (3, 1, clock.now + 30.0)
    again = SqliteJobQueue(path, clock=clock)  # opening an upgraded store changes nothing
    await again.close()
    assert [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(jobs)")] == columns
