"""The job runner: what an analysis of a pull request and a slash command do on GitHub.

Workers claim jobs from the durable queue. A job records what it has
posted (comment, check runs, commands done) in its progress, so a job
resumed after a crash edits what it posted instead of posting it again.
Results are posted only for the commit that is still the PR's head.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import functools
import http
import logging
import os
import random
import re
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

import aiohttp
from gidgethub import BadRequest, HTTPException
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from bot.commands import COMMANDS, Command, parse_commands
from bot.config import CONFIG_PATH, Config, Pin, load_config, parse_config
from bot.engine import analyse
from bot.github import GitHubApp, GitHubClient, transient
from bot.jobs import Job, JobQueue, JobRequest, pull_key
from bot.model import REBUILT, AnalysisError, PatchResult, Report
from bot.render.banners import failed_banner, rechecking_banner, render_progress, results_of, under_banner
from bot.render.checklist import COMMENT_LIMIT, render_comment
from bot.render.checkruns import (
    ANNOTATIONS_PER_REQUEST,
    CHECK_TEXT_LIMIT,
    check_run_create,
    check_run_outputs,
    check_run_update,
    dispatch_failed_update,
)
from bot.render.env import MARKER, RUNNING, render_template
from bot.render.items import ticked_ids
from bot.render.patches import pin_view
from bot.render.platforms import platform_rows, render_platforms, splice_platforms
from bot.render.replies import dispatch_error_reply, validate_reply
from bot.rest import BlobCache, RestSnapshot
from bot.snapshot import MemorySnapshot
from bot.upstream import Mirrors, Upstream
from bot.validation import (
    Dispatch,
    ValidationStore,
    apply_run,
    dispatch_body,
    fork_branch,
    is_fork,
    iso,
    match_run,
    new_dispatch,
    runs_query,
    select_platforms,
    utc_now,
)

log = logging.getLogger("bot.service")

MAX_ATTEMPTS = 3  # claims of one job before the bot stops retrying a job that kills its worker
STOP_GRACE = 10.0  # seconds `Service.stop` waits for its tasks to end after cancelling them
FETCH_BANNER_WAIT = 30.0  # seconds a fetch waits for its banner to be posted before it goes on without
UNRESOLVED = ("conflict", "error", "upstreamed")
WRITE_ROLES = {"admin", "maintain", "write"}
GENERAL_CHECK = "llama-bot"  # the check run for failures that belong to no pin
VALIDATION_DB = "validation.sqlite3"
CATCH_UP_AFTER = 300.0  # a dispatch unfinished this long (seconds) has its run looked up ...
CATCH_UP_EVERY = 600.0  # ... at start and then this often
RUN_STATUS_ACTION = {
    "completed": "completed",
    "in_progress": "in_progress",
}  # else "requested" (queued, waiting)
PR_JOBS = ("analysis", "command")  # jobs whose failure is reported on the pull request
# A stand-in report for rendering only the checklist's platform section (the rest is kept as it was).
_TICKS_NOTE = re.compile(r"<!-- llama-bot:ticked ([\w.:\- ]*) -->")

# -- pure decisions -------------------------------------------------------------------------------


def carried_ticks(body: str | None) -> set[str]:
    """Boxes a person ticked: visible ones, and those kept in a note while a run replaced the checklist."""
    body = body or ""
    kept = {i for note in _TICKS_NOTE.findall(body) for i in note.split()}
    return ticked_ids(body) | kept


def with_ticks(body: str, ticked: Iterable[str]) -> str:
    """A progress or error body that remembers the ticked boxes for the next checklist."""
    ids = sorted(ticked)
    return f"{body.rstrip()}\n\n<!-- llama-bot:ticked {' '.join(ids)} -->\n" if ids else body


def progress_body(
    previous: str | None, head_sha: str, since: dt.datetime, fetching: str | None = None
) -> str:
    """The checklist comment while a run is under way: the last checklist (ticks and all) stays readable
    under a banner; without one, a progress note that remembers the ticked boxes. `fetching` names the
    upstream whose mirror the run is fetching."""
    results = results_of(previous)
    if results is not None:
        results_sha, checklist = results
        banner = rechecking_banner(head_sha, since.strftime("%H:%M UTC"), results_sha, fetching)
        return under_banner(checklist, banner, True)
    return with_ticks(render_progress(head_sha, human(since), fetching), carried_ticks(previous))


def error_body(previous: str | None, head_sha: str, message: str, hint: str) -> str:
    """The checklist comment of a run that could not check the commit: why, and what to do, above the last
    checklist when there is one."""
    ran_at = human(utc_now())
    results = results_of(previous)
    if results is not None:
        results_sha, checklist = results
        return under_banner(checklist, failed_banner(head_sha, ran_at, message, hint, results_sha), False)
    body = render_template(
        "reply_checklist_error.md.j2",
        marker=MARKER,
        head_sha=head_sha,
        ran_at=ran_at,
        message=message,
        hint=hint,
    )
    return with_ticks(body, carried_ticks(previous))


def check_run_updates(conclusion: str, output: dict) -> list[dict]:
    """The PATCH bodies that complete a check run: at most 50 annotations per request, the rest appended."""
    annotations = output.get("annotations") or []
    head = {k: output[k] for k in ("title", "summary", "text") if k in output}
    first_output = {**head, "annotations": annotations[:ANNOTATIONS_PER_REQUEST]} if annotations else head
    first = {"status": "completed", "conclusion": conclusion, "output": first_output}
    more = [
        {
            "output": {
                "title": head.get("title", ""),
                "summary": head.get("summary", ""),
                "annotations": annotations[i : i + ANNOTATIONS_PER_REQUEST],
            }
        }
        for i in range(ANNOTATIONS_PER_REQUEST, len(annotations), ANNOTATIONS_PER_REQUEST)
    ]
    return [first, *more]


def started_by_job(job_id: int, check_run: dict) -> bool:
    """Whether an analysis check run is the one job `job_id` started: its summary names the job
    (templates/check_in_progress.md.j2)."""
    return f"(llama-bot job {job_id})" in ((check_run.get("output") or {}).get("summary") or "")


def made_for_request(request_id: str, check_run: dict) -> bool:
    """Whether a `validate:` check run is the one made for the dispatch `request_id` (its external_id)."""
    return check_run.get("external_id") == request_id


def may_write(answer: dict) -> bool:
    """Whether a collaborator-permission answer allows commands (`maintain` is reported as `write`)."""
    return answer.get("permission") in WRITE_ROLES or answer.get("role_name") in WRITE_ROLES


def push_target(pr: dict) -> tuple[str, str, str] | None:
    """(owner, repo, branch) the bot may push regenerated patches to, or None (fork without the box)."""
    head_repo = pr["head"].get("repo")
    if not head_repo:
        return None
    same = head_repo["full_name"].lower() == pr["base"]["repo"]["full_name"].lower()
    if not same and not pr.get("maintainer_can_modify"):
        return None
    return head_repo["owner"]["login"], head_repo["name"], pr["head"]["ref"]


@dataclass(frozen=True)
class PatchChange:
    path: str
    status: str
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")

    @property
    def fence(self) -> str:
        """A code fence longer than any backtick run in the patch."""
        longest = max((len(m) for m in re.findall(r"`+", self.text)), default=0)
        return "`" * max(3, longest + 1)


def patch_changes(report: Report, current: Callable[[str], bytes | None]) -> list[PatchChange]:
    """Rebuilt patches whose bytes differ from the file at the head commit."""
    changes = []
    for pin in report.pins:
        for patch in pin.patches:
            path = patch.regenerated or patch.path
            if patch.status in REBUILT and patch.new_text is not None and patch.new_text != current(path):
                changes.append(PatchChange(path, patch.status, patch.new_text))
    return changes


def unresolved_patches(report: Report) -> list[PatchResult]:
    return [p for pin in report.pins for p in pin.patches if p.status in UNRESOLVED]


def refs_text(report: Report) -> str:
    return ", ".join(f"{pin.name} {pin.old_ref} → {pin.new_ref}" for pin in report.pins) or "no pin"


def commit_message(report: Report, changes: list[PatchChange]) -> str:
    pins = [
        pin
        for pin in report.pins
        if any(c.path in {p.regenerated or p.path for p in pin.patches} for c in changes)
    ]
    title = "Regenerate carried patches for " + ", ".join(f"{p.name} {p.new_ref}" for p in pins)
    lines = [f"- {c.path} ({c.status})" for c in changes]
    bumps = [f"{p.name}: {p.old_ref} -> {p.new_ref} ({p.compare_url})" for p in pins]
    return "\n".join([title, "", *bumps, "", *lines, "", "Generated by llama-bot (`regenerate-patches`)."])


def shown_patches(changes: list[PatchChange], budget: int) -> tuple[list[PatchChange], list[PatchChange]]:
    """Which patches fit in a reply of about `budget` characters, in order; the rest are named only."""
    shown, omitted, used = [], [], 0
    for change in changes:
        size = len(change.text) + len(change.path) + 120
        if used + size <= budget:
            shown.append(change)
            used += size
        else:
            omitted.append(change)
    return shown, omitted


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
    if isinstance(exc, GaveUp):
        return str(exc)
    if isinstance(exc, HTTPException):
        text = f"GitHub answered {int(exc.status_code)} {exc.status_code.phrase}"
        detail = str(exc.args[-1]) if exc.args and not isinstance(exc.args[-1], http.HTTPStatus) else ""
        if detail and detail != exc.status_code.phrase:
            text += f" ({detail.splitlines()[0][:200]})"
        return text
    if isinstance(exc, TimeoutError):
        return "GitHub did not answer in time"
    if isinstance(exc, aiohttp.ClientError):
        return f"could not reach GitHub ({type(exc).__name__})"
    first = (str(exc).splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def human(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


# -- metrics --------------------------------------------------------------------------------------


class Metrics:
    """The service's Prometheus metrics, in a registry of their own (one per app)."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        self.deliveries = Counter(
            "llama_bot_webhook_deliveries",
            "Webhook deliveries by event and outcome",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.jobs = Histogram(
            "llama_bot_job_duration_seconds",
            "Job run time by kind and outcome",
            ["kind", "outcome"],
            registry=self.registry,
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, float("inf")),
        )
        self.queue = Gauge(
            "llama_bot_queue_jobs", "Jobs in the queue by status", ["status"], registry=self.registry
        )
        self.github = Counter(
            "llama_bot_github_requests",
            "GitHub API calls by method and status",
            ["method", "status"],
            registry=self.registry,
        )

    def github_call(self, method: str, status: str) -> None:
        self.github.labels(method, status).inc()


