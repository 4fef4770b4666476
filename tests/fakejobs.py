"""An in-process stand-in for the GitHub resources a job uses (the protocols of `bot.gh.protocols`):
job logic tested without HTTP. Each fake keeps what it was asked to post, in order."""

from __future__ import annotations

import copy
import datetime as dt
import time
from dataclasses import dataclass, field

from bot.config import Config, Pin, parse_config
from bot.decisions.approval import HeadSeen
from bot.gh.gitdata import BranchMoved
from bot.gh.progress import JobProgress
from bot.gh.pullref import PullRef
from bot.model import Report
from bot.repos.snapshot import MemorySnapshot
from bot.stores.jobs import Job
from bot.stores.validationstore import ValidationStore
from bot.worker.context import JobContext, Shared

PUSHED_AT = "2026-01-01T00:00:00Z"  # the head repository's last push: before `COMMENTED_AT`
COMMENTED_AT = "2026-01-02T00:00:00Z"  # when a command job's comment was written


def pull(head_sha: str = "h" * 40, *, fork: bool = False, can_modify: bool = False) -> dict:
    head_full = "someone/ollama" if fork else "ollama/ollama"
    return {
        "number": 7,
        "state": "open",
        "maintainer_can_modify": can_modify,
        "head": {
            "sha": head_sha,
            "ref": "bump",
            "repo": {
                "full_name": head_full,
                "name": "ollama",
                "owner": {"login": head_full.split("/")[0]},
                "default_branch": "main",
                "pushed_at": PUSHED_AT,
            },
        },
        "base": {"sha": "b" * 40, "repo": {"full_name": "ollama/ollama", "default_branch": "main"}},
    }


class SnapshotWithFetch(MemorySnapshot):
    async def fetch(self, path: str) -> bytes | None:
        return self.read(path)

    def mode(self, path: str) -> str | None:
        return "100644" if self.read(path) is not None else None


@dataclass
class FakePulls:
    pr: dict = field(default_factory=pull)
    changed: list[str] = field(default_factory=list)
    config_: Config = field(default_factory=lambda: parse_config(None))
    role: str = "write"
    heads: list[str] = field(default_factory=list)  # head shas the next reads return, then `pr`'s
    head_files: dict[str, bytes] = field(default_factory=dict)
    reactions: list[tuple[int, str]] = field(default_factory=list)

    async def get(self) -> dict:
        if self.heads:
            return {**self.pr, "head": {**self.pr["head"], "sha": self.heads.pop(0)}}
        return self.pr

    async def changed_paths(self) -> list[str]:
        return list(self.changed)

    async def snapshots(self, pr: dict):
        return SnapshotWithFetch({}), SnapshotWithFetch(self.head_files)

    async def config(self, default_branch: str) -> Config:
        return self.config_

    async def repo_config(self, pr: dict) -> Config:
        return self.config_

    async def permission(self, login: str) -> dict:
        return {"permission": self.role, "role_name": self.role}

    async def react(self, comment_id: int, content: str) -> None:
        self.reactions.append((comment_id, content))


@dataclass
class FakeComment:
    progress: JobProgress
    body: str | None = None  # the checklist comment's body, None while there is none
    bodies: list[str] = field(default_factory=list)  # every body put, in order
    replies: list[str] = field(default_factory=list)

    async def find(self) -> dict | None:
        return None if self.body is None else {"id": 1, "body": self.body}

    async def adopt(self) -> dict | None:
        found = await self.find()
        if found is not None:
            self.progress.comment_id = found["id"]
        return found

    async def put(self, body: str) -> None:
        self.body = body
        self.bodies.append(body)
        self.progress.comment_id = 1

    async def reply(self, body: str) -> None:
        self.replies.append(body)
        self.progress.replies += 1


