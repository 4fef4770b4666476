"""The command line's arguments and help: the subcommands, their options, exit statuses and environment."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path
from typing import NoReturn

from bot.child.sandbox import MIN_MEMORY_MB, Limits
from bot.model import FAIL_ON_SEVERITIES, bot_version
from bot.stores.jobs import STATUSES

DESCRIPTION = """`python -m bot`: check, regenerate and verify Ollama's carried upstream patches, show what the review
protects; register and serve the GitHub App.

docs/cli.md describes every command; docs/report.md the JSON report.
"""


class Parser(argparse.ArgumentParser):
    """argparse's usage-plus-error block becomes the one stderr line every exit-2 failure gives."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


VERIFY_EXIT_CODES = """exit status:
  0  the fetched source is the pinned ref plus the carried patches, nothing else
  1  it is not: each differing file is listed, with the patch that should have produced it
  2  bad input (no such build directory, not a git checkout, unknown pin, unreadable version file)"""
EXIT_CODES = """exit status of check and regenerate (verify-source: see its --help; serve, jobs, register: 0, or 2):
  0  every patch applies as it is (clean or offset)
  1  the analysis ran and some patch needs a change (regenerated, fuzzy, conflict, upstreamed, error), or
     with check --fail-on high|medium, a finding of that severity or graver exists
  2  the analysis could not run, or not all of it: bad arguments, an unknown revision or ref, a version
     file that names no upstream ref, a bad .github/llama-bot.toml, a shallow --upstream-dir clone, a
     pin's consumer or upstream files that could not be read; one line on stderr says each (with pins
     that could be checked, their report is still printed)"""
SERVE_ENV = """environment:
  GITHUB_APP_ID                 the App's id (required)
  GITHUB_PRIVATE_KEY            the App's private key, PEM text (or GITHUB_PRIVATE_KEY_PATH: a path to it)
  GITHUB_WEBHOOK_SECRET         the webhook secret, at least 16 characters (required)
  GITHUB_WEBHOOK_SECRET_PREVIOUS  the secret before a rotation, accepted too while set
  (SIGHUP reads the private key again: a replaced GITHUB_PRIVATE_KEY_PATH file takes over)
  GITHUB_API_URL                REST base URL (default https://api.github.com)
  HOST, PORT                    listen address (default 0.0.0.0, 8080; --host/--port win)
  LLAMA_BOT_DATA_DIR            job store and upstream mirrors (default $XDG_STATE_HOME/llama-bot, else
                                ~/.local/state/llama-bot)
  LLAMA_BOT_URL_INSTEADOF       NEW=OLD,... prefix rewrites of upstream URLs, like git's url.NEW.insteadOf OLD
  LLAMA_BOT_WORKERS             concurrent analysis jobs (default 2)
  LLAMA_BOT_ANALYSIS_MEMORY_MB  address space one analysis (a child process) may add (default 1024)
  LLAMA_BOT_ANALYSIS_TIMEOUT    wall-time limit of one analysis, seconds (default 600)"""
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


