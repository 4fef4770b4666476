"""Checks computed in a forked process while the review goes on with the others.

tree-sitter holds the GIL while it parses, so a second core helps a review only as a second process. The
checks forked (the heavy ones of `bot.review.checks`, as their inputs declare) read nothing the others write;
their drafts are taken where the review puts them. The child starts from the parent's memory (no re-import,
no re-read of what the parent read before the fork) and returns plain data through a pipe: its drafts,
what it noted of the upstream clone (files it could not read) and its look-ups in the facts store.

Where it cannot help or may not be safe, nothing forks and the checks run in the parent: one CPU, another
thread in the process (a fork copies whatever lock that thread holds), no `os.fork`. A child that fails in
any way (an error, a signal, a file only the parent may ask the service for) is reaped and the checks run
in the parent: the drafts and the errors are those of a review in one process.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Generic, TypeVar

from bot.cache import facts
from bot.child import activity

T = TypeVar("T")
log = logging.getLogger(__name__)


def _may_fork() -> bool:
    """Whether a child would run on a CPU of its own, and a fork copy no lock another thread holds."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # no affinity on this platform
        return (os.cpu_count() or 1) > 1


class Handover:
    """Plain data the parent hands a forked child after the fork, while both go on: `received()` in the child
    waits for it; in a process with no child (the work done here) it is None."""

    def __init__(self) -> None:
        self._read, self._write = -1, -1
        self._in_child = False

    def open(self) -> None:
        self._read, self._write = os.pipe()

    def forked(self, child: bool) -> None:
        """After the fork, each process keeps its own end."""
        if self._read == -1:
            return
        os.close(self._write if child else self._read)
        self._in_child = child
        if child:
            self._write = -1
        else:
            self._read = -1

    def hand(self, value: object) -> None:
        """Give the child `value`; nothing without a child. Written from a thread of its own, as the child
        reads it only when it needs it."""
        if self._write == -1:
            return
        fd, self._write = self._write, -1
        threading.Thread(target=_written, args=(fd, pickle.dumps(value)), daemon=True).start()

    def received(self) -> object:
        """In the child, what the parent handed it (an error when the parent closed the pipe without a word:
        the work is then done in the parent); None elsewhere."""
        if not self._in_child:
            return None
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        if not data:
            raise EOFError("the review's process handed nothing")
        return pickle.loads(data)

    def close(self) -> None:
        for fd in (self._read, self._write):
            if fd != -1:
                os.close(fd)
        self._read = self._write = -1


def _written(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError), os.fdopen(fd, "wb") as out:  # a child gone reads nothing
        out.write(data)


class Beside(Generic[T]):
    """`compute` started in a forked child; `result()` is what it returns, with the notes it added to
    `notes` added here too, and its look-ups counted in the facts store in use here. `handover` carries what
    this process reads after the fork to the child."""

    def __init__(
        self,
        compute: Callable[[], T],
        notes: MutableMapping[str, str],
        worth: bool = True,
        handover: Handover | None = None,
    ):
        self._compute = compute
        self._notes = notes
        self._pid = 0
        self._pipe = -1
        self._handover = handover or Handover()
        if worth and _may_fork():
            self._start()
        self.forked = self._pid != 0  # whether `compute` runs in a child (else here, when asked)

    def _start(self) -> None:
        read, write = os.pipe()
        self._handover.open()
        gc.freeze()  # the collector would write into every object's header: each page copied in both
        try:
            pid = os.fork()
        except OSError as exc:  # no process to be had (a limit on processes, on memory)
            log.warning("the checks run in the review's process: no fork (%s)", exc)
            gc.unfreeze()
            os.close(read)
            os.close(write)
            self._handover.close()
            return
        self._handover.forked(child=pid == 0)
        if pid == 0:  # the child: compute, answer, and leave without running the parent's exit handlers
            os.close(read)
            os._exit(_answer(write, self._compute, self._notes))
        os.close(write)
        self._pid, self._pipe = pid, read

    def result(self) -> T:
        """The child's result; computed here when there is no child or it failed."""
        self._handover.close()  # a child still waiting for a word gets none: it fails, and this computes
        if self._pid:
            answer = self._taken()
            if answer is not None:
                value, added, counts = answer
                for path, commit in added:
                    self._notes.setdefault(path, commit)
                facts.count_looked_up(*counts)
                return value
        return self._compute()

    def _taken(self) -> tuple[T, list[tuple[str, str]], tuple[int, int]] | None:
        with os.fdopen(self._pipe, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        gc.unfreeze()
        if status == 0 and data:
            with contextlib.suppress(Exception):  # a broken answer is a failed child
                return pickle.loads(data)
        log.warning("the forked checks failed (wait status %d): they run in the review's process", status)
        return None

    def close(self) -> None:
        """The child, if its result was never taken (the review stopped on an error), killed and reaped."""
        self._handover.close()
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.close(self._pipe)
            os.waitpid(self._pid, 0)
            self._pid = 0
            gc.unfreeze()


def _answer(pipe: int, compute: Callable[[], T], notes: MutableMapping[str, str]) -> int:
    """In the child: the exit status, 0 once `compute`'s result, the notes it added and its look-ups in the
    facts store (hits, misses) are written."""
    try:
        activity.listen(None)  # the parent's channel is the parent's to write
        before = set(notes)
        hits, misses = facts.looked_up()
        value = compute()
        facts.flush()  # what it kept is its to write: the parent writes only its own
        added = [(k, v) for k, v in notes.items() if k not in before]
        counts = tuple(now - then for now, then in zip(facts.looked_up(), (hits, misses), strict=True))
        data = pickle.dumps((value, added, counts))
        with os.fdopen(pipe, "wb") as out:
            out.write(data)
        return 0
    except BaseException:  # noqa: BLE001 - whatever it was, the parent computes it again and sees it
        return 1


@contextlib.contextmanager
def forked(
    compute: Callable[[], T],
    notes: MutableMapping[str, str],
    worth: bool = True,
    handover: Handover | None = None,
) -> Iterator[Beside[T]]:
    """`Beside(compute, notes)`, its child gone when the block is left; computed here when not `worth` a
    process of its own."""
    started = Beside(compute, notes, worth, handover)
    try:
        yield started
    finally:
        started.close()
