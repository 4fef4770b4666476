"""`bump`: the pull request that moves pins to a new upstream ref, from the default branch's head, with the
version files in one commit and the rebuilt patches in a second, and the bump summarised in its body; the
bump pull request already open for those pins is updated instead.

Why a bump may act on the default branch's head although a command on a pull request acts only on the
head its author saw: what a bump commits is the pin and ref its author named (the version files) and the
engine's rebuild of the carried patches the default branch already holds, nothing any other person wrote.
The default branch holds only what was merged under the repository's own rules, and the commits go to a
new branch in the bot's namespace and a pull request that a person must still merge: no branch anyone
builds from moves. An update goes on the head of the bot's own bump branch, a branch of this repository,
which only the bot and people with write access can push to.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.commands import Command
from bot.config import Config, read_version
from bot.decisions import bump
from bot.decisions.bump import BumpRequest, BumpSummary, RefChoice
from bot.gh.gitdata import BranchMoved
from bot.gh.rest import RestSnapshot
from bot.markup import code_span
from bot.model import AnalysisError, Report
from bot.render.env import render_template
from bot.repos.snapshot import MemorySnapshot
from bot.stores.jobs import JobRequest, bump_key
from bot.worker.analysis import read_config
from bot.worker.context import JobContext, Outcome

log = logging.getLogger("bot.worker.bump")


@dataclass
class Start:
    """Where a bump starts: the default branch's tip (whose pins it moves from), the commit the new commits
    go on, the commit the pull request is compared with, and the open bump pull request it updates."""

    tip: RestSnapshot
    start: RestSnapshot
    base: RestSnapshot
    pull: dict | None
    pull_pins: tuple[str, ...] = ()  # the pins the open bump pull request moves already


@dataclass
class BumpOutcome:
    """What a bump did, for the reply: `kind` names the template's case."""

    kind: str  # opened | updated | already | already_open | refused | failed | moved | protected | taken | not_mine
    pull: dict | None = None
    summary: BumpSummary | None = None
    choices: list[RefChoice] | None = None
    reason: str = ""
    branch: str = ""


async def bump_command(ctx: JobContext, command: Command, config: Config) -> None:
    """`bump <pin> [<pin> ...] [<ref>]` from a comment, by someone with write access: queued under the
    repository's bump key (`bump_command_job` runs it and replies), never beside another bump."""
    payload = ctx.payload
    request = JobRequest(
        "bump_command",
        bump_key(payload["owner"], payload["repo"]),
        {**payload, "line": command.line, "args": list(command.args)},
    )
    delivery = ctx.job.delivery_id or f"job-{ctx.job.id}"
    await ctx.shared.queue.enqueue(f"{delivery}:bump:{ctx.progress.commands_done}", "bump", [request])
    ctx.shared.wake()


async def skip_command(ctx: JobContext, command: Command, config: Config) -> None:
    """`skip <pin> <ref>`: scheduled bumps of the pin leave the ref out from now on."""
    request = bump.parse_request(command.args, config)
    if isinstance(request, BumpRequest) and request.ref is None:
        request = f"{code_span('skip')} takes one pin and the ref to leave out."
    if isinstance(request, BumpRequest):
        ctx.shared.store.skip_ref(
            ctx.pull.full_name, request.pins[0], request.ref or "", ctx.payload["author"]
        )
    reply = render_template(
        "reply_skip.md.j2",
        line=command.line,
        request=request,
        problem=request if isinstance(request, str) else None,
        prefix=config.command_prefix,
    )
    await ctx.comment.reply(reply)


async def delete_closed_branch(ctx: JobContext) -> None:
    """A bump pull request closed (merged or not): its branch goes, when it is still at the commit the bot
    last set it to (a branch a person moved since is theirs to keep)."""
    payload = ctx.payload
    branch, sha = payload.get("head_ref") or "", payload.get("head_sha")
    if payload.get("fork") or not branch.startswith(bump.BRANCH_PREFIX):
        return
    store, repo = ctx.shared.store, ctx.pull.full_name
    if store.branch_made(repo, branch) == sha:
        await ctx.git().delete_branch(branch)
        store.forget_branch(repo, branch)


