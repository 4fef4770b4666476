"""`bump`: in the local checkout, a branch `llama-bot/bump-<pin>-<ref>` from the current HEAD with the
version files moved (one commit) and the rebuilt patches (a second), as the service's `/llama bump` makes
them. Only the new branch is written: HEAD, the current branch, the index and the working tree stay as they
are, and nothing is pushed."""

from __future__ import annotations

import argparse
import os

import pygit2

from bot.child.sandbox import run_limited
from bot.cli.analysis import checklist_format, cli_limits, failures, rendered_checklist
from bot.cli.change import commit_at, open_repo
from bot.cli.console import UsageError, emit, say
from bot.cli.upstreams import local_upstreams, upstream_opener
from bot.config import Config, load_config
from bot.decisions import bump
from bot.decisions.bump import BumpRequest, PatchFile, RefChoice
from bot.decisions.releases import ChooseRefs
from bot.model import Report
from bot.repos.snapshot import EditedSnapshot, GitSnapshot

MAX_VERSION_FILE = 4096  # bytes of a version file handed to the ref choice; a larger one is garbage
FALLBACK_SIGNATURE = ("llama-bot", "llama-bot@localhost")  # when git has no user.name/user.email


def cmd_bump(args: argparse.Namespace) -> int:
    repo = open_repo(args.repo)
    head = commit_at(repo, "HEAD", f"{args.repo}:")
    base = GitSnapshot(repo, head)
    config = load_config(base)
    choices = _choices(args, config, _request(args, config), base)
    moving = _moving(choices)
    if not moving:
        return 0
    edits = _edits(config, base, moving)
    report = _analysed(args, config, base, edits)
    if report.failed:
        return failures(report)
    _refuse_unnamed_downgrade(report, choices)
    files = bump.rebuilt_files(report, _patches_at(base, report))
    branch = bump.branch_name(moving)
    made = _commit(repo, head, branch, edits, files, report)
    say(_done(repo, head, branch, made))
    say(f"The bump's checklist (stdout): {made[0][0][:12]}, the version files moved, against HEAD.")
    emit(rendered_checklist(report, sorted(edits), made[0][0], config, checklist_format(None)))
    return failures(report) or (1 if report.fails("patches") else 0)


def _moving(choices: list[RefChoice]) -> list[RefChoice]:
    """The pins that move; those already at their ref are said so."""
    for choice in choices:
        if choice.already:
            say(f"{choice.pin} is already at {choice.ref}: nothing to bump.")
    return [c for c in choices if not c.already]


def _edits(config: Config, base: GitSnapshot, moving: list[RefChoice]) -> dict[str, bytes]:
    """Each moving pin's version file naming its new ref, by path."""
    paths = [(c, bump.version_file(config, c.pin)) for c in moving]
    return {path: bump.version_text(base.read(path), c.ref or "") for c, path in paths}


def _patches_at(base: GitSnapshot, report: Report) -> dict[str, bytes | None]:
    """The bytes at HEAD of every patch the report checked."""
    return {p.path: base.read(p.path) for pin in report.pins for p in pin.patches}


def _refuse_unnamed_downgrade(report: Report, choices: list[RefChoice]) -> None:
    back = bump.unnamed_downgrade(report, choices)
    if back is not None:
        raise UsageError(
            f"{back.new_ref} is older than {back.old_ref} ({back.reverted_count} upstream commits would be "
            f"taken away); to go back to it anyway, name it: --pin {back.name} --ref {back.new_ref}"
        )


def _request(args: argparse.Namespace, config: Config) -> BumpRequest:
    request = bump.parse_request([*args.pin, *([args.ref] if args.ref else [])], config)
    if isinstance(request, str):
        raise UsageError(request.replace("`", ""))
    return request


def _choices(
    args: argparse.Namespace, config: Config, request: BumpRequest, base: GitSnapshot
) -> list[RefChoice]:
    """Each pin's new ref, chosen in the analysis child; a refusal is a usage error (exit 2)."""
    files = [bump.version_file(config, n) for n in request.pins]
    versions = {f: base.read(f) if (base.size(f) or 0) <= MAX_VERSION_FILE else b"" for f in files}
    target = ChooseRefs(
        config,
        request,
        versions,
        os.environ.get("LLAMA_BOT_URL_INSTEADOF"),
        local_upstreams(args.upstream_dir, config),
        prefix=None,
    )
    choices = run_limited(target, cli_limits(args))
    refusals = [c.refusal for c in choices if c.refusal]
    if refusals:
        raise UsageError(" ".join(refusals).replace("`", ""))
    return choices


