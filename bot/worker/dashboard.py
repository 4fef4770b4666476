"""The pin dashboard's jobs: its refresh (at start, on a schedule, when an upstream moves, by `/llama
dashboard`) and its ticked boxes (a writer's edit asks for a pin's bump).

A refresh runs, per pin, what a bump would: the ref `bump` would choose (skipped refs left out) and the
engine's analysis of the version file moved there, within the same limits; nothing is committed.
"""

from __future__ import annotations

import logging
import time

from bot.commands import Command
from bot.config import Config, Pin
from bot.decisions import bump
from bot.decisions.approval import may_write, permission_of
from bot.decisions.bump import BumpRequest, RefChoice
from bot.decisions.dashboard import OpenBump, PinState, box_id, due, fit, state_of, ticked
from bot.gh.issues import is_dashboard
from bot.gh.rest import RestSnapshot
from bot.model import AnalysisError
from bot.render.env import render_template
from bot.stores.jobs import JobRequest, bump_key
from bot.worker.analysis import read_config
from bot.worker.bump import every_text, ref_in, run_bump, versions_at
from bot.worker.context import JobContext, Outcome

log = logging.getLogger("bot.worker.dashboard")


async def dashboard_command(ctx: JobContext, command: Command, config: Config) -> None:
    """`dashboard`: a refresh now, queued under the repository's bump key; its job replies with the link."""
    payload = ctx.payload
    request = JobRequest(
        "dashboard",
        bump_key(payload["owner"], payload["repo"]),
        {**payload, "reason": "command", "line": command.line},
    )
    delivery = ctx.job.delivery_id or f"job-{ctx.job.id}"
    await ctx.shared.queue.enqueue(
        f"{delivery}:dashboard:{ctx.progress.commands_done}", "dashboard", [request]
    )
    ctx.shared.wake()


async def dashboard_job(ctx: JobContext) -> Outcome:
    """A refresh: forced by a command or the service's start, else only when due (`decisions.dashboard.due`)."""
    payload = ctx.payload
    config, error = await read_config(ctx, payload["default_branch"])
    line = payload.get("line")
    if error or not config.dashboard.enabled:
        why = error or "the dashboard is off: `[dashboard] enabled = true` in the configuration turns it on."
        log.info("dashboard not refreshed", extra={"job_id": ctx.job.id, "reason": why})
        if line:
            await ctx.comment.reply(render_template("reply_dashboard.md.j2", line=line, problem=why))
        return Outcome.DONE
    issue = await refresh(ctx, config, forced=payload.get("reason") != "schedule")
    if line:
        await ctx.comment.reply(render_template("reply_dashboard.md.j2", line=line, issue=issue))
    return Outcome.DONE


async def tick_job(ctx: JobContext) -> Outcome:
    """The dashboard edited with boxes ticked: each ticked pin's bump, for a writer, with a reply on the
    dashboard; then the dashboard rewritten, its boxes unticked."""
    payload = ctx.payload
    config, error = await read_config(ctx, payload["default_branch"])
    issue = await ctx.dashboard.get(payload["number"])
    if error or not config.dashboard.enabled or issue is None or not _the_dashboard(ctx, issue):
        return Outcome.DONE
    pins = ticked(issue["body"] or "", tuple(p.name for p in config.pins))
    sender = payload["sender"]
    answer = await ctx.pulls.permission(sender)
    if not may_write(answer):
        if pins and not ctx.progress.refused:
            text = render_template("reply_refused.md.j2", author=sender, permission=permission_of(answer))
            await ctx.comment.reply(text)
            ctx.progress.refused = True
            await ctx.save()
        await refresh(ctx, config, forced=True)
        return Outcome.DONE
    for index in range(ctx.progress.commands_done, len(pins)):
        await _ticked_bump(ctx, config, pins[index], sender)
        ctx.progress.commands_done = index + 1
        await ctx.save()
    await refresh(ctx, config, forced=True)
    return Outcome.DONE


def _the_dashboard(ctx: JobContext, issue: dict) -> bool:
    """Whether an issue is this repository's dashboard: the one recorded, else (no record) one the bot wrote."""
    record = ctx.shared.store.dashboard(ctx.pull.full_name)
    return is_dashboard(issue) and (record is None or record.issue == issue["number"])


