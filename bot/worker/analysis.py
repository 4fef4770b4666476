"""The analysis job: check a pull request's head, post the checklist comment and the check runs."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable

from bot.config import CONFIG_PATH, Config, Pin, parse_config
from bot.decisions.validation import AutoValidation
from bot.gh.checkruns import PIN_CHECKS
from bot.markup import code_span
from bot.model import AnalysisError, Report
from bot.render.bodies import carried_ticks, error_body, progress_body, untouched_body
from bot.render.checklist import render_comment
from bot.render.checkruns import check_run_outputs
from bot.times import human, utc_now
from bot.worker import autovalidate, platforms
from bot.worker.context import JobContext, Outcome, Superseded

log = logging.getLogger("bot.worker.analysis")


async def analysis_job(ctx: JobContext) -> Outcome:
    try:
        return await analyse_pull(
            ctx, ctx.payload.get("head_sha"), approved=autovalidate.pushed_by_writer(ctx)
        )
    except Superseded:
        return Outcome.SUPERSEDED


async def analyse_pull(
    ctx: JobContext,
    wanted_sha: str | None,
    config: Config | None = None,
    approved: autovalidate.Approver = autovalidate.nobody,
) -> Outcome:
    """Check the PR's head and post the checklist and check runs; UNTOUCHED when no pin is involved.
    Superseded when the head is not `wanted_sha`, or moves on while the analysis runs. `approved` says
    whether a person with write access approved the head, which the `auto` platforms need."""
    pr = await ctx.pulls.get()
    head_sha = pr["head"]["sha"]
    if wanted_sha and wanted_sha != head_sha:
        raise Superseded(head_sha)
    changed = await ctx.pulls.changed_paths()
    config, config_error = (
        (config, None) if config is not None else await read_config(ctx, pr["base"]["repo"]["default_branch"])
    )
    ctx.prefix = config.command_prefix
    if config.cancel_superseded and ctx.job.kind == "analysis":
        await platforms.cancel_superseded(ctx, head_sha)
    pins = config.touched_pins(changed)  # with a broken configuration: the default pins
    if not pins and not (config_error and CONFIG_PATH in changed):
        await _retire_checklist(ctx, head_sha, config)
        return Outcome.UNTOUCHED
    await _check(ctx, pr, config, config_error, changed, pins, approved)
    return Outcome.DONE


async def _check(
    ctx: JobContext,
    pr: dict,
    config: Config,
    config_error: str | None,
    changed: list[str],
    pins: list[Pin],
    approved: autovalidate.Approver,
) -> None:
    """The checklist says a run is under way, the pins' check runs start, and both end with the report
    (or with why there is none); the `auto` platforms the report makes due are dispatched before the
    checklist, which shows them."""
    head_sha = pr["head"]["sha"]
    since = utc_now()
    old = await ctx.comment.adopt()
    previous = old["body"] if old else None
    await ctx.comment.put(progress_body(previous, head_sha, since))
    if config_error:
        await post_error(ctx, head_sha, config_error)
        return
    checks = await ctx.checks.start(head_sha, pins, since)
    banner = FetchBanner(ctx, previous, head_sha, since)
    try:
        report, errors = await _report(ctx, config, pr, changed, banner.fetching)
    finally:
        await banner.close()
    await _ensure_head(ctx, head_sha)
    if errors and not report.pins:
        await post_error(ctx, head_sha, "; ".join(errors.values()))
        return
    auto = await autovalidate.auto_validate(ctx, pr, config, report, approved)
    await _post_checklist(ctx, config, report, changed, head_sha, auto)
    await _complete_checks(ctx, pins, report, errors, checks, head_sha)


async def read_config(ctx: JobContext, default_branch: str) -> tuple[Config, str | None]:
    """The repository's configuration, or the defaults and why it could not be read."""
    try:
        return await ctx.pulls.config(default_branch), None
    except AnalysisError as exc:
        return parse_config(None), str(exc)


async def _report(
    ctx: JobContext, config: Config, pr: dict, changed: list[str], fetching: Callable[[str, bool], None]
) -> tuple[Report, dict[str, str]]:
    """The engine's report and the pins it could not check, with why (the others still are)."""
    errors: dict[str, str] = {}
    try:
        base, head = await ctx.pulls.snapshots(pr)
        report = await ctx.shared.analyse(
            config, base, head, changed, True, errors=errors, fetching=fetching, pull=ctx.pull.key
        )
    except AnalysisError as exc:
        return Report(), {"": str(exc)}
    return report, errors


