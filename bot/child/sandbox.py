"""One analysis in a child process, held to an address-space limit and a wall-time limit.

A pull request's patches, CMake files and version files are hostile input: whatever they make the engine
do, it does in a child whose memory the kernel caps (RLIMIT_AS) and which this process kills at the
deadline or when it is told to stop. The child asks this process for what it may not hold itself (the
service's GitHub reads) and tells it what it is doing (`bot.child.activity`), so a stopped analysis is
reported as one sentence naming the limit and the step it was on.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, TypeVar

import pygit2

from bot.child import activity
from bot.child.environment import working_environment
from bot.model import AnalysisError

T = TypeVar("T")

MIN_MEMORY_MB = 256  # below this the engine's working memory on a real bump does not fit
POLL_SECONDS = 0.2  # how often the parent looks at the clock and its stop flag while the child is silent
# libgit2 keeps windows of the pack files mapped as a cache, and every page it reads through them counts in
# the process's resident memory: a few small windows (re-read from the page cache when dropped) keep a long
# jump, which reads blobs all over the pack, from holding tens of MB of them (b9452 -> b10587: peak RSS 314
# -> 283 MB, the same time). They also count against the address-space limit.
PACK_WINDOW = 8 << 20
PACK_MAPPED = 32 << 20


@dataclass(frozen=True)
class Limits:
    """How much one analysis may take, and what a person changes to give it more (named in the message)."""

    memory_mb: int = 1024
    timeout: float = 600.0
    memory_setting: str = "LLAMA_BOT_ANALYSIS_MEMORY_MB"
    timeout_setting: str = "LLAMA_BOT_ANALYSIS_TIMEOUT"

    def out_of_time(self, doing: str) -> str:
        return (
            f"The analysis stopped after {self.timeout:g} s (its time limit, {self.timeout_setting}) "
            f"while {doing}."
        )

    def out_of_memory(self, doing: str) -> str:
        return (
            f"The analysis stopped at its memory limit of {self.memory_mb} MB ({self.memory_setting}) "
            f"while {doing}."
        )


DEFAULT_LIMITS = Limits()


class LimitExceeded(AnalysisError):
    """The analysis passed its memory or time limit; the message says which, and what it was doing."""


class Stopped(Exception):
    """The service is stopping: the child was killed and its work goes back to the queue."""


class ChildFailed(Exception):
    """The child raised what is not an AnalysisError (a bug): its traceback is in `child_traceback`, and the
    exception itself in `original` when it could cross the process boundary."""

    def __init__(self, message: str, child_traceback: str, original: BaseException | None = None):
        super().__init__(message)
        self.child_traceback = child_traceback
        self.original = original


class AskFailed(Exception):
    """In the child: the parent could not answer (it keeps the reason, and raises it when the child ends), or
    a forked copy of the child asked."""


class Channel:
    """The child's end: questions the parent answers, and notes it hears without answering. Only the child
    uses it: a copy of the child forked later (`bot.review.beside`) would interleave its messages with the
    child's on the one pipe, so there a question fails and a note is dropped."""

    def __init__(self, conn: Connection):
        self._conn = conn
        self._pid = os.getpid()

    def ask(self, *question: Any) -> Any:
        if os.getpid() != self._pid:
            raise AskFailed(f"a forked copy of the analysis cannot ask for {question[:1]}")
        self._conn.send(("ask", question))
        kind, answer = self._conn.recv()
        if kind != "answer":
            raise AskFailed(answer)
        return answer

    def tell(self, *note: Any) -> None:
        if os.getpid() == self._pid:
            self._conn.send(("note", note))


@dataclass
class _Supervision:
    """What the parent learns from one child while it runs."""

    doing: str = "starting the analysis"
    failure: BaseException | None = None  # the first exception answering the child raised


def run_limited(
    target: Callable[[Channel], T],
    limits: Limits,
    *,
    start_method: str = "fork",
    answer: Callable[[tuple], Any] | None = None,
    hear: Callable[[tuple], None] | None = None,
    stop: threading.Event | None = None,
) -> T:
    """`target(channel)` run in a child process within `limits`; its result, or its AnalysisError.

    `answer` replies to what the child asks, `hear` takes its notes; both run in the calling thread.
    Past the time limit, or once `stop` is set, the child and everything it started are killed.
    `start_method` is "fork" from a single-threaded program (the CLI) and "forkserver" from the service,
    whose threads a fork would copy in the middle of whatever they hold.
    """
    context: Any = multiprocessing.get_context(start_method)
    parent_end, child_end = context.Pipe()
    # the caller's environment as it is now (a forkserver started earlier would hand down its own, older
    # one), without what the child has no use for
    environment = working_environment()
    process = context.Process(
        target=_child, args=(child_end, target, limits.memory_mb, environment), daemon=True
    )
    process.start()
    child_end.close()
    try:
        return _supervise(process, parent_end, limits, answer, hear, stop)
    finally:
        _kill(process)
        parent_end.close()


