"""The job queue on PostgreSQL: several instances behind one webhook URL share it.

Chosen when `DATABASE_URL` is set. The semantics are `SqliteJobQueue`'s, on the database's own mechanisms:
a delivery and its jobs are one transaction; the delivery id is a primary key, so a redelivery stores
nothing; a claim takes the oldest runnable row `FOR UPDATE SKIP LOCKED` and then the transaction-scoped
advisory lock of its pull request, so two instances never run two jobs of one pull request at once. Leases
are short (`LEASE_SECONDS`, renewed every third of it): a lease an instance stops renewing (it died) expires
within seconds and the job is claimed again at another instance's next poll, since an expiry sends no
notification. Every write that can make work runnable sends `NOTIFY`, and each instance `LISTEN`s, so idle
workers wake at once instead of polling.
A dropped connection (a database restart) is reopened and the statement retried; a write whose answer was
lost is read back rather than repeated blindly. The schema lives in `bot/stores/migrations/*.sql`, applied in
name order at start under an advisory lock, so instances starting together do not race.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from bot.decisions.approval import HeadSeen
from bot.stores.jobs import (
    FORGET_HEADS,
    HEADS,
    HEADS_READ,
    SAW_HEAD,
    STATUSES,
    Job,
    JobRequest,
    head_rows,
    job_from_row,
)
from bot.times import KEEP_SECONDS

log = logging.getLogger("bot.pgstore")
Db = psycopg.AsyncConnection[Any]  # rows as dicts

MIGRATIONS = Path(__file__).with_name("migrations")
CHANNEL = "llama_bot_jobs"
_MIGRATION_LOCK = 0x6C6C616D61  # "llama": one advisory lock id for applying migrations
RECONNECT_FOR = 30.0  # seconds a statement keeps retrying while the database is unreachable
CLAIM_TRIES = 8  # candidate jobs one claim looks at before it gives up until the next wake-up
# Seconds a claim holds a job without renewal: a killed instance's job runs again this long after its last
# renewal (plus a poll), while a live worker renewing every third of it can miss one renewal and keep it.
LEASE_SECONDS = 12.0


def _pg(sql: str) -> str:
    """A statement of `bot.stores.jobs`, written with SQLite's placeholders, in PostgreSQL's."""
    return sql.replace("?", "%s")


def migrate(db: psycopg.Connection) -> list[str]:
    """Apply the migrations not applied yet, in name order, under a lock; the names applied now."""
    applied_now = []
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY,"
            " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
        for path in sorted(MIGRATIONS.glob("*.sql")):
            if path.name not in done:
                db.execute(path.read_text())  # type: ignore[arg-type]  # a file of ours, not user input
                db.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
                applied_now.append(path.name)
    return applied_now


class PostgresJobQueue:
    """`JobQueue` on PostgreSQL; see the module's docstring."""

    def __init__(
        self, url: str, lease_seconds: float = LEASE_SECONDS, clock: Callable[[], float] = time.time
    ):
        self.url = url
        self.lease_seconds = lease_seconds
        self.clock = clock
        self._db: Db | None = None
        self._lock = asyncio.Lock()  # one statement at a time on the connection
        self._listener: asyncio.Task | None = None
        self._on_work: Callable[[], None] | None = None

    @classmethod
    async def open(cls, url: str, **kwargs: Any) -> PostgresJobQueue:
        """Connect, apply the migrations, and forget old deliveries and finished jobs."""
        queue = cls(url, **kwargs)
        with psycopg.connect(url, autocommit=True) as db:
            applied = migrate(db)
            if applied:
                log.info("applied database migrations", extra={"migrations": ", ".join(applied)})
            cutoff = queue.clock() - KEEP_SECONDS
            db.execute("DELETE FROM deliveries WHERE received_at < %s", (cutoff,))
            db.execute(
                "DELETE FROM jobs WHERE status IN ('done', 'superseded') AND updated_at < %s", (cutoff,)
            )
            db.execute(_pg(FORGET_HEADS), (cutoff,))
        return queue

    # -- the connection --

    async def _connection(self) -> Db:
        if self._db is None or self._db.closed:
            self._db = await psycopg.AsyncConnection.connect(
                self.url, row_factory=dict_row, connect_timeout=5
            )
        return self._db

    async def _run(
        self, func: Callable[[Db], Awaitable[Any]], after_loss: Callable[[Db], Awaitable[Any]] | None = None
    ) -> Any:
        """`func` in one transaction, retried on a new connection while the database is unreachable. When the
        connection broke after the statement was sent, `after_loss` (if given) tells from the database what
        the lost answer was."""
        deadline = time.monotonic() + RECONNECT_FOR
        delay, sent = 0.05, False
        async with self._lock:
            while True:
                try:
                    db = await self._connection()
                    step = after_loss if sent and after_loss is not None else func
                    sent = True
                    async with db.transaction():
                        return await step(db)
                except psycopg.OperationalError as exc:
                    await self._drop_connection()
                    if time.monotonic() > deadline:
                        raise
                    log.warning("database unreachable, retrying", extra={"error": str(exc).strip()[:200]})
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)

    # -- waking idle workers --

    def on_work(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever any instance makes a job runnable (a NOTIFY on the channel)."""
        self._on_work = callback
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="jobs-listen")

    async def _listen(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.url, autocommit=True, connect_timeout=5
                ) as db:
                    await db.execute(f"LISTEN {CHANNEL}")
                    self._wake()  # whatever was queued while this instance was not listening
                    async for _ in db.notifies():
                        self._wake()
            except psycopg.OperationalError as exc:
                log.warning(
                    "job notifications interrupted, reconnecting", extra={"error": str(exc).strip()[:200]}
                )
                await asyncio.sleep(0.5)

    def _wake(self) -> None:
        if self._on_work:
            self._on_work()

    # -- JobQueue --

    async def enqueue(self, delivery_id: str, event: str, requests: list[JobRequest]) -> list[int] | None:
        now = self.clock()

        async def store(db: Db) -> list[int] | None:
            cursor = await db.execute(
                "INSERT INTO deliveries (delivery_id, event, received_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (delivery_id) DO NOTHING",
                (delivery_id, event, now),
            )
            if cursor.rowcount == 0:
                return None
            ids: list[int] = []
            for request in requests:
                row = await (
                    await db.execute(
                        "INSERT INTO jobs (kind, key, payload, delivery_id, created_at, updated_at)"
                        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                        (request.kind, request.key, json.dumps(request.payload), delivery_id, now, now),
                    )
                ).fetchone()
                assert row is not None  # RETURNING gives the row it inserted
                job_id = int(row["id"])
                if request.supersedes:
                    await db.execute(
                        "UPDATE jobs SET status = 'superseded', error = %s, updated_at = %s"
                        " WHERE key = %s AND kind = %s AND status = 'queued' AND id < %s",
                        (f"superseded by job {job_id}", now, request.key, request.kind, job_id),
                    )
                ids.append(job_id)
                if request.head:
                    await db.execute(
                        _pg(SAW_HEAD), (request.key, request.head, now, request.key, request.head)
                    )
            if ids:
                await db.execute(f"NOTIFY {CHANNEL}")
            return ids

        async def stored(db: Db) -> list[int] | None:
            rows = await (
                await db.execute("SELECT id FROM jobs WHERE delivery_id = %s ORDER BY id", (delivery_id,))
            ).fetchall()
            seen = await (
                await db.execute("SELECT 1 FROM deliveries WHERE delivery_id = %s", (delivery_id,))
            ).fetchone()
            return [r["id"] for r in rows] if seen else await store(db)

        return await self._run(store, stored)

    async def claim(self, worker: str) -> Job | None:
        now = self.clock()

        async def take(db: Db) -> Job | None:
            passed: list[str] = []
            for _ in range(CLAIM_TRIES):
                row = await (
                    await db.execute(
                        "SELECT id, key FROM jobs AS j"
                        " WHERE ((status = 'queued' AND (retry_at IS NULL OR retry_at <= %(now)s))"
                        "        OR (status = 'running' AND lease_expires < %(now)s))"
                        " AND NOT (key = ANY(%(passed)s::text[]))"
                        " AND NOT EXISTS (SELECT 1 FROM jobs AS r WHERE r.key = j.key AND r.id != j.id"
                        "                 AND r.status = 'running' AND r.lease_expires >= %(now)s)"
                        " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                        {"now": now, "passed": passed},
                    )
                ).fetchone()
                if row is None:
                    return None
                locked = await (
                    await db.execute(
                        "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0)) AS ok", (row["key"],)
                    )
                ).fetchone()
                busy = (
                    await (
                        await db.execute(  # another instance's claim of this key committed meanwhile
                            "SELECT 1 FROM jobs WHERE key = %s AND id != %s AND status = 'running' AND lease_expires >= %s",
                            (row["key"], row["id"], now),
                        )
                    ).fetchone()
                    if locked and locked["ok"]
                    else True
                )
                if busy:
                    passed.append(row["key"])
                    continue
                claimed = await (
                    await db.execute(
                        "UPDATE jobs SET status = 'running', lease_owner = %s, lease_expires = %s, retry_at = NULL,"
                        " attempts = attempts + 1, updated_at = %s WHERE id = %s RETURNING *",
                        (worker, now + self.lease_seconds, now, row["id"]),
                    )
                ).fetchone()
                return job_from_row(claimed)
            return None

        async def taken(db: Db) -> Job | None:
            # the claim may have committed: such a job is this worker's until its lease runs out
            row = await (
                await db.execute(
                    "SELECT * FROM jobs WHERE lease_owner = %s AND status = 'running' AND updated_at = %s"
                    " ORDER BY id LIMIT 1",
                    (worker, now),
                )
            ).fetchone()
            return job_from_row(row) if row else await take(db)

        return await self._run(take, taken)

    async def _update(
        self,
        sql: str,
        args: tuple,
        notify: bool = False,
        settled: Callable[[Any], bool] | None = None,
        job_id: int | None = None,
    ) -> bool:
        async def write(db: Db) -> bool:
            changed = (await db.execute(sql, args)).rowcount == 1
            if changed and notify:
                await db.execute(f"NOTIFY {CHANNEL}")
            return changed

        async def written(db: Db) -> bool:
            row = await (await db.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))).fetchone()
            return (settled is not None and settled(row)) or await write(db)

        return await self._run(write, written if settled is not None else None)

    async def renew(self, job_id: int, worker: str) -> bool:
        now = self.clock()
        return await self._update(
            "UPDATE jobs SET lease_expires = %s, updated_at = %s WHERE id = %s AND lease_owner = %s"
            " AND status = 'running'",
            (now + self.lease_seconds, now, job_id, worker),
        )

    async def save_progress(self, job_id: int, progress: dict) -> None:
        await self._update(
            "UPDATE jobs SET progress = %s, updated_at = %s WHERE id = %s",
            (json.dumps(progress), self.clock(), job_id),
        )

    async def finish(self, job_id: int, worker: str, status: str, error: str | None = None) -> bool:
        if status not in ("done", "failed", "superseded"):
            raise ValueError(f"not a final status: {status}")
        return await self._update(
            "UPDATE jobs SET status = %s, error = %s, lease_owner = NULL, lease_expires = NULL, updated_at = %s"
            " WHERE id = %s AND lease_owner = %s AND status = 'running'",
            (status, error, self.clock(), job_id, worker),
            notify=True,
            settled=lambda row: row is not None and row["status"] == status,
            job_id=job_id,
        )

    async def release(self, job_id: int, worker: str) -> None:
        await self._update(
            "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL, updated_at = %s,"
            " attempts = GREATEST(attempts - 1, 0) WHERE id = %s AND lease_owner = %s AND status = 'running'",
            (self.clock(), job_id, worker),
            notify=True,
        )

    async def retry(self, job_id: int, worker: str, delay: float, error: str) -> bool:
        now = self.clock()
        return await self._update(
            "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL, retry_at = %s,"
            " retries = retries + 1, error = %s, updated_at = %s WHERE id = %s AND lease_owner = %s"
            " AND status = 'running'",
            (now + delay, error, now, job_id, worker),
            settled=lambda row: (
                row is not None and row["status"] == "queued" and row["retry_at"] == now + delay
            ),
            job_id=job_id,
        )

    async def get(self, job_id: int) -> Job | None:
        async def read(db: Db) -> Job | None:
            row = await (await db.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))).fetchone()
            return job_from_row(row) if row else None

        return await self._run(read)

    async def saw_head(self, key: str, sha: str) -> None:
        now = self.clock()

        async def write(db: Db) -> None:
            await db.execute(_pg(SAW_HEAD), (key, sha, now, key, sha))

        await self._run(write)  # a repeat after a lost answer records nothing: the head is the last one

    async def heads(self, key: str) -> list[HeadSeen]:
        async def read(db: Db) -> list[HeadSeen]:
            rows = await (await db.execute(_pg(HEADS), (key, HEADS_READ))).fetchall()
            return head_rows([(r["sha"], r["seen_at"]) for r in rows])

        return await self._run(read)

    async def counts(self) -> dict[str, int]:
        async def read(db: Db) -> dict[str, int]:
            rows = await (
                await db.execute("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status")
            ).fetchall()
            return {r["status"]: r["n"] for r in rows}

        found = await self._run(read)
        return {status: found.get(status, 0) for status in STATUSES}

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await self._drop_connection()

    async def _drop_connection(self) -> None:
        """Close the connection, if any; the next statement opens a new one."""
        if self._db is not None:
            await self._db.close()
            self._db = None


def read_jobs(
    url: str, *, status: str | None = None, job_id: int | None = None, limit: int = 20
) -> list[Job]:
    """Jobs in the shared database, newest first: `python -m bot jobs` when DATABASE_URL is set."""
    where, args = (
        ("id = %s", (job_id,))
        if job_id is not None
        else ("status = %s", (status,))
        if status
        else ("TRUE", ())
    )
    with psycopg.connect(url, row_factory=dict_row, connect_timeout=5) as db:
        rows = db.execute(
            f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT %s", (*args, limit)
        ).fetchall()  # type: ignore[arg-type]
    return [job_from_row(row) for row in rows]
