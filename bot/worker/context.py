"""What a job runs with: its pull request's GitHub resources, its progress, and what jobs share."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from bot.config import Config, parse_config
from bot.gh.actions import Actions
from bot.gh.checkruns import CheckRuns
from bot.gh.comments import ChecklistComment
from bot.gh.gitdata import GitData
from bot.gh.pullref import PullRef
from bot.gh.pulls import PullRequests
from bot.github import GitHubClient
from bot.jobs import Job, JobQueue
from bot.model import Report
from bot.rest import BlobCache, RestSnapshot
from bot.validation import ValidationStore
from bot.worker.progress import JobProgress


class Outcome(enum.StrEnum):
    """How a job ended, as the queue records it and the metrics count it."""

    DONE = "done"
    SUPERSEDED = "superseded"  # the PR moved on: nothing posted for an old head
    UNTOUCHED = "untouched"  # the PR touches no pin
    FAILED = "failed"
    RETRY = "retry"  # GitHub failed it: queued again after a wait
    RELEASED = "released"  # the service stopped: back to the queue


class Superseded(Exception):
    """The PR's head moved on: this run's results are for a commit nobody looks at any more."""


class Analyse(Protocol):
    """The engine, run off the event loop."""

    def __call__(
        self,
        config: Config,
        base: RestSnapshot,
        head: RestSnapshot,
        changed: list[str] | None,
        review: bool,
        errors: dict[str, str] | None = None,
        fetching: Callable[[str, bool], None] | None = None,
    ) -> Awaitable[Report]: ...


@dataclass(frozen=True)
class Shared:
    """What every job may use beyond its pull request: the validation store, the queue and the engine."""

    store: ValidationStore
    queue: JobQueue
    analyse: Analyse
    wake: Callable[[], None]
    catch_up_after: float  # seconds after which an unfinished dispatch's run is looked up


@dataclass
class JobContext:
    """One job being run: its pull request's resources on GitHub and what it already posted there."""

    job: Job
    gh: GitHubClient
    pull: PullRef
    progress: JobProgress
    save: Callable[[], Awaitable[None]]
    shared: Shared
    blobs: BlobCache
    prefix: str = parse_config(None).command_prefix  # the repository's, once its configuration is read

    @property
    def resumed(self) -> bool:
        """Whether an earlier attempt of this job may have posted before it stopped."""
        return self.job.attempts > 1

    @property
    def payload(self) -> dict:
        return self.job.payload

    def at_pull(self, number: int) -> JobContext:
        """The same job working on pull request `number` (for jobs whose payload names none)."""
        return replace(self, pull=replace(self.pull, number=number))

    @property
    def pulls(self) -> PullRequests:
        return PullRequests(self.gh, self.pull, self.blobs)

    @property
    def comment(self) -> ChecklistComment:
        return ChecklistComment(self.gh, self.pull, self.progress, self.save, self.job.id, self.resumed)

    @property
    def checks(self) -> CheckRuns:
        return CheckRuns(self.gh, self.pull, self.progress, self.save, self.job.id, self.resumed)

    @property
    def actions(self) -> Actions:
        return Actions(self.gh, self.pull.owner, self.pull.repo)

    def git(self, owner: str | None = None, repo: str | None = None) -> GitData:
        """The git data of `owner/repo`, this repository's by default."""
        return GitData(self.gh, owner or self.pull.owner, repo or self.pull.repo)