async def bump_command_job(ctx: JobContext) -> Outcome:
    """A queued `bump` command: the bump on the default branch as configured there, then a reply on the
    comment's issue or pull request linking its pull request."""
    payload = ctx.payload
    config, error = await read_config(ctx, payload["default_branch"])
    request: BumpRequest | str = error or bump.parse_request(tuple(payload["args"]), config)
    if isinstance(request, str):
        outcome = BumpOutcome("refused", reason=request)
    else:
        author, link = payload["author"], payload.get("comment_url")
        asked = f"@{author}" + (f" in {link}" if link else "")
        outcome = await run_bump(ctx, config, request, f"Requested by {asked}.")
    await ctx.comment.reply(
        render_template(
            "reply_bump.md.j2", line=payload["line"], outcome=outcome, prefix=config.command_prefix
        )
    )
    return Outcome.DONE


async def scheduled_bump_job(ctx: JobContext) -> Outcome:
    """A pin's `bump_every`: the bump pull request opened or updated when the upstream has a newer release
    (nothing when it has none, or the pin is no longer scheduled); no comment to answer, so the log says
    what happened."""
    config, error = await read_config(ctx, ctx.payload["default_branch"])
    pin = config.pin(ctx.payload["pin"])
    if error or pin is None or pin.bump_every is None:
        log.info(
            "scheduled bump not run", extra={"job_id": ctx.job.id, "reason": error or "no longer scheduled"}
        )
        return Outcome.DONE
    requested_by = f'Scheduled by `bump_every = "{every_text(pin.bump_every)}"` for {pin.name}.'
    skipped = ctx.shared.store.skipped_refs(ctx.pull.full_name, pin.name)
    done = await run_bump(ctx, config, BumpRequest((pin.name,), skipped=skipped), requested_by)
    log.info(
        "scheduled bump",
        extra={"job_id": ctx.job.id, "pin": pin.name, "outcome": done.kind, "reason": done.reason},
    )
    return Outcome.DONE


def every_text(seconds: int) -> str:
    """A period as configured: `7d`, `12h`, `90m`."""
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds // 60}m"


async def run_bump(ctx: JobContext, config: Config, request: BumpRequest, requested_by: str) -> BumpOutcome:
    """The bump `request` asks for, on the repository's default branch: what it did, or why nothing."""
    start = await _start(ctx, config, request)
    try:  # past the analysis limits while listing the tags is an AnalysisError too
        choices = await ctx.shared.choose_refs(
            config, request, await versions_at(start.tip, config, request.pins)
        )
    except AnalysisError as exc:
        return BumpOutcome("failed", reason=str(exc))
    early = await _not_moving(start, config, choices)
    if early is not None:
        return early
    moving = [c for c in choices if not c.already]
    edits = await _edits(start.start, config, moving)
    try:
        report = await _analysed(ctx, config, start, edits)
    except AnalysisError as exc:
        return BumpOutcome("failed", reason=str(exc), choices=choices)
    back = bump.unnamed_downgrade(report, choices)
    if back is not None:
        prefix = config.command_prefix
        why = (
            f"{code_span(back.new_ref)} is older than {code_span(back.old_ref)} ({back.reverted_count} upstream commits would be "
            f"taken away). To go back to it anyway, name it: {code_span(f'{prefix} bump {back.name} {back.new_ref}')}."
        )
        return BumpOutcome("refused", reason=why, choices=choices)
    current = {p.path: await start.start.fetch(p.path) for pin in report.pins for p in pin.patches}
    summary = BumpSummary(
        report.pins,
        choices,
        requested_by,
        bump.rebuilt_files(report, current),
        bump.moves_together(
            report, config, [*(c.pin for c in moving), *start.pull_pins], config.command_prefix
        ),
    )
    return await _publish(ctx, config, start, edits, summary, moving)