# -- the runner -----------------------------------------------------------------------------------


@dataclass
class Run:
    """One job being executed: its GitHub client, its pull request and what it already posted."""

    job: Job
    gh: GitHubClient
    save: Callable[[], Awaitable[None]]
    progress: dict = field(default_factory=dict)
    prefix: str = parse_config(None).command_prefix  # the repository's, once its configuration is read
    number: int | None = None  # the PR, for jobs whose payload does not name one (found in the store)

    @property
    def names(self) -> dict:
        p = self.job.payload
        return {
            "owner": p["owner"],
            "repo": p["repo"],
            "number": self.number if self.number is not None else p.get("number"),
        }

    @property
    def repo(self) -> str:
        """owner/name as the deliveries spell it: the key of the validation store."""
        return f"{self.job.payload['owner']}/{self.job.payload['repo']}"


class Superseded(Exception):
    """The PR's head moved on: this run's results are for a commit nobody looks at any more."""


def _ref_path(run: Run, branch: str) -> str:
    names = run.names
    return f"/repos/{quote(names['owner'])}/{quote(names['repo'])}/git/refs/heads/{quote(branch, safe='/')}"


def _message(exc: HTTPException) -> str:
    """GitHub's message of an error answer (gidgethub keeps it as the last argument)."""
    return str(exc.args[-1]) if exc.args and not isinstance(exc.args[-1], http.HTTPStatus) else ""


