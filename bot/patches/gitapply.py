"""The real `git apply`, as the last word on a patch stack before the report calls it good.

The engine places hunks itself; this runs git's own apply over the stack it produced, on the new
upstream's copies of the files the patches touch, so that a rebuilt patch is never reported
applicable when CMake's `git apply` would refuse it.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from bot.model import AnalysisError

TIMEOUT = 60  # seconds for one `git apply`: it reads a few files


def refusals(files: dict[str, bytes], stack: list[tuple[str, bytes]]) -> dict[str, str]:
    """Apply `stack` (patch path, text) in order with `git apply` to `files` (path -> content at the
    upstream ref); the patches git refuses, each with the first line git gives. A refused patch is
    left out and the next ones go on the tree as it then is, as a later patch would be checked."""
    refused: dict[str, str] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="llama-bot-apply-") as work:
            root = Path(work) / "tree"
            root.mkdir()
            for path, data in files.items():
                _write(root / path, data)
            for index, (path, text) in enumerate(stack):
                patch = Path(work) / f"{index}.patch"
                _write(patch, text)
                why = _apply(root, patch)
                if why is not None:
                    refused[path] = why
    except OSError as exc:
        raise AnalysisError(f"cannot check the patches with git apply: {exc.strerror or exc}") from None
    return refused


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)


def _apply(root: Path, patch: Path) -> str | None:
    """None when git applied the patch in `root`, else git's first line of complaint."""
    env = {
        **os.environ,
        "GIT_CEILING_DIRECTORIES": str(root.parent),
        "LC_ALL": "C",
    }  # not inside a repository
    for args in (["--check"], []):
        try:
            done = subprocess.run(
                ["git", "apply", *args, str(patch)],
                cwd=root,
                env=env,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"git apply could not run ({exc})"
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            return lines[0] if lines else f"git apply exited {done.returncode}"
    return None