async def _edits(start: RestSnapshot, config: Config, moving: list[RefChoice]) -> dict[str, bytes]:
    """Each moving pin's version file naming its new ref, by path."""
    edits = {}
    for choice in moving:
        path = bump.version_file(config, choice.pin)
        edits[path] = bump.version_text(await start.fetch(path), choice.ref or "")
    return edits


async def _start(ctx: JobContext, config: Config, request: BumpRequest) -> Start:
    """The default branch's tip and, when a bump pull request is open for one of the pins, its head and
    the commit it is compared with."""
    tip_sha = await ctx.git().branch_sha(ctx.payload["default_branch"])
    tip = await ctx.bumps.snapshot(tip_sha)
    recorded = ctx.shared.store.branches_made(ctx.pull.full_name)
    pull = bump.open_bump(await ctx.bumps.open_bumps(recorded), request.pins, ctx.pull.full_name)
    if pull is None:
        return Start(tip, tip, tip, None)
    head = await ctx.bumps.snapshot(pull["head"]["sha"])
    base_sha = await ctx.bumps.merge_base(tip_sha, pull["head"]["sha"])
    base = tip if base_sha == tip_sha else await ctx.bumps.snapshot(base_sha)
    return Start(tip, head, base, pull, bump.bump_pins(pull, ctx.pull.full_name))


async def versions_at(
    snapshot: RestSnapshot, config: Config, names: tuple[str, ...]
) -> dict[str, bytes | None]:
    """The bytes of the pins' version files at `snapshot` (the child reads them: they are outside input)."""
    files = [bump.version_file(config, n) for n in names]
    return {f: await snapshot.fetch(f) if (snapshot.size(f) or 0) <= MAX_VERSION_FILE else b"" for f in files}


MAX_VERSION_FILE = 4096  # bytes: a version file holds one ref; a larger one is garbage, read as empty


async def _not_moving(start: Start, config: Config, choices: list[RefChoice]) -> BumpOutcome | None:
    """The outcome when nothing moves: a pin refused, every pin already at its ref, or the open bump pull
    request already at the refs chosen."""
    if any(c.refusal for c in choices):
        return BumpOutcome(
            "refused", reason=" ".join(c.refusal for c in choices if c.refusal), choices=choices
        )
    moving = [c for c in choices if not c.already]
    if not moving:
        return BumpOutcome("already", choices=choices, pull=start.pull)
    if start.pull is not None and await _at_refs(start.start, config, moving):
        return BumpOutcome("already_open", choices=choices, pull=start.pull)
    return None


async def _at_refs(snapshot: RestSnapshot, config: Config, choices: list[RefChoice]) -> bool:
    """Whether every pin's version file at `snapshot` already names its chosen ref."""
    versions = await versions_at(snapshot, config, tuple(c.pin for c in choices))
    return all(ref_in(versions, bump.version_file(config, c.pin)) == c.ref for c in choices)


def ref_in(versions: dict[str, bytes | None], path: str) -> str | None:
    """The ref a version file (at most MAX_VERSION_FILE bytes) names; None when it names none."""
    data = versions.get(path)
    try:
        return read_version(MemorySnapshot({path: data}), path) if data is not None else None
    except AnalysisError:
        return None


async def _analysed(ctx: JobContext, config: Config, start: Start, edits: dict[str, bytes]) -> Report:
    """The engine's report on the bumped tree against the commit the pull request is compared with; a pin
    it could not check is an AnalysisError (nothing is committed for a bump that was not checked)."""
    # the pins the open pull request moves already are in its title and body too
    changed = sorted({*edits, *(bump.version_file(config, n) for n in start.pull_pins if config.pin(n))})
    errors: dict[str, str] = {}
    report = await ctx.shared.analyse(
        config, start.base, start.start.with_files(edits), changed, True, errors=errors
    )
    if errors:
        raise AnalysisError("; ".join(f"{name}: {why}" if name else why for name, why in errors.items()))
    return report


