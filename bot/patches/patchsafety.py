"""Refusing unsafe patches: a file change that could write outside the upstream tree, into its repository,
or through a symbolic link or submodule is never applied; a patch file over PATCH_BYTES is never read."""

from __future__ import annotations

import re

from bot.patches.patchfile import FilePatch, PatchError
from bot.repos.snapshot import Snapshot, size_text

PATCH_BYTES = 8 << 20  # the size a carried patch file may have; Ollama's have a few kilobytes

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"
_UNSAFE_MODES = {SYMLINK_MODE: "a symbolic link", GITLINK_MODE: "a submodule"}
_NAMELESS_PARTS = {"", "."}  # path parts that name no file: an empty one (`a//b`, a trailing `/`), `.`


def safety_problem(fp: FilePatch) -> str | None:
    """Why applying this file change would be unsafe, or None."""
    for path in {fp.old_path, fp.new_path} - {None}:
        assert path is not None
        if problem := _path_problem(path):
            return problem
    for mode in (fp.old_mode, fp.new_mode):
        if mode in _UNSAFE_MODES:
            return f"{fp.path!r} is {_UNSAFE_MODES[mode]}"
    return None


def _path_problem(path: str) -> str | None:
    """Why writing `path` could reach outside the upstream tree or into its repository, or None."""
    parts = path.lower().replace("\\", "/").split("/")  # lowered: `.GIT` is `.git` on some file systems
    if re.match(r"[/\\]|[A-Za-z]:", path):
        return f"absolute path {path!r}"
    if ".." in parts:
        return f"path {path!r} leaves the upstream tree ('..')"
    if ".git" in parts:
        return f"path {path!r} writes into .git/"
    if not _NAMELESS_PARTS.isdisjoint(parts) or "\0" in path:
        return f"path {path!r} is not a plain relative path"
    return None


def read_patch(snapshot: Snapshot, path: str) -> bytes:
    """The patch file's bytes (none when there is no such file); a PatchError, before it is read, when it
    is over PATCH_BYTES."""
    _within_cap(path, snapshot.size(path) or 0)
    data = snapshot.read(path) or b""
    _within_cap(path, len(data))  # a snapshot that learns the size only by reading the file
    return data


def _within_cap(path: str, size: int) -> None:
    if size > PATCH_BYTES:
        raise PatchError(
            f"{path} is {size_text(size)}, over the {size_text(PATCH_BYTES)} a carried patch may have"
        )
