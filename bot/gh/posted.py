"""What a resource a job posts to needs to post once: the job's progress, saved, and whether it resumes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.gh.github import GitHubClient
from bot.gh.progress import JobProgress
from bot.gh.pullref import PullRef


class PostedByJob:
    """A pull request's resource as one job posts to it: what it posted is in `progress`, kept by `save`,
    and a `resumed` job looks for what an earlier attempt posted before posting again."""

    def __init__(
        self,
        gh: GitHubClient,
        ref: PullRef,
        progress: JobProgress,
        save: Callable[[], Awaitable[None]],
        job_id: int,
        resumed: bool,
    ):
        self.gh, self.ref, self.progress, self.save = gh, ref, progress, save
        self.job_id, self.resumed = job_id, resumed
