"""`auto = true` platforms: dispatched once per head when its analysis finds that the bump changes the
upstream build files Ollama's build uses.

A workflow run gets the repository's secrets, so nothing runs that a person with write access did not
approve for that exact commit: a head is dispatched only when it is in the base repository and someone
with write access pushed it (the `pull_request` delivery's sender) or approved it (a `recheck` comment
on the head its author saw). The validation store's records keep each platform to one run per head,
whatever re-checks, re-deliveries and restarts follow.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from bot.config import Config
from bot.decisions.approval import may_write
from bot.decisions.validation import AutoValidation, auto_due, auto_refusal, is_fork
from bot.model import Report
from bot.worker.approve import approved_head
from bot.worker.context import JobContext
from bot.worker.platforms import dispatch_platforms

log = logging.getLogger("bot.worker.autovalidate")

AUTO_SCOPE = "auto"  # the job progress's record of these dispatches (bot/worker/platforms.py)
Approver = Callable[[dict], Awaitable[bool]]  # whether a person with write access approved the PR's head


def pushed_by_writer(ctx: JobContext) -> Approver:
    """The head a `pull_request` delivery announced, approved when its sender (who pushed or opened it)
    may write to the repository."""

    async def approved(pull: dict) -> bool:
        sender = ctx.payload.get("sender")
        if not isinstance(sender, str) or not sender or pull["head"]["sha"] != ctx.payload.get("head_sha"):
            return False
        return may_write(await ctx.pulls.permission(sender))

    return approved


def approved_by_commenter(ctx: JobContext) -> Approver:
    """A command job's head, approved when it is the one its author (who may write) saw."""

    async def approved(pull: dict) -> bool:
        return (await approved_head(ctx, pull)).approved

    return approved


async def nobody(pull: dict) -> bool:
    """No approval: an analysis nobody with write access asked for on this head."""
    return False


async def auto_validate(
    ctx: JobContext, pull: dict, config: Config, report: Report, approved: Approver
) -> AutoValidation | None:
    """Dispatch the `auto` platforms the head's report makes due, when the head may be dispatched; what
    became of them, for the checklist (None: there are none, or nothing of upstream's build changed)."""
    head = pull["head"]["sha"]
    due, shown = auto_due(config.platforms, report, _ran(ctx, head))
    if not due or shown is None:
        return shown
    names = tuple(p.name for p in due)
    fork = is_fork(pull)
    refusal = auto_refusal(fork, not fork and await approved(pull))
    if refusal is not None:
        log.info("auto validation not dispatched", extra={"job_id": ctx.job.id, "reason": refusal})
        return replace(shown, held=names, why=refusal)
    dispatched, _ = await dispatch_platforms(ctx, pull, head, due, AUTO_SCOPE)
    return _outcome(shown, names, {d.platform for d in dispatched})


def _ran(ctx: JobContext, head: str) -> set[str]:
    """The platforms dispatched for `head` already, but those this job dispatched before it was stopped
    and tried again: it finishes them (`dispatch_platforms` remembers what it did)."""
    own = ctx.progress.validation.get(AUTO_SCOPE, {})
    stored = ctx.shared.store.for_pr(ctx.pull.full_name, ctx.pull.pr_number)
    return {d.platform for d in stored if d.head_sha == head} - set(own)


def _outcome(shown: AutoValidation, names: tuple[str, ...], started: set[str]) -> AutoValidation:
    """The platforms with a run for the head, and those whose dispatch GitHub refused."""
    failed = tuple(name for name in names if name not in started)
    ran = shown.dispatched + tuple(name for name in names if name in started)
    return AutoValidation(ran, failed, "failed" if failed else "")
