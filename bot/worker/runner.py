"""The worker: claims jobs from the durable queue, keeps their lease, runs each kind's handler, and retries
what GitHub failed.

A job records what it has posted (comment, check runs, commands done) in its progress, so a job resumed
after a crash edits what it posted instead of posting it again. Results are posted only for the commit
that is still the PR's head.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import aiohttp
from gidgethub import HTTPException

from bot.child.sandbox import DEFAULT_LIMITS, Limits, run_limited
from bot.config import Config
from bot.decisions.bump import BumpRequest, RefChoice
from bot.decisions.releases import ChooseRefs
from bot.gh import message_of
from bot.gh.github import BodyTooLarge, GitHubApp
from bot.gh.progress import JobProgress
from bot.gh.pullref import PullRef
from bot.gh.pulls import PullRequests
from bot.gh.rest import BlobCache, FileNotRead, RestSnapshot
from bot.gh.retries import transient
from bot.model import AnalysisError, Report
from bot.repos import pinned
from bot.repos.upstreamrefs import RecentListings
from bot.stores.jobs import Job, JobQueue, JobRequest, bump_key
from bot.stores.validationstore import ValidationStore
from bot.worker import analysis, bump, closed, commands, dashboard, platforms, runreports
from bot.worker.childanalysis import PRELOADED, ChildAnalysis, SnapshotSpec
from bot.worker.context import JobContext, Outcome, Shared, on_github
from bot.worker.failure import report_failure
from bot.worker.metrics import Metrics

log = logging.getLogger("bot.service")
T = TypeVar("T")

MAX_ATTEMPTS = 3  # claims of one job before the bot stops retrying a job that kills its worker
STOP_GRACE = 10.0  # seconds `Service.stop` waits for its tasks to end after cancelling them
VALIDATION_DB = "validation.sqlite3"
CATCH_UP_AFTER = 300.0  # a dispatch unfinished this long (seconds) has its run looked up ...
CATCH_UP_EVERY = 600.0  # ... at start and then this often
SCHEDULE_AFTER = 300.0  # seconds after start the scheduled bumps are first looked for, ...
SCHEDULE_EVERY = 3600.0  # ... and then this often

JOBS: dict[str, Callable[[JobContext], Awaitable[Outcome]]] = {
    "analysis": analysis.analysis_job,
    "command": commands.command_job,
    "workflow_run": platforms.workflow_run_job,
    "platforms": runreports.platforms_job,
    "revalidate": platforms.revalidate_job,
    "closed": closed.closed_job,
    "catch_up": platforms.catch_up_job,
    "bump": bump.scheduled_bump_job,
    "bump_command": bump.bump_command_job,
    "dashboard": dashboard.dashboard_job,
    "dashboard_tick": dashboard.tick_job,
}


@dataclass(frozen=True)
class JobBackoff:
    """When a job GitHub failed (no answer, 5xx, rate limit) is tried again: `first` seconds, doubling up to
    `cap`, each wait spread over its upper half by jitter; once the waits add up to `total`, it fails."""

    first: float = 15.0
    cap: float = 900.0
    total: float = 3600.0


def retry_in(backoff: JobBackoff, retries: int, jitter: float) -> float | None:
    """Seconds before retry number `retries + 1`, or None when the job has waited `total` already.

    `jitter` is a number in [0, 1): jobs that GitHub failed together do not all come back at once.
    """
    steps = [min(backoff.cap, backoff.first * 2**n) for n in range(retries + 1)]
    if sum(steps[:-1]) >= backoff.total:
        return None
    return steps[-1] * (0.5 + jitter / 2)


class GaveUp(Exception):
    """A job that kept stopping its worker (crash, kill) is not tried again."""


def short_reason(exc: BaseException) -> str:
    """One line for the PR; never a token (gidgethub's messages are GitHub's own)."""
    if isinstance(exc, (GaveUp, BodyTooLarge)):
        return str(exc)
    if isinstance(exc, HTTPException):
        return _github_answer(exc)
    if isinstance(exc, TimeoutError):
        return "GitHub did not answer in time"
    if isinstance(exc, aiohttp.ClientError):
        return f"could not reach GitHub ({type(exc).__name__})"
    first = (str(exc).splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _github_answer(exc: HTTPException) -> str:
    """GitHub's status, with the first line of its message when that says more than the status."""
    text = f"GitHub answered {int(exc.status_code)} {exc.status_code.phrase}"
    detail = message_of(exc)
    if detail and detail != exc.status_code.phrase:
        text += f" ({detail.splitlines()[0][:200]})"
    return text