@dataclass
class FakeChecks:
    progress: JobProgress
    completed: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # id -> (conclusion, title)
    updates: list[tuple[int, dict]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (head, message) of fail_all
    created: list[dict] = field(default_factory=list)

    async def start(self, head_sha: str, pins: list[Pin], since: dt.datetime) -> dict[str, int]:
        runs = {
            f"{p.name}{s}": 100 + i
            for i, (p, s) in enumerate((p, s) for p in pins for s in (": patches", ": upstream review"))
        }
        self.progress.checks_sha, self.progress.check_runs = head_sha, runs
        return runs

    async def made(self, head_sha, name, made):
        return next((c for c in self.created if c["name"] == name and made(c)), None)

    async def create(self, body: dict, find) -> dict:
        created = {**body, "id": 500 + len(self.created)}
        self.created.append(created)
        return created

    async def update(self, check_id: int, body: dict) -> None:
        self.updates.append((check_id, body))

    async def complete(self, check_id: int, conclusion: str, output: dict) -> None:
        self.completed.setdefault(check_id, []).append((conclusion, output["title"]))

    async def complete_all(self, conclusion: str, output: dict) -> None:
        for check_id in self.progress.check_runs.values():
            await self.complete(check_id, conclusion, output)

    async def fail_all(self, head_sha: str, title: str, message: str, hint: str = "") -> None:
        self.failed.append((head_sha, message))


@dataclass
class FakeGit:
    moved_to: str | None = None  # the branch's sha when it moved on before the commit
    commits: list[tuple[str, list[str], str]] = field(default_factory=list)  # branch, paths, message
    forced: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    protected: set[str] = field(default_factory=set)

    async def commit(self, branch, head_sha, files, message):
        if self.moved_to:
            raise BranchMoved(self.moved_to)
        self.commits.append((branch, [path for path, _, _ in files], message))
        return "c" * 40, "https://github.com/ollama/ollama/commit/" + "c" * 40

    async def branch(self, branch: str) -> dict | None:
        return {"name": branch, "protected": branch in self.protected}

    async def force_branch(self, branch: str, sha: str) -> None:
        self.forced.append((branch, sha))

    async def delete_branch(self, branch: str) -> None:
        self.deleted.append(branch)


@dataclass
class FakeActions:
    dispatched: list[tuple[str, dict]] = field(default_factory=list)

    async def dispatch(self, workflow: str, body: dict, find) -> dict:
        self.dispatched.append((workflow, body))
        return {}

    async def run(self, run_id: int) -> dict | None:
        return None

    async def runs(self, workflow: str, query: dict) -> list[dict]:
        return []

    async def cancel(self, run_id: int) -> bool:
        return True


@dataclass
class FakeHeads:
    """The job queue's record of PR heads (`JobQueue.saw_head`, `heads`), in memory."""

    seen: dict[str, list[HeadSeen]] = field(default_factory=dict)

    async def saw_head(self, key: str, sha: str) -> None:
        heads = self.seen.setdefault(key, [])
        if not heads or heads[-1].sha != sha:
            heads.append(HeadSeen(sha, time.time()))

    async def heads(self, key: str) -> list[HeadSeen]:
        return list(self.seen.get(key, []))


@dataclass
class FakeGitHub:
    """The fakes of one job, and the job context over them."""

    job: Job
    store: ValidationStore
    report: Report = field(default_factory=Report)
    errors: dict[str, str] = field(default_factory=dict)  # what the engine says it could not check
    progress: JobProgress = field(default_factory=JobProgress)
    pulls: FakePulls = field(default_factory=FakePulls)
    git: FakeGit = field(default_factory=FakeGit)
    actions: FakeActions = field(default_factory=FakeActions)
    saved: list[dict] = field(default_factory=list)
    queue: FakeHeads = field(default_factory=FakeHeads)

    def __post_init__(self):
        self.comment = FakeComment(self.progress)
        self.checks = FakeChecks(self.progress)

    async def _analyse(
        self, config, base, head, changed, review, errors=None, fetching=None, pull=None
    ) -> Report:
        if errors is not None:
            errors.update(self.errors)
        return self.report

    async def _save(self) -> None:
        self.saved.append(copy.deepcopy(self.progress.to_dict()))

    def context(self, pull_ref: PullRef | None = None) -> JobContext:
        payload = self.job.payload
        return JobContext(
            self.job,
            pull_ref or PullRef(payload["owner"], payload["repo"], payload.get("number")),
            self.progress,
            self._save,
            Shared(self.store, self.queue, self._analyse, lambda: None, 300.0, None),  # type: ignore[arg-type]
            self.pulls,
            self.comment,
            self.checks,
            self.actions,
            lambda owner, repo: self.git,
            self.context,
            None,  # type: ignore[arg-type]  (no job of these tests opens a bump pull request)
            None,  # type: ignore[arg-type]  (nor keeps a dashboard)
        )


def job(kind: str, attempts: int = 1, **payload) -> Job:
    base = {"installation_id": 1, "owner": "ollama", "repo": "ollama", "number": 7}
    return Job(42, kind, "ollama/ollama#7", {**base, **payload}, "running", attempts)