async def _ticked_bump(ctx: JobContext, config: Config, pin: str, sender: str) -> None:
    """One ticked pin's bump, to the ref the dashboard offers, and the reply saying what it did."""
    skipped = ctx.shared.store.skipped_refs(ctx.pull.full_name, pin)
    number = ctx.payload["number"]
    outcome = await run_bump(
        ctx,
        config,
        BumpRequest((pin,), skipped=skipped),
        f"Requested by @{sender} on the pin dashboard (#{number}).",
    )
    line = f"@{sender} ticked: bump {pin}"
    await ctx.comment.reply(
        render_template("reply_bump.md.j2", line=line, outcome=outcome, prefix=config.command_prefix)
    )


async def refresh(ctx: JobContext, config: Config, forced: bool) -> dict | None:
    """The dashboard rewritten from the default branch's head, when `forced` or due; the issue, or None when
    a scheduled look found nothing new."""
    repo, store = ctx.pull.full_name, ctx.shared.store
    tip = await ctx.bumps.snapshot(await ctx.git().branch_sha(ctx.payload["default_branch"]))
    choices = [await _choice(ctx, config, tip, pin) for pin in config.pins]
    newest = {c.pin: c.ref for c in choices if c.ref}
    record = store.dashboard(repo)
    shown, at = (record.newest, record.refreshed_at) if record else (None, 0.0)
    if not forced and not due(shown, newest, at, config.dashboard.every, time.time()):
        return None
    pulls = await ctx.bumps.open_bumps(store.branches_made(repo))
    states = [await _state(ctx, config, tip, choice, pulls) for choice in choices]
    body = fit(
        render_template(
            "dashboard.md.j2",
            states=states,
            prefix=config.command_prefix,
            box_id=box_id,
            refreshed=time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            every=every_text(config.dashboard.every),
        )
    )
    issue = await _written(ctx, config, record.issue if record else None, body)
    store.dashboard_shown(repo, issue["number"], newest)
    log.info("dashboard refreshed", extra={"job_id": ctx.job.id, "issue": issue["number"]})
    return issue


async def _choice(ctx: JobContext, config: Config, tip: RestSnapshot, pin: Pin) -> RefChoice:
    """The ref a bump of `pin` without a named ref would choose, skipped refs left out."""
    request = BumpRequest((pin.name,), skipped=ctx.shared.store.skipped_refs(ctx.pull.full_name, pin.name))
    try:
        (choice,) = await ctx.shared.choose_refs(config, request, await versions_at(tip, config, (pin.name,)))
    except AnalysisError as exc:
        return RefChoice(pin.name, None, None, refusal=str(exc))
    return choice


async def _state(
    ctx: JobContext, config: Config, tip: RestSnapshot, choice: RefChoice, pulls: list[dict]
) -> PinState:
    """A pin's line: the forecast of its bump (the engine's report on the version file moved to the newest
    ref) and its open bump pull request."""
    pull = await _open_bump(ctx, config, choice.pin, pulls)
    if choice.ref is None or choice.already:
        return state_of(choice, None, pull=pull)
    path = bump.version_file(config, choice.pin)
    old = (await versions_at(tip, config, (choice.pin,)))[path]
    moved = tip.with_files({path: bump.version_text(old, choice.ref)})
    errors: dict[str, str] = {}
    try:
        report = await ctx.shared.analyse(config, tip, moved, [path], True, errors=errors)
    except AnalysisError as exc:
        return state_of(choice, None, str(exc), pull)
    found = next((p for p in report.pins if p.name == choice.pin), None)
    failure = "; ".join(errors.values()) or ("" if found else "the analysis checked no pin")
    return state_of(choice, found, failure, pull)


async def _open_bump(ctx: JobContext, config: Config, pin: str, pulls: list[dict]) -> OpenBump | None:
    """The pin's open bump pull request and the ref its version file names."""
    pull = bump.open_bump(pulls, (pin,), ctx.pull.full_name)
    if pull is None:
        return None
    head = await ctx.bumps.snapshot(pull["head"]["sha"])
    path = bump.version_file(config, pin)
    return OpenBump(pull["number"], pull["html_url"], ref_in(await versions_at(head, config, (pin,)), path))


async def _written(ctx: JobContext, config: Config, recorded: int | None, body: str) -> dict:
    """The dashboard issue with `body`: the recorded one, else the bot's one under the label, else a new one."""
    settings = config.dashboard
    issue = await ctx.dashboard.get(recorded) if recorded is not None else None
    if issue is None or not is_dashboard(issue):
        issue = await ctx.dashboard.find(settings.label)
    if issue is None:
        return await ctx.dashboard.open(settings.title, body, settings.label)
    return await ctx.dashboard.update(issue["number"], settings.title, body)
