"""What the analysis is doing now, in words: when a limit stops it, the check run says what it was doing
("stopped after 600 s while placing llama/compat/0002-edit.patch").

The engine calls `doing` at each step; a listener (the sandbox's child process) passes the words on.
Without one, `doing` costs a global lookup.
"""

from __future__ import annotations

from collections.abc import Callable

_listener: Callable[[str], None] | None = None


def doing(what: str) -> None:
    """The analysis starts `what` ("placing llama/compat/0001-x.patch")."""
    if _listener is not None:
        _listener(what)


def listen(listener: Callable[[str], None] | None) -> None:
    """Hear every `doing` of this process from now on (None: stop hearing)."""
    global _listener
    _listener = listener
