"""What a job runs with: its pull request's GitHub resources, its progress, and what jobs share."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from bot.config import Config, parse_config
from bot.decisions.bump import BumpRequest, RefChoice
from bot.gh.actions import Actions
from bot.gh.bumps import BumpPulls
from bot.gh.checkruns import CheckRuns
from bot.gh.comments import ChecklistComment
from bot.gh.gitdata import GitData
from bot.gh.github import GitHubClient
from bot.gh.issues import DashboardIssue
from bot.gh.progress import JobProgress
from bot.gh.protocols import (
    ActionsAPI,
    BumpPullsAPI,
    CheckRunsAPI,
    CommentAPI,
    DashboardAPI,
    GitDataAPI,
    PullRequestsAPI,
)
from bot.gh.pullref import PullRef
from bot.gh.pulls import PullRequests
from bot.gh.rest import BlobCache, RestSnapshot
from bot.model import Report
from bot.stores.jobs import Job, JobQueue
from bot.stores.validationstore import ValidationStore


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
        pull: str | None = None,
    ) -> Awaitable[Report]: ...


class RefChooser(Protocol):
    """The ref each pin of a bump moves to, chosen off the event loop (`bot.decisions.releases`)."""

    def __call__(
        self, config: Config, request: BumpRequest, versions: dict[str, bytes | None]
    ) -> Awaitable[list[RefChoice]]: ...


@dataclass(frozen=True)
class Shared:
    """What every job may use beyond its pull request: the validation store, the queue and the engine."""

    store: ValidationStore
    queue: JobQueue
    analyse: Analyse
    wake: Callable[[], None]
    catch_up_after: float  # seconds after which an unfinished dispatch's run is looked up
    choose_refs: RefChooser
    forget_pinned: Callable[[str], None] = lambda pull: None  # drops the commits a closed pull request pinned


@dataclass
class JobContext:
    """One job being run: its pull request's resources on GitHub and what it already posted there.

    Jobs reach GitHub only through these narrow interfaces: `on_github` gives the REST ones, a test may
    give in-process fakes."""

    job: Job
    pull: PullRef
    progress: JobProgress
    save: Callable[[], Awaitable[None]]
    shared: Shared
    pulls: PullRequestsAPI
    comment: CommentAPI
    checks: CheckRunsAPI
    actions: ActionsAPI
    git_of: Callable[[str, str], GitDataAPI]  # a repository's git data, by owner and name
    reopen: Callable[[PullRef], JobContext]  # the same job on another pull request of the repository
    bumps: BumpPullsAPI  # the repository's bump pull requests
    dashboard: DashboardAPI  # the repository's pin dashboard issue
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
        return self.reopen(replace(self.pull, number=number))

    def git(self, owner: str | None = None, repo: str | None = None) -> GitDataAPI:
        """The git data of `owner/repo`, this repository's by default."""
        return self.git_of(owner or self.pull.owner, repo or self.pull.repo)


def on_github(
    job: Job,
    gh: GitHubClient,
    pull: PullRef,
    progress: JobProgress,
    save: Callable[[], Awaitable[None]],
    shared: Shared,
    blobs: BlobCache,
) -> JobContext:
    """A job's context whose resources are GitHub's REST API, through the installation client `gh`."""
    resumed = job.attempts > 1
    return JobContext(
        job,
        pull,
        progress,
        save,
        shared,
        pulls=PullRequests(gh, pull, blobs, lambda sha: shared.queue.saw_head(pull.key, sha)),
        comment=ChecklistComment(gh, pull, progress, save, job.id, resumed),
        checks=CheckRuns(gh, pull, progress, save, job.id, resumed),
        actions=Actions(gh, pull.owner, pull.repo),
        git_of=lambda owner, repo: GitData(gh, owner, repo),
        reopen=lambda other: on_github(job, gh, other, progress, save, shared, blobs),
        bumps=BumpPulls(gh, pull.owner, pull.repo, blobs),
        dashboard=DashboardIssue(gh, pull.owner, pull.repo),
    )
