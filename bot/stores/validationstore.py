"""Where `/llama validate` keeps its dispatches, `/llama bump` the branches it made and the refs it skips,
and the pin dashboard its issue: SQLite, or PostgreSQL shared by several instances.

A dispatch that is still waiting for its run must survive a restart, so the record is written before
the dispatch call (`bot.decisions.validation.new_dispatch`). `PostgresValidationStore` runs the same queries with
PostgreSQL's placeholders when `DATABASE_URL` is set, on the table `bot/stores/migrations` creates, reconnecting
as `bot.stores.pgstore` does.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import psycopg

from bot.decisions.validation import FORK_BRANCH_PREFIX, Dispatch
from bot.stores.pgstore import RECONNECT_FOR

_COLUMNS = ", ".join(f.name for f in fields(Dispatch))
_SCHEMA = """
CREATE TABLE IF NOT EXISTS validation_dispatches (
    repo TEXT NOT NULL,
    pr INTEGER NOT NULL,
    platform TEXT NOT NULL,
    workflow TEXT NOT NULL,
    ref TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    request_id TEXT PRIMARY KEY,
    dispatched_at TEXT NOT NULL,
    check_run_id INTEGER,
    run_id INTEGER,
    run_url TEXT,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'in_progress', 'completed')),
    conclusion TEXT,
    started_at TEXT,
    completed_at TEXT,
    report TEXT
);
CREATE INDEX IF NOT EXISTS validation_by_repo_status ON validation_dispatches (repo, status);
CREATE INDEX IF NOT EXISTS validation_by_pr ON validation_dispatches (repo, pr);
CREATE INDEX IF NOT EXISTS validation_by_run ON validation_dispatches (repo, run_id);
CREATE TABLE IF NOT EXISTS bump_branches (
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,
    sha TEXT NOT NULL,
    made_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, branch)
);
CREATE TABLE IF NOT EXISTS skipped_refs (
    repo TEXT NOT NULL,
    pin TEXT NOT NULL,
    ref TEXT NOT NULL,
    skipped_by TEXT NOT NULL,
    skipped_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, pin, ref)
);
CREATE TABLE IF NOT EXISTS dashboards (
    repo TEXT PRIMARY KEY,
    issue INTEGER NOT NULL,
    newest TEXT NOT NULL,
    refreshed_at DOUBLE PRECISION NOT NULL
);
"""


@dataclass(frozen=True)
class DashboardRecord:
    """A repository's pin dashboard as last refreshed."""

    issue: int
    newest: dict[str, str]  # pin -> the newest ref it showed
    refreshed_at: float


_MADE_BRANCH = (
    "INSERT INTO bump_branches (repo, branch, sha, made_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (repo, branch) DO UPDATE SET sha = excluded.sha, made_at = excluded.made_at"
)


