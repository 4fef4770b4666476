"""Test helpers at the git edge: scenarios as real repositories, and real `git apply` checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Report
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder


def make_patch(old: str | bytes, new: str | bytes, path: str, context: int = 3) -> bytes:
    def b(x):
        return x.encode() if isinstance(x, str) else x

    # Both buffers must stay referenced while the patch's text is read: libgit2 points into them.
    before, after = b(old), b(new)
    return pygit2.Patch.create_from(before, after, path, path, context_lines=context).data


def upstream_pair(tmp: Path, old_files: dict, new_files: dict, name: str = "up.git") -> RepoBuilder:
    """An upstream with tag v1 = old_files and, one commit later, tag v2 = old_files updated by new_files."""
    up = RepoBuilder(tmp / name)
    up.commit("base", old_files)
    up.tag("v1")
    up.commit("upstream moves things (#4242)", new_files)
    up.tag("v2")
    return up


def run(
    up: RepoBuilder,
    patches: dict[str, bytes],
    old_ref: str | None = "v1",
    new_ref: str = "v2",
    review: bool = False,
) -> Report:
    """Analyse a PR bumping LLAMA_CPP_VERSION from old_ref to new_ref with these carried patches."""
    base = {"LLAMA_CPP_VERSION": f"{old_ref}\n".encode()} if old_ref else {}
    head = {"LLAMA_CPP_VERSION": f"{new_ref}\n".encode(), **patches}
    config = parse_config(None)
    return analyse(
        config,
        MemorySnapshot({**base, **patches}),
        MemorySnapshot(head),
        lambda pin, refs: Upstream(up.repo, pin.upstream),
        ["LLAMA_CPP_VERSION"],
        review=review,
    )


def git_apply_stack(upstream: Path, ref: str, patches: list[bytes], work: Path) -> None:
    """Check out `ref` and apply the patches in order with the real `git apply` (raises on failure)."""
    subprocess.run(["git", "clone", "-q", str(upstream), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", ref], check=True)
    for i, patch in enumerate(patches):
        p = work.parent / f"{work.name}-{i}.patch"
        p.write_bytes(patch)
        subprocess.run(["git", "-C", str(work), "apply", "--check", str(p)], check=True, capture_output=True)
        subprocess.run(["git", "-C", str(work), "apply", str(p)], check=True, capture_output=True)