def _supervise(
    process: Any,
    conn: Connection,
    limits: Limits,
    answer: Callable[[tuple], Any] | None,
    hear: Callable[[tuple], None] | None,
    stop: threading.Event | None,
) -> Any:
    """Serve the child until it sends its result or ends, or the deadline or a stop comes."""
    deadline = time.monotonic() + limits.timeout
    seen = _Supervision()
    while True:
        left = deadline - time.monotonic()
        if stop is not None and stop.is_set():
            raise Stopped(f"stopped while {seen.doing}")
        if left <= 0:
            raise LimitExceeded(limits.out_of_time(seen.doing))
        ready = wait([conn, process.sentinel], timeout=min(POLL_SECONDS, left))
        if conn in ready:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                raise _ended(process, limits, seen) from None
            done, result = _handle(message, conn, limits, seen, answer, hear)
            if done:
                return result
        elif process.sentinel in ready:
            raise _ended(process, limits, seen)


def _handle(
    message: tuple,
    conn: Connection,
    limits: Limits,
    seen: _Supervision,
    answer: Callable[[tuple], Any] | None,
    hear: Callable[[tuple], None] | None,
) -> tuple[bool, Any]:
    """One message from the child: (True, result) when it is the last."""
    kind, body = message
    if kind == "doing":
        seen.doing = body
    elif kind == "note" and hear is not None:
        hear(body)
    elif kind == "ask":
        with contextlib.suppress(OSError):  # the child is gone: its last words, if any, are read next
            conn.send(_answered(body, answer, seen))
    elif kind == "result":
        _raise_failure(seen)
        return True, body
    elif kind == "error":
        _raise_failure(seen)
        raise AnalysisError(body)
    elif kind == "memory":
        raise LimitExceeded(limits.out_of_memory(body or seen.doing))
    elif kind == "crash":
        _raise_failure(seen)
        raise ChildFailed(*body)
    return False, None


def _answered(question: tuple, answer: Callable[[tuple], Any] | None, seen: _Supervision) -> tuple[str, Any]:
    """The reply to one question; a failure to answer is kept, and raised in this process at the end, so
    the caller sees the same exception it would have seen reading in process (a GitHub error is retried)."""
    if answer is None:
        return "failed", "nothing here answers questions"
    try:
        return "answer", answer(question)
    except Exception as exc:  # noqa: BLE001 (kept and raised once the child ends)
        if seen.failure is None:
            seen.failure = exc
        return "failed", f"{type(exc).__name__}"


def _raise_failure(seen: _Supervision) -> None:
    if seen.failure is not None:
        raise seen.failure


def _ended(process: Any, limits: Limits, seen: _Supervision) -> BaseException:
    """Why a child that ended without its result ended."""
    process.join(5)
    if seen.failure is not None:
        return seen.failure
    code = process.exitcode
    if (
        code is not None
        and code < 0
        and -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)
    ):
        # a native library that cannot allocate under RLIMIT_AS aborts or faults instead of raising
        return LimitExceeded(limits.out_of_memory(seen.doing))
    how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"status {code}"
    return AnalysisError(f"The analysis process ended with {how} while {seen.doing}.")


def _kill(process: Any) -> None:
    """The child and whatever it started (its process group: a git fetch) are gone when this returns."""
    if process.is_alive():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    process.join()


# -- the child --


def _child(
    conn: Connection, target: Callable[[Channel], Any], memory_mb: int, environment: dict[str, str]
) -> None:
    """The child's whole life: its own process group, the caller's environment, its limits, the target,
    one last message."""
    os.setpgid(0, 0)
    os.environ.clear()
    os.environ.update(environment)
    _die_with_parent()
    _limit_memory(memory_mb)
    activity.listen(lambda what: conn.send(("doing", what)))
    last: tuple
    try:
        last = ("result", target(Channel(conn)))
    except MemoryError:
        last = ("memory", None)
    except AnalysisError as exc:
        last = ("error", str(exc))
    except BaseException as exc:  # noqa: BLE001 (a bug: the parent raises it with this traceback)
        last = ("crash", (f"{type(exc).__name__}: {exc}", traceback.format_exc(), _portable(exc)))
    try:
        conn.send(last)
    except MemoryError:  # the result itself does not fit under the limit
        conn.send(("memory", "sending the report"))
    except pickle.PicklingError as exc:
        conn.send(("crash", (f"the report could not be sent: {exc}", "")))
    conn.close()


def _portable(exc: BaseException) -> BaseException | None:
    """`exc` when it pickles (without its traceback), else None."""
    try:
        pickle.dumps(exc)
    except Exception:  # noqa: BLE001 (any exception may refuse pickling in its own way)
        return None
    return exc


def _limit_memory(memory_mb: int) -> None:
    """The address-space limit: what the analysis may add to the address space its process starts with (a
    child forked from a larger program inherits that program's mappings, which the analysis did not make).
    Soft, so a git fetch may lift it (its input is the upstream's); libgit2's pack mappings kept small."""
    limit = _address_space() + (memory_mb << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(
        resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
    )
    pygit2.settings.mwindow_size = min(PACK_WINDOW, (memory_mb << 20) // 32)
    pygit2.settings.mwindow_mapped_limit = min(PACK_MAPPED, (memory_mb << 20) // 8)


def _address_space() -> int:
    """This process's address space now, in bytes (0 where /proc does not say)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0
    sizes = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmSize:")]
    return sizes[0] << 10 if sizes else 0


def unlimited_memory() -> None:
    """For a child's own subprocess that may need more (a git fetch): the soft limit back to the hard."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def _die_with_parent() -> None:
    """A child whose parent is killed (kill -9 of the service) does not run on alone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
