"""Platform validation: dispatching the platforms' workflows, following their runs, the checklist's
platform table, cancelling superseded runs and the branches made for forks."""

from __future__ import annotations

import datetime as dt
import functools
import logging
from dataclasses import replace

from gidgethub import HTTPException

from bot.config import Config, Platform
from bot.decisions.approval import may_write, permission_of, rerun_refusal
from bot.decisions.validation import (
    Dispatch,
    apply_run,
    dispatch_body,
    fork_branch,
    is_fork,
    match_run,
    new_dispatch,
    runs_query,
    select_platforms,
)
from bot.gh import message_of
from bot.model import Report
from bot.render.bodies import carried_ticks
from bot.render.checkruns import (
    RerunRefused,
    check_run_create,
    check_run_update,
    dispatch_failed_update,
    rerun_refused_update,
)
from bot.render.platforms import platform_rows, render_platforms, splice_platforms
from bot.render.replies import dispatch_error_reply
from bot.stores.jobs import JobRequest, pull_key
from bot.stores.validationstore import ValidationStore
from bot.times import iso, utc_now
from bot.worker.context import JobContext, Outcome

log = logging.getLogger("bot.worker.platforms")

RUN_STATUS_ACTION = {
    "completed": "completed",
    "in_progress": "in_progress",
}  # else "requested" (queued, waiting)


def made_for_request(request_id: str, check_run: dict) -> bool:
    """Whether a `validate:` check run is the one made for the dispatch `request_id` (its external_id)."""
    return check_run.get("external_id") == request_id


def overdue(store: ValidationStore, after: float) -> list[Dispatch]:
    """Dispatches unfinished `after` seconds after they were made."""
    since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=after)
    return store.unfinished(since.strftime("%Y-%m-%dT%H:%M:%SZ"))


# -- the platform table --


def rows(ctx: JobContext, head_sha: str, config: Config) -> list[dict]:
    return platform_rows(
        ctx.shared.store.for_pr(ctx.pull.full_name, ctx.pull.pr_number), head_sha, config.platforms
    )


async def refresh_platforms(ctx: JobContext, pull: dict, config: Config) -> None:
    """Edit the platform section of the checklist comment in place (ticked boxes kept), also while a
    re-check shows the last checklist; nothing when there is none (none yet, or a first run's progress
    note: the analysis adds the rows)."""
    current = await ctx.comment.find()
    if current is None:
        return
    body = current.get("body") or ""
    section = render_platforms(
        rows(ctx, pull["head"]["sha"], config), Report(), config.command_prefix, carried_ticks(body)
    )
    new = splice_platforms(body, section)
    if new is None or new == body:
        return
    ctx.progress.comment_id = current["id"]
    await ctx.comment.put(new)


# -- dispatching --


async def dispatch_platforms(
    ctx: JobContext, pull: dict, sha: str, chosen: list[Platform], scope: str = "rerun"
) -> tuple[list[Dispatch], list[str]]:
    """Per platform: a queued check run on `sha`, the stored dispatch, then the dispatch call.

    `sha` is the commit a person with write access approved, never a head read again: a fork's branch
    in the repository is moved to it, and the check runs and stored dispatches name it. Each platform's
    outcome is kept in the job's progress under `scope`, so a job resumed after a crash does not dispatch
    again what it already dispatched (or reported as refused).
    """
    if not chosen:
        return [], []
    done = ctx.progress.validation.setdefault(scope, {})
    await _push_fork_head(ctx, pull, sha, chosen, done)
    dispatched: list[Dispatch] = []
    errors: list[str] = []
    for platform in chosen:
        earlier = done.get(platform.name)
        if earlier is not None and not earlier.get("pending"):
            _recall(ctx.shared.store, earlier, dispatched, errors)
            continue
        d, error = await _dispatch_one(ctx, pull, sha, platform, earlier, done)
        if error is not None:
            errors.append(error)
        else:
            dispatched.append(d)
    return dispatched, errors


async def _push_fork_head(ctx: JobContext, pull: dict, sha: str, chosen: list[Platform], done: dict) -> None:
    """A fork's approved head `sha` is pushed to a branch of the repository, whose workflows run there;
    not when every chosen platform was dispatched already."""
    if is_fork(pull) and any(p.name not in done for p in chosen):
        await ctx.git().force_branch(fork_branch(pull["number"]), sha)


def _recall(store: ValidationStore, earlier: dict, dispatched: list[Dispatch], errors: list[str]) -> None:
    """What an earlier attempt of the job already did for a platform: its error, or its dispatch."""
    if earlier.get("error"):
        errors.append(earlier["error"])
    elif (known := store.get(earlier["request_id"])) is not None:
        dispatched.append(known)


