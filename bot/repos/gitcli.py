"""The git CLI as the mirrors use it: fetches whose remote URL lives only in git's environment, progress
read from git's own counting lines, and errors as git's one-line reason, every URL without credentials."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO

from bot.child.environment import working_environment
from bot.child.sandbox import unlimited_memory

log = logging.getLogger("bot.upstream")  # the mirrors' log: a fetch's progress is part of their story

REMOTE = "origin"  # the mirror's promisor remote; its URL lives only in the environment of each git run
FETCH_TIMEOUT = 600  # seconds for one git fetch (refs, or a partial clone's missing blobs)
PROGRESS_AFTER = 2.0  # seconds a fetch runs silently before its progress is shown
PROGRESS_EVERY = 5.0  # seconds between progress lines after that
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")
NO_SPACE = "No space left on device"  # strerror(ENOSPC), as git and libgit2 say it
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that started it ends
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def public_url(text: str) -> str:
    """`text` with the user and password taken out of every URL in it: what links, logs and messages show."""
    return _USERINFO.sub(r"\1", text)


def in_public(text: str, url: str, shown: str) -> str:
    """`text` with the URL fetched from, `url`, named `shown` (the pin's own URL, as configured), and no
    credentials: what LLAMA_BOT_URL_INSTEADOF made of the pin's URL is this server's, like its paths."""
    for form in sorted({url, public_url(url), url.removeprefix("file://")}, key=len, reverse=True):
        text = text.replace(form, shown) if form else text
    return public_url(text)


def git_error(stderr: str) -> str:
    """git's own reason from its stderr: the line saying the disk is full, else the first `fatal:`/`error:`
    line, else the first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    reason = next((line for line in lines if NO_SPACE in line), None) or next(
        (line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else ""
    )
    return public_url(re.sub(r"^(fatal|error): ", "", reason)) or "no reason given"


_COUNTING = re.compile(r"^(?:remote: )?[A-Z][A-Za-z ]+: +\d+")


def latest_progress(stderr: str) -> str | None:
    """The last of git's counting lines in what it wrote so far (`Receiving objects:  45% (450/1000), 1.20
    MiB | 2.00 MiB/s`): git redraws them with carriage returns, the newest says where the fetch is."""
    for line in reversed(re.split(r"[\r\n]", stderr)):
        line = line.strip()
        if _COUNTING.match(line):
            return public_url(line)
    return None


def git_env(url: str | None) -> dict[str, str]:
    """git's environment: no prompt, no credential helper storing the URL's password, and the remote's URL
    as configuration that lives only in this process's environment (GIT_CONFIG_COUNT), never on disk."""
    env = {**working_environment(), "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    if url is not None:
        index = int(env.get("GIT_CONFIG_COUNT") or 0)
        env.update(
            {
                "GIT_CONFIG_COUNT": str(index + 1),
                f"GIT_CONFIG_KEY_{index}": f"remote.{REMOTE}.url",
                f"GIT_CONFIG_VALUE_{index}": url,
            }
        )
    return env


def fetch_command(git_dir: str, *args: str) -> list[str]:
    """`git fetch` into `git_dir` without side work: automatic gc would repack under libgit2's feet, and a
    credential helper would store the password of a URL that carries one."""
    return [
        "git",
        "--git-dir",
        git_dir,
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "-c",
        "credential.helper=",
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--progress",
        *args,
    ]


def dies_with_this_process(
    told: signal.Signals = signal.SIGKILL, lift_memory: bool = False
) -> Callable[[], None]:
    """What a git does before it runs (`preexec_fn`): it is sent `told` when the process starting it ends,
    even by SIGKILL (Linux), and ends at once when that process ended before it could ask; with
    `lift_memory`, without the analysis's memory limit (a fetch's input is the upstream's)."""
    parent = os.getpid()

    def prepare() -> None:
        if lift_memory:
            unlimited_memory()
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, told)
        if os.getppid() != parent:
            os._exit(128 + told)

    return prepare


def _led_by_a_shell(command: list[str], hold: tuple[int, ...]) -> list[str]:
    """`command` run by a shell that leads its process group: told SIGTERM when the process that started it
    ends, the shell kills the whole group (git's helpers with git, which a SIGKILL of git alone would leave
    running); otherwise it waits for git and ends with its status. git's input is handed on through a
    spare descriptor (one `hold` does not use): a command run in the background would read /dev/null."""
    spare = next(fd for fd in range(3, 10) if fd not in hold)
    script = f'exec {spare}<&0; trap "kill -KILL 0" TERM; "$@" 0<&{spare} {spare}<&- & wait $!'
    return ["sh", "-c", script, "sh", *command]


def run_git(
    command: list[str],
    env: dict[str, str],
    what: str,
    stdin: str = "",
    progress: Callable[[str], None] | None = None,
    output: IO[bytes] | None = None,
    hold: tuple[int, ...] = (),
) -> tuple[int, str]:
    """Run git, and when it takes longer than PROGRESS_AFTER, tell `progress` (and the log) every
    PROGRESS_EVERY seconds how long it has run and git's latest object counts. Returns git's exit status
    (-1 when it could not start or took longer than FETCH_TIMEOUT) and its stderr; its stdout goes to
    `output` (a file, so that its size can be judged before it is read), else nowhere.

    git runs in a process group of its own, killed whole when it runs out of time or when this process
    ends, however it ends (`_led_by_a_shell`). It inherits the descriptors `hold` (a mirror's lock):
    whatever of it might outlive this process keeps the lock held, so that nobody cleans up what it still
    writes."""
    if shutil.which(command[0], path=env.get("PATH", os.defpath)) is None:
        return -1, "fatal: git is not installed"
    proc = subprocess.Popen(
        _led_by_a_shell(command, hold),
        stdin=subprocess.PIPE,
        stdout=output if output is not None else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        process_group=0,
        pass_fds=hold,
        # Fetches run in single-threaded processes (the CLI, the analysis child), where this is safe.
        preexec_fn=dies_with_this_process(signal.SIGTERM, lift_memory=True),  # noqa: PLW1509
    )
    chunks: list[bytes] = []
    assert proc.stderr is not None and proc.stdin is not None
    fd = proc.stderr.fileno()  # read what git has written so far, as it comes: its progress lines
    reader = threading.Thread(
        target=lambda: chunks.extend(iter(lambda: os.read(fd, 65536), b"")), daemon=True
    )
    reader.start()
    try:
        _write_input(proc, stdin)
        ended = _waited(proc, what, chunks, progress)
    finally:
        if proc.poll() is None:  # out of time, or this thread was interrupted: not reaped, so still its group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join()
    if not ended:
        return -1, f"fatal: {what} took longer than {FETCH_TIMEOUT} s"
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def _write_input(proc: subprocess.Popen, stdin: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except BrokenPipeError:  # git ended before reading: its stderr says why
        pass


def _waited(
    proc: subprocess.Popen, what: str, chunks: list[bytes], progress: Callable[[str], None] | None
) -> bool:
    """Wait for git to end, saying how it gets on after PROGRESS_AFTER and every PROGRESS_EVERY seconds
    from then on; False when it still runs after FETCH_TIMEOUT."""
    started = time.monotonic()
    shown_at = started + PROGRESS_AFTER
    while True:
        now = time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(shown_at, started + FETCH_TIMEOUT) - now))
            return True
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if now >= started + FETCH_TIMEOUT:
                return False
            counts = latest_progress(b"".join(chunks).decode(errors="replace"))
            line = f"still {what} ({now - started:.0f} s): {counts or 'waiting for the upstream'}"
            log.info(line)
            if progress is not None:
                progress(line)
            shown_at = now + PROGRESS_EVERY


def fetch_blobs(
    git_dir: str,
    oids: list[str],
    remote: str,
    url: str | None = None,
    progress: Callable[[str], None] | None = None,
    hold: tuple[int, ...] = (),
) -> str | None:
    """Fetch `oids` from `remote` (at `url` when the repository does not record it) into `git_dir` in one
    request, as git's lazy fetch of a partial clone does, git holding `hold` (`run_git`); None when git
    succeeded, else why not."""
    command = fetch_command(git_dir, "--filter=blob:none", "--stdin", "--", remote)
    command[3:3] = ["-c", "fetch.negotiationAlgorithm=noop"]  # blobs by id: no history to negotiate
    code, stderr = run_git(
        command,
        git_env(url),
        f"fetching {len(oids)} blobs",
        "".join(f"{o}\n" for o in oids),
        progress,
        hold=hold,
    )
    if code != 0:
        return f"git fetch from the remote {remote!r} failed: {git_error(stderr)}"
    return None


def missing_remote_ref(stderr: str) -> str | None:
    """The ref git says the remote lacks (`couldn't find remote ref refs/tags/b999`), else None."""
    found = re.search(r"couldn't find remote ref (\S+)", stderr)
    return found[1] if found else None


def ref_specs(refs: list[str], by_id: bool) -> list[str]:
    """The refspecs that bring `refs` into a repository: each tag by name, and each commit id either by id
    (kept under refs/llama-bot/pinned/, so it stays reachable: in a store of pinned commits, not the
    mirror) or, when `by_id` is off, through every branch, since it is on one of them."""
    specs = [f"+refs/tags/{r}:refs/tags/{r}" for r in refs if not is_commit_id(r)]
    ids = [r for r in refs if is_commit_id(r)]
    if by_id:
        specs += [f"+{r}:refs/llama-bot/pinned/{r}" for r in ids]
    elif ids:
        specs.append("+refs/heads/*:refs/heads/*")
    return specs


def is_commit_id(ref: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{40}", ref) is not None
