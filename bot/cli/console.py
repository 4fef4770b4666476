"""What a command prints: its output through `emit`, and the one stderr line a `UsageError` becomes."""

from __future__ import annotations

import os
import sys


class UsageError(Exception):
    """Bad arguments or an unreadable repository: exit 2 with one line."""


def say(text: str) -> None:
    """A line for the person running the command, beside its output: on stderr, so stdout holds only what
    a script reads (the checklist, the report)."""
    print(text, file=sys.stderr, flush=True)


def emit(text: str) -> None:
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
