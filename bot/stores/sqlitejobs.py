"""`JobQueue` in one SQLite file under the data directory: the job store of a single instance.

The instance that opens the store locks it for as long as the store is open (its life), so a second
service on the same data directory refuses to start instead of racing the first for its jobs. Holding
the lock, it knows a job still marked running was left by its own previous life, killed mid-job: it
takes such jobs back at once instead of waiting out their leases.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bot.decisions.approval import HeadSeen
from bot.stores.jobs import (
    ADDED_COLUMNS,
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

log = logging.getLogger("bot.jobs")  # the job store's logger, as the service's logs name it

DB_NAME = "jobs.sqlite3"  # in $LLAMA_BOT_DATA_DIR
LOCK_SUFFIX = ".lock"  # jobs.sqlite3.lock: locked by the process that has the store open
_HELD: set[Path] = set()  # the lock files this process holds

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'superseded')),
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires REAL,
    progress TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    delivery_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    retry_at REAL,
    retries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_status_key ON jobs (status, key);
CREATE TABLE IF NOT EXISTS deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    received_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS pull_heads (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    sha TEXT NOT NULL,
    seen_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pull_heads_by_key ON pull_heads (key, seq);
"""


class SqliteJobQueue:
    """`JobQueue` in one SQLite file (WAL); a write is on disk before the call that made it returns.

    Statements run on the event loop's thread: they take microseconds, and
    handing each to a thread cost more in GIL hand-offs than the SQL itself.
    Writes that arrive while the disk is busy wait together and then share
    one transaction and one `fsync` of the WAL (group commit), the fsync in
    a thread; `synchronous=NORMAL` leaves the syncing to that fsync. Copying
    the WAL back into the database (a checkpoint: megabytes and two fsyncs)
    is done every `checkpoint_every` group commits in a thread of its own,
    never inside a commit on the loop as SQLite's automatic checkpoint would.
    """

    def __init__(
        self,
        path: str | Path,
        lease_seconds: float = 60.0,
        clock: Callable[[], float] = time.time,
        checkpoint_every: int = 500,
    ):
        self.path = Path(path)
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.checkpoint_every = checkpoint_every
        self._store_lock = StoreLock(self.path)
        try:
            self._db: sqlite3.Connection | None = self._open()
        except BaseException:
            self._store_lock.release()
            raise
        self._wal = os.open(
            f"{self.path}-wal", os.O_RDONLY
        )  # SQLite keeps this file while a connection is open
        self._fsync_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jobs-fsync")
        self._pending: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future]] = []
        self._flushing: asyncio.Task | None = None
        self._checkpoint_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jobs-checkpoint")
        self._checkpoint_db: sqlite3.Connection | None = None  # that thread's own connection
        self._checkpoint: asyncio.Future | None = None
        self._commits_since_checkpoint = 0

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Used from one thread at a time (the loop's), which need not be the one that builds the queue.
        db = sqlite3.connect(self.path, isolation_level=None, timeout=5.0, check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA wal_autocheckpoint=0")  # see _checkpoint_wal
        db.executescript(_SCHEMA)
        _add_columns(db)
        cutoff = self.clock() - KEEP_SECONDS
        db.execute("DELETE FROM deliveries WHERE received_at < ?", (cutoff,))
        db.execute("DELETE FROM jobs WHERE status IN ('done', 'superseded') AND updated_at < ?", (cutoff,))
        db.execute(FORGET_HEADS, (cutoff,))
        taken = _take_back(db, self.clock())
        if taken:
            log.warning(
                "took back jobs a killed run of this service left running",
                extra={"path": str(self.path), "jobs": ", ".join(map(str, taken))},
            )
        return db

    async def _write(self, func: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `func` in a transaction; return its result once that transaction is on disk."""
        done = asyncio.get_running_loop().create_future()
        self._pending.append((func, done))
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush())
        return await done

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                if await self._commit(batch):
                    self._checkpoint_if_due()
        finally:
            self._flushing = None

    async def _commit(self, batch: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future]]) -> bool:
        """One transaction and one fsync for a batch of writes; each waiting caller hears its result, or all
        of them the error (then False)."""
        try:
            results = self._transaction([func for func, _ in batch])
            await asyncio.get_running_loop().run_in_executor(self._fsync_thread, os.fsync, self._wal)
        except Exception as exc:  # noqa: BLE001 - every waiting caller must hear of it
            for _, done in batch:
                if not done.done():
                    done.set_exception(exc)
            return False
        for (_, done), result in zip(batch, results):
            if not done.done():
                done.set_result(result)
        return True

    def _checkpoint_if_due(self) -> None:
        """Every `checkpoint_every` commits, a checkpoint in its thread, unless the last one still runs."""
        self._commits_since_checkpoint += 1
        if self._commits_since_checkpoint >= self.checkpoint_every and (
            self._checkpoint is None or self._checkpoint.done()
        ):
            self._commits_since_checkpoint = 0
            self._checkpoint = asyncio.get_running_loop().run_in_executor(
                self._checkpoint_thread, self._checkpoint_wal
            )

    def _checkpoint_wal(self) -> None:
        """Copy the WAL into the database file (PASSIVE: writers go on meanwhile)."""
        try:
            if self._checkpoint_db is None:
                self._checkpoint_db = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
            self._checkpoint_db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:  # the next one catches up; the WAL is durable meanwhile
            log.warning("WAL checkpoint failed", extra={"path": str(self.path), "error": str(exc)})

    def _transaction(self, funcs: list[Callable[[sqlite3.Connection], Any]]) -> list[Any]:
        db = self._db
        assert db is not None, "queue is closed"
        db.execute("BEGIN IMMEDIATE")
        try:
            results = [func(db) for func in funcs]
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return results

    # -- JobQueue ----------------------------------------------------------------------------------

    async def enqueue(self, delivery_id: str, event: str, requests: list[JobRequest]) -> list[int] | None:
        now = self.clock()

        def store(db: sqlite3.Connection) -> list[int] | None:
            try:
                db.execute(
                    "INSERT INTO deliveries (delivery_id, event, received_at) VALUES (?, ?, ?)",
                    (delivery_id, event, now),
                )
            except sqlite3.IntegrityError:
                return None
            ids: list[int] = []
            for request in requests:
                cursor = db.execute(
                    "INSERT INTO jobs (kind, key, payload, delivery_id, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (request.kind, request.key, json.dumps(request.payload), delivery_id, now, now),
                )
                job_id = int(cursor.lastrowid or 0)
                if request.supersedes:
                    db.execute(
                        "UPDATE jobs SET status = 'superseded', error = ?, updated_at = ?"
                        " WHERE key = ? AND kind = ? AND status = 'queued' AND id < ?",
                        (f"superseded by job {job_id}", now, request.key, request.kind, job_id),
                    )
                ids.append(job_id)
                if request.head:
                    db.execute(SAW_HEAD, (request.key, request.head, now, request.key, request.head))
            return ids

        return await self._write(store)

    async def claim(self, worker: str) -> Job | None:
        now = self.clock()

        def take(db: sqlite3.Connection) -> Job | None:
            row = db.execute(
                "SELECT id FROM jobs AS j"
                " WHERE ((status = 'queued' AND (retry_at IS NULL OR retry_at <= :now))"
                "        OR (status = 'running' AND lease_expires < :now))"
                " AND NOT EXISTS (SELECT 1 FROM jobs AS r WHERE r.key = j.key AND r.id != j.id"
                "                 AND r.status = 'running' AND r.lease_expires >= :now)"
                " ORDER BY id LIMIT 1",
                {"now": now},
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires = ?, retry_at = NULL,"
                " attempts = attempts + 1, updated_at = ? WHERE id = ?",
                (worker, now + self.lease_seconds, now, row["id"]),
            )
            return job_from_row(db.execute("SELECT * FROM jobs WHERE id = ?", (row["id"],)).fetchone())

        return await self._write(take)

    async def renew(self, job_id: int, worker: str) -> bool:
        now = self.clock()

        def extend(db: sqlite3.Connection) -> bool:
            return (
                db.execute(
                    "UPDATE jobs SET lease_expires = ?, updated_at = ?"
                    " WHERE id = ? AND lease_owner = ? AND status = 'running'",
                    (now + self.lease_seconds, now, job_id, worker),
                ).rowcount
                == 1
            )

        return await self._write(extend)

    async def save_progress(self, job_id: int, progress: dict) -> None:
        now = self.clock()
        await self._write(
            lambda db: db.execute(
                "UPDATE jobs SET progress = ?, updated_at = ? WHERE id = ?",
                (json.dumps(progress), now, job_id),
            )
        )

    async def finish(self, job_id: int, worker: str, status: str, error: str | None = None) -> bool:
        if status not in ("done", "failed", "superseded"):
            raise ValueError(f"not a final status: {status}")
        now = self.clock()

        def end(db: sqlite3.Connection) -> bool:
            return (
                db.execute(
                    "UPDATE jobs SET status = ?, error = ?, lease_owner = NULL, lease_expires = NULL,"
                    " updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'running'",
                    (status, error, now, job_id, worker),
                ).rowcount
                == 1
            )

        return await self._write(end)

    async def release(self, job_id: int, worker: str) -> None:
        now = self.clock()
        await self._write(
            lambda db: db.execute(
                "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL, updated_at = ?,"
                " attempts = MAX(attempts - 1, 0) WHERE id = ? AND lease_owner = ? AND status = 'running'",
                (now, job_id, worker),
            )
        )

    async def retry(self, job_id: int, worker: str, delay: float, error: str) -> bool:
        now = self.clock()

        def put_back(db: sqlite3.Connection) -> bool:
            return (
                db.execute(
                    "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL,"
                    " retry_at = ?, retries = retries + 1, error = ?, updated_at = ?"
                    " WHERE id = ? AND lease_owner = ? AND status = 'running'",
                    (now + delay, error, now, job_id, worker),
                ).rowcount
                == 1
            )

        return await self._write(put_back)

    async def get(self, job_id: int) -> Job | None:
        assert self._db is not None, "queue is closed"
        row = self._db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return job_from_row(row) if row else None

    async def saw_head(self, key: str, sha: str) -> None:
        now = self.clock()
        await self._write(lambda db: db.execute(SAW_HEAD, (key, sha, now, key, sha)))

    async def heads(self, key: str) -> list[HeadSeen]:
        assert self._db is not None, "queue is closed"
        return head_rows(self._db.execute(HEADS, (key, HEADS_READ)).fetchall())

    async def counts(self) -> dict[str, int]:
        assert self._db is not None, "queue is closed"
        found = dict(self._db.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall())
        return {status: found.get(status, 0) for status in STATUSES}

    async def close(self) -> None:
        if self._flushing is not None:
            await self._flushing
        if self._checkpoint is not None:
            await self._checkpoint
        if self._checkpoint_db is not None:
            await asyncio.get_running_loop().run_in_executor(
                self._checkpoint_thread, self._checkpoint_db.close
            )
        if self._db is not None:
            self._db.close()  # the last connection out checkpoints what is left
            self._db = None
            os.close(self._wal)
        self._fsync_thread.shutdown(wait=True)
        self._checkpoint_thread.shutdown(wait=True)
        self._store_lock.release()


class StoreInUse(OSError):
    """Another process has the job store open: a SQLite store serves one instance at a time."""


class StoreLock:
    """An exclusive fcntl (POSIX record) lock on `<store>.lock`, holding the pid of its holder.

    A POSIX lock, not `flock`: the kernel drops it when its process dies, however it dies, and a child
    process (an analysis, git) never inherits it, so nothing outlives a killed service holding its store.
    Such a lock belongs to the process and ends at the first close of any descriptor of its file, so one
    process opens each store once (`_HELD`) and nothing else opens the lock file.
    """

    def __init__(self, store: Path):
        store.parent.mkdir(parents=True, exist_ok=True)
        self.path = store.with_name(store.name + LOCK_SUFFIX).resolve()
        self._fd: int | None = None
        if self.path in _HELD:
            raise StoreInUse(f"this process (pid {os.getpid()}) has it open already")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            if not isinstance(exc, BlockingIOError | PermissionError):  # not EAGAIN/EACCES: no locks here
                raise
            raise StoreInUse(
                f"another instance (pid {holder or 'unknown'}) has it open; one data directory serves one"
                " instance at a time (several instances share a DATABASE_URL)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        _HELD.add(self.path)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the lock
            self._fd = None
            _HELD.discard(self.path)


def _take_back(db: sqlite3.Connection, now: float) -> list[int]:
    """Queue again the jobs marked running, whose worker died with the process that last had the store: the
    claim that started each stays counted as an attempt, so a job that kills its worker each time still
    ends as given up."""
    rows = db.execute(
        "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL, updated_at = ?"
        " WHERE status = 'running' RETURNING id",
        (now,),
    ).fetchall()
    return sorted(row["id"] for row in rows)


def _add_columns(db: sqlite3.Connection) -> None:
    """Bring a job store an older version made up to this schema, in place; its jobs keep working."""
    db.execute("BEGIN IMMEDIATE")  # two services opening one old store: only one adds the columns
    try:
        present = {row["name"] for row in db.execute("PRAGMA table_info(jobs)")}
        for name, definition in ADDED_COLUMNS.items():
            if name not in present:
                db.execute(f"ALTER TABLE jobs ADD COLUMN {name} {definition}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def read_jobs(
    path: str | Path, *, status: str | None = None, job_id: int | None = None, limit: int = 20
) -> list[Job]:
    """Jobs in a queue file, newest first, read-only (the service may be running): what an operator
    looks at when a check run names a failed job."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no job store at {path}")
    db = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, timeout=5.0)
    db.row_factory = sqlite3.Row
    try:
        where, args = (
            ("id = ?", (job_id,))
            if job_id is not None
            else ("status = ?", (status,))
            if status
            else ("1", ())
        )
        rows = db.execute(
            f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT ?", (*args, limit)
        ).fetchall()
    finally:
        db.close()
    return [job_from_row(row) for row in rows]
