"""The command job: a `/llama` comment's commands, run in order for people with write access."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.commands import COMMANDS, SPECS, Command, parse_commands
from bot.config import Config
from bot.decisions.approval import may_write, permission_of
from bot.decisions.validation import select_platforms
from bot.render.env import render_template
from bot.render.replies import failed_reply, untouched_reply, validate_reply
from bot.worker import autovalidate, bump, dashboard, platforms, regenerate
from bot.worker.analysis import analyse_pull, read_config
from bot.worker.approve import approved_head, moved_reply
from bot.worker.context import JobContext, Outcome, Superseded

log = logging.getLogger("bot.worker.commands")


async def command_job(ctx: JobContext) -> Outcome:
    payload = ctx.payload
    config, config_error = await read_config(ctx, payload["default_branch"])
    ctx.prefix = config.command_prefix
    commands = parse_commands(payload["body"], config.command_prefix)
    if not commands or not await _allowed(ctx):
        return Outcome.DONE
    await ctx.pulls.react(payload["comment_id"], "eyes")
    if config_error:
        await ctx.comment.reply(failed_reply(commands[0].line, config_error))
        return Outcome.DONE
    await _run_commands(ctx, commands, config)
    return Outcome.DONE


async def _run_commands(ctx: JobContext, commands: list[Command], config: Config) -> None:
    """The commands in order, from the first not run yet: a resumed job runs none of them twice."""
    done = ctx.progress.commands_done
    on_pull = ctx.payload.get("on_pull", True)  # jobs queued before issues took commands were all on PRs
    for index, command in enumerate(commands[done:], start=done):
        log.info("running command", extra={"job_id": ctx.job.id, "command": command.name})
        if on_pull or SPECS[command.name].on_issues:
            await HANDLERS[command.name](ctx, command, config)
        else:
            await ctx.comment.reply(render_template("reply_pull_only.md.j2", line=command.line))
        ctx.progress.commands_done = index + 1
        await ctx.save()


async def _allowed(ctx: JobContext) -> bool:
    """Whether the comment's author may run commands; someone who may not is told so, once."""
    author = ctx.payload["author"]
    answer = await ctx.pulls.permission(author)
    if may_write(answer):
        return True
    if not ctx.progress.refused:
        await ctx.comment.reply(
            render_template("reply_refused.md.j2", author=author, permission=permission_of(answer))
        )
        ctx.progress.refused = True
        await ctx.save()
    return False


async def help_command(ctx: JobContext, command: Command, config: Config) -> None:
    await ctx.comment.reply(
        render_template(
            "reply_help.md.j2",
            line=command.line,
            problem=command.problem,
            prefix=config.command_prefix,
            commands=COMMANDS,
        )
    )


async def validate_command(ctx: JobContext, command: Command, config: Config) -> None:
    """Dispatch the platforms named, on the head the commenter saw; nothing when the head moved since."""
    chosen, unknown = select_platforms(command.args, config)
    pull = await ctx.pulls.get()
    approval = await approved_head(ctx, pull)
    if chosen and not approval.approved:
        await ctx.comment.reply(moved_reply(command.line, approval, "validate"))
        return
    scope = f"command-{ctx.progress.commands_done}"  # this command's index in the comment
    dispatched, errors = await platforms.dispatch_platforms(ctx, pull, approval.head, chosen, scope)
    text = validate_reply(dispatched, unknown, errors, config, pull, ctx.payload["author"])
    # Every platform named a workflow the repository lacks: say plainly that nothing is set up yet.
    not_configured = bool(errors) and not dispatched and all("(GitHub answered 404)" in e for e in errors)
    await ctx.comment.reply(
        render_template("reply_validate.md.j2", line=command.line, text=text, not_configured=not_configured)
    )
    if chosen:
        await platforms.refresh_platforms(ctx, pull, config)


async def recheck_command(ctx: JobContext, command: Command, config: Config) -> None:
    try:
        outcome = await analyse_pull(ctx, None, config, autovalidate.approved_by_commenter(ctx))
    except Superseded:
        return  # the newer head has its own job
    if outcome is Outcome.UNTOUCHED:
        await ctx.comment.reply(untouched_reply(command.line, "check", config))


HANDLERS: dict[str, Callable[[JobContext, Command, Config], Awaitable[None]]] = {
    "bump": bump.bump_command,
    "skip": bump.skip_command,
    "dashboard": dashboard.dashboard_command,
    "help": help_command,
    "recheck": recheck_command,
    "regenerate-patches": regenerate.regenerate_command,
    "validate": validate_command,
}
