"""The command line, `python -m bot` and the `llama-bot` script: `main` runs one subcommand and turns what
goes wrong into an exit status and one line on stderr.

The top layer: imports any package, the engine and the service only in the subcommand that runs them.
"""

from __future__ import annotations

import os
import sys

from bot.child.sandbox import ChildFailed
from bot.cli.bump import cmd_bump
from bot.cli.check import cmd_check
from bot.cli.console import UsageError
from bot.cli.contracts import cmd_contracts
from bot.cli.parser import build_parser
from bot.cli.regenerate import cmd_regenerate
from bot.cli.service import cmd_jobs, cmd_serve
from bot.cli.verify import cmd_verify_source
from bot.model import AnalysisError

COMMANDS = {
    "check": cmd_check,
    "regenerate": cmd_regenerate,
    "serve": cmd_serve,
    "jobs": cmd_jobs,
    "verify-source": cmd_verify_source,
    "contracts": cmd_contracts,
    "bump": cmd_bump,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (AnalysisError, UsageError) as exc:
        print(f"llama-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
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
