"""`python -m bot`: serve, check, regenerate (CONTRACT section 2)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import NoReturn

import pygit2

from bot.config import Config, Pin, load_config
from bot.jobs import DB_NAME, STATUSES, read_jobs
from bot.model import AnalysisError, Report
from bot.snapshot import GitSnapshot
from bot.upstream import Upstream

WRITES = ("regenerated", "fuzzy")  # the statuses whose rebuilt patch `check --out` and `regenerate` write


class UsageError(Exception):
    """Bad arguments or an unreadable repository: exit 2 with one line."""


class _Parser(argparse.ArgumentParser):
    """argparse's usage-plus-error block becomes the one stderr line every exit-2 failure gives."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


def _emit(text: str) -> None:
    """Print to stdout; a reader that went away (`| head -1`) only ends the output, not the command.

    stdout is pointed at /dev/null afterwards so later prints and the interpreter's
    final flush do not raise again, and the command still returns its own status.
    """
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="llama-bot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the GitHub App webhook service")
    serve.add_argument("--host", default=os.environ.get("HOST", "0.0.0.0"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    for name, text in (("check", "check the carried patches of a change"),
                       ("regenerate", "rewrite regenerated patches in the working tree")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--repo", required=True, help="the Ollama git repository")
        cmd.add_argument("--head", default="HEAD")
        cmd.add_argument("--base", default=None, help="default: merge-base with origin/main, else main")
        cmd.add_argument("--upstream-dir", action="append", default=[], metavar="NAME=GITDIR")
        if name == "check":
            cmd.add_argument("--format", choices=("md", "json"), default="md")
            cmd.add_argument("--out", type=Path, default=None, help="write regenerated patches under DIR")
    jobs = sub.add_parser("jobs", help="show the service's jobs (a failed check run names its job id)")
    jobs.add_argument("id", type=int, nargs="?", help="one job, with its payload and progress")
    jobs.add_argument("--status", choices=STATUSES, default=None)
    jobs.add_argument("--limit", type=int, default=20)
    verify = sub.add_parser("verify-source", help="check that the source CMake fetched under _deps/ is the "
                            "pinned ref plus the carried patches, nothing else")
    verify.add_argument("--repo", default=".", help="the Ollama checkout whose working tree CMake read (default: .)")
    verify.add_argument("--build-dir", type=Path, default=None,
                        help="the CMake build directory, or the fetched source checkout itself "
                        "(default: build/llama-server-cpu under --repo)")
    verify.add_argument("--pin", default="llama.cpp", help="the pin whose source to verify (default: llama.cpp)")
    verify.add_argument("--upstream-dir", action="append", default=[], metavar="NAME=GITDIR",
                        help="read the pin's upstream objects from this git directory instead of the "
                        "checkout or the mirror")
    return parser


def _open_repo(path: str) -> pygit2.Repository:
    try:
        return pygit2.Repository(path)
    except (pygit2.GitError, KeyError):
        raise UsageError(f"--repo {path}: not a git repository") from None


def _commit(repo: pygit2.Repository, rev: str, option: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise UsageError(f"{option} {rev}: unknown revision") from None


def _base(repo: pygit2.Repository, head: pygit2.Commit, rev: str | None) -> pygit2.Commit:
    if rev is not None:
        return _commit(repo, rev, "--base")
    for candidate in ("origin/main", "main"):
        try:
            other = repo.revparse_single(candidate).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        merge_base = repo.merge_base(head.id, other.id)
        if merge_base is not None:
            return repo[merge_base].peel(pygit2.Commit)
    raise UsageError("no --base given and neither origin/main nor main shares history with --head")


def _changed_paths(repo: pygit2.Repository, base: pygit2.Commit, head: pygit2.Commit) -> set[str]:
    diff = base.tree.diff_to_tree(head.tree)
    return {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}


def _upstream_opener(dirs: list[str], config: Config):
    local: dict[str, str] = {}
    for item in dirs:
        name, sep, git_dir = item.partition("=")
        if not sep or not name or not git_dir:
            raise UsageError(f"--upstream-dir {item!r}: expected NAME=GITDIR")
        if config.pin(name) is None:  # a typo would otherwise fetch from the network instead
            pins = ", ".join(p.name for p in config.pins) or "none"
            raise UsageError(f"--upstream-dir {item}: no pin is named {name!r} (pins: {pins})")
        local[name] = git_dir
    data_dir = Path(os.environ.get("LLAMA_BOT_DATA_DIR", "./var"))

    def open_upstream(pin: Pin, refs: list[str]) -> Upstream:
        if pin.name in local:
            return Upstream.open_dir(local[pin.name], pin.upstream)
        return Upstream.mirror(data_dir, pin.name, pin.upstream, refs, os.environ.get("LLAMA_BOT_URL_INSTEADOF"))

    return open_upstream


def _open(args: argparse.Namespace) -> tuple[pygit2.Repository, pygit2.Commit, pygit2.Commit, Config]:
    """The repository, the head and base commits, and the configuration.

    The configuration comes from --base, the CLI's stand-in for the default branch
    (CONTRACT section 4): a change cannot reconfigure the check that judges it.
    """
    repo = _open_repo(args.repo)
    head = _commit(repo, args.head, "--head")
    base = _base(repo, head, args.base)
    return repo, head, base, load_config(GitSnapshot(repo, base))


def _selected(config: Config, paths: set[str]) -> list[Pin]:
    """Pins whose version file or patch directory is among `paths` (also_watch is the service's business)."""
    return [pin for pin in config.pins if any(pin.watches(p, also_watch=False) for p in paths)]


def _analyse(args: argparse.Namespace, repo: pygit2.Repository, head: pygit2.Commit, base: pygit2.Commit,
             config: Config, review: bool) -> tuple[Report, set[str]]:
    from bot.engine import analyse

    changed = _changed_paths(repo, base, head)
    opener = _upstream_opener(args.upstream_dir, config)
    # The engine selects pins with also_watch; handing it only the selected pins keeps the CLI to section 2.
    selected = dataclasses.replace(config, pins=tuple(_selected(config, changed)))
    report = analyse(selected, GitSnapshot(repo, base), GitSnapshot(repo, head), opener, changed, review=review)
    return report, changed


def _write(root: Path, report: Report) -> list[Path]:
    """Write the rebuilt patches; a path that cannot be written is a one-line usage error, not a traceback."""
    written = []
    for pin in report.pins:
        for patch in pin.patches:
            if patch.status in WRITES and patch.new_text is not None:
                target = root / patch.path
                try:
                    if target.is_file() and target.read_bytes() == patch.new_text:
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(patch.new_text)
                except OSError as exc:
                    culprit = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(target) else ""
                    raise UsageError(f"cannot write {target}: {culprit}{exc.strerror or exc}") from None
                written.append(target)
    return written


def _uncommitted(repo: pygit2.Repository, config: Config) -> list[str]:
    """Working-tree changes to any pin's version file or patches.

    `regenerate` analyses the committed revision but writes the working tree, so it
    would overwrite an edited patch or ignore an uncommitted version bump.
    """
    ignored = pygit2.enums.FileStatus.IGNORED
    return sorted(path for path, flags in repo.status().items()
                  if flags != pygit2.enums.FileStatus.CURRENT and not flags & ignored
                  and _selected(config, {path}))


def cmd_check(args: argparse.Namespace) -> int:
    from bot.checklist import render_markdown

    repo, head, base, config = _open(args)
    report, changed = _analyse(args, repo, head, base, config, review=True)
    written = _write(args.out, report) if args.out else []
    if args.format == "json":
        _emit(json.dumps(report.to_json(), indent=2))
    else:
        _emit(render_markdown(report, changed, head_sha=str(head.id), prefix=config.command_prefix))
    if args.out:
        where = "\n".join(f"  {p}" for p in written) or "  (none: nothing needed regenerating)"
        print(f"Regenerated patches written to {args.out}:\n{where}", file=sys.stderr)
    return 1 if report.needs_change else 0


def cmd_regenerate(args: argparse.Namespace) -> int:
    repo, head, base, config = _open(args)
    if repo.workdir is None:
        raise UsageError(f"--repo {args.repo}: a bare repository has no working tree to rewrite")
    dirty = _uncommitted(repo, config)
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise UsageError(f"uncommitted changes to {shown}: commit or stash them first "
                         "(regenerate reads the committed revision and rewrites the working tree)")
    report, _ = _analyse(args, repo, head, base, config, review=False)
    root = Path(repo.workdir)
    written = _write(root, report)
    for pin in report.pins:
        for patch in pin.patches:
            path = root / patch.path
            action = "rewrote" if path in written else "left"
            _emit(f"{pin.name}: {action} {patch.path} ({patch.status}: {patch.message})")
    if not report.pins:
        _emit("No pin is touched by this change: nothing to regenerate.")
    unresolved = [p for pin in report.pins for p in pin.patches if p.status in ("conflict", "error", "upstreamed")]
    return 1 if unresolved else 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """One JSON object a line from $LLAMA_BOT_DATA_DIR/jobs.sqlite3, newest first."""
    path = Path(os.environ.get("LLAMA_BOT_DATA_DIR") or "./var") / DB_NAME
    try:
        found = read_jobs(path, status=args.status, job_id=args.id, limit=args.limit)
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot read the jobs in {path}: {exc}") from None
    if args.id is not None and not found:
        raise UsageError(f"no job {args.id} in {path}")
    for job in found:
        shown = dataclasses.asdict(job)
        if args.id is None:
            del shown["payload"], shown["progress"]
        _emit(json.dumps(shown))
    return 0


def cmd_verify_source(args: argparse.Namespace) -> int:
    from bot.verify import load_worktree_config, render, verify_source

    config = load_worktree_config(Path(args.repo))
    opener = _upstream_opener(args.upstream_dir, config)
    given = {item.partition("=")[0] for item in args.upstream_dir}
    verdict = verify_source(config, Path(args.repo), args.build_dir, args.pin, args.pin in given, opener)
    _emit(render(verdict))
    return 0 if verdict.ok else 1


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.app import serve

    serve(args.host, args.port)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {"check": cmd_check, "regenerate": cmd_regenerate, "serve": cmd_serve, "jobs": cmd_jobs,
                "verify-source": cmd_verify_source}
    try:
        return handlers[args.command](args)
    except (AnalysisError, UsageError) as exc:
        print(f"llama-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