def _at_least(low: int):
    """An argparse type: a whole number no smaller than `low`."""

    def whole(text: str) -> int:
        if not text.strip().isdigit() or int(text) < low:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {low}, not {text!r}")
        return int(text)

    whole.__name__ = "number"
    return whole


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="llama-bot",
        description=DESCRIPTION,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"llama-bot {bot_version()}")
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
        _add_limits(cmd)
        if name == "check":
            cmd.add_argument(
                "--format",
                choices=("text", "md", "json"),
                default=None,
                help="text: the checklist for a person at a terminal (the default when stdout is one); md: "
                "the checklist the pull request gets (the default otherwise); json: the report of "
                "docs/report.md",
            )
            cmd.add_argument(
                "--fail-on",
                choices=tuple(FAIL_ON_SEVERITIES),
                default="patches",
                help="exit 1 when a patch needs a change (patches, the default), or also when a finding of "
                "this severity or graver exists (high, medium): what a CI gates on",
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
        "~/.local/state/llama-bot) read-only: one JSON object a line, newest first.",
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
    _add_contracts(sub)
    _add_bump(sub)
    _add_register(sub)
    _add_probe(sub)
    return parser


def _add_limits(cmd: argparse.ArgumentParser) -> None:
    """The analysis limits `check`, `regenerate` and `bump` take."""
    cmd.add_argument(
        "--max-memory-mb",
        type=_at_least(MIN_MEMORY_MB),
        default=Limits.memory_mb,
        metavar="MB",
        help=f"the analysis runs in a child process that may add this much address space (default: "
        f"{Limits.memory_mb}); past it, exit 2 naming what it was doing",
    )
    cmd.add_argument(
        "--timeout",
        type=_at_least(1),
        default=int(Limits.timeout),
        metavar="SECONDS",
        help=f"the analysis's wall-time limit (default: {Limits.timeout:g}); past it, exit 2 naming what "
        "it was doing",
    )


BUMP_EXIT_CODES = """exit status (as check's, for the bump it made):
  0  the branch was made and every patch applies as it is at the new ref (one commit), or every pin is
     already at its ref (no branch)
  1  the branch was made and some patch needed a change: rebuilt in the second commit (regenerated,
     fuzzy), or left for a person (conflict, upstreamed, error)
  2  nothing was made: bad arguments, no release tag to choose, a ref older than the current one not
     named with --ref, a branch of that name already there, an upstream or version file that could not
     be read; one line on stderr says why"""


def _add_bump(sub) -> None:
    bump = sub.add_parser(
        "bump",
        help="make a branch that moves pins to a new upstream ref, with the patches rebuilt",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "In the checkout at --repo, create the branch llama-bot/bump-<pin>-<ref> from the current HEAD with "
            "two commits: the version files moved to --ref (default: each pin's newest release tag, by its "
            "release_tags pattern, or for a pin holding a commit the head of the branch it tracks), then the "
            "carried patches rebuilt for it. HEAD, the current branch, the index and the working tree do not "
            "change, and nothing is pushed. Says what it made on stderr and prints the checklist of the bump.",
            100,
            break_on_hyphens=False,
        ),
        epilog=f"{BUMP_EXIT_CODES}\n\n{CLI_ENV}",
    )
    bump.add_argument("--repo", required=True, metavar="PATH", help="the Ollama git repository")
    bump.add_argument(
        "--pin",
        required=True,
        action="append",
        metavar="NAME",
        help="a pin to move (a name from .github/llama-bot.toml at HEAD, e.g. llama.cpp); repeat it to move "
        "several in one branch",
    )
    bump.add_argument(
        "--ref",
        default=None,
        metavar="REF",
        help="the upstream tag, branch (its head commit) or 40-hex commit to move the one pin to (default: its "
        "newest release tag, or its tracked branch's head); needed to go back to an older one",
    )
    bump.add_argument(
        "--upstream-dir", action="append", default=[], metavar="NAME=GITDIR", help=UPSTREAM_DIR_HELP
    )
    bump.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    _add_limits(bump)


PROBE_EXIT_CODES = """exit status:
  0  nothing Ollama reads differs between the two builds (or the change moves no llama.cpp pin)
  1  something does: a high or medium finding (a refused request, a field gone, a pattern that no longer
     matches, a new stream frame, a new ref that does not build or start)
  2  the probe could not run: bad arguments, an unknown revision or ref, the old ref not building, no
     vocab file for the model"""


def _add_probe(sub) -> None:
    probe = sub.add_parser(
        "probe",
        help="build llama-server at both refs of a bump and compare what it answers to Ollama's requests",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "For each llama.cpp pin whose version file differs between --base and --head: build llama-server at "
            "the old and the new ref the way Ollama's CMake builds it for the CPU preset (from the local mirror, "
            "with each side's carried patches; one build directory per pin, so later runs rebuild only what "
            "changed), write a tiny random-weight model with each tree's own gguf-py, start the server with the "
            "flags and environment Ollama's code at --head gives it, send the requests Ollama sends (one per "
            "value its code or documentation can put in a field), and report what differs on something Ollama "
            "reads. It builds and runs upstream code and the change's CMake: run it on your own machine or a CI "
            "runner, never on the bot's host.",
            100,
            break_on_hyphens=False,
        ),
        epilog=f"{PROBE_EXIT_CODES}\n\n{CLI_ENV}",
    )
    probe.add_argument("--repo", required=True, metavar="PATH", help="the Ollama git repository")
    probe.add_argument("--head", default="HEAD", metavar="REV", help="the revision to probe (default: HEAD)")
    probe.add_argument(
        "--base",
        default=None,
        metavar="REV",
        help="the revision to compare with (default: the merge-base of --head with origin/main, else main)",
    )
    probe.add_argument(
        "--upstream-dir", action="append", default=[], metavar="NAME=GITDIR", help=UPSTREAM_DIR_HELP
    )
    probe.add_argument(
        "--work-dir",
        default=None,
        metavar="DIR",
        help="where the sources, the build and the model go (default: <data dir>/probe/<pin>, kept for the "
        "next run)",
    )
    probe.add_argument(
        "--jobs", type=_at_least(1), default=os.cpu_count() or 2, metavar="N", help="parallel compile jobs"
    )
    probe.add_argument(
        "--build-timeout",
        type=_at_least(1),
        default=3600,
        metavar="SECONDS",
        help="each of the configure and build steps at most this long (default 3600)",
    )
    probe.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    probe.add_argument("--quiet", action="store_true", help=QUIET_HELP)


