"""`python -m bot`: check, regenerate and verify Ollama's carried upstream patches; serve the GitHub App.

docs/cli.md describes every command; docs/report.md the JSON report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import NoReturn

import pygit2

from bot.config import CONFIG_PATH, Config, Pin, load_config, parse_config
from bot.jobs import DB_NAME, STATUSES, read_jobs
from bot.mirrors import parse_url_rewrites
from bot.model import REBUILT, UNRESOLVED, AnalysisError, Report
from bot.snapshot import GitSnapshot
from bot.upstream import Mirrors, Upstream


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


VERIFY_EXIT_CODES = """exit status:
  0  the fetched source is the pinned ref plus the carried patches, nothing else
  1  it is not: each differing file is listed, with the patch that should have produced it
  2  bad input (no such build directory, not a git checkout, unknown pin, unreadable version file)"""
EXIT_CODES = """exit status of check and regenerate (verify-source: see its --help; serve and jobs: 0, or 2 on bad input):
  0  every patch applies as it is (clean or offset)
  1  the analysis ran and some patch needs a change (regenerated, fuzzy, conflict, upstreamed, error)
  2  the analysis could not run: bad arguments, an unknown revision or ref, a version file that names no
     upstream ref, a bad .github/llama-bot.toml; one line on stderr says why (with pins that could be
     checked, their report is still printed)"""
SERVE_ENV = """environment:
  GITHUB_APP_ID                 the App's id (required)
  GITHUB_PRIVATE_KEY            the App's private key, PEM text (or GITHUB_PRIVATE_KEY_PATH: a path to it)
  GITHUB_WEBHOOK_SECRET         the webhook secret, at least 16 characters (required)
  GITHUB_API_URL                REST base URL (default https://api.github.com)
  HOST, PORT                    listen address (default 0.0.0.0, 8080; --host/--port win)
  LLAMA_BOT_DATA_DIR            job store and upstream mirrors (default ./var)
  LLAMA_BOT_URL_INSTEADOF       NEW=OLD,... prefix rewrites of upstream URLs, like git's url.NEW.insteadOf OLD
  LLAMA_BOT_WORKERS             concurrent analysis jobs (default 2)"""
CLI_ENV = """environment:
  LLAMA_BOT_DATA_DIR            where upstream mirrors are kept (default $XDG_CACHE_HOME/llama-bot,
                                else ~/.cache/llama-bot)
  LLAMA_BOT_URL_INSTEADOF       NEW=OLD,... prefix rewrites of upstream URLs, like git's url.NEW.insteadOf OLD"""
UPSTREAM_DIR_HELP = (
    "use the local git repository GITDIR (bare or not) as the upstream of pin NAME (a pin name "
    "from .github/llama-bot.toml, e.g. llama.cpp, mlx, mlx-c) instead of fetching it into the "
    "mirror; repeat it for several pins"
)
QUIET_HELP = (
    "say nothing on stderr about fetching upstreams (what is fetched, and how a slow fetch is getting on)"
)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="llama-bot",
        description=__doc__,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser(
        "serve",
        help="run the GitHub App webhook service",
        epilog=SERVE_ENV,
        description="Run the webhook service: POST /webhook, GET /healthz, GET /metrics.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # HOST and PORT are read by `serve` itself: a PORT=abc in the shell must not break the other commands.
    serve.add_argument("--host", default=None, help="listen address (default: $HOST, else 0.0.0.0)")
    serve.add_argument("--port", type=int, default=None, help="listen port (default: $PORT, else 8080)")
    descriptions = {
        "check": "Check every carried patch of each pin whose version file or patch directory differs between "
        "--base and --head, rebuild the ones that need it, review the upstream diff, and print the "
        "checklist (or the JSON report). Reads committed revisions, never the working tree.",
        "regenerate": "Rewrite the regenerated and fuzzy patches in place in the working tree of --repo "
        "(nothing else changes) and print what it did.",
    }
    for name, text in (
        ("check", "check the carried patches of a change"),
        ("regenerate", "rewrite regenerated patches in the working tree"),
    ):
        cmd = sub.add_parser(
            name,
            help=text,
            description=textwrap.fill(descriptions[name], 100, break_on_hyphens=False),
            epilog=f"{EXIT_CODES}\n\n{CLI_ENV}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.add_argument("--repo", required=True, metavar="PATH", help="the Ollama git repository")
        cmd.add_argument(
            "--head", default="HEAD", metavar="REV", help="the revision to check (default: HEAD)"
        )
        cmd.add_argument(
            "--base",
            default=None,
            metavar="REV",
            help="the revision to compare with (default: the merge-base of --head with origin/main, "
            "else main); its .github/llama-bot.toml is the configuration",
        )
        cmd.add_argument(
            "--upstream-dir", action="append", default=[], metavar="NAME=GITDIR", help=UPSTREAM_DIR_HELP
        )
        cmd.add_argument("--quiet", action="store_true", help=QUIET_HELP)
        if name == "check":
            cmd.add_argument(
                "--format",
                choices=("md", "json"),
                default="md",
                help="md: the checklist the pull request gets (default); json: the report of docs/report.md",
            )
            cmd.add_argument(
                "--out",
                type=Path,
                default=None,
                metavar="DIR",
                help="also write each regenerated or fuzzy patch to DIR/<its path in the repository>",
            )
            cmd.add_argument(
                "--explain",
                action="store_true",
                help="say on stderr which patches each pin got and how they were found (the CMake "
                "file and line that applies them, or the configured directory)",
            )
            cmd.add_argument(
                "--explain-consumers",
                action="store_true",
                help="also print on stderr, for each checked llama.cpp pin, what of the new upstream "
                "ref Ollama's head builds, includes and calls (the model the review judges by)",
            )
    jobs = sub.add_parser(
        "jobs",
        help="show the service's jobs (a failed check run names its job id)",
        description="Read the service's job store ($LLAMA_BOT_DATA_DIR/jobs.sqlite3, default "
        "./var) read-only: one JSON object a line, newest first.",
    )
    jobs.add_argument("id", type=int, nargs="?", help="one job, with its payload and progress")
    jobs.add_argument("--status", choices=STATUSES, default=None, help="only jobs with this status")
    jobs.add_argument("--limit", type=int, default=20, help="at most this many jobs (default: 20)")
    verify = sub.add_parser(
        "verify-source",
        help="check that the source CMake fetched under _deps/ is the pinned ref plus the carried "
        "patches, nothing else",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "After `cmake -S llama/server --preset cpu`: check that the upstream source CMake "
            "fetched (<build-dir>/_deps/<pin>-src) is at the pin's ref and equals that ref's "
            "tree with the carried patches applied in order, nothing missing, nothing extra. "
            "Reads the working tree of --repo, as CMake did.",
            100,
            break_on_hyphens=False,
        ),
        epilog=f"{VERIFY_EXIT_CODES}\n\n{CLI_ENV}",
    )
    verify.add_argument(
        "--repo",
        default=".",
        metavar="PATH",
        help="the Ollama checkout whose working tree CMake read (default: .)",
    )
    verify.add_argument(
        "--build-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the CMake build directory, or the fetched source checkout itself "
        "(default: build/llama-server-cpu under --repo)",
    )
    verify.add_argument(
        "--pin",
        default="llama.cpp",
        metavar="NAME",
        help="the pin whose source to verify (default: llama.cpp)",
    )
    verify.add_argument(
        "--upstream-dir",
        action="append",
        default=[],
        metavar="NAME=GITDIR",
        help="read the pin's upstream objects from this git directory instead of the "
        "checkout or the mirror; NAME is a pin name, e.g. llama.cpp; repeatable",
    )
    verify.add_argument("--quiet", action="store_true", help=QUIET_HELP)
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


def _base(repo: pygit2.Repository, head: pygit2.Commit, rev: str | None) -> tuple[pygit2.Commit, str]:
    """The base commit and how it was chosen, for messages that say what was compared."""
    if rev is not None:
        return _commit(repo, rev, "--base"), f"--base {rev}"
    for candidate in ("origin/main", "main"):
        try:
            other = repo.revparse_single(candidate).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        merge_base = repo.merge_base(head.id, other.id)
        if merge_base is not None:
            return repo[merge_base].peel(pygit2.Commit), f"the merge-base with {candidate}"
    raise UsageError("no --base given and neither origin/main nor main shares history with --head")


def _changed_paths(repo: pygit2.Repository, base: pygit2.Commit, head: pygit2.Commit) -> set[str]:
    diff = base.tree.diff_to_tree(head.tree)
    return {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}


def cli_data_dir() -> Path:
    """Where the CLI keeps its mirrors: the user's cache, never the current directory, which is usually an
    Ollama checkout (a mirror inside it would be one `git add -A` away from a commit)."""
    if os.environ.get("LLAMA_BOT_DATA_DIR"):
        return Path(os.environ["LLAMA_BOT_DATA_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "llama-bot"


def _upstream_opener(dirs: list[str], config: Config, quiet: bool = False):
    local: dict[str, str] = {}
    for item in dirs:
        name, sep, git_dir = item.partition("=")
        if not sep or not name or not git_dir:
            raise UsageError(f"--upstream-dir {item!r}: expected NAME=GITDIR")
        if config.pin(name) is None:  # a typo would otherwise fetch from the network instead
            pins = ", ".join(p.name for p in config.pins) or "none"
            raise UsageError(f"--upstream-dir {item}: no pin is named {name!r} (pins: {pins})")
        local[name] = git_dir
    instead_of = os.environ.get("LLAMA_BOT_URL_INSTEADOF")
    parse_url_rewrites(instead_of)  # a bad value is named before any work
    announce = None if quiet else lambda text: print(f"llama-bot: {text}", file=sys.stderr)
    mirrors = Mirrors(cli_data_dir(), instead_of, local, announce)

    def open_upstream(pin: Pin, refs: list[str]) -> Upstream:
        return mirrors.open(pin.name, pin.upstream, refs)

    return open_upstream


@dataclasses.dataclass(frozen=True)
class Change:
    """What `check` and `regenerate` compare: two commits of the Ollama repository and its configuration."""

    repo: pygit2.Repository
    head: pygit2.Commit
    base: pygit2.Commit
    base_label: str  # how the base was chosen: "--base REV" or "the merge-base with origin/main"
    head_label: str
    config: Config

    @property
    def compared(self) -> str:
        return f"{str(self.base.id)[:12]} ({self.base_label}) .. {str(self.head.id)[:12]} ({self.head_label})"


def _open(args: argparse.Namespace) -> Change:
    """The repository, the head and base commits, and the configuration.

    The configuration comes from the base, the CLI's stand-in for the default branch:
    a change cannot reconfigure the check that judges it.
    """
    repo = _open_repo(args.repo)
    head = _commit(repo, args.head, "--head")
    base, label = _base(repo, head, args.base)
    return Change(repo, head, base, label, args.head, load_config(GitSnapshot(repo, base)))


def _analyse(args: argparse.Namespace, change: Change, review: bool) -> tuple[Report, set[str]]:
    """The report of the pins whose version file or patch directory changed; a pin that cannot be checked
    is in `Report.failed` with its error, and the others are still checked."""
    from bot.engine import analyse

    changed = _changed_paths(change.repo, change.base, change.head)
    opener = _upstream_opener(args.upstream_dir, change.config, args.quiet)
    # The CLI checks only the pins whose own files changed (the service also reacts to also_watch paths).
    base, head = GitSnapshot(change.repo, change.base), GitSnapshot(change.repo, change.head)
    selected = dataclasses.replace(
        change.config, pins=tuple(change.config.touched_pins(changed, head, False))
    )
    report = analyse(change.config, base, head, opener, changed, review=review, errors={}, also_watch=False)
    if not report.pins and not report.failed:
        _explain_untouched(change, base, head)
    if getattr(args, "explain", False):
        _explain_patches(report)
    if getattr(args, "explain_consumers", False):
        _explain_consumers(report, selected, head, opener)
    _warn_missing_patch_dirs(report, selected, base, head)
    return report, changed


def _explain_patches(report: Report) -> None:
    """Each checked pin's patches, in the order they are applied, and where the build applies them from."""
    for pin_report in report.pins:
        listed = ", ".join(p.path for p in pin_report.patches) or "none"
        how = f" ({pin_report.patch_source})" if pin_report.patch_source else ""
        print(f"llama-bot: {pin_report.name}: patches {listed}{how}", file=sys.stderr)


def _warn_missing_patch_dirs(report: Report, selected: Config, base: GitSnapshot, head: GitSnapshot) -> None:
    """A configured patch directory found at neither revision is more likely a typo than a pin with no
    patches; the default layouts are exempt (a repository may not be on them yet)."""
    defaults = parse_config(None).pins
    for pin in selected.pins:
        checked = report.pin(pin.name)
        if (
            checked
            and not checked.patches
            and pin not in defaults
            and not any(base.files(e) or head.files(e) for e in pin.patch_sets)
        ):
            print(
                f"llama-bot: warning: {pin.name}: {pin.patches}/ exists at neither revision, so no patch was "
                f"checked (is `patches` right in {CONFIG_PATH}?)",
                file=sys.stderr,
            )


def _explain_consumers(report: Report, config: Config, head: GitSnapshot, opener) -> None:
    """The consumer model of each checked llama.cpp pin: Ollama's head against the pin's new upstream ref."""
    from bot.engine import pin_stack
    from bot.patchfile import PatchError, parse
    from bot.review.consumers import SnapshotTexts, consumer_model, explain

    for pin_report in report.pins:
        pin = config.pin(pin_report.name)
        if pin is None or pin.review != "llama.cpp" or not pin_report.new_commit:
            continue
        upstream = opener(pin, [pin_report.new_ref])
        patches = []
        for path in pin_stack(head, pin).paths:
            try:
                patches.append((path, parse(head.read(path) or b"")))
            except PatchError:
                continue
        new = GitSnapshot(upstream.repo, pin_report.new_commit)
        model = consumer_model(SnapshotTexts(head), SnapshotTexts(new), patches)
        print(
            f"llama-bot: {pin.name}: what Ollama ({str(head.commit.id)[:12]}) builds, includes and calls of "
            f"{pin_report.new_ref} ({pin_report.new_commit[:12]}):\n{explain(model)}",
            end="",
            file=sys.stderr,
        )


def _explain_untouched(change: Change, base: GitSnapshot, head: GitSnapshot) -> None:
    """Say what was compared, so an empty result is not mistaken for a clean bump; no pinned file at all
    means the wrong repository."""
    files = [pin.version_file for pin in change.config.pins]
    if not any(snapshot.read(f) is not None for snapshot in (base, head) for f in files):
        raise UsageError(
            f"none of the pinned version files ({', '.join(files)}) exists at {change.compared}: "
            f"is {change.repo.workdir or change.repo.path} an Ollama checkout?"
        )
    print(
        f"llama-bot: compared {change.compared}: no pin's version file or patch directory changed; "
        "choose another base with --base REV",
        file=sys.stderr,
    )


def _warn_unchecked_edits(change: Change) -> None:
    """`check` reads commits: uncommitted edits to patches or version files would silently not count."""
    dirty = _uncommitted(change.repo, change.config) if change.repo.workdir else []
    if dirty:
        print(
            f"llama-bot: note: uncommitted changes to {_shown(dirty)} are not checked "
            f"(check reads --head {change.head_label}; commit them to check them)",
            file=sys.stderr,
        )


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _failures(report: Report) -> int:
    """Exit 2 after the report when a pin could not be checked: its error is in the report too."""
    for pin in report.failed:
        print(f"llama-bot: {pin.name}: {pin.error}", file=sys.stderr)
    return 2 if report.failed else 0


def _write(root: Path, report: Report) -> list[Path]:
    """Write the rebuilt patches; a path that cannot be written is a one-line usage error, not a traceback."""
    written = []
    for pin in report.pins:
        for patch in pin.patches:
            if patch.status in REBUILT and patch.new_text is not None:
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
    return sorted(
        path
        for path, flags in repo.status().items()
        if flags != pygit2.enums.FileStatus.CURRENT
        and not flags & ignored
        and config.touched_pins({path}, also_watch=False)
    )


def cmd_check(args: argparse.Namespace) -> int:
    from bot.render.checklist import render_markdown

    change = _open(args)
    _warn_unchecked_edits(change)
    report, changed = _analyse(args, change, review=True)
    written = _write(args.out, report) if args.out else []
    if args.format == "json":
        _emit(json.dumps(report.to_json(), indent=2))
    else:
        _emit(
            render_markdown(
                report,
                changed,
                head_sha=str(change.head.id),
                prefix=change.config.command_prefix,
                patch_dirs={p.name: p.patches for p in change.config.pins},
            )
        )
    if args.out:
        _list_written(args.out, report, written)
    return _failures(report) or (1 if report.needs_change else 0)


def _list_written(out: Path, report: Report, written: list[Path]) -> None:
    """On stderr: the rebuilt patches `check --out` wrote, and those already there as they are."""
    rebuilt = [
        out / p.path
        for pin in report.pins
        for p in pin.patches
        if p.status in REBUILT and p.new_text is not None
    ]
    where = "\n".join(f"  {p}{'' if p in written else ' (already there, unchanged)'}" for p in rebuilt)
    print(
        f"Regenerated patches written to {out}:\n{where or '  (none: nothing needed regenerating)'}",
        file=sys.stderr,
    )


def _refuse_unwritable(args: argparse.Namespace, change: Change) -> None:
    """regenerate rewrites the working tree: none (a bare repository), or uncommitted edits it would
    overwrite, is a usage error."""
    if change.repo.workdir is None:
        raise UsageError(f"--repo {args.repo}: a bare repository has no working tree to rewrite")
    dirty = _uncommitted(change.repo, change.config)
    if dirty:
        raise UsageError(
            f"uncommitted changes to {_shown(dirty)}: commit or stash them first "
            "(regenerate reads the committed revision and rewrites the working tree)"
        )


def cmd_regenerate(args: argparse.Namespace) -> int:
    change = _open(args)
    _refuse_unwritable(args, change)
    report, _ = _analyse(args, change, review=False)
    root = Path(change.repo.workdir)
    written = _write(root, report)
    for pin in report.pins:
        for patch in pin.patches:
            path = root / patch.path
            action = "rewrote" if path in written else "left"
            _emit(f"{pin.name}: {action} {patch.path} ({patch.status}: {patch.message})")
    if not report.pins and not report.failed:
        _emit("No pin is touched by this change: nothing to regenerate.")
    unresolved = [p for pin in report.pins for p in pin.patches if p.status in UNRESOLVED]
    return _failures(report) or (1 if unresolved else 0)


def cmd_jobs(args: argparse.Namespace) -> int:
    """One JSON object a line from the service's job store (the database DATABASE_URL names, else
    $LLAMA_BOT_DATA_DIR/jobs.sqlite3), newest first."""
    database = os.environ.get("DATABASE_URL")
    path = Path(os.environ.get("LLAMA_BOT_DATA_DIR") or "./var") / DB_NAME
    where = "the database DATABASE_URL names" if database else str(path)
    try:
        if database:
            import psycopg

            from bot.pgstore import read_jobs as read_shared_jobs

            try:
                found = read_shared_jobs(database, status=args.status, job_id=args.id, limit=args.limit)
            except psycopg.Error as exc:
                raise UsageError(f"cannot read the jobs in {where}: {' '.join(str(exc).split())}") from None
        else:
            found = read_jobs(path, status=args.status, job_id=args.id, limit=args.limit)
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot read the jobs in {where}: {exc}") from None
    if args.id is not None and not found:
        raise UsageError(f"no job {args.id} in {where}")
    for job in found:
        shown = dataclasses.asdict(job)
        if args.id is None:
            del shown["payload"], shown["progress"]
        _emit(json.dumps(shown))
    return 0


def cmd_verify_source(args: argparse.Namespace) -> int:
    from bot.verify import load_worktree_config, render, verify_source

    config = load_worktree_config(Path(args.repo))
    opener = _upstream_opener(args.upstream_dir, config, args.quiet)
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
    handlers = {
        "check": cmd_check,
        "regenerate": cmd_regenerate,
        "serve": cmd_serve,
        "jobs": cmd_jobs,
        "verify-source": cmd_verify_source,
    }
    try:
        return handlers[args.command](args)
    except (AnalysisError, UsageError) as exc:
        print(f"llama-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except (
        Exception
    ) as exc:  # a bug: exit 2 (could not analyse), never the 1 that means "a patch needs a change"
        if os.environ.get("LLAMA_BOT_DEBUG"):
            raise
        print(
            f"llama-bot: internal error ({type(exc).__name__}: {exc}); this is a bug in llama-bot: "
            "run again with LLAMA_BOT_DEBUG=1 for the traceback and report it",
            file=sys.stderr,
        )
        return 2
