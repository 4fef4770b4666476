"""One detector computed in a forked process while the review goes on with the others.

tree-sitter holds the GIL while it parses, so a second core helps a review only as a second process. The
wire check is the longest detector and reads nothing the others write: forked at the start of a review, it
runs beside them and its drafts are taken where the review would have computed it. The child starts from
the parent's memory (no re-import, no re-read) and returns plain data through a pipe.

What the child notes of the upstream clone (files it could not read) comes back with its drafts. Where it
cannot help or may not be safe, nothing forks and the detector runs in its place: one CPU, another thread in
the process (a fork copies whatever lock that thread holds), no `os.fork`. A child that fails in any way is
reaped and the detector runs in the parent: the drafts and the errors are those of a review in one process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Generic, TypeVar

from bot.child import activity

T = TypeVar("T")


def _may_fork() -> bool:
    """Whether a child would run on a CPU of its own, and a fork copy no lock another thread holds."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # no affinity on this platform
        return (os.cpu_count() or 1) > 1


class Beside(Generic[T]):
    """`compute` started in a forked child; `result()` is what it returns, with the notes it added to
    `notes` added here too."""

    def __init__(self, compute: Callable[[], T], notes: MutableMapping[str, str]):
        self._compute = compute
        self._notes = notes
        self._pid = 0
        self._pipe = -1
        if _may_fork():
            self._start()

    def _start(self) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, answer, and leave without running the parent's exit handlers
            os.close(read)
            os._exit(_answer(write, self._compute, self._notes))
        os.close(write)
        self._pid, self._pipe = pid, read

    def result(self) -> T:
        """The child's result; computed here when there is no child or it failed."""
        if self._pid:
            answer = self._taken()
            if answer is not None:
                value, added = answer
                for path, commit in added:
                    self._notes.setdefault(path, commit)
                return value
        return self._compute()

    def _taken(self) -> tuple[T, list[tuple[str, str]]] | None:
        with os.fdopen(self._pipe, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        if status != 0 or not data:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a child that wrote a broken answer is a failed child
            return None

    def close(self) -> None:
        """The child, if its result was never taken (the review stopped on an error), killed and reaped."""
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.close(self._pipe)
            os.waitpid(self._pid, 0)
            self._pid = 0


def _answer(pipe: int, compute: Callable[[], T], notes: MutableMapping[str, str]) -> int:
    """In the child: the exit status, 0 once `compute`'s result and the notes it added are written."""
    try:
        activity.listen(None)  # the parent's channel is the parent's to write
        before = set(notes)
        value = compute()
        data = pickle.dumps((value, [(k, v) for k, v in notes.items() if k not in before]))
        with os.fdopen(pipe, "wb") as out:
            out.write(data)
        return 0
    except BaseException:  # noqa: BLE001 - whatever it was, the parent computes it again and sees it
        return 1


@contextlib.contextmanager
def forked(compute: Callable[[], T], notes: MutableMapping[str, str]) -> Iterator[Beside[T]]:
    """`Beside(compute, notes)`, its child gone when the block is left."""
    started = Beside(compute, notes)
    try:
        yield started
    finally:
        started.close()