INVENTORY_EXIT_CODES = """exit status:
  0  the inventory was printed
  2  bad input (not a git repository, an unknown revision; with --producers, an upstream ref that
     does not resolve)"""


def _add_contracts(sub) -> None:
    contracts = sub.add_parser(
        "contracts",
        help="show what the upstream review protects: the contracts Ollama's code relies on, with file:line",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Read Ollama's tree at --rev and print every place its code relies on upstream's behaviour, "
            "grouped: the constants it looks for in what llama-server prints or answers, the flags and "
            "environment it starts it with, the JSON fields it sends and reads, the sampler, tokenizer and "
            "template settings among those, and what its build relies on upstream's build having. Reads "
            "committed revisions only, needs no upstream.",
            100,
            break_on_hyphens=False,
        ),
        epilog=INVENTORY_EXIT_CODES,
    )
    contracts.add_argument("--repo", required=True, metavar="PATH", help="the Ollama git repository")
    contracts.add_argument(
        "--rev", default="HEAD", metavar="REV", help="the revision to read (default: HEAD)"
    )
    contracts.add_argument(
        "--format",
        choices=("md", "json"),
        default="md",
        help="md: one table per group (default); json: the groups as lists of objects",
    )
    contracts.add_argument(
        "--producers",
        action="store_true",
        help="join every contract with the upstream code that produces it (file:line at the pinned ref), "
        "or say why none was found",
    )
    contracts.add_argument(
        "--upstream",
        metavar="REF",
        help="with --producers: the upstream tag or commit to read (default: what the llama.cpp pin's "
        "version file holds at --rev)",
    )
    contracts.add_argument(
        "--upstream-dir",
        metavar="GITDIR",
        help="with --producers: the llama.cpp git directory to read, used as it is (default: the CLI's "
        "mirror of the pin's upstream, fetched when it lacks the ref)",
    )


REGISTER_EXIT_CODES = """exit status:
  0  the App was created and its credentials written
  2  nothing was written: bad arguments, --out (or the key file beside it) already there, no answer from GitHub
     within --timeout, GitHub refused the code's exchange or answered something else; one line on stderr
     says why

environment:
  GITHUB_URL                    GitHub's web address (default https://github.com; --github-url wins)
  GITHUB_API_URL                REST base URL the code is exchanged at (default https://api.github.com)"""


def _add_register(sub) -> None:
    register = sub.add_parser(
        "register",
        help="create the GitHub App from app.yml (GitHub's manifest flow) and write its credentials",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Serve on 127.0.0.1 a page whose form posts the App manifest (app.yml, with --webhook-url and "
            "--name) to GitHub, for your user or --org. Open it in a browser signed in to GitHub and confirm; "
            "GitHub sends the browser back with a one-time code, which is exchanged for the App's id, private "
            "key, webhook secret and client credentials. They are written to --out (the key to the .pem file "
            "beside it), readable by you alone; the install link and the command that serves the App follow. "
            "No secret is printed.",
            100,
            break_on_hyphens=False,
        ),
        epilog=REGISTER_EXIT_CODES,
    )
    register.add_argument(
        "--webhook-url",
        required=True,
        metavar="URL",
        help="the public URL of the service's /webhook, e.g. https://llama-bot.example.com/webhook",
    )
    register.add_argument(
        "--name", default=None, metavar="NAME", help="the App's name, unique on GitHub (default: app.yml's)"
    )
    register.add_argument(
        "--org",
        default=None,
        metavar="ORG",
        help="create the App for this organisation (you must own it) instead of for your user",
    )
    register.add_argument(
        "--out",
        default="llama-bot-credentials.env",
        metavar="PATH",
        help="the credentials file to create, never overwritten; the private key goes beside it with the "
        "suffix .pem (default: llama-bot-credentials.env)",
    )
    register.add_argument(
        "--port",
        type=_at_least(0),
        default=0,
        metavar="PORT",
        help="the loopback port of the form and of GitHub's redirect (default: 0, any free one)",
    )
    register.add_argument(
        "--github-url",
        default=None,
        metavar="URL",
        help="GitHub's web address, for GitHub Enterprise Server (default: $GITHUB_URL, else https://github.com)",
    )
    register.add_argument(
        "--manifest",
        default=None,
        metavar="PATH",
        help="the App manifest (default: bot/app.yml, shipped with the package)",
    )
    register.add_argument(
        "--timeout",
        type=_at_least(1),
        default=600,
        metavar="SECONDS",
        help="how long to wait for GitHub to send the browser back (default: 600); past it, exit 2",
    )