class Service:
    """The workers and the catch-up loop of one instance, and what their jobs share."""

    def __init__(
        self,
        *,
        queue: JobQueue,
        github: GitHubApp,
        data_dir: Path,
        url_instead_of: str | None,
        workers: int,
        metrics: Metrics,
        poll_interval: float = 1.0,
        catch_up_after: float = CATCH_UP_AFTER,
        catch_up_every: float = CATCH_UP_EVERY,
        schedule: tuple[float, float] = (SCHEDULE_AFTER, SCHEDULE_EVERY),
        backoff: JobBackoff = JobBackoff(),
        store: ValidationStore | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ):
        self.queue = queue
        self.github = github
        self.data_dir = Path(data_dir)
        self.workers = workers
        self.metrics = metrics
        self.poll_interval = poll_interval
        self.backoff = backoff
        self.catch_up_every = catch_up_every
        self.schedule = schedule  # (first after start, then every), seconds
        self.blobs = BlobCache()
        self.listings = RecentListings()  # what each upstream advertised in the last minute
        self._executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="analysis")
        self.store = store or ValidationStore(self.data_dir / VALIDATION_DB)
        self.url_instead_of = url_instead_of
        self.limits = limits
        multiprocessing.set_forkserver_preload(PRELOADED)
        self.shared = Shared(
            self.store,
            queue,
            self.analyse,
            self.wake,
            catch_up_after,
            self.choose_refs,
            lambda pull: pinned.forget_pull(self.data_dir, pull),
        )
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._stopping = False
        self._worker_prefix = f"{socket.gethostname()}:{os.getpid()}"

    # -- lifecycle --

    def start(self) -> None:
        self._stopping = False
        self._tasks = [
            asyncio.create_task(self._work(f"{self._worker_prefix}:{n}"), name=f"worker-{n}")
            for n in range(self.workers)
        ]
        self._tasks.append(asyncio.create_task(self._catch_up(), name="catch-up"))
        self._tasks.append(asyncio.create_task(self._scheduled_bumps(), name="scheduled-bumps"))

    async def stop(self) -> None:
        """Cancel the workers (a running job goes back to the queue) and wait for them, STOP_GRACE at most:
        a task that does not end by then is left behind and named in the log, the service stops anyway."""
        self._stopping = True
        self._wakeup.set()
        for task in self._tasks:
            task.cancel()
        await self._wait_cancelled()
        self._tasks = [task for task in self._tasks if not task.done()]  # what `running` still sees
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.store.close()

    async def _wait_cancelled(self) -> None:
        """Give the cancelled tasks STOP_GRACE to end; the log names those that do not."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=STOP_GRACE)
        if pending:
            log.warning(
                "tasks did not stop in time", extra={"tasks": ", ".join(t.get_name() for t in pending)}
            )

    def wake(self) -> None:
        """A job was queued: let an idle worker look now instead of at its next poll."""
        self._wakeup.set()

    @property
    def running(self) -> bool:
        """Whether any worker or the catch-up loop is still going."""
        return any(not task.done() for task in self._tasks)

    # -- the engine --

    async def analyse(
        self,
        config: Config,
        base: RestSnapshot,
        head: RestSnapshot,
        changed: list[str] | None,
        review: bool,
        errors: dict[str, str] | None = None,
        fetching: Callable[[str, bool], None] | None = None,
        pull: str | None = None,
    ) -> Report:
        """The engine's report, computed in a child process within the analysis limits; a worker thread
        serves the child's reads of the pull request over its own connection, and kills the child when
        the job is cancelled (the service stops)."""
        reader = await base.thread_reader()
        sides = {"base": base.reading_with(reader), "head": head.reading_with(reader)}
        request = ChildAnalysis(
            config,
            SnapshotSpec.of("base", base),
            SnapshotSpec.of("head", head),
            changed,
            review,
            self.data_dir,
            self.url_instead_of,
            pull,
        )

        def answer(question: tuple) -> bytes | FileNotRead | None:
            if question[0] == "tips":
                return self.listings.recent(question[1])
            _, side, path = question
            try:
                return sides[side].read(path)
            except FileNotRead as refusal:  # the child's to raise: only the analysis of its pin stops
                return refusal

        def hear(note: tuple) -> None:
            if note[0] == "tips":
                self.listings.remember(note[1], note[2])
            elif note[0] == "facts":
                self.metrics.facts.labels("hit").inc(note[1])
                self.metrics.facts.labels("miss").inc(note[2])
            elif fetching is not None:
                _, name, started = note
                fetching(name, started)

        def run(stop: threading.Event) -> tuple[Report, dict[str, str]]:
            started = time.monotonic()
            with reader:
                result = run_limited(
                    request, self.limits, start_method="forkserver", answer=answer, hear=hear, stop=stop
                )
            log.info("analysis finished", extra={"seconds": round(time.monotonic() - started, 3)})
            return result

        report, child_errors = await self._in_child(run)
        if errors is not None:
            errors.update(child_errors)
        return report

    async def choose_refs(
        self, config: Config, request: BumpRequest, versions: dict[str, bytes | None]
    ) -> list[RefChoice]:
        """The ref each pin of a bump moves to, chosen in a child process within the analysis limits (the
        upstreams' tag listings and the configured patterns are outside input)."""
        target = ChooseRefs(config, request, versions, self.url_instead_of, prefix=config.command_prefix)
        return await self._in_child(
            lambda stop: run_limited(target, self.limits, start_method="forkserver", stop=stop)
        )

    async def _in_child(self, run: Callable[[threading.Event], T]) -> T:
        """`run(stop)` in a worker thread; cancelling the job sets `stop`, which kills its child."""
        stop = threading.Event()
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, run, stop)
        except asyncio.CancelledError:
            stop.set()
            raise

    # -- the workers --

    async def _work(self, worker: str) -> None:
        # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation that arrives just as the
        # event is set (fixed in 3.12); the flag ends the loop even if one is lost some other way.
        while not self._stopping:
            self._wakeup.clear()
            try:
                job = await self._claim(worker)
            except Exception:
                log.exception("claiming a job failed", extra={"worker": worker})
                job = None
            if job is None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_interval):
                        await self._wakeup.wait()
                continue
            if self._stopping:
                await self.queue.release(job.id, worker)
                return
            await self._run(job, worker)

    async def _claim(self, worker: str) -> Job | None:
        """`queue.claim`, whose job is given back when the stop lands while the claim is being written:
        otherwise it would stay leased to a worker that is gone until the lease runs out."""
        claim = asyncio.ensure_future(self.queue.claim(worker))
        try:
            return await asyncio.shield(claim)
        except asyncio.CancelledError:
            job = await claim
            if job is not None:
                await self.queue.release(job.id, worker)
            raise

    async def _keep_lease(self, job: Job, worker: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            if not await self.queue.renew(job.id, worker):
                log.warning("lost the lease of a job", extra={"job_id": job.id, "worker": worker})
                return

    def _context(self, job: Job) -> JobContext:
        progress = JobProgress.from_dict(job.progress)
        payload = job.payload
        return on_github(
            job,
            self.github.installation(payload["installation_id"]),
            PullRef(payload["owner"], payload["repo"], payload.get("number")),
            progress,
            lambda: self.queue.save_progress(job.id, progress.to_dict()),
            self.shared,
            self.blobs,
        )

    async def _run(self, job: Job, worker: str) -> None:
        started = time.monotonic()
        context = {"job_id": job.id, "kind": job.kind, "delivery_id": job.delivery_id, "pull": job.key}
        heartbeat = asyncio.create_task(self._keep_lease(job, worker, self.queue.lease_seconds / 3))
        ctx = self._context(job)
        outcome = Outcome.FAILED
        try:
            if job.attempts - job.retries > MAX_ATTEMPTS:  # claims that ended without a word: crashes
                raise GaveUp(f"gave up after {MAX_ATTEMPTS} attempts: the worker stopped each time")
            log.info("job started", extra={**context, "attempt": job.attempts})
            outcome = await JOBS[job.kind](ctx)
            finished = Outcome.SUPERSEDED if outcome is Outcome.SUPERSEDED else Outcome.DONE
            await self.queue.finish(job.id, worker, finished.value)
        except asyncio.CancelledError:
            outcome = Outcome.RELEASED
            await self.queue.release(job.id, worker)
            raise
        except Exception as exc:  # noqa: BLE001 (`_failed` logs it with its traceback)
            outcome = await self._failed(ctx, worker, exc, context)
        finally:
            heartbeat.cancel()
            seconds = time.monotonic() - started
            self.metrics.jobs.labels(job.kind, outcome.value).observe(seconds)
            log.info(
                "job finished", extra={**context, "outcome": outcome.value, "seconds": round(seconds, 3)}
            )

    async def _failed(self, ctx: JobContext, worker: str, exc: Exception, context: dict) -> Outcome:
        """A job that raised: queued again after a wait when GitHub failed it and time is left, else
        reported on its pull request and finished as failed."""
        job, reason = ctx.job, short_reason(exc)
        delay = retry_in(self.backoff, job.retries, random.random()) if transient(exc) else None
        if delay is not None:
            log.warning(
                "job will be retried",
                extra={**context, "reason": reason, "retry": job.retries + 1, "delay": round(delay, 1)},
            )
            await self.queue.retry(job.id, worker, delay, reason)
            return Outcome.RETRY
        if transient(exc) and job.retries:
            reason = f"{reason}; gave up after retrying {job.retries} times"
        log.exception("job failed", extra={**context, "reason": reason}, exc_info=exc)
        await report_failure(ctx, reason)
        await self.queue.finish(job.id, worker, Outcome.FAILED.value, reason)
        return Outcome.FAILED

    # -- catching up on workflow runs --

    async def queue_catch_up(self) -> None:
        """One catch-up job for each repository with dispatches that have waited `catch_up_after` seconds."""
        stamp = int(time.time())
        for repo in sorted({d.repo for d in platforms.overdue(self.store, self.shared.catch_up_after)}):
            owner, name = repo.split("/", 1)
            try:
                installation = await self.github.repo_installation(owner, name)
            except (HTTPException, aiohttp.ClientError, TimeoutError) as exc:
                log.warning(
                    "cannot catch up on workflow runs", extra={"repo": repo, "reason": short_reason(exc)}
                )
                continue
            payload = {"installation_id": installation, "owner": owner, "repo": name}
            request = JobRequest("catch_up", f"{repo}:workflow_runs".lower(), payload)
            await self.queue.enqueue(f"catch-up:{repo}:{stamp}", "catch_up", [request])
        self.wake()

    async def _catch_up(self) -> None:
        """At start and then every `catch_up_every` seconds: runs whose events were missed while the service
        was down, or that GitHub failed to deliver, still reach their check runs."""
        while not self._stopping:
            try:
                await self.queue_catch_up()
            except Exception:
                log.exception("catching up on workflow runs failed")
            await asyncio.sleep(self.catch_up_every)

    # -- scheduled bumps and dashboards --

    async def queue_bumps(self, now: float | None = None, started: bool = False) -> None:
        """One bump job for each pin with `bump_every` in each repository the App is installed on, per
        period: the delivery id names the period, so the job store takes it once (across instances and
        restarts), and after downtime only the current period's is queued, never the ones missed. With a
        pin dashboard, a look at it each time (a refresh when due), forced on the first pass after a start."""
        stamp = time.time() if now is None else now
        for installation in await self.github.installations():
            gh = self.github.installation(installation)
            async for repo in gh.getiter(
                "/installation/repositories?per_page=100", iterable_key="repositories"
            ):
                if not repo.get("archived"):
                    await self._queue_repo_bumps(installation, repo, stamp, started)
        self.wake()

    async def _queue_repo_bumps(self, installation: int, repo: dict, now: float, started: bool) -> None:
        """The bump jobs of one repository's scheduled pins and the look at its dashboard, by its
        configuration on its default branch."""
        owner, name, branch = repo["owner"]["login"], repo["name"], repo["default_branch"]
        pulls = PullRequests(self.github.installation(installation), PullRef(owner, name), self.blobs)
        try:
            config = await pulls.config(branch)
        except (AnalysisError, HTTPException, aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "no scheduled bumps: the configuration cannot be read",
                extra={"repo": f"{owner}/{name}", "reason": short_reason(exc)},
            )
            return
        for pin in config.pins:
            if pin.bump_every is None:
                continue
            period = int(now // pin.bump_every)
            payload = {
                "installation_id": installation,
                "owner": owner,
                "repo": name,
                "pin": pin.name,
                "default_branch": branch,
            }
            key = bump_key(owner, name)
            await self.queue.enqueue(
                f"bump:{owner}/{name}:{pin.name}:{period}", "bump", [JobRequest("bump", key, payload)]
            )
        if config.dashboard.enabled:
            await self._queue_dashboard(installation, owner, name, branch, now, started)

    async def _queue_dashboard(
        self, installation: int, owner: str, name: str, branch: str, now: float, started: bool
    ) -> None:
        """A look at the repository's dashboard: one per pass of the schedule (the job refreshes it when
        due), forced on the first pass after this worker's start."""
        when = f"start:{self._worker_prefix}:{int(now)}" if started else str(int(now // self.schedule[1]))
        payload = {
            "installation_id": installation,
            "owner": owner,
            "repo": name,
            "default_branch": branch,
            "reason": "start" if started else "schedule",
        }
        request = JobRequest("dashboard", bump_key(owner, name), payload)
        await self.queue.enqueue(f"dashboard:{owner}/{name}:{when}", "dashboard", [request])

    async def _scheduled_bumps(self) -> None:
        """`schedule[0]` seconds after start, then every `schedule[1]`: the scheduled bumps of the period."""
        first, every = self.schedule
        await asyncio.sleep(first)
        started = True
        while not self._stopping:
            try:
                await self.queue_bumps(started=started)
                started = False
            except Exception:
                log.exception("queueing the scheduled bumps failed")
            await asyncio.sleep(every)
