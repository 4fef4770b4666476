"""A closed pull request: what the bot made for it goes (its fork's validation branches, its own bump
branch) and the upstream commits it pinned by id (bot/repos/pinned.py) are let go."""

from __future__ import annotations

from bot.stores.jobs import pull_key
from bot.worker import bump, platforms
from bot.worker.context import JobContext, Outcome


async def closed_job(ctx: JobContext) -> Outcome:
    await platforms.delete_fork_branches(ctx)
    await bump.delete_closed_branch(ctx)
    ctx.shared.forget_pinned(pull_key(ctx.pull.owner, ctx.pull.repo, ctx.payload["number"]))
    return Outcome.DONE