class ValidationStore:
    """Dispatches in SQLite: a file of its own, or a connection the service already has open."""

    def __init__(self, db: str | Path | sqlite3.Connection):
        if isinstance(db, sqlite3.Connection):
            self._db, self._owned = db, False
        else:
            Path(db).parent.mkdir(parents=True, exist_ok=True)
            # Usable from worker threads too; the lock serialises the statements.
            self._db = sqlite3.connect(db, isolation_level=None, timeout=10.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._owned = True
        self._lock = threading.Lock()
        with self._lock, self._db:
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(validation_dispatches)")}
            if "report" not in columns:  # a store written before platform runs had reports
                self._db.execute("ALTER TABLE validation_dispatches ADD COLUMN report TEXT")

    def close(self) -> None:
        if self._owned:
            self._db.close()

    def _write(self, sql: str, args: tuple) -> None:
        with self._lock, self._db:
            self._db.execute(sql, args)

    def _execute(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock, self._db:
            return self._db.execute(sql, args).fetchall()

    def _select(self, where: str, args: tuple) -> list[Dispatch]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM validation_dispatches WHERE {where} ORDER BY dispatched_at, rowid",
                args,
            ).fetchall()
        return [Dispatch(*row) for row in rows]

    def add(self, dispatch: Dispatch) -> None:
        marks = ", ".join("?" * len(fields(Dispatch)))
        self._write(f"INSERT INTO validation_dispatches ({_COLUMNS}) VALUES ({marks})", astuple(dispatch))

    def get(self, request_id: str) -> Dispatch | None:
        return next(iter(self._select("request_id = ?", (request_id,))), None)

    def update(self, dispatch: Dispatch) -> None:
        """Write back every field of a dispatch (by request id), e.g. the result of `apply_run`."""
        names = [f.name for f in fields(Dispatch) if f.name != "request_id"]
        assignments = ", ".join(f"{n} = ?" for n in names)
        self._write(
            f"UPDATE validation_dispatches SET {assignments} WHERE request_id = ?",
            (*(getattr(dispatch, n) for n in names), dispatch.request_id),
        )

    def attach_run(self, request_id: str, run_id: int, url: str | None) -> None:
        """Record the run id and page from a 200 dispatch answer."""
        self._write(
            "UPDATE validation_dispatches SET run_id = ?, run_url = ? WHERE request_id = ?",
            (run_id, url, request_id),
        )

    def find_open(self, repo: str, run_id: int | None = None) -> list[Dispatch]:
        """Dispatches a workflow_run of `repo` may belong to: unfinished ones, and the one holding `run_id`
        whatever its state (a re-run of a finished run reports under the same id)."""
        return self._select("repo = ? AND (status != 'completed' OR run_id = ?)", (repo, run_id))

    def unfinished(self, dispatched_before: str) -> list[Dispatch]:
        """Dispatches of every repository still waiting for their run's conclusion, dispatched before
        the given time: those whose workflow_run events may have been missed."""
        return self._select("status != 'completed' AND dispatched_at < ?", (dispatched_before,))

    def by_check_run(self, repo: str, check_run_id: int) -> Dispatch | None:
        """The dispatch behind a `validate: <platform>` check run, for `rerequested`."""
        return next(iter(self._select("repo = ? AND check_run_id = ?", (repo, check_run_id))), None)

    def for_pr(self, repo: str, pr: int) -> list[Dispatch]:
        """Every dispatch of a PR, oldest first (what `platform_rows` takes)."""
        return self._select("repo = ? AND pr = ?", (repo, pr))

    def superseded(self, repo: str, pr: int, head_sha: str) -> list[Dispatch]:
        """Unfinished dispatches for older commits of the PR: what `cancel_superseded` cancels."""
        return self._select(
            "repo = ? AND pr = ? AND status != 'completed' AND head_sha != ?", (repo, pr, head_sha)
        )

    def forks_to_clean(self, repo: str, pr: int) -> list[str]:
        """The llama-bot/pr-<n> branches this PR's dispatches ran on: delete them when it closes."""
        return sorted({d.ref for d in self.for_pr(repo, pr) if d.ref.startswith(FORK_BRANCH_PREFIX)})

    def made_branch(self, repo: str, branch: str, sha: str) -> None:
        """Record that the bot set bump branch `branch` of `repo` to `sha`."""
        self._execute(_MADE_BRANCH, (repo, branch, sha, time.time()))

    def branch_made(self, repo: str, branch: str) -> str | None:
        """The commit the bot last set `branch` to; None for a branch it never made."""
        rows = self._execute("SELECT sha FROM bump_branches WHERE repo = ? AND branch = ?", (repo, branch))
        return rows[0][0] if rows else None

    def branches_made(self, repo: str) -> list[str]:
        """Every bump branch of `repo` the bot set and has not deleted, oldest first."""
        rows = self._execute("SELECT branch FROM bump_branches WHERE repo = ? ORDER BY made_at", (repo,))
        return [row[0] for row in rows]

    def skip_ref(self, repo: str, pin: str, ref: str, by: str) -> None:
        """Record that scheduled bumps of `pin` leave `ref` out, as `by` asked."""
        self._execute(
            "INSERT INTO skipped_refs (repo, pin, ref, skipped_by, skipped_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (repo, pin, ref) DO NOTHING",
            (repo, pin, ref, by, time.time()),
        )

    def skipped_refs(self, repo: str, pin: str) -> frozenset[str]:
        rows = self._execute("SELECT ref FROM skipped_refs WHERE repo = ? AND pin = ?", (repo, pin))
        return frozenset(row[0] for row in rows)

    def forget_branch(self, repo: str, branch: str) -> None:
        self._execute("DELETE FROM bump_branches WHERE repo = ? AND branch = ?", (repo, branch))

    def dashboard(self, repo: str) -> DashboardRecord | None:
        """The pin dashboard issue of `repo` and what its last refresh showed; None before the first."""
        rows = self._execute("SELECT issue, newest, refreshed_at FROM dashboards WHERE repo = ?", (repo,))
        return DashboardRecord(rows[0][0], json.loads(rows[0][1]), rows[0][2]) if rows else None

    def dashboard_shown(self, repo: str, issue: int, newest: dict[str, str]) -> None:
        """Record that issue `issue` of `repo` now shows the pins' newest refs `newest` (pin -> ref)."""
        self._execute(
            "INSERT INTO dashboards (repo, issue, newest, refreshed_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (repo) DO UPDATE SET issue = excluded.issue, newest = excluded.newest,"
            " refreshed_at = excluded.refreshed_at",
            (repo, issue, json.dumps(newest, sort_keys=True), time.time()),
        )


class PostgresValidationStore(ValidationStore):
    """The dispatches of `ValidationStore` in the shared database (its queries, PostgreSQL's placeholders)."""

    def __init__(self, url: str):  # not ValidationStore's: that one opens SQLite
        self.url = url
        self._lock = threading.Lock()
        self._pg: psycopg.Connection | None = None

    def _connection(self) -> psycopg.Connection:
        if self._pg is None or self._pg.closed:
            self._pg = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
        return self._pg

    def _execute(self, sql: str, args: tuple) -> list[tuple]:
        sql = sql.replace("?", "%s")
        deadline = time.monotonic() + RECONNECT_FOR
        with self._lock:
            while True:
                try:
                    cursor = self._connection().execute(sql, args)  # type: ignore[arg-type]
                    return cursor.fetchall() if cursor.description else []
                except psycopg.OperationalError:
                    self.close()  # the next try opens a new connection
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

    def _write(self, sql: str, args: tuple) -> None:
        if sql.startswith("INSERT"):  # a repeat after a lost answer finds its row there
            sql += " ON CONFLICT (request_id) DO NOTHING"
        self._execute(sql, args)

    def _select(self, where: str, args: tuple) -> list[Dispatch]:
        rows = self._execute(
            f"SELECT {_COLUMNS} FROM validation_dispatches WHERE {where} ORDER BY dispatched_at, seq", args
        )
        return [Dispatch(*row) for row in rows]

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
            self._pg = None
