"""`python -m bot`: serve, check, regenerate (CONTRACT section 2)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pygit2

from bot.config import Pin, load_config
from bot.model import AnalysisError, Report
from bot.snapshot import GitSnapshot
from bot.upstream import Upstream

WRITES = ("regenerated", "fuzzy")  # statuses whose rebuilt patch `check --out` writes
REFRESHES = ("regenerated", "fuzzy", "offset")  # `regenerate` also refreshes line numbers


class UsageError(Exception):
    """Bad arguments or an unreadable repository: exit 2 with one line."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="llama-bot", description=__doc__)
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


def _upstream_opener(dirs: list[str]):
    local: dict[str, str] = {}
    for item in dirs:
        name, sep, git_dir = item.partition("=")
        if not sep or not name or not git_dir:
            raise UsageError(f"--upstream-dir {item!r}: expected NAME=GITDIR")
        local[name] = git_dir
    data_dir = Path(os.environ.get("LLAMA_BOT_DATA_DIR", "./var"))

    def open_upstream(pin: Pin, refs: list[str]) -> Upstream:
        if pin.name in local:
            return Upstream.open_dir(local[pin.name], pin.upstream)
        return Upstream.mirror(data_dir, pin.name, pin.upstream, refs, os.environ.get("LLAMA_BOT_URL_INSTEADOF"))

    return open_upstream


def _analyse(args: argparse.Namespace, review: bool) -> tuple[Report, pygit2.Repository, set[str], str]:
    from bot.engine import analyse

    repo = _open_repo(args.repo)
    head = _commit(repo, args.head, "--head")
    base = _base(repo, head, args.base)
    head_snapshot = GitSnapshot(repo, head)
    changed = _changed_paths(repo, base, head)
    config = load_config(head_snapshot)
    report = analyse(config, GitSnapshot(repo, base), head_snapshot, _upstream_opener(args.upstream_dir),
                     changed, review=review)
    return report, repo, changed, str(head.id)


def _write(root: Path, report: Report, statuses: tuple[str, ...]) -> list[Path]:
    written = []
    for pin in report.pins:
        for patch in pin.patches:
            if patch.status in statuses and patch.new_text is not None:
                target = root / patch.path
                if target.exists() and target.read_bytes() == patch.new_text:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(patch.new_text)
                written.append(target)
    return written


def cmd_check(args: argparse.Namespace) -> int:
    from bot.checklist import render_markdown

    report, _, changed, head_sha = _analyse(args, review=True)
    written = _write(args.out, report, WRITES) if args.out else []
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(render_markdown(report, changed, head_sha=head_sha))
    if args.out:
        where = "\n".join(f"  {p}" for p in written) or "  (none: nothing needed regenerating)"
        print(f"Regenerated patches written to {args.out}:\n{where}", file=sys.stderr)
    return 1 if report.needs_change else 0


def cmd_regenerate(args: argparse.Namespace) -> int:
    report, repo, _, _ = _analyse(args, review=False)
    if repo.workdir is None:
        raise UsageError(f"--repo {args.repo}: a bare repository has no working tree to rewrite")
    root = Path(repo.workdir)
    written = _write(root, report, REFRESHES)
    for pin in report.pins:
        for patch in pin.patches:
            path = root / patch.path
            action = "rewrote" if path in written else "left"
            print(f"{pin.name}: {action} {patch.path} ({patch.status}: {patch.message})")
    if not report.pins:
        print("No pin is touched by this change: nothing to regenerate.")
    unresolved = [p for pin in report.pins for p in pin.patches if p.status in ("conflict", "error", "upstreamed")]
    return 1 if unresolved else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from bot.app import serve

    serve(args.host, args.port)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {"check": cmd_check, "regenerate": cmd_regenerate, "serve": cmd_serve}
    try:
        return handlers[args.command](args)
    except (AnalysisError, UsageError) as exc:
        print(f"llama-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
