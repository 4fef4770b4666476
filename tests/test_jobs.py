"""The SQLite job queue: durability, leases, one job per key at a time, superseding, dedup."""

import asyncio
import contextlib
import os
import sqlite3
import threading

import pytest

from bot.decisions.approval import HeadSeen
from bot.stores.jobs import JobRequest
from bot.stores.sqlitejobs import SqliteJobQueue, StoreInUse, read_jobs
from bot.times import KEEP_SECONDS


class Clock:
    """A clock the tests move by hand."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
async def clock():
    return Clock()


@pytest.fixture
async def queue(tmp_path, clock):
    q = SqliteJobQueue(tmp_path / "jobs.sqlite3", lease_seconds=30, clock=clock)
    yield q
    await q.close()


def analysis(key="o/r#1", sha="a" * 40):
    return JobRequest("analysis", key, {"head_sha": sha}, supersedes=True)


async def test_enqueue_claim_finish(queue):
    ids = await queue.enqueue("d1", "pull_request", [analysis()])
    assert ids and len(ids) == 1
    job = await queue.claim("w1")
    assert (job.id, job.kind, job.payload, job.attempts, job.status) == (
        ids[0],
        "analysis",
        {"head_sha": "a" * 40},
        1,
        "running",
    )
    assert await queue.claim("w2") is None
    assert await queue.finish(job.id, "w1", "done")
    assert (await queue.get(job.id)).status == "done"
    assert (await queue.counts())["done"] == 1


async def test_same_delivery_is_stored_once(queue):
    assert await queue.enqueue("d1", "pull_request", [analysis()])
    assert await queue.enqueue("d1", "pull_request", [analysis()]) is None
    assert (await queue.counts())["queued"] == 1


async def test_newer_head_supersedes_queued_analysis_but_not_commands(queue):
    command = JobRequest("command", "o/r#1", {"body": "/llama help"})
    (old,) = await queue.enqueue("d1", "pull_request", [analysis(sha="1" * 40)])
    (cmd,) = await queue.enqueue("d2", "issue_comment", [command])
    (new,) = await queue.enqueue("d3", "pull_request", [analysis(sha="2" * 40)])
    assert (await queue.get(old)).status == "superseded"
    assert (await queue.get(old)).error == f"superseded by job {new}"
    assert (await queue.get(cmd)).status == "queued"
    other = await queue.enqueue("d4", "pull_request", [analysis(key="o/r#2")])
    assert (await queue.get(new)).status == "queued" and other


async def test_one_running_job_per_key(queue):
    await queue.enqueue("d1", "issue_comment", [JobRequest("command", "o/r#1", {"n": 1})])
    await queue.enqueue("d2", "issue_comment", [JobRequest("command", "o/r#1", {"n": 2})])
    await queue.enqueue("d3", "issue_comment", [JobRequest("command", "o/r#2", {"n": 3})])
    first = await queue.claim("w1")
    second = await queue.claim("w2")
    assert (first.payload, second.payload) == ({"n": 1}, {"n": 3})
    assert await queue.claim("w3") is None
    await queue.finish(first.id, "w1", "done")
    assert (await queue.claim("w3")).payload == {"n": 2}


async def test_expired_lease_is_reclaimed_and_the_old_worker_loses_it(queue, clock):
    await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("dead")
    clock.now += 10
    assert await queue.renew(job.id, "dead")
    clock.now += 29
    assert await queue.claim("w2") is None  # lease renewed 29 s ago: still held
    clock.now += 2
    again = await queue.claim("w2")
    assert again.id == job.id and again.attempts == 2
    assert not await queue.renew(job.id, "dead")
    assert not await queue.finish(job.id, "dead", "done")
    assert await queue.finish(job.id, "w2", "failed", "GitHub answered 502")
    stored = await queue.get(job.id)
    assert (stored.status, stored.error) == ("failed", "GitHub answered 502")


async def test_jobs_survive_reopening_and_progress_is_kept(tmp_path, clock):
    path = tmp_path / "jobs.sqlite3"
    q = SqliteJobQueue(path, lease_seconds=30, clock=clock)
    await q.enqueue("d1", "pull_request", [analysis()])
    job = await q.claim("w1")
    await q.save_progress(job.id, {"comment_id": 7})
    await q.close()  # the worker process is gone without finishing

    clock.now += 31
    q = SqliteJobQueue(path, lease_seconds=30, clock=clock)
    resumed = await q.claim("w2")
    assert (resumed.id, resumed.progress, resumed.attempts) == (job.id, {"comment_id": 7}, 2)
    assert await q.enqueue("d1", "pull_request", [analysis()]) is None  # still remembered
    await q.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_a_store_is_one_processs_and_takes_back_what_it_left_running(tmp_path, clock):
    """While a queue has the store open nobody else opens it; the next one to open it finds the jobs the last
    left running (its process was killed) claimable at once, each of those claims still counted."""
    path = tmp_path / "jobs.sqlite3"
    q = SqliteJobQueue(path, lease_seconds=30, clock=clock)
    with pytest.raises(StoreInUse, match=f"this process \\(pid {os.getpid()}\\) has it open already"):
        SqliteJobQueue(path, clock=clock)
    await q.enqueue("d1", "pull_request", [analysis("o/r#1"), analysis("o/r#2")])
    first = await q.claim("w1")
    second = await q.claim("w1")
    assert await q.finish(second.id, "w1", "done")
    await q.close()  # `first` is still running, and its lease good for 30 s more

    q = SqliteJobQueue(path, lease_seconds=30, clock=clock)
    try:
        assert [(j.id, j.status, j.attempts) for j in read_jobs(path)] == [
            (second.id, "done", 1),
            (first.id, "queued", 1),
        ]
        again = await q.claim("w2")
        assert (again.id, again.attempts) == (first.id, 2)
    finally:
        await q.close()


async def test_release_gives_the_job_back_without_counting_an_attempt(queue):
    await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("w1")
    await queue.release(job.id, "w1")
    again = await queue.claim("w2")
    assert again.id == job.id and again.attempts == 1


async def test_finish_rejects_non_final_status(queue):
    await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("w1")
    with pytest.raises(ValueError):
        await queue.finish(job.id, "w1", "queued")


async def test_writes_return_only_after_the_wal_fsync_and_arrivals_share_one(queue, monkeypatch):
    """Durable before the 202: enqueue waits for an fsync of the WAL; writes that arrive while one is on its
    way share the next (group commit), so a burst costs two fsyncs, not fifty."""
    real_fsync, wal_fd = os.fsync, queue._wal
    gate, synced = threading.Event(), []

    def slow_fsync(fd):
        gate.wait(5)
        real_fsync(fd)
        synced.append(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    first = asyncio.ensure_future(queue.enqueue("d0", "pull_request", [analysis(key="o/r#0")]))
    await asyncio.sleep(0.05)
    rest = [
        asyncio.ensure_future(queue.enqueue(f"d{n}", "pull_request", [analysis(key=f"o/r#{n}")]))
        for n in range(1, 50)
    ]
    await asyncio.sleep(0.05)
    assert not first.done() and not any(r.done() for r in rest)  # committed, not yet on disk: no answer
    gate.set()
    ids = await asyncio.gather(first, *rest)
    assert len({i for (i,) in ids}) == 50 and synced == [wal_fd, wal_fd]
    assert os.path.samefile(f"/proc/self/fd/{wal_fd}", f"{queue.path}-wal")


async def test_the_wal_is_copied_back_in_a_thread_every_n_group_commits(tmp_path, clock):
    """SQLite's own checkpoint would run inside a commit on the event loop; this one runs aside."""
    q = SqliteJobQueue(tmp_path / "jobs.sqlite3", clock=clock, checkpoint_every=3)

    def in_database_file() -> int:  # what the main file holds, the WAL left out
        with contextlib.closing(sqlite3.connect(f"file:{q.path}?mode=ro&immutable=1", uri=True)) as db:
            try:
                return db.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0]
            except sqlite3.OperationalError:  # not even the tables yet
                return 0

    for n in range(2):
        await q.enqueue(f"d{n}", "pull_request", [analysis(key=f"o/r#{n}")])
    assert in_database_file() == 0
    await q.enqueue("d2", "pull_request", [analysis(key="o/r#2")])
    for _ in range(100):
        if in_database_file() == 3:
            break
        await asyncio.sleep(0.02)
    assert in_database_file() == 3
    await q.close()


