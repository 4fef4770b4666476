"""The edge of `bot.decisions.approval`: a command job's PR head checked against what its author saw."""

from __future__ import annotations

from bot.decisions.approval import Approval, CommentTime, approve, epoch
from bot.render.env import render_template
from bot.worker.context import JobContext


def comment_time(ctx: JobContext) -> CommentTime:
    """When the job's comment was written (its delivery said) and when that delivery was queued."""
    return CommentTime(epoch(ctx.payload.get("comment_created_at")), ctx.job.created_at)


def pushed_at(pull: dict) -> float | None:
    """The head repository's last push as GitHub tells it; None for a deleted fork."""
    return epoch((pull["head"].get("repo") or {}).get("pushed_at"))


async def approved_head(ctx: JobContext, pull: dict) -> Approval:
    """Whether the command may act on `pull`'s head. Once approved, the head is kept in the job's progress:
    the comment's later commands (and a resumed attempt) act on it too, or on the commit a
    `regenerate-patches` of the same comment made on it."""
    head = pull["head"]["sha"]
    if ctx.progress.approved_head == head:
        return Approval(head, True)
    approval = approve(head, await ctx.shared.queue.heads(ctx.pull.key), comment_time(ctx), pushed_at(pull))
    if approval.approved:
        ctx.progress.approved_head = head
        await ctx.save()
    return approval


def moved_reply(line: str, approval: Approval, verb: str) -> str:
    """The reply to a command that did nothing because the head is not the one its author saw."""
    return render_template("reply_moved.md.j2", line=line, head=approval.head, seen=approval.seen, verb=verb)