async def _dispatch_one(
    ctx: JobContext, pull: dict, sha: str, platform: Platform, earlier: dict | None, done: dict
) -> tuple[Dispatch, str | None]:
    """One platform's check run, stored dispatch and dispatch call; the dispatch, or why it failed."""
    d = await _stored_dispatch(ctx, pull, sha, platform, earlier, done)
    try:
        answer = await _dispatch_call(ctx, platform, d, bool(earlier))
    except HTTPException as exc:  # 4xx, or 5xx after the client's retries: this platform failed
        if int(exc.status_code) < 400:
            raise
        text = await _dispatch_failed(ctx, d, platform, exc)
        done[platform.name] = {"request_id": d.request_id, "error": text}
        await ctx.save()
        return d, text
    store = ctx.shared.store
    if isinstance(answer, dict) and answer.get("workflow_run_id"):
        store.attach_run(d.request_id, int(answer["workflow_run_id"]), answer.get("html_url"))
    log.info(
        "dispatched a platform run",
        extra={"job_id": ctx.job.id, "platform": platform.name, "request_id": d.request_id},
    )
    done[platform.name] = {"request_id": d.request_id, "error": None}
    await ctx.save()
    return store.get(d.request_id) or d, None


async def _stored_dispatch(
    ctx: JobContext, pull: dict, sha: str, platform: Platform, earlier: dict | None, done: dict
) -> Dispatch:
    """The platform's dispatch with its queued check run, in the store before the dispatch call: the run's
    first event may arrive before the answer."""
    store = ctx.shared.store
    request_id = earlier["request_id"] if earlier else None
    d = new_dispatch(ctx.pull.full_name, pull, sha, platform, iso(utc_now()), request_id)
    if earlier is None:  # a job resumed after a crash finds what this one made by the request id
        done[platform.name] = {"request_id": d.request_id, "pending": True}
        await ctx.save()
    d = replace(d, check_run_id=(await _check_run(ctx, d, bool(earlier)))["id"])
    if store.get(d.request_id) is None:
        store.add(d)
    return d


async def _dispatch_call(ctx: JobContext, platform: Platform, d: Dispatch, resumed: bool) -> dict | None:
    """The dispatch call's answer; a resumed job first looks for the run its earlier attempt started, since
    a workflow run costs runner hours."""
    found = functools.partial(_dispatched_run, ctx, d)
    return (resumed and await found()) or await ctx.actions.dispatch(
        platform.workflow, dispatch_body(platform, d.ref, d.pr, d.request_id), found
    )


async def _check_run(ctx: JobContext, d: Dispatch, resumed: bool) -> dict:
    """The dispatch's queued check run: the one a resumed job made before, or a new one."""
    body = check_run_create(d)  # its external_id is the request id
    find = functools.partial(
        ctx.checks.made, d.head_sha, body["name"], functools.partial(made_for_request, d.request_id)
    )
    return (resumed and await find()) or await ctx.checks.create(body, find)


async def _dispatch_failed(ctx: JobContext, d: Dispatch, platform: Platform, exc: HTTPException) -> str:
    """A refused dispatch: its check run and stored dispatch fail with GitHub's reason, which is returned."""
    assert d.check_run_id is not None, "the dispatch's check run is made before the dispatch call"
    now = iso(utc_now())
    text = dispatch_error_reply(platform, int(exc.status_code), message_of(exc))
    await ctx.checks.update(d.check_run_id, dispatch_failed_update(platform.name, text, now))
    ctx.shared.store.update(replace(d, status="completed", conclusion="failure", completed_at=now))
    return text


async def _dispatched_run(ctx: JobContext, d: Dispatch) -> dict | None:
    """The dispatch call's answer for `d`'s run when GitHub already made it (a dispatch whose answer was
    lost, or made by a job that died before saving it), else None."""
    workflow_run = await find_run(ctx, d)
    return workflow_run and {"workflow_run_id": workflow_run["id"], "html_url": workflow_run.get("html_url")}


async def find_run(ctx: JobContext, d: Dispatch) -> dict | None:
    """The workflow run of dispatch `d` as GitHub reports it now, or None when there is none (yet)."""
    if d.run_id is not None:
        return await ctx.actions.run(d.run_id)
    found = await ctx.actions.runs(d.workflow, runs_query(d))
    return next((r for r in found if match_run([d], r) is d), None)


# -- cancelling --


async def cancel_superseded(ctx: JobContext, head_sha: str) -> None:
    """`cancel_superseded = true`: stop the runs still going for commits that are no longer the head."""
    for d in ctx.shared.store.superseded(ctx.pull.full_name, ctx.pull.pr_number, head_sha):
        if d.run_id is not None:  # not matched yet: its first workflow_run event cancels it
            await cancel_run(ctx, d)


async def cancel_run(ctx: JobContext, d: Dispatch) -> None:
    assert d.run_id is not None, "only a dispatch matched to its run is cancelled"
    if await ctx.actions.cancel(d.run_id):  # False: it already finished
        log.info(
            "cancelled a superseded run",
            extra={"job_id": ctx.job.id, "run_id": d.run_id, "platform": d.platform},
        )