async def heads_are_recorded_in_order(queue, clock, reopen):
    """A PR's heads as seen, in order: a delivery's head in its own transaction (a redelivery records
    nothing), the bot's reads only when the head changed, and old heads forgotten but each PR's last."""
    a, b = "a" * 40, "b" * 40
    head_of = JobRequest("analysis", "o/r#1", {"head_sha": a}, supersedes=True, head=a)
    await queue.enqueue("d1", "pull_request", [head_of])
    clock.now += 1
    await queue.saw_head("o/r#1", a)  # the same head read again: not a new sighting
    await queue.enqueue("d2", "pull_request", [JobRequest("analysis", "o/r#2", {}, head=b)])
    clock.now += 1
    await queue.saw_head("o/r#1", b)
    clock.now += 1
    assert await queue.enqueue("d1", "pull_request", [head_of]) is None
    await queue.saw_head("o/r#1", a)  # pushed back: a new sighting of an older head
    start = clock.now - 3
    assert await queue.heads("o/r#1") == [HeadSeen(a, start), HeadSeen(b, start + 2), HeadSeen(a, start + 3)]
    assert await queue.heads("o/r#2") == [HeadSeen(b, start + 1)]
    assert await queue.heads("o/r#3") == []
    clock.now += KEEP_SECONDS + 10
    queue = await reopen()
    assert await queue.heads("o/r#1") == [HeadSeen(a, start + 3)]
    assert await queue.heads("o/r#2") == [HeadSeen(b, start + 1)]
    return queue


async def test_pull_request_heads_are_recorded_in_order(tmp_path, clock):
    path = tmp_path / "jobs.sqlite3"
    queue = SqliteJobQueue(path, lease_seconds=30, clock=clock)

    async def reopen():
        await queue.close()
        return SqliteJobQueue(path, lease_seconds=30, clock=clock)

    await (await heads_are_recorded_in_order(queue, clock, reopen)).close()
