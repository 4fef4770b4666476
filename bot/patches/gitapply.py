"""The real `git apply`, as the last word on a patch stack before the report calls it good.

The engine places hunks itself; this runs git's own apply over the stack it produced, on the new
upstream's copies of the files the patches touch, so that a rebuilt patch is never reported
applicable when CMake's `git apply` would refuse it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from bot.cache import facts
from bot.child.environment import working_environment
from bot.model import AnalysisError
from bot.repos.gitcli import dies_with_this_process

TIMEOUT = 60  # seconds for one `git apply`: it reads a few files


# What git says of a stack depends on the patches' texts, the files they go on and git itself alone: kept by
# those, a re-check of the same stack runs no git.
REFUSALS = facts.Extractor("git-apply-refusals", 1, __name__)


def refusals(files: dict[str, bytes], stack: list[tuple[str, bytes]]) -> dict[str, str]:
    """Apply `stack` (patch path, text) in order with `git apply` to `files` (path -> content at the
    upstream ref); the patches git refuses, each with the first line git gives. A refused patch is
    left out and the next ones go on the tree as it then is, as a later patch would be checked."""
    key = (
        _git_identity(),
        *(f"{path}:{facts.bytes_id(data)}" for path, data in sorted(files.items())),
        "stack",
        *(f"{path}:{facts.bytes_id(text)}" for path, text in stack),
    )
    found, kept = facts.get(REFUSALS, key)
    if found:
        return kept
    refused, every_one_ran = _refusals(files, stack)
    if every_one_ran:  # a git that could not run (or ran out of time) says nothing of the patches
        facts.put(REFUSALS, key, refused)
    return refused


@cache
def _git_identity() -> str:
    """The git that runs: its resolved path, size and time (another git may say otherwise)."""
    found = shutil.which("git")
    real = os.path.realpath(found) if found else None
    try:
        stat = os.stat(real) if real else None
    except OSError:  # gone since: it will not run, and a verdict is kept only when git ran
        stat = None
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}" if stat else "no git"


def _refusals(files: dict[str, bytes], stack: list[tuple[str, bytes]]) -> tuple[dict[str, str], bool]:
    """The refusals, and whether git ran to its end on every patch."""
    refused: dict[str, str] = {}
    every_one_ran = True
    try:
        with tempfile.TemporaryDirectory(prefix="llama-bot-apply-") as work:
            root = Path(work) / "tree"
            root.mkdir()
            for path, data in files.items():
                _write(root / path, data)
            for index, (path, text) in enumerate(stack):
                patch = Path(work) / f"{index}.patch"
                _write(patch, text)
                why, ran = _apply(root, patch)
                every_one_ran &= ran
                if why is not None:
                    refused[path] = why
    except OSError as exc:
        raise AnalysisError(f"cannot check the patches with git apply: {exc.strerror or exc}") from None
    return refused, every_one_ran


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)


def _apply(root: Path, patch: Path) -> tuple[str | None, bool]:
    """None when git applied the patch in `root`, else git's first line of complaint (`git apply` is all
    or nothing: a refused patch leaves the tree as it was); and whether git ran to its end."""
    env = {
        **working_environment(),
        "GIT_CEILING_DIRECTORIES": str(root.parent),  # not inside a repository
        "GIT_CONFIG_NOSYSTEM": "1",  # git's own defaults, as a build machine's git has them
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
    }
    try:
        done = subprocess.run(
            ["git", "apply", str(patch)],
            cwd=root,
            env=env,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
            preexec_fn=dies_with_this_process(),  # the analysis killed, its git apply goes too
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git apply could not run ({exc})", False
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return (lines[0] if lines else f"git apply exited {done.returncode}"), True
    return None, True