# -- jobs --


async def workflow_run_job(ctx: JobContext) -> Outcome:
    """A workflow_run event: the check run and the store follow it; runs nobody dispatched are ignored."""
    workflow_run = ctx.payload["workflow_run"]
    d = match_run(ctx.shared.store.find_open(ctx.pull.full_name, workflow_run["id"]), workflow_run)
    if d is None:
        log.info(
            "workflow run not dispatched by the bot",
            extra={"job_id": ctx.job.id, "run_id": workflow_run["id"]},
        )
        return Outcome.DONE
    await _follow_run(ctx, d, workflow_run, ctx.payload["action"])
    return Outcome.DONE


async def _follow_run(ctx: JobContext, d: Dispatch, workflow_run: dict, action: str) -> None:
    """Move dispatch `d` to what its run reports: the store, the check run, then the checklist's table.

    A job tried again (killed, or GitHub failed it) may find the store updated by its earlier attempt and
    the rest not done: it does the rest, which is the same again."""
    new = apply_run(d, workflow_run, action)
    if new is None or (new == d and not ctx.resumed):
        return  # an older state arriving late, or nothing new (a catch-up of a run still queued)
    if new != d:
        ctx.shared.store.update(new)
    assert d.check_run_id is not None, "a stored dispatch has its check run"
    await ctx.checks.update(d.check_run_id, check_run_update(workflow_run, action, d.platform))
    await _queue_table_refresh(ctx, d)


async def _queue_table_refresh(ctx: JobContext, d: Dispatch) -> None:
    """Queue the job that shows dispatch `d`'s new state in the checklist's platform table.

    The comment is the PR's: a job under the PR's key edits it, one at a time with the analyses."""
    payload = ctx.payload
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
    delivery = ctx.job.delivery_id or f"job-{ctx.job.id}"
    await ctx.shared.queue.enqueue(f"{delivery}:platforms:{d.request_id}", "workflow_run", [follow_up])
    ctx.shared.wake()


async def catch_up_job(ctx: JobContext) -> Outcome:
    """Look up the runs of a repository's unfinished dispatches whose workflow_run events never came."""
    for d in overdue(ctx.shared.store, ctx.shared.catch_up_after):
        if d.repo != ctx.pull.full_name:
            continue
        workflow_run = await find_run(ctx, d)
        if workflow_run is not None:
            action = RUN_STATUS_ACTION.get(workflow_run["status"], "requested")
            await _follow_run(ctx, d, workflow_run, action)
    return Outcome.DONE


def superseded_run(d: Dispatch, head_sha: str) -> bool:
    """Whether `d`'s run is still going for a commit that is no longer the head (and known, so it can be
    cancelled)."""
    return d.head_sha != head_sha and d.status != "completed" and bool(d.run_id)


async def revalidate_job(ctx: JobContext) -> Outcome:
    """`rerequested` on a `validate: <platform>` check run: that platform dispatched again on the check
    run's own commit, only for a sender with write access and only while that commit is the head;
    otherwise the check run says why nothing ran (nothing is pushed, nothing dispatched)."""
    store, payload = ctx.shared.store, ctx.payload
    d = store.get(payload.get("external_id") or "") or store.by_check_run(
        ctx.pull.full_name, int(payload["check_run_id"])
    )
    if d is None:
        log.info("re-requested validation check run is unknown", extra={"job_id": ctx.job.id})
        return Outcome.DONE
    ctx = ctx.at_pull(d.pr)
    sender = str(payload.get("sender") or "")
    answer = await ctx.pulls.permission(sender) if sender else {"permission": "none"}
    pull = await ctx.pulls.get()
    if pull.get("state") != "open":
        return Outcome.DONE
    config = await ctx.pulls.repo_config(pull)
    refusal = rerun_refusal(pull["head"]["sha"], d.head_sha, may_write(answer))
    if refusal is not None:
        refused = RerunRefused(
            refusal, sender, permission_of(answer), pull["head"]["sha"], config.command_prefix
        )
        await ctx.checks.update(int(payload["check_run_id"]), rerun_refused_update(d, refused))
        log.info("re-run of a validation refused", extra={"job_id": ctx.job.id, "reason": refusal})
        return Outcome.DONE
    chosen, _ = select_platforms([d.platform], config)
    if chosen:
        await dispatch_platforms(ctx, pull, d.head_sha, chosen)
        await refresh_platforms(ctx, pull, config)
    return Outcome.DONE


async def delete_fork_branches(ctx: JobContext) -> None:
    """A closed PR's `llama-bot/pr-<n>` branches, made for its fork's validation runs, are deleted."""
    number = ctx.payload["number"]
    branches = set(ctx.shared.store.forks_to_clean(ctx.pull.full_name, number))
    if ctx.payload.get("fork"):
        branches.add(fork_branch(number))
    for branch in sorted(branches):
        await ctx.git().delete_branch(branch)