class FetchBanner:
    """While the analysis thread fetches an upstream, the checklist comment says so. The thread only leaves
    a note; the event loop posts the notes in order, so the analysis never waits on the loop."""

    def __init__(self, ctx: JobContext, previous: str | None, head_sha: str, since: dt.datetime):
        self._ctx, self._previous, self._head_sha, self._since = ctx, previous, head_sha, since
        self._loop = asyncio.get_running_loop()
        self._notes: asyncio.Queue[tuple[str, bool] | None] = asyncio.Queue()
        self._poster = asyncio.create_task(self._post())

    def fetching(self, name: str, started: bool) -> None:
        """From the analysis thread: the fetch from pin `name`'s upstream started or ended."""
        try:
            self._loop.call_soon_threadsafe(self._notes.put_nowait, (name, started))
        except RuntimeError:  # the service stopped and its loop closed: nobody is left to show it to
            pass

    async def _post(self) -> None:
        while (note := await self._notes.get()) is not None:
            name, started = note
            body = progress_body(self._previous, self._head_sha, self._since, name if started else None)
            try:
                await self._ctx.comment.put(body)
            except Exception:  # the banner is a courtesy: the analysis goes on without it
                log.warning(
                    "could not show the upstream fetch in the checklist comment",
                    exc_info=True,
                    extra={"job_id": self._ctx.job.id, "pin": name},
                )

    async def close(self) -> None:
        """Once the analysis ended: notes not yet posted are dropped, the one being posted finishes."""
        while not self._notes.empty():
            self._notes.get_nowait()
        self._notes.put_nowait(None)
        await self._poster


async def _retire_checklist(ctx: JobContext, head_sha: str, config: Config) -> None:
    """A PR that no longer touches a pin keeps no checklist describing an older commit as current."""
    current = await ctx.comment.adopt()
    if current is not None:
        await ctx.comment.put(untouched_body(current["body"], head_sha, [p.name for p in config.pins]))


async def _ensure_head(ctx: JobContext, head_sha: str) -> None:
    """Before posting results: drop them when the PR's head moved on, closing this commit's runs."""
    current = (await ctx.pulls.get())["head"]["sha"]
    if current == head_sha:
        return
    output = {
        "title": "Superseded by a newer commit",
        "summary": f"The pull request moved on to {code_span(current[:12])}; it is checked there.",
    }
    await ctx.checks.complete_all("cancelled", output)
    raise Superseded(current)


async def post_error(ctx: JobContext, head_sha: str, message: str) -> None:
    """An analysis that cannot run ends as failed check runs and a checklist saying what to fix."""
    current = await ctx.comment.find()
    hint = f"Fix this and push again, or comment {code_span(f'{ctx.prefix} recheck')}."
    await ctx.comment.put(error_body(current["body"] if current else None, head_sha, message, hint))
    await ctx.checks.fail_all(head_sha, "Could not check the patches", message, hint)


async def _post_checklist(
    ctx: JobContext,
    config: Config,
    report: Report,
    changed: list[str],
    head_sha: str,
    auto: AutoValidation | None,
) -> None:
    current = await ctx.comment.find()
    body = render_comment(
        report,
        changed,
        head_sha=head_sha,
        ran_at=human(utc_now()),
        ticked=carried_ticks(current["body"] if current else None),
        platforms=platforms.rows(ctx, head_sha, config),
        prefix=config.command_prefix,
        patch_dirs={p.name: p.patches for p in config.pins},
        auto=auto,
    )
    await ctx.comment.put(body)


def _unreported_output(ctx: JobContext, pin: Pin, errors: dict[str, str], head_sha: str) -> tuple[str, dict]:
    """The conclusion of a pin's check runs when the report has nothing for it: an error, or no pin file."""
    if pin.name in errors:
        summary = f"{errors[pin.name]}\n\nFix this, then push again or comment {code_span(f'{ctx.prefix} recheck')}."
        return "failure", {"title": f"Could not check {pin.name}", "summary": summary}
    return "neutral", {
        "title": f"{pin.version_file} does not exist at this commit",
        "summary": f"Nothing to check for {pin.name} at {code_span(head_sha[:12])}.",
    }


async def _complete_reported(ctx: JobContext, report: Report, checks: dict[str, int]) -> None:
    """The check runs of the pins the report covers end with their results."""
    for pin_report in report.pins:
        for name, conclusion, output in check_run_outputs(pin_report, ctx.prefix):
            if name in checks:
                await ctx.checks.complete(checks[name], conclusion, output)


async def _complete_checks(
    ctx: JobContext,
    pins: list[Pin],
    report: Report,
    errors: dict[str, str],
    checks: dict[str, int],
    head_sha: str,
) -> None:
    """Each pin's two check runs end with its results, its error, or nothing to check."""
    await _complete_reported(ctx, report, checks)
    reported = {pin.name for pin in report.pins}
    for pin in pins:
        if pin.name in errors or pin.name not in reported:
            conclusion, output = _unreported_output(ctx, pin, errors, head_sha)
            for suffix in PIN_CHECKS:
                await ctx.checks.complete(checks[pin.name + suffix], conclusion, output)