class Service:
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
        backoff: JobBackoff = JobBackoff(),
        store: ValidationStore | None = None,
    ):
        self.queue = queue
        self.github = github
        self.data_dir = Path(data_dir)
        self.workers = workers
        self.metrics = metrics
        self.poll_interval = poll_interval
        self.backoff = backoff
        self.catch_up_after, self.catch_up_every = catch_up_after, catch_up_every
        self.blobs = BlobCache()
        self._executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="analysis")
        self.store = store or ValidationStore(self.data_dir / VALIDATION_DB)
        self.mirrors = Mirrors(self.data_dir, url_instead_of)
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._stopping = False
        self._worker_prefix = f"{socket.gethostname()}:{os.getpid()}"
        self._commands: dict[str, Callable[[Run, Command, Config], Awaitable[None]]] = {
            "help": self._command_help,
            "recheck": self._command_recheck,
            "regenerate-patches": self._command_regenerate,
            "validate": self._command_validate,
        }
        self._jobs: dict[str, Callable[[Run], Awaitable[str]]] = {
            "analysis": self._analysis_job,
            "command": self._command_job,
            "workflow_run": self._workflow_run_job,
            "platforms": self._platforms_job,
            "revalidate": self._revalidate_job,
            "closed": self._closed_job,
            "catch_up": self._catch_up_job,
        }

    # -- lifecycle --

    def start(self) -> None:
        self._stopping = False
        self._tasks = [
            asyncio.create_task(self._work(f"{self._worker_prefix}:{n}"), name=f"worker-{n}")
            for n in range(self.workers)
        ]
        self._tasks.append(asyncio.create_task(self._catch_up(), name="catch-up"))

    async def stop(self) -> None:
        """Cancel the workers (a running job goes back to the queue) and wait for them, STOP_GRACE at most:
        a task that does not end by then is left behind and named in the log, the service stops anyway."""
        self._stopping = True
        self._wakeup.set()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=STOP_GRACE)
            if pending:
                log.warning(
                    "tasks did not stop in time", extra={"tasks": ", ".join(t.get_name() for t in pending)}
                )
        self._tasks = [task for task in self._tasks if not task.done()]  # what `running` still sees
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.store.close()

    def wake(self) -> None:
        """A job was queued: let an idle worker look now instead of at its next poll."""
        self._wakeup.set()

    @property
    def running(self) -> bool:
        """Whether any worker or the catch-up loop is still going."""
        return any(not task.done() for task in self._tasks)

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
                try:
                    async with asyncio.timeout(self.poll_interval):
                        await self._wakeup.wait()
                except TimeoutError:
                    pass
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

    async def _run(self, job: Job, worker: str) -> None:
        started = time.monotonic()
        context = {"job_id": job.id, "kind": job.kind, "delivery_id": job.delivery_id, "pull": job.key}
        heartbeat = asyncio.create_task(self._keep_lease(job, worker, self.queue.lease_seconds / 3))
        run = Run(
            job,
            self.github.installation(job.payload["installation_id"]),
            lambda: self._save(run),
            dict(job.progress),
        )
        outcome = "failed"
        try:
            if job.attempts - job.retries > MAX_ATTEMPTS:  # claims that ended without a word: crashes
                raise GaveUp(f"gave up after {MAX_ATTEMPTS} attempts: the worker stopped each time")
            log.info("job started", extra={**context, "attempt": job.attempts})
            outcome = await self._jobs[job.kind](run)
            await self.queue.finish(job.id, worker, "superseded" if outcome == "superseded" else "done")
        except asyncio.CancelledError:
            outcome = "released"
            await self.queue.release(job.id, worker)
            raise
        except Exception as exc:
            reason = short_reason(exc)
            delay = retry_in(self.backoff, job.retries, random.random()) if transient(exc) else None
            if delay is not None:
                outcome = "retry"
                log.warning(
                    "job will be retried",
                    extra={**context, "reason": reason, "retry": job.retries + 1, "delay": round(delay, 1)},
                )
                await self.queue.retry(job.id, worker, delay, reason)
                return
            if transient(exc) and job.retries:
                reason = f"{reason}; gave up after retrying {job.retries} times"
            log.exception("job failed", extra={**context, "reason": reason})
            await self._report_failure(run, reason)
            await self.queue.finish(job.id, worker, "failed", reason)
        finally:
            heartbeat.cancel()
            seconds = time.monotonic() - started
            self.metrics.jobs.labels(job.kind, outcome).observe(seconds)
            log.info("job finished", extra={**context, "outcome": outcome, "seconds": round(seconds, 3)})

    async def _save(self, run: Run) -> None:
        await self.queue.save_progress(run.job.id, run.progress)

    # -- reading the repository --

    async def _pull(self, run: Run) -> dict:
        return await run.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", run.names)

    async def _config(self, run: Run, default_branch: str) -> Config:
        """`.github/llama-bot.toml` on the default branch; defaults when absent."""
        try:
            item = await run.gh.getitem(
                "/repos/{owner}/{repo}/contents/{+path}{?ref}",
                {**run.names, "path": CONFIG_PATH, "ref": default_branch},
            )
        except BadRequest as exc:
            if exc.status_code == http.HTTPStatus.NOT_FOUND:
                return parse_config(None)
            raise
        if not isinstance(item, dict) or item.get("type") != "file":
            raise AnalysisError(f"{CONFIG_PATH} on {default_branch} is not a file")
        return load_config(MemorySnapshot({CONFIG_PATH: base64.b64decode(item.get("content") or "")}))

    async def _changed_paths(self, run: Run) -> list[str]:
        paths: list[str] = []
        async for item in run.gh.getiter(
            "/repos/{owner}/{repo}/pulls/{number}/files?per_page=100", run.names
        ):
            paths.append(item["filename"])
            if item.get("previous_filename"):
                paths.append(item["previous_filename"])
        return paths

    async def _snapshots(self, run: Run, pr: dict) -> tuple[RestSnapshot, RestSnapshot]:
        """The PR's merge base and head, as the files API compares them."""
        head = pr["head"]["sha"]
        compare = await run.gh.getitem(
            "/repos/{owner}/{repo}/compare/{basehead}?per_page=1",
            {**run.names, "basehead": f"{pr['base']['sha']}...{head}"},
        )
        base = (compare.get("merge_base_commit") or {}).get("sha") or pr["base"]["sha"]
        owner, repo = run.names["owner"], run.names["repo"]
        return (
            await RestSnapshot.load(run.gh, owner, repo, base, self.blobs),
            await RestSnapshot.load(run.gh, owner, repo, head, self.blobs),
        )

    def _open_upstream(
        self, pin: Pin, refs: list[str], fetching: Callable[[str, bool], None] | None = None
    ) -> Upstream:
        """The pin's mirror with `refs`; `fetching` hears (pin name, True) when a fetch from it starts and
        (pin name, False) when it ends."""
        return self.mirrors.open(
            pin.name, pin.upstream, refs, functools.partial(fetching, pin.name) if fetching else None
        )

    async def _analyse(
        self,
        config: Config,
        base: RestSnapshot,
        head: RestSnapshot,
        changed: list[str] | None,
        review: bool,
        errors: dict[str, str] | None = None,
        fetching: Callable[[str, bool], None] | None = None,
    ) -> Report:
        open_upstream = (
            functools.partial(self._open_upstream, fetching=fetching) if fetching else self._open_upstream
        )
        call = functools.partial(
            analyse, config, base, head, open_upstream, changed, review=review, errors=errors
        )
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def _fetch_banner(
        self, run: Run, previous: str | None, head_sha: str, since: dt.datetime
    ) -> Callable[[str, bool], None]:
        """For the analysis thread: while it fetches an upstream, the checklist comment says so."""
        loop = asyncio.get_running_loop()

        def fetching(name: str, started: bool) -> None:
            body = progress_body(previous, head_sha, since, name if started else None)
            try:
                asyncio.run_coroutine_threadsafe(self._put_comment(run, body), loop).result(FETCH_BANNER_WAIT)
            except Exception:  # the banner is a courtesy: the analysis goes on without it
                log.warning(
                    "could not show the upstream fetch in the checklist comment",
                    exc_info=True,
                    extra={"job_id": run.job.id, "pin": name},
                )

        return fetching

    # -- posting --

    async def _find_comment(self, run: Run) -> dict | None:
        if run.progress.get("comment_id"):
            try:
                return await run.gh.getitem(
                    "/repos/{owner}/{repo}/issues/comments/{id}",
                    {**run.names, "id": run.progress["comment_id"]},
                )
            except BadRequest as exc:
                if exc.status_code != http.HTTPStatus.NOT_FOUND:
                    raise
                run.progress.pop("comment_id")  # someone deleted it: find or create another
        return await self._bot_comment_with(run, MARKER)

    async def _bot_comment_with(self, run: Run, text: str) -> dict | None:
        """The bot's comment on the PR whose body holds `text` (a hidden marker), if there is one."""
        async for comment in run.gh.getiter(
            "/repos/{owner}/{repo}/issues/{number}/comments?per_page=100", run.names
        ):
            if text in (comment.get("body") or "") and comment["user"].get("type") == "Bot":
                return comment
        return None

    async def _put_comment(self, run: Run, body: str) -> None:
        """Create the checklist comment once, edit it in place afterwards."""
        if run.progress.get("comment_id"):
            await run.gh.patch(
                "/repos/{owner}/{repo}/issues/comments/{id}",
                {**run.names, "id": run.progress["comment_id"]},
                data={"body": body},
            )
        else:
            created = await run.gh.post_once(
                "/repos/{owner}/{repo}/issues/{number}/comments",
                run.names,
                data={"body": body},
                find=lambda: self._bot_comment_with(run, MARKER),
            )
            run.progress["comment_id"] = created["id"]
            await run.save()

    async def _reply(self, run: Run, body: str) -> None:
        """A reply comment, with a hidden key so that a POST whose answer was lost is not made twice, nor one
        that a job tried again had posted before it stopped without saving so."""
        sent = run.progress.get("replies", 0)
        key = f"<!-- llama-bot:reply {run.job.id}.{sent} -->"
        posted = await self._bot_comment_with(run, key) if run.job.attempts > 1 else None
        if posted is None:
            await run.gh.post_once(
                "/repos/{owner}/{repo}/issues/{number}/comments",
                run.names,
                data={"body": f"{body[: COMMENT_LIMIT - len(key) - 1]}\n{key}"},
                find=lambda: self._bot_comment_with(run, key),
            )
        run.progress["replies"] = sent + 1
        await run.save()

    async def _start_checks(
        self, run: Run, head_sha: str, pins: list[Pin], since: dt.datetime
    ) -> dict[str, int]:
        """`<pin>: patches` and `<pin>: upstream review`, in progress, reused when the job resumes."""
        if run.progress.get("checks_sha") == head_sha and not run.progress.get("checks_done", True):
            return run.progress["check_runs"]
        summary = render_template(
            "check_in_progress.md.j2", head_sha=head_sha, since=human(since), job_id=run.job.id
        )
        runs = {}
        for pin in pins:
            for name in (f"{pin.name}: patches", f"{pin.name}: upstream review"):
                find = functools.partial(
                    self._made_check_run, run, head_sha, name, functools.partial(started_by_job, run.job.id)
                )
                # A resumed job may have made it before it stopped, a POST whose answer was lost as well.
                created = (await find() if run.job.attempts > 1 else None) or await run.gh.post_once(
                    "/repos/{owner}/{repo}/check-runs",
                    run.names,
                    data={
                        "name": name,
                        "head_sha": head_sha,
                        "status": "in_progress",
                        "started_at": iso(since),
                        "external_id": str(run.names["number"]),
                        "output": {"title": f"Checking {pin.name} at {head_sha[:12]}", "summary": summary},
                    },
                    find=find,
                )
                runs[name] = created["id"]
        run.progress.update(checks_sha=head_sha, check_runs=runs, checks_done=False)
        await run.save()
        return runs

    async def _made_check_run(
        self, run: Run, head_sha: str, name: str, made: Callable[[dict], bool]
    ) -> dict | None:
        """The check run `name` on `head_sha` for which `made` holds (the one this job made), if any."""
        found = await run.gh.getitem(
            "/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name,filter,per_page}",
            {**run.names, "ref": head_sha, "check_name": name, "filter": "all", "per_page": 100},
        )
        return next((r for r in found.get("check_runs") or [] if made(r)), None)

    async def _complete_check(self, run: Run, check_id: int, conclusion: str, output: dict) -> None:
        for body in check_run_updates(conclusion, output):
            await run.gh.patch(
                "/repos/{owner}/{repo}/check-runs/{id}", {**run.names, "id": check_id}, data=body
            )

    async def _fail_checks(self, run: Run, head_sha: str, title: str, message: str, hint: str = "") -> None:
        """Every check run of this job ends as failed with `message`; one general run when there are none."""
        summary = render_template(
            "check_failed.md.j2", message=message, hint=hint, head_sha=head_sha, job_id=run.job.id
        )
        output = {"title": title[:200], "summary": summary[:CHECK_TEXT_LIMIT]}
        if run.progress.get("checks_sha") == head_sha and not run.progress.get("checks_done", True):
            for check_id in run.progress["check_runs"].values():
                await self._complete_check(run, check_id, "failure", output)
        else:
            await run.gh.post(
                "/repos/{owner}/{repo}/check-runs",
                run.names,
                data={
                    "name": GENERAL_CHECK,
                    "head_sha": head_sha,
                    "status": "completed",
                    "conclusion": "failure",
                    "external_id": str(run.names["number"]),
                    "output": output,
                },
            )
        run.progress["checks_done"] = True
        await run.save()

    async def _report_failure(self, run: Run, reason: str) -> None:
        """After the last attempt, on a PR the bot reports on: the comment (if it still says a run is under
        way) and the check runs say the run failed, with the reason and the job id; a command gets a reply.
        A PR nothing shows to touch a pin gets no check run: a red one would only confuse."""
        if run.job.kind not in PR_JOBS:
            return  # validation bookkeeping: the log has it; the check runs stay as they were
        try:
            if run.job.kind == "command":
                await self._reply(
                    run,
                    render_template(
                        "reply_failed.md.j2",
                        line=run.job.payload["body"].strip()[:200],
                        reason=reason,
                        job_id=run.job.id,
                    ),
                )
            comment = await self._find_comment(run)
            pull = None
            if comment is None and not run.progress.get(
                "checks_sha"
            ):  # never reported on: does it touch a pin?
                pull = await self._pull(run)
                if not (await self._repo_config(run, pull)).touched_pins(await self._changed_paths(run)):
                    return
            head_sha = (
                run.progress.get("checks_sha")
                or run.job.payload.get("head_sha")
                or (pull or await self._pull(run))["head"]["sha"]
            )
            message, hint = (
                f"The run failed: {reason} (job {run.job.id}).",
                f"Comment `{run.prefix} recheck` to try again.",
            )
            if comment is not None and RUNNING in (comment.get("body") or ""):
                run.progress["comment_id"] = comment["id"]
                await self._put_comment(run, error_body(comment["body"], head_sha, message, hint))
            await self._fail_checks(run, head_sha, "llama-bot could not finish", message, hint)
        except Exception:
            log.exception("could not report a failed job on the pull request", extra={"job_id": run.job.id})

    # -- analysis --

    async def _analysis_job(self, run: Run) -> str:
        try:
            return await self._analyse_pull(run, run.job.payload.get("head_sha"))
        except Superseded:
            return "superseded"

    async def _analyse_pull(self, run: Run, wanted_sha: str | None, config: Config | None = None) -> str:
        """Check the PR's head and post the checklist and check runs; "untouched" when no pin is involved."""
        pr = await self._pull(run)
        head_sha = pr["head"]["sha"]
        if wanted_sha and wanted_sha != head_sha:
            raise Superseded(head_sha)
        changed = await self._changed_paths(run)
        config_error = None
        if config is None:
            try:
                config = await self._config(run, pr["base"]["repo"]["default_branch"])
            except AnalysisError as exc:
                config_error, config = str(exc), parse_config(None)
        run.prefix = config.command_prefix
        if config.cancel_superseded and run.job.kind == "analysis":
            await self._cancel_superseded(run, head_sha)
        pins = config.touched_pins(changed)  # with a broken configuration: the default pins
        if not pins and not (config_error and CONFIG_PATH in changed):
            await self._retire_checklist(run, head_sha, config)
            return "untouched"
        since = utc_now()
        old = await self._find_comment(run)
        if old is not None:
            run.progress["comment_id"] = old["id"]
        await self._put_comment(run, progress_body(old["body"] if old else None, head_sha, since))
        fetching = self._fetch_banner(run, old["body"] if old else None, head_sha, since)
        if config_error:
            await self._post_error(run, head_sha, config_error)
            return "done"
        checks = await self._start_checks(run, head_sha, pins, since)
        errors: dict[str, str] = {}  # pins that could not be checked, and why: the others still are
        report = Report()
        try:
            base, head = await self._snapshots(run, pr)
            report = await self._analyse(
                config, base, head, changed, review=True, errors=errors, fetching=fetching
            )
        except AnalysisError as exc:
            errors = {"": str(exc)}
        await self._ensure_head(run, head_sha, checks)
        if errors and not report.pins:
            await self._post_error(run, head_sha, "; ".join(errors.values()))
            return "done"
        current = await self._find_comment(run)
        ticked = carried_ticks(current["body"] if current else None)
        body = render_comment(
            report,
            changed,
            head_sha=head_sha,
            ran_at=human(utc_now()),
            ticked=ticked,
            platforms=self._rows(run, head_sha, config),
            prefix=config.command_prefix,
            patch_dirs={p.name: p.patches for p in config.pins},
        )
        await self._put_comment(run, body)
        reported = {pin.name for pin in report.pins}
        for pin_report in report.pins:
            for name, conclusion, output in check_run_outputs(pin_report, config.command_prefix):
                if name in checks:
                    await self._complete_check(run, checks[name], conclusion, output)
        for pin in pins:
            if pin.name in errors:
                conclusion, output = (
                    "failure",
                    {
                        "title": f"Could not check {pin.name}",
                        "summary": f"{errors[pin.name]}\n\nFix this, then push again or comment `{run.prefix} recheck`.",
                    },
                )
            elif pin.name not in reported:
                conclusion, output = (
                    "neutral",
                    {
                        "title": f"{pin.version_file} does not exist at this commit",
                        "summary": f"Nothing to check for {pin.name} at `{head_sha[:12]}`.",
                    },
                )
            else:
                continue
            for suffix in (": patches", ": upstream review"):
                await self._complete_check(run, checks[pin.name + suffix], conclusion, output)
        run.progress["checks_done"] = True
        await run.save()
        return "done"

    async def _retire_checklist(self, run: Run, head_sha: str, config: Config) -> None:
        """A PR that no longer touches a pin keeps no checklist describing an older commit as current."""
        current = await self._find_comment(run)
        if current is None:
            return
        run.progress["comment_id"] = current["id"]
        body = render_template(
            "checklist_untouched.md.j2",
            marker=MARKER,
            head_sha=head_sha,
            ran_at=human(utc_now()),
            pins=[p.name for p in config.pins],
        )
        await self._put_comment(run, with_ticks(body, carried_ticks(current["body"])))

    async def _ensure_head(self, run: Run, head_sha: str, checks: dict[str, int]) -> None:
        """Before posting results: drop them when the PR's head moved on, closing this commit's runs."""
        current = (await self._pull(run))["head"]["sha"]
        if current == head_sha:
            return
        output = {
            "title": "Superseded by a newer commit",
            "summary": f"The pull request moved on to `{current[:12]}`; it is checked there.",
        }
        for check_id in checks.values():
            await self._complete_check(run, check_id, "cancelled", output)
        run.progress["checks_done"] = True
        await run.save()
        raise Superseded(current)

    async def _post_error(self, run: Run, head_sha: str, message: str) -> None:
        """An analysis that cannot run ends as failed check runs and a checklist saying what to fix."""
        current = await self._find_comment(run)
        hint = f"Fix this and push again, or comment `{run.prefix} recheck`."
        await self._put_comment(
            run, error_body(current["body"] if current else None, head_sha, message, hint)
        )
        await self._fail_checks(run, head_sha, "Could not check the patches", message, hint)

    # -- commands --

    async def _command_job(self, run: Run) -> str:
        payload = run.job.payload
        config_error = None
        try:
            config = await self._config(run, payload["default_branch"])
        except AnalysisError as exc:
            config_error, config = str(exc), parse_config(None)
        run.prefix = config.command_prefix
        commands = parse_commands(payload["body"], config.command_prefix)
        if not commands:
            return "done"
        answer = await self._permission(run, payload["author"])
        if not may_write(answer):
            if not run.progress.get("refused"):
                await self._reply(
                    run,
                    render_template(
                        "reply_refused.md.j2",
                        author=payload["author"],
                        permission=answer.get("role_name") or answer.get("permission"),
                    ),
                )
                run.progress["refused"] = True
                await run.save()
            return "done"
        await run.gh.post(
            "/repos/{owner}/{repo}/issues/comments/{id}/reactions",
            {**run.names, "id": payload["comment_id"]},
            data={"content": "eyes"},
        )
        if config_error:
            await self._reply(
                run,
                render_template(
                    "reply_failed.md.j2", line=commands[0].line, reason=config_error, job_id=None
                ),
            )
            return "done"
        for index, command in enumerate(commands):
            if index < run.progress.get("commands_done", 0):
                continue
            log.info("running command", extra={"job_id": run.job.id, "command": command.name})
            await self._commands[command.name](run, command, config)
            run.progress["commands_done"] = index + 1
            await run.save()
        return "done"

    async def _permission(self, run: Run, login: str) -> dict:
        try:
            return await run.gh.getitem(
                "/repos/{owner}/{repo}/collaborators/{username}/permission", {**run.names, "username": login}
            )
        except BadRequest as exc:
            if exc.status_code == http.HTTPStatus.NOT_FOUND:
                return {"permission": "none"}
            raise

    async def _command_help(self, run: Run, command: Command, config: Config) -> None:
        await self._reply(
            run,
            render_template(
                "reply_help.md.j2",
                line=command.line,
                problem=command.problem,
                prefix=config.command_prefix,
                commands=COMMANDS,
            ),
        )

    async def _command_validate(self, run: Run, command: Command, config: Config) -> None:
        chosen, unknown = select_platforms(command.args, config)
        pull = await self._pull(run)
        scope = f"command-{run.progress.get('commands_done', 0)}"  # this command's index in the comment
        dispatched, errors = await self._dispatch_platforms(run, pull, chosen, scope)
        text = validate_reply(dispatched, unknown, errors, config, pull, run.job.payload["author"])
        # Every platform named a workflow the repository lacks: say plainly that nothing is set up yet.
        not_configured = bool(errors) and not dispatched and all("(GitHub answered 404)" in e for e in errors)
        await self._reply(
            run,
            render_template(
                "reply_validate.md.j2", line=command.line, text=text, not_configured=not_configured
            ),
        )
        if chosen:
            await self._refresh_platforms(run, pull, config)

    async def _command_recheck(self, run: Run, command: Command, config: Config) -> None:
        try:
            outcome = await self._analyse_pull(run, None, config)
        except Superseded:
            return  # the newer head has its own job
        if outcome == "untouched":
            await self._reply(
                run,
                render_template(
                    "reply_untouched.md.j2",
                    line=command.line,
                    verb="check",
                    pins=[p.name for p in config.pins],
                ),
            )

    async def _command_regenerate(self, run: Run, command: Command, config: Config) -> None:
        reply = functools.partial(
            render_template, "reply_regenerate.md.j2", line=command.line, prefix=config.command_prefix
        )
        pr = await self._pull(run)
        changed = await self._changed_paths(run)
        if command.args:
            pin = config.pin(command.args[0])
            if pin is None:
                await self._reply(
                    run, reply(outcome="unknown_pin", pin=command.args[0], pins=[p.name for p in config.pins])
                )
                return
            config, scope = replace(config, pins=(pin,)), None
        elif not config.touched_pins(changed):
            await self._reply(
                run,
                render_template(
                    "reply_untouched.md.j2",
                    line=command.line,
                    verb="regenerate",
                    pins=[p.name for p in config.pins],
                ),
            )
            return
        else:
            scope = changed
        try:
            base, head = await self._snapshots(run, pr)
            report = await self._analyse(config, base, head, scope, review=False)
        except AnalysisError as exc:
            await self._reply(
                run, render_template("reply_failed.md.j2", line=command.line, reason=str(exc), job_id=None)
            )
            return
        current = {
            path: await head.fetch(path)
            for pin in report.pins
            for p in pin.patches
            if p.new_text is not None
            for path in [p.regenerated or p.path]
        }
        changes = patch_changes(report, current.get)
        # The patches it cannot rebuild are named in every answer, with why and how to reproduce it.
        reply = functools.partial(
            reply,
            unresolved=unresolved_patches(report),
            unresolved_statuses=UNRESOLVED,
            views=[pin_view(pin, config.command_prefix, None) for pin in report.pins],
        )
        refs = refs_text(report)
        if not changes:
            await self._reply(run, reply(outcome="nothing", refs=refs))
            return
        target = push_target(pr)
        branch = pr["head"]["ref"]
        if target is not None:
            try:
                sha, url = await self._commit(
                    run, target, pr["head"]["sha"], head, changes, commit_message(report, changes)
                )
            except BranchMoved as moved:
                await self._reply(run, reply(outcome="moved", branch=branch, now_sha=moved.now_sha))
                return
            except BadRequest as exc:
                if exc.status_code not in (
                    http.HTTPStatus.FORBIDDEN,
                    http.HTTPStatus.NOT_FOUND,
                    http.HTTPStatus.UNPROCESSABLE_ENTITY,
                ):
                    raise
                log.info(
                    "cannot push to the head branch, replying with the patches",
                    extra={"job_id": run.job.id, "status": int(exc.status_code)},
                )
                reason = "GitHub refused the App's write to that branch"
            else:
                committed = {c.path for c in changes}  # the reproduce steps read these from the branch now
                views = [pin_view(pin, config.command_prefix, None, committed) for pin in report.pins]
                await self._reply(
                    run,
                    reply(
                        outcome="committed",
                        commit_sha=sha,
                        commit_url=url,
                        branch=branch,
                        changes=changes,
                        refs=refs,
                        views=views,
                    ),
                )
                return
        else:
            reason = "it is in a fork that does not allow edits by maintainers"
        shown, omitted = shown_patches(changes, COMMENT_LIMIT - 4000)
        await self._reply(
            run,
            reply(outcome="patches", branch=branch, reason=reason, refs=refs, shown=shown, omitted=omitted),
        )

    async def _commit(
        self,
        run: Run,
        target: tuple[str, str, str],
        head_sha: str,
        head: RestSnapshot,
        changes: list[PatchChange],
        message: str,
    ) -> tuple[str, str]:
        """One commit on the head branch through the Git Data API; the ref moves only by fast-forward."""
        owner, repo, branch = target
        names = {"owner": owner, "repo": repo}
        tree_items = []
        for change in changes:
            blob = await run.gh.post(
                "/repos/{owner}/{repo}/git/blobs",
                names,
                data={"content": base64.b64encode(change.data).decode(), "encoding": "base64"},
            )
            tree_items.append(
                {
                    "path": change.path,
                    "mode": head.mode(change.path) or "100644",
                    "type": "blob",
                    "sha": blob["sha"],
                }
            )
        parent = await run.gh.getitem("/repos/{owner}/{repo}/git/commits/{sha}", {**names, "sha": head_sha})
        tree = await run.gh.post(
            "/repos/{owner}/{repo}/git/trees",
            names,
            data={"base_tree": parent["tree"]["sha"], "tree": tree_items},
        )
        new = await run.gh.post(
            "/repos/{owner}/{repo}/git/commits",
            names,
            data={"message": message, "tree": tree["sha"], "parents": [head_sha]},
        )
        ref_path = f"/repos/{quote(owner)}/{quote(repo)}/git/refs/heads/{quote(branch, safe='/')}"
        try:
            await run.gh.patch(ref_path, data={"sha": new["sha"], "force": False})
        except BadRequest as exc:
            if exc.status_code != http.HTTPStatus.UNPROCESSABLE_ENTITY:
                raise
            ref = await run.gh.getitem(
                f"/repos/{quote(owner)}/{quote(repo)}/git/ref/heads/{quote(branch, safe='/')}"
            )
            if ref["object"]["sha"] != head_sha:
                raise BranchMoved(ref["object"]["sha"]) from None
            raise  # not moved: a refusal (a protected branch), answered like a 403
        return new["sha"], new.get("html_url") or new["url"]

    # -- platform validation: dispatches, workflow_run events, fork branches --

    # -- the platform table --

    def _rows(self, run: Run, head_sha: str, config: Config) -> list[dict]:
        return platform_rows(self.store.for_pr(run.repo, run.names["number"]), head_sha, config.platforms)

    async def _refresh_platforms(self, run: Run, pull: dict, config: Config) -> None:
        """Edit the platform section of the checklist comment in place (ticked boxes kept), also while a
        re-check shows the last checklist; nothing when there is none (none yet, or a first run's progress
        note: the analysis adds the rows)."""
        current = await self._find_comment(run)
        if current is None:
            return
        body = current.get("body") or ""
        ticked = carried_ticks(body)
        rows = self._rows(run, pull["head"]["sha"], config)
        new = splice_platforms(body, render_platforms(rows, Report(), config.command_prefix, ticked))
        if new is None or new == body:
            return
        run.progress["comment_id"] = current["id"]
        await self._put_comment(run, new)

    async def _cancel_superseded(self, run: Run, head_sha: str) -> None:
        """`cancel_superseded = true`: stop the runs still going for commits that are no longer the head."""
        for d in self.store.superseded(run.repo, run.names["number"], head_sha):
            if d.run_id is None:
                continue  # not matched yet: its first workflow_run event cancels it
            await self._cancel_run(run, d)

    async def _cancel_run(self, run: Run, d: Dispatch) -> None:
        try:
            await run.gh.post(
                "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
                {**run.names, "run_id": d.run_id},
                data={},
            )
            log.info(
                "cancelled a superseded run",
                extra={"job_id": run.job.id, "run_id": d.run_id, "platform": d.platform},
            )
        except BadRequest as exc:
            if exc.status_code not in (http.HTTPStatus.CONFLICT, http.HTTPStatus.NOT_FOUND):
                raise  # 409: it already finished

    # -- dispatching --

    async def _dispatch_platforms(
        self, run: Run, pull: dict, chosen: list, scope: str = "rerun"
    ) -> tuple[list[Dispatch], list[str]]:
        """Per platform: a queued check run, the stored dispatch, then the dispatch call.

        Each platform's outcome is kept in the job's progress under `scope`, so a job resumed after a
        crash does not dispatch again what it already dispatched (or reported as refused).
        """
        if not chosen:
            return [], []
        done = run.progress.setdefault("validation", {}).setdefault(scope, {})
        if is_fork(pull) and any(p.name not in done for p in chosen):
            await self._push_fork_branch(run, pull)
        dispatched: list[Dispatch] = []
        errors: list[str] = []
        for platform in chosen:
            earlier = done.get(platform.name)
            if earlier is not None and not earlier.get("pending"):
                if earlier.get("error"):
                    errors.append(earlier["error"])
                elif (known := self.store.get(earlier["request_id"])) is not None:
                    dispatched.append(known)
                continue
            d = new_dispatch(
                run.repo, pull, platform, iso(utc_now()), earlier["request_id"] if earlier else None
            )
            if earlier is None:  # a job resumed after a crash finds what this one made by the request id
                done[platform.name] = {"request_id": d.request_id, "pending": True}
                await run.save()
            body = check_run_create(d)  # its external_id is the request id
            find = functools.partial(
                self._made_check_run,
                run,
                d.head_sha,
                body["name"],
                functools.partial(made_for_request, d.request_id),
            )
            created = (earlier and await find()) or await run.gh.post_once(
                "/repos/{owner}/{repo}/check-runs", run.names, data=body, find=find
            )
            d = replace(d, check_run_id=created["id"])
            if self.store.get(d.request_id) is None:
                self.store.add(d)  # before dispatching: the run's first event may arrive before the answer
            found = functools.partial(self._dispatched_run, run, d)  # a workflow run costs runner hours
            try:
                answer = (earlier and await found()) or await run.gh.post_once(
                    "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches",
                    {**run.names, "workflow": platform.workflow},
                    data=dispatch_body(platform, d.ref, d.pr, d.request_id),
                    find=found,
                )
            except HTTPException as exc:  # 4xx, or 5xx after the client's retries: this platform failed
                if int(exc.status_code) < 400:
                    raise
                now = iso(utc_now())
                text = dispatch_error_reply(platform, int(exc.status_code), _message(exc))
                await run.gh.patch(
                    "/repos/{owner}/{repo}/check-runs/{id}",
                    {**run.names, "id": d.check_run_id},
                    data=dispatch_failed_update(platform.name, text, now),
                )
                self.store.update(replace(d, status="completed", conclusion="failure", completed_at=now))
                errors.append(text)
                done[platform.name] = {"request_id": d.request_id, "error": text}
                await run.save()
                continue
            if isinstance(answer, dict) and answer.get("workflow_run_id"):
                self.store.attach_run(d.request_id, int(answer["workflow_run_id"]), answer.get("html_url"))
            log.info(
                "dispatched a platform run",
                extra={"job_id": run.job.id, "platform": platform.name, "request_id": d.request_id},
            )
            dispatched.append(self.store.get(d.request_id) or d)
            done[platform.name] = {"request_id": d.request_id, "error": None}
            await run.save()
        return dispatched, errors

    async def _dispatched_run(self, run: Run, d: Dispatch) -> dict | None:
        """The dispatch call's answer for `d`'s run when GitHub already made it (a dispatch whose answer was
        lost, or made by a job that died before saving it), else None."""
        workflow_run = await self._find_run(run, d)
        return workflow_run and {
            "workflow_run_id": workflow_run["id"],
            "html_url": workflow_run.get("html_url"),
        }

    async def _push_fork_branch(self, run: Run, pull: dict) -> None:
        """A fork's head commit on `llama-bot/pr-<n>` of the base repository (created or force-moved)."""
        branch = fork_branch(pull["number"])
        sha = pull["head"]["sha"]
        try:
            await run.gh.patch(_ref_path(run, branch), data={"sha": sha, "force": True})
        except BadRequest as exc:
            if exc.status_code != http.HTTPStatus.UNPROCESSABLE_ENTITY:
                raise
            await run.gh.post(
                "/repos/{owner}/{repo}/git/refs", run.names, data={"ref": f"refs/heads/{branch}", "sha": sha}
            )

    async def _repo_config(self, run: Run, pull: dict) -> Config:
        try:
            return await self._config(run, pull["base"]["repo"]["default_branch"])
        except AnalysisError:
            return parse_config(None)

    # -- jobs --

    async def _workflow_run_job(self, run: Run) -> str:
        """A workflow_run event: the check run and the store follow it; runs nobody dispatched are ignored."""
        workflow_run = run.job.payload["workflow_run"]
        d = match_run(self.store.find_open(run.repo, workflow_run["id"]), workflow_run)
        if d is None:
            log.info(
                "workflow run not dispatched by the bot",
                extra={"job_id": run.job.id, "run_id": workflow_run["id"]},
            )
            return "done"
        await self._follow_run(run, d, workflow_run, run.job.payload["action"])
        return "done"

    async def _follow_run(self, run: Run, d: Dispatch, workflow_run: dict, action: str) -> None:
        """Move dispatch `d` to what its run reports: the store, the check run, then the checklist's table.

        A job tried again (killed, or GitHub failed it) may find the store updated by its earlier attempt and
        the rest not done: it does the rest, which is the same again."""
        new = apply_run(d, workflow_run, action)
        if new is None or (new == d and run.job.attempts == 1):
            return  # an older state arriving late, or nothing new (a catch-up of a run still queued)
        if new != d:
            self.store.update(new)
        await run.gh.patch(
            "/repos/{owner}/{repo}/check-runs/{id}",
            {**run.names, "id": d.check_run_id},
            data=check_run_update(workflow_run, action, d.platform),
        )
        # The comment is the PR's: a job under the PR's key edits it, one at a time with the analyses.
        payload = run.job.payload
        follow_up = JobRequest(
            "platforms",
            pull_key(payload["owner"], payload["repo"], d.pr),
            {
                "installation_id": payload["installation_id"],
                "owner": payload["owner"],
                "repo": payload["repo"],
                "number": d.pr,
                "request_id": d.request_id,
            },
        )
        await self.queue.enqueue(
            f"{run.job.delivery_id or f'job-{run.job.id}'}:platforms:{d.request_id}",
            "workflow_run",
            [follow_up],
        )
        self.wake()

    async def _catch_up_job(self, run: Run) -> str:
        """Look up the runs of a repository's unfinished dispatches whose workflow_run events never came."""
        for d in self._overdue():
            if d.repo != run.repo:
                continue
            workflow_run = await self._find_run(run, d)
            if workflow_run is not None:
                await self._follow_run(
                    run, d, workflow_run, RUN_STATUS_ACTION.get(workflow_run["status"], "requested")
                )
        return "done"

    async def _find_run(self, run: Run, d: Dispatch) -> dict | None:
        """The workflow run of dispatch `d` as GitHub reports it now, or None when there is none (yet)."""
        if d.run_id is not None:
            try:
                return await run.gh.getitem(
                    "/repos/{owner}/{repo}/actions/runs/{run_id}", {**run.names, "run_id": d.run_id}
                )
            except BadRequest as exc:
                if exc.status_code == http.HTTPStatus.NOT_FOUND:
                    return None
                raise
        found = await run.gh.getitem(
            "/repos/{owner}/{repo}/actions/workflows/{workflow}/runs{?event,branch,head_sha,created,per_page}",
            {**run.names, "workflow": d.workflow, **runs_query(d)},
        )
        return next((r for r in found.get("workflow_runs") or [] if match_run([d], r) is d), None)

    async def queue_catch_up(self) -> None:
        """One catch-up job for each repository with dispatches that have waited `catch_up_after` seconds."""
        stamp = int(time.time())
        for repo in sorted({d.repo for d in self._overdue()}):
            owner, name = repo.split("/", 1)
            try:
                installation = await self.github.repo_installation(owner, name)
            except (HTTPException, aiohttp.ClientError, TimeoutError) as exc:
                log.warning(
                    "cannot catch up on workflow runs", extra={"repo": repo, "reason": short_reason(exc)}
                )
                continue
            await self.queue.enqueue(
                f"catch-up:{repo}:{stamp}",
                "catch_up",
                [
                    JobRequest(
                        "catch_up",
                        f"{repo}:workflow_runs".lower(),
                        {"installation_id": installation, "owner": owner, "repo": name},
                    )
                ],
            )
        self.wake()

    def _overdue(self) -> list[Dispatch]:
        since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=self.catch_up_after)
        return self.store.unfinished(since.strftime("%Y-%m-%dT%H:%M:%SZ"))

    async def _catch_up(self) -> None:
        """At start and then every `catch_up_every` seconds: runs whose events were missed while the service
        was down, or that GitHub failed to deliver, still reach their check runs."""
        while not self._stopping:
            try:
                await self.queue_catch_up()
            except Exception:
                log.exception("catching up on workflow runs failed")
            await asyncio.sleep(self.catch_up_every)

    async def _platforms_job(self, run: Run) -> str:
        """After a workflow_run update: the checklist's platform table, and `cancel_superseded`."""
        pull = await self._pull(run)
        config = await self._repo_config(run, pull)
        await self._refresh_platforms(run, pull, config)
        if config.cancel_superseded:
            d = self.store.get(run.job.payload.get("request_id") or "")
            if d is not None and d.head_sha != pull["head"]["sha"] and d.status != "completed" and d.run_id:
                await self._cancel_run(run, d)
        return "done"

    async def _revalidate_job(self, run: Run) -> str:
        """`rerequested` on a `validate: <platform>` check run: dispatch that platform again."""
        payload = run.job.payload
        d = self.store.get(payload.get("external_id") or "") or self.store.by_check_run(
            run.repo, int(payload["check_run_id"])
        )
        if d is None:
            log.info("re-requested validation check run is unknown", extra={"job_id": run.job.id})
            return "done"
        run.number = d.pr
        pull = await self._pull(run)
        if pull.get("state") != "open":
            return "done"
        config = await self._repo_config(run, pull)
        chosen, _ = select_platforms([d.platform], config)
        if chosen:
            await self._dispatch_platforms(run, pull, chosen)
            await self._refresh_platforms(run, pull, config)
        return "done"

    async def _closed_job(self, run: Run) -> str:
        """A closed PR: the `llama-bot/pr-<n>` branches made for its fork are deleted."""
        payload = run.job.payload
        branches = set(self.store.forks_to_clean(run.repo, payload["number"]))
        if payload.get("fork"):
            branches.add(fork_branch(payload["number"]))
        for branch in sorted(branches):
            try:
                await run.gh.delete(_ref_path(run, branch))
            except BadRequest as exc:
                if exc.status_code not in (http.HTTPStatus.NOT_FOUND, http.HTTPStatus.UNPROCESSABLE_ENTITY):
                    raise
        return "done"


class BranchMoved(Exception):
    """The head branch is no longer at the commit the patches were regenerated for."""

    def __init__(self, now_sha: str):
        super().__init__(now_sha)
        self.now_sha = now_sha