def _analysed(args: argparse.Namespace, config: Config, base: GitSnapshot, edits: dict[str, bytes]) -> Report:
    """The engine's report on HEAD with the version files moved, against HEAD, in the analysis child."""
    from bot.engine import analyse

    opener = upstream_opener(args.upstream_dir, config, args.quiet)
    head = EditedSnapshot(base, edits)
    return run_limited(
        lambda _channel: analyse(
            config, base, head, opener, sorted(edits), review=True, errors={}, also_watch=False
        ),
        cli_limits(args),
    )


def _commit(
    repo: pygit2.Repository,
    head: pygit2.Commit,
    branch: str,
    edits: dict[str, bytes],
    files: list[PatchFile],
    report: Report,
) -> list[tuple[str, str]]:
    """The version files' commit on HEAD, the rebuilt patches' on it when there are any, and the branch at
    the last: (sha, subject) of each. A branch of that name already there is a usage error."""
    ref = f"refs/heads/{branch}"
    if ref in repo.references:
        raise UsageError(
            f"the branch {branch} already exists: delete it (git branch -D {branch}) or bump elsewhere"
        )
    signature = _signature(repo)
    message = bump.version_message(report.pins, "Made by `python -m bot bump` in a local checkout.")
    made = [_write(repo, head, edits, message, signature)]
    if files:
        patches = {f.path: f.data for f in files}
        message = bump.patches_message(report.pins, files)
        made.append(_write(repo, repo[made[-1]].peel(pygit2.Commit), patches, message, signature))
    repo.references.create(ref, made[-1])
    return [(str(oid), repo[oid].peel(pygit2.Commit).message.splitlines()[0]) for oid in made]


def _signature(repo: pygit2.Repository) -> pygit2.Signature:
    """git's own author (user.name, user.email), else llama-bot's."""
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(*FALLBACK_SIGNATURE)


def _write(
    repo: pygit2.Repository,
    parent: pygit2.Commit,
    files: dict[str, bytes],
    message: str,
    who: pygit2.Signature,
) -> pygit2.Oid:
    """A commit of `files` over `parent`'s tree, on no branch."""
    tree = _tree_with(repo, parent.tree, {tuple(path.split("/")): data for path, data in files.items()})
    return repo.create_commit(None, who, who, message, tree, [parent.id])


def _tree_with(
    repo: pygit2.Repository, tree: pygit2.Tree | None, files: dict[tuple[str, ...], bytes]
) -> pygit2.Oid:
    """`tree` with `files` (path parts -> bytes) written in, each file keeping its mode."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    below: dict[str, dict[tuple[str, ...], bytes]] = {}
    for parts, data in files.items():
        if len(parts) == 1:
            builder.insert(parts[0], repo.create_blob(data), _file_mode(_entry(tree, parts[0])))
        else:
            below.setdefault(parts[0], {})[parts[1:]] = data
    for name, inner in below.items():
        sub = _entry(tree, name)
        inside = _tree_with(repo, sub if isinstance(sub, pygit2.Tree) else None, inner)
        builder.insert(name, inside, pygit2.enums.FileMode.TREE)
    return builder.write()


def _entry(tree: pygit2.Tree | None, name: str) -> pygit2.Object | None:
    return tree[name] if tree is not None and name in tree else None


def _file_mode(entry: pygit2.Object | None) -> int:
    """An existing file's mode (executable stays executable), else a plain file's."""
    return entry.filemode if isinstance(entry, pygit2.Blob) else pygit2.enums.FileMode.BLOB


def _done(repo: pygit2.Repository, head: pygit2.Commit, branch: str, made: list[tuple[str, str]]) -> str:
    """What was made, and what to do with it; the current branch stays where it was."""
    where = repo.head.shorthand if not repo.head_is_detached else "a detached HEAD"
    lines = [f"Created the branch {branch} from HEAD ({str(head.id)[:12]}, {where}, which did not move):"]
    lines += [f"  {sha[:12]} {subject}" for sha, subject in made]
    look = f"Look at it with `git log -p {str(head.id)[:12]}..{branch}`; nothing was pushed "
    lines += [look + f"(`git push origin {branch}` does, and opens the way to a pull request).", ""]
    return "\n".join(lines)
