"""The command line, `python -m bot` and the `llama-bot` script: `main` runs one subcommand and turns what
goes wrong into an exit status and one line on stderr.

The top layer: imports any package, the engine and the service only in the subcommand that runs them.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import os
import sys
import threading

from bot.child.sandbox import ChildFailed
from bot.cli.console import UsageError
from bot.cli.parser import build_parser
from bot.model import AnalysisError

# subcommand -> (module, function): a command imports what it runs, and nothing another command needs
COMMANDS = {
    "check": ("bot.cli.check", "cmd_check"),
    "regenerate": ("bot.cli.regenerate", "cmd_regenerate"),
    "serve": ("bot.cli.service", "cmd_serve"),
    "jobs": ("bot.cli.service", "cmd_jobs"),
    "verify-source": ("bot.cli.verify", "cmd_verify_source"),
    "contracts": ("bot.cli.contracts", "cmd_contracts"),
    "bump": ("bot.cli.bump", "cmd_bump"),
    "register": ("bot.cli.register", "cmd_register"),
    "probe": ("bot.cli.probe", "cmd_probe"),
}


# The cyclic collector's thresholds in a command that analyses once and ends (all but `serve`): with the
# defaults it made 200 passes over the imported modules' and the facts' objects in a re-check, 30 ms of
# 0.6 s, and found next to nothing (reference counts free the analysis's garbage); the process's memory
# is bounded by its own limits.
ONE_RUN_GC = (200_000, 30, 30)


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser().parse_args(argv))


def run_command(args: argparse.Namespace) -> int:
    """The subcommand `args` names, its failures as an exit status and one line on stderr."""
    module, function = COMMANDS[args.command]
    try:
        return getattr(importlib.import_module(module), function)(args)
    except (AnalysisError, UsageError) as exc:
        print(f"llama-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # every file is written whole or not at all (`write_whole`)
        print("llama-bot: interrupted", file=sys.stderr)
        return 130
    except (
        Exception
    ) as exc:  # a bug: exit 2 (could not analyse), never the 1 that means "a patch needs a change"
        if os.environ.get("LLAMA_BOT_DEBUG"):
            if isinstance(exc, ChildFailed):
                print(exc.child_traceback, end="", file=sys.stderr)  # where the analysis process failed
                raise exc.original or exc from None
            raise
        what = str(exc) if isinstance(exc, ChildFailed) else f"{type(exc).__name__}: {exc}"
        print(
            f"llama-bot: internal error ({what}); this is a bug in llama-bot: "
            "run again with LLAMA_BOT_DEBUG=1 for the traceback and report it",
            file=sys.stderr,
        )
        return 2


def run() -> None:
    """`python -m bot` and the `llama-bot` script: `main`, then the process ends once the exit handlers ran
    and the output is flushed, without tearing the interpreter down (freeing an analysis's objects one by
    one took 40 ms of a 0.7 s re-check); an ordinary exit while another thread runs (the service's workers,
    which stop their analysis children as they end: only that exit waits for them)."""
    args = build_parser().parse_args()
    if args.command != "serve":
        gc.set_threshold(*ONE_RUN_GC)
    code = run_command(args)
    if threading.active_count() > 1:
        raise SystemExit(code)
    atexit._run_exitfuncs()  # what `sys.exit` would run: children joined, logs and finalizers done
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone away, a stream closed
            stream.flush()
    os._exit(code)
