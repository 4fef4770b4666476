"""After a workflow_run update: the checklist's platform table, and for a finished platform run that uploads a
report (the contract probe), its findings read from the run's artifact into the checklist beside the review's."""

from __future__ import annotations

import http
from dataclasses import replace

from gidgethub import BadRequest

from bot.config import Config, Platform
from bot.decisions.runreport import ARCHIVE_BYTES, PinProbe, ReportError, read_archive, to_stored
from bot.decisions.validation import Dispatch
from bot.gh import message_of, refused
from bot.gh.github import BodyTooLarge
from bot.worker import platforms
from bot.worker.analysis import analyse_pull
from bot.worker.context import JobContext, Outcome, Superseded


async def platforms_job(ctx: JobContext) -> Outcome:
    """The dispatch's new state in the checklist: the whole checklist again when its run brought a report for
    the head (its findings join the review's), else the platform table alone; then `cancel_superseded`."""
    pull = await ctx.pulls.get()
    config = await ctx.pulls.repo_config(pull)
    d = ctx.shared.store.get(ctx.payload.get("request_id") or "")
    if not await _report_shown(ctx, d, config, pull["head"]["sha"]):
        await platforms.refresh_platforms(ctx, pull, config)
    if config.cancel_superseded and d is not None and platforms.superseded_run(d, pull["head"]["sha"]):
        await platforms.cancel_run(ctx, d)
    return Outcome.DONE


async def _report_shown(ctx: JobContext, d: Dispatch | None, config: Config, head: str) -> bool:
    """Whether the dispatch's run brought a report for the head, now read and shown by writing the checklist
    again (an analysis of the head, which the head moving on supersedes)."""
    platform = _platform_of(config, d) if d is not None else None
    if d is None or platform is None or d.head_sha != head:
        return False
    read = await _read_report(ctx, d, platform)
    if read is d and not (ctx.resumed and d.report is not None):  # a job tried again finishes what it read
        return False
    try:
        await analyse_pull(ctx, head, config)
    except Superseded:
        return False
    return True


async def _read_report(ctx: JobContext, d: Dispatch, platform: Platform) -> Dispatch:
    """The dispatch with its finished run's report read (once); an artifact missing, expired, too large or
    not a probe report is kept as the reason, which the checklist shows."""
    if not platform.report or d.status != "completed" or d.report is not None or d.run_id is None:
        return d
    try:
        stored = to_stored(await _report_pins(ctx, d.run_id, platform.report))
    except ReportError as exc:
        stored = to_stored(None, str(exc))
    except BodyTooLarge:
        stored = to_stored(None, f"the artifact is larger than {ARCHIVE_BYTES >> 20} MiB")
    except BadRequest as exc:
        if not refused(exc, http.HTTPStatus.NOT_FOUND, http.HTTPStatus.GONE):
            raise
        stored = to_stored(None, f"GitHub did not give the artifact: {message_of(exc) or exc.status_code}")
    read = replace(d, report=stored)
    ctx.shared.store.update(read)
    return read


async def _report_pins(ctx: JobContext, run_id: int, name: str) -> list[PinProbe]:
    artifact = await ctx.actions.artifact(run_id, name)
    if artifact is None:
        raise ReportError(f"the run uploaded no artifact {name}")
    if int(artifact.get("size_in_bytes") or 0) > ARCHIVE_BYTES:
        raise ReportError(f"the artifact is larger than {ARCHIVE_BYTES >> 20} MiB")
    return read_archive(await ctx.actions.archive(int(artifact["id"]), ARCHIVE_BYTES))


def _platform_of(config: Config, d: Dispatch) -> Platform | None:
    return next((p for p in config.platforms if p.name == d.platform), None)