async def _publish(
    ctx: JobContext,
    config: Config,
    start: Start,
    edits: dict[str, bytes],
    summary: BumpSummary,
    moving: list[RefChoice],
) -> BumpOutcome:
    """The two commits on the bump's start, the branch moved to them, and the pull request opened or
    refreshed."""
    pins = sorted({*(c.pin for c in moving), *start.pull_pins})
    branch = start.pull["head"]["ref"] if start.pull else bump.branch_name(moving)
    git = ctx.git()
    blocked = await _blocked(ctx, start, branch, summary)
    if blocked is not None:
        return blocked
    sha = await _commits(ctx, start.start, edits, summary)
    title = bump.title(summary.pins)
    text = render_template("bump_body.md.j2", s=summary, prefix=config.command_prefix)
    body = bump.fit_body(text, bump.marker(pins))
    if start.pull is None:
        await git.force_branch(branch, sha)
        ctx.shared.store.made_branch(ctx.pull.full_name, branch, sha)
        pull = await ctx.bumps.open_pull(branch, ctx.payload["default_branch"], title, body)
        return BumpOutcome("opened", pull=pull, summary=summary, branch=branch)
    try:
        await git.advance(branch, start.pull["head"]["sha"], sha)
    except BranchMoved as moved:
        return BumpOutcome("moved", pull=start.pull, summary=summary, branch=branch, reason=moved.now_sha)
    ctx.shared.store.made_branch(ctx.pull.full_name, branch, sha)
    pull = await ctx.bumps.refresh_pull(start.pull["number"], title, body)
    return BumpOutcome("updated", pull=pull, summary=summary, branch=branch)


async def _blocked(ctx: JobContext, start: Start, branch: str, summary: BumpSummary) -> BumpOutcome | None:
    """Why the bump's branch cannot take its commits: protected, or (a new branch name that exists) the head
    of a pull request, or a branch the bot did not make or that moved since (its store records the commit
    it last set each bump branch to). A branch it left at a bump pull request closed unmerged is its to
    reuse."""
    found = await ctx.git().branch(branch)
    if found is not None and found.get("protected"):
        return BumpOutcome("protected", pull=start.pull, summary=summary, branch=branch)
    if found is None or start.pull is not None:
        return None
    users = await ctx.bumps.open_from(branch)
    mine = [u for u in users if bump.bump_pins(u, ctx.pull.full_name)]  # a bump that ran meanwhile
    if not users:
        head = (found.get("commit") or {}).get("sha")
        made = ctx.shared.store.branch_made(ctx.pull.full_name, branch)
        return (
            None
            if made == head
            else BumpOutcome("not_mine", summary=summary, branch=branch, reason=head or "")
        )
    kind = "already_open" if mine else "taken"
    return BumpOutcome(kind, pull=(mine or users)[0], summary=summary, choices=summary.choices, branch=branch)


async def _commits(
    ctx: JobContext, start: RestSnapshot, edits: dict[str, bytes], summary: BumpSummary
) -> str:
    """The version files' commit on `start`, then the rebuilt patches' commit when there are any: the last
    commit's sha."""
    git = ctx.git()
    versions = [(path, start.mode(path) or "100644", data) for path, data in sorted(edits.items())]
    sha, _ = await git.make_commit(
        start.commit_sha, versions, bump.version_message(summary.pins, summary.requested_by)
    )
    if summary.committed:
        files = [(f.path, start.mode(f.path) or "100644", f.data) for f in summary.committed]
        sha, _ = await git.make_commit(sha, files, bump.patches_message(summary.pins, summary.committed))
    return sha
