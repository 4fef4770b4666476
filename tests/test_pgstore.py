"""The PostgreSQL job queue and dispatch store on a real server: the queue's contract (the SQLite queue's
tests, run again here), and what several instances sharing one database need."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import threading
from dataclasses import replace

import psycopg
import pytest

from bot.decisions.validation import Dispatch
from bot.stores.jobs import JobRequest
from bot.stores.pgstore import PostgresJobQueue, migrate
from bot.stores.validationstore import PostgresValidationStore, ValidationStore
from tests.test_jobs import (  # noqa: F401 - the contract, collected again with this file's `queue`
    Clock,
    analysis,
    heads_are_recorded_in_order,
    test_enqueue_claim_finish,
    test_expired_lease_is_reclaimed_and_the_old_worker_loses_it,
    test_finish_rejects_non_final_status,
    test_newer_head_supersedes_queued_analysis_but_not_commands,
    test_one_running_job_per_key,
    test_release_gives_the_job_back_without_counting_an_attempt,
    test_same_delivery_is_stored_once,
)
from tests.test_jobs_retry import (  # noqa: F401
    test_a_job_put_back_waits_until_its_time_then_runs_again,
    test_a_newer_push_supersedes_a_job_waiting_to_retry,
    test_a_waiting_job_does_not_hold_up_other_pull_requests,
    test_only_the_worker_holding_a_job_puts_it_back,
)


@pytest.fixture
async def clock():
    return Clock()


@pytest.fixture
async def queue(database_url, clock):
    q = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    yield q
    await q.close()


async def test_two_instances_never_run_two_jobs_of_one_pull_request(database_url, clock):
    """Claims racing from two instances: each pull request's jobs run one at a time, oldest first, and every
    job is claimed exactly once."""
    first = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    second = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    workers = [(first, "a:1"), (second, "b:1"), (first, "a:2"), (second, "b:2")]
    try:
        for n in range(20):
            await first.enqueue(f"d{n}", "issue_comment", [JobRequest("command", f"o/r#{n % 4}", {"n": n})])
        claimed = []
        while True:
            jobs = await asyncio.gather(*(q.claim(name) for q, name in workers))
            running = [(j, q, name) for j, (q, name) in zip(jobs, workers) if j is not None]
            if not running:
                break
            keys = [j.key for j, _, _ in running]
            assert len(keys) == len(set(keys))  # never two of one pull request at once
            claimed += [j for j, _, _ in running]
            for j, q, name in running:
                assert await q.finish(j.id, name, "done")
        assert sorted(j.id for j in claimed) == list(range(1, 21))
        by_key: dict[str, list[int]] = {}
        for j in claimed:
            by_key.setdefault(j.key, []).append(j.id)
        assert all(ids == sorted(ids) for ids in by_key.values())  # oldest first within a pull request
    finally:
        await first.close()
        await second.close()


async def test_a_killed_instance_s_job_is_finished_by_another(database_url, clock):
    dead = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    await dead.enqueue("d1", "pull_request", [analysis()])
    job = await dead.claim("dead:1")
    await dead._db.close()  # the instance is gone: no finish, no renew
    alive = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    try:
        assert await alive.claim("alive:1") is None  # its lease still holds
        clock.now += 31
        taken = await alive.claim("alive:1")
        assert (taken.id, taken.attempts) == (job.id, 2)
        assert await alive.finish(job.id, "alive:1", "done")
    finally:
        await alive.close()


async def test_another_instance_s_enqueue_wakes_idle_workers(database_url, clock):
    listening = await PostgresJobQueue.open(database_url, clock=clock)
    other = await PostgresJobQueue.open(database_url, clock=clock)
    woken = asyncio.Event()
    try:
        listening.on_work(woken.set)
        await asyncio.wait_for(woken.wait(), 5)  # the listener says so once it listens
        woken.clear()
        await other.enqueue("d1", "pull_request", [analysis()])
        await asyncio.wait_for(woken.wait(), 5)
    finally:
        await listening.close()
        await other.close()


async def test_a_database_restart_mid_job_loses_nothing(postgres_server, database_url, clock):
    queue = await PostgresJobQueue.open(database_url, lease_seconds=30, clock=clock)
    try:
        await queue.enqueue("d1", "pull_request", [analysis()])
        job = await queue.claim("w1")
        await asyncio.get_running_loop().run_in_executor(None, postgres_server.restart)
        assert await queue.renew(job.id, "w1")  # the connection dropped; the write is retried on a new one
        await queue.enqueue("d2", "pull_request", [analysis("o/r#2")])
        assert await queue.finish(job.id, "w1", "done")
        assert (await queue.counts())["done"] == 1 and (await queue.counts())["queued"] == 1
    finally:
        await queue.close()


async def test_pull_request_heads_are_recorded_in_order_on_postgresql(database_url, clock):
    queue = await PostgresJobQueue.open(database_url, clock=clock)

    async def reopen():
        await queue.close()
        return await PostgresJobQueue.open(database_url, clock=clock)

    await (await heads_are_recorded_in_order(queue, clock, reopen)).close()


def test_migrations_apply_once_even_when_instances_start_together(database_url):
    applied: list[list[str]] = []

    def start():
        with psycopg.connect(database_url, autocommit=True) as db:
            applied.append(migrate(db))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(applied, key=len) == [
        [],
        [],
        [],
        [
            "001_jobs.sql",
            "002_pull_heads.sql",
            "003_bump_branches.sql",
            "004_skipped_refs.sql",
            "005_dashboards.sql",
            "006_dispatch_reports.sql",
        ],
    ]


def test_the_dispatch_store_keeps_its_queries_on_postgresql(database_url):
    with psycopg.connect(database_url, autocommit=True) as db:
        migrate(db)
    store = PostgresValidationStore(database_url)
    try:
        d = Dispatch("o/r", 7, "metal", "test.yaml", "bump", "a" * 40, "req-1", "2026-12-03T10:00:00Z")
        store.add(d)
        store.add(d)  # a repeat after a lost answer
        store.attach_run("req-1", 99, "https://github.com/o/r/actions/runs/99")
        assert store.get("req-1").run_id == 99
        assert [x.request_id for x in store.find_open("o/r", 99)] == ["req-1"]
        assert store.superseded("o/r", 7, "b" * 40)[0].request_id == "req-1"
        assert store.unfinished("2026-12-03T11:00:00Z")[0].platform == "metal"
    finally:
        store.close()


def _store(engine: str, request, tmp_path) -> ValidationStore | PostgresValidationStore:
    """The dispatch store on SQLite, or on PostgreSQL with the migrations applied."""
    if engine == "sqlite":
        return ValidationStore(tmp_path / "validation.sqlite3")
    url = request.getfixturevalue("database_url")
    with psycopg.connect(url, autocommit=True) as db:
        migrate(db)
    return PostgresValidationStore(url)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_bump_branches_skipped_refs_and_the_dashboard_keep_their_queries_on_both_stores(
    engine, request, tmp_path
):
    store = _store(engine, request, tmp_path)
    try:
        store.made_branch("o/r", "llama-bot/bump-x", "a" * 40)
        store.made_branch("o/r", "llama-bot/bump-x", "b" * 40)
        assert store.branch_made("o/r", "llama-bot/bump-x") == "b" * 40
        assert store.branches_made("o/r") == ["llama-bot/bump-x"]
        store.skip_ref("o/r", "llama.cpp", "b200", "maintainer")
        store.skip_ref("o/r", "llama.cpp", "b200", "maintainer")  # twice: kept once
        assert store.skipped_refs("o/r", "llama.cpp") == {"b200"}
        assert store.dashboard("o/r") is None
        store.dashboard_shown("o/r", 12, {"llama.cpp": "b200"})
        store.dashboard_shown("o/r", 14, {"llama.cpp": "b300", "mlx": "v1"})
        record = store.dashboard("o/r")
        assert (record.issue, record.newest) == (14, {"llama.cpp": "b300", "mlx": "v1"})
    finally:
        store.close()


def test_a_database_that_cannot_be_reached_stops_serve_with_one_line_and_no_password(tmp_path):
    from tests.test_app_startup import bot, serve_env

    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    url = f"postgresql://bot:s3cret-pw@127.0.0.1:{port}/jobs?connect_timeout=2"
    done = bot(serve_env(tmp_path, PORT="0", DATABASE_URL=url), "serve")
    assert done.returncode == 2 and "s3cret-pw" not in done.stderr + done.stdout
    (said,) = done.stderr.splitlines()
    assert said.startswith("llama-bot serve: cannot open the job store in the database DATABASE_URL names: ")
    bad = bot(serve_env(tmp_path, PORT="0", DATABASE_URL="mysql://bot:s3cret-pw@db/jobs"), "serve")
    assert bad.returncode == 2 and "s3cret-pw" not in bad.stderr
    assert bad.stderr.startswith("llama-bot serve: DATABASE_URL must be a postgresql:// URL")


async def test_jobs_lists_the_shared_database_s_jobs(tmp_path, database_url, clock):
    from tests.test_app_startup import bot, serve_env

    queue = await PostgresJobQueue.open(database_url, clock=clock)
    await queue.enqueue("d1", "pull_request", [analysis()])
    job = await queue.claim("w1")
    await queue.finish(job.id, "w1", "failed", "GitHub answered 502")
    await queue.close()
    done = bot(serve_env(tmp_path, DATABASE_URL=database_url), "jobs", "--status", "failed")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert json.loads(line)["error"] == "GitHub answered 502"


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_dispatch_keeps_its_runs_report_on_both_stores(engine, request, tmp_path):
    store = _store(engine, request, tmp_path)
    try:
        d = Dispatch("o/r", 7, "contract-probe", "p.yaml", "bump", "a" * 40, "req-2", "2026-12-03T10:00:00Z")
        store.add(d)
        assert store.get("req-2").report is None
        store.update(
            replace(d, status="completed", conclusion="failure", report='{"error": null, "pins": []}')
        )
        assert store.get("req-2").report == '{"error": null, "pins": []}'
    finally:
        store.close()


def test_a_sqlite_store_written_before_reports_gains_the_column(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE validation_dispatches (repo TEXT NOT NULL, pr INTEGER NOT NULL, platform TEXT NOT NULL,"
            " workflow TEXT NOT NULL, ref TEXT NOT NULL, head_sha TEXT NOT NULL, request_id TEXT PRIMARY KEY,"
            " dispatched_at TEXT NOT NULL, check_run_id INTEGER, run_id INTEGER, run_url TEXT,"
            " status TEXT NOT NULL DEFAULT 'queued', conclusion TEXT, started_at TEXT, completed_at TEXT)"
        )
        db.execute(
            "INSERT INTO validation_dispatches (repo, pr, platform, workflow, ref, head_sha, request_id,"
            " dispatched_at) VALUES ('o/r', 1, 'metal', 'w.yaml', 'b', 'sha', 'req-old', 'now')"
        )
    store = ValidationStore(path)
    try:
        assert store.get("req-old").report is None and store.get("req-old").platform == "metal"
    finally:
        store.close()
