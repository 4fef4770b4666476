"""A job that failed for good, as the pull request shows it."""

from __future__ import annotations

import logging

from bot.markup import code_span
from bot.render.bodies import error_body
from bot.render.env import under_way
from bot.render.replies import failed_reply
from bot.worker.context import JobContext

log = logging.getLogger("bot.worker.failure")

PR_JOBS = ("analysis", "command")  # jobs whose failure is reported on the pull request


async def report_failure(ctx: JobContext, reason: str) -> None:
    """After the last attempt, on a PR the bot reports on: the comment (if it still says a run is under
    way) and the check runs say the run failed, with the reason and the job id; a command gets a reply.
    A PR nothing shows to touch a pin gets no check run: a red one would only confuse."""
    if ctx.job.kind not in PR_JOBS:
        return  # validation bookkeeping: the log has it; the check runs stay as they were
    try:
        await _report(ctx, reason)
    except Exception:
        log.exception("could not report a failed job on the pull request", extra={"job_id": ctx.job.id})


async def _report(ctx: JobContext, reason: str) -> None:
    if ctx.job.kind == "command":
        line = ctx.payload["body"].strip()[:200]
        await ctx.comment.reply(failed_reply(line, reason, ctx.job.id))
        if not ctx.payload.get("on_pull", True):
            return  # an issue has no checklist or check runs
    comment = await ctx.comment.find()
    head_sha = await _reported_head(ctx, comment)
    if head_sha is None:
        return
    message = f"The run failed: {reason} (job {ctx.job.id})."
    hint = f"Comment {code_span(f'{ctx.prefix} recheck')} to try again."
    if comment is not None and under_way(comment.get("body") or ""):
        ctx.progress.comment_id = comment["id"]
        await ctx.comment.put(error_body(comment["body"], head_sha, message, hint))
    await ctx.checks.fail_all(head_sha, "llama-bot could not finish", message, hint)


async def _reported_head(ctx: JobContext, comment: dict | None) -> str | None:
    """The commit the failure is reported on; None for a PR never reported on that touches no pin."""
    pull = None
    if comment is None and not ctx.progress.checks_sha:
        pull = await ctx.pulls.get()
        if not (await ctx.pulls.repo_config(pull)).touched_pins(await ctx.pulls.changed_paths()):
            return None
    return (
        ctx.progress.checks_sha
        or ctx.payload.get("head_sha")
        or (pull or await ctx.pulls.get())["head"]["sha"]
    )
