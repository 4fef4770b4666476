"""The durable job queue: a webhook delivery that needs work becomes a row before it is acknowledged.

Workers claim jobs with a lease they keep renewing; a worker that dies
(even by kill -9) stops renewing, and its job is claimed again once the
lease has expired, or at once when the SQLite store's one instance starts
again (`bot.stores.sqlitejobs`). Jobs with the same key (one pull request) run one at a
time, oldest first, so two runs never race to create the same comment.
A job GitHub failed can be put back with a time before which it is not
claimed (`retry`); until then it is `queued` with `retry_at` set.
The service talks to the queue only through `JobQueue`, so a shared broker
can replace the SQLite file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.decisions.approval import HeadSeen

STATUSES = ("queued", "running", "done", "failed", "superseded")
HEADS_READ = 200  # a pull request's latest recorded heads that `JobQueue.heads` returns

# A PR head recorded as seen, unless it is the last one recorded for that PR (SQLite's and PostgreSQL's
# placeholders are made from the `?`s); and forgetting old heads, each PR's last one kept.
SAW_HEAD = (
    "INSERT INTO pull_heads (key, sha, seen_at) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM"
    " (SELECT sha FROM pull_heads WHERE key = ? ORDER BY seq DESC LIMIT 1) AS last WHERE last.sha = ?)"
)
HEADS = "SELECT sha, seen_at FROM pull_heads WHERE key = ? ORDER BY seq DESC LIMIT ?"
FORGET_HEADS = (
    "DELETE FROM pull_heads WHERE seen_at < ? AND seq NOT IN (SELECT MAX(seq) FROM pull_heads GROUP BY key)"
)

# Columns later versions added, with their definitions: a store an older version made gets them at open.
ADDED_COLUMNS = {"retry_at": "REAL", "retries": "INTEGER NOT NULL DEFAULT 0"}


@dataclass(frozen=True)
class JobRequest:
    """What a router wants done for one delivery."""

    kind: str  # "analysis" or "command"
    key: str  # what the job is about ("owner/repo#number"); one job per key runs at a time
    payload: dict
    supersedes: bool = False  # replaces still-queued jobs of the same kind and key
    head: str | None = None  # the PR head this delivery shows: recorded as seen when it is stored


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    key: str
    payload: dict
    status: str
    attempts: int  # claims so far, this one included
    progress: dict = field(default_factory=dict)  # what a run already posted, for a run that resumes it
    error: str | None = None
    delivery_id: str | None = None
    created_at: float = 0.0
    retries: int = 0  # times GitHub failed it and it was put back to wait (`retry`)
    retry_at: float | None = None  # while queued: not claimed before this (epoch seconds)


def job_from_row(row: Any) -> Job:
    """A job from a row of the `jobs` table (a `sqlite3.Row` or a dict), of this schema or an older one."""
    present = set(row.keys())  # (`in row` would look among a sqlite3.Row's values)
    added = {name: row[name] for name in ADDED_COLUMNS if name in present}  # an older store lacks them
    return Job(
        row["id"],
        row["kind"],
        row["key"],
        json.loads(row["payload"]),
        row["status"],
        row["attempts"],
        json.loads(row["progress"]),
        row["error"],
        row["delivery_id"],
        row["created_at"],
        **added,
    )


class JobQueue(Protocol):
    lease_seconds: float  # a claimed job is another worker's once its lease is this old without renewal

    async def enqueue(self, delivery_id: str, event: str, requests: list[JobRequest]) -> list[int] | None:
        """Store the jobs of one delivery atomically; None when this delivery id was already stored."""

    async def claim(self, worker: str) -> Job | None:
        """The oldest runnable job, leased to `worker`; None when there is none."""

    async def renew(self, job_id: int, worker: str) -> bool:
        """Extend the lease; False when the worker no longer holds the job."""

    async def save_progress(self, job_id: int, progress: dict) -> None: ...

    async def finish(self, job_id: int, worker: str, status: str, error: str | None = None) -> bool:
        """End a job as done, failed or superseded; False when the worker no longer holds it."""

    async def release(self, job_id: int, worker: str) -> None:
        """Give a running job back to the queue (graceful shutdown)."""

    async def retry(self, job_id: int, worker: str, delay: float, error: str) -> bool:
        """Put a running job back to be claimed `delay` seconds from now, with why; False when the worker
        no longer holds it."""

    async def get(self, job_id: int) -> Job | None: ...

    async def saw_head(self, key: str, sha: str) -> None:
        """Record that `sha` is the head of pull request `key` now; nothing when it was the last recorded.

        `enqueue` records the `head` of its requests the same way, in the delivery's transaction."""

    async def heads(self, key: str) -> list[HeadSeen]:
        """The heads recorded for pull request `key`, oldest first (the last `HEADS_READ` of them)."""

    async def counts(self) -> dict[str, int]: ...

    async def close(self) -> None: ...


def head_rows(rows: list[Any]) -> list[HeadSeen]:
    """`HEADS`' rows (newest first), as `JobQueue.heads` returns them."""
    return [HeadSeen(row[0], float(row[1])) for row in reversed(rows)]


def pull_key(owner: str, repo: str, number: int) -> str:
    """The key of every job about one pull request: they run one at a time."""
    return f"{owner}/{repo}#{number}".lower()


def bump_key(owner: str, repo: str) -> str:
    """The key of every bump of one repository, asked for or scheduled: they run one at a time, so the
    second of two bumps of a pin finds the first's pull request."""
    return f"{owner}/{repo}:bump".lower()
