"""What `check` and `regenerate` compare: two commits of an Ollama repository, and its configuration."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pygit2

from bot.cli.console import UsageError
from bot.config import Config, load_config
from bot.repos.snapshot import GitSnapshot


@dataclasses.dataclass(frozen=True)
class Change:
    """Two commits of the Ollama repository and the configuration that judges them."""

    repo: pygit2.Repository
    head: pygit2.Commit
    base: pygit2.Commit
    base_label: str  # how the base was chosen: "--base REV" or "the merge-base with origin/main"
    head_label: str
    config: Config

    @property
    def compared(self) -> str:
        return f"{str(self.base.id)[:12]} ({self.base_label}) .. {str(self.head.id)[:12]} ({self.head_label})"

    def changed_paths(self) -> set[str]:
        diff = self.base.tree.diff_to_tree(self.head.tree)
        return {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}


def open_change(args: argparse.Namespace) -> Change:
    """The repository, the head and base commits, and the configuration.

    The configuration comes from the base, the CLI's stand-in for the default branch:
    a change cannot reconfigure the check that judges it.
    """
    repo = open_repo(args.repo)
    head = commit_at(repo, args.head, "--head")
    base, label = _base(repo, head, args.base)
    return Change(repo, head, base, label, args.head, load_config(GitSnapshot(repo, base)))


def open_repo(path: str) -> pygit2.Repository:
    try:
        return pygit2.Repository(path)
    except (pygit2.GitError, KeyError):
        raise UsageError(f"--repo {path}: not a git repository") from None


def commit_at(repo: pygit2.Repository, rev: str, option: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise UsageError(f"{option} {rev}: unknown revision") from None


def _base(repo: pygit2.Repository, head: pygit2.Commit, rev: str | None) -> tuple[pygit2.Commit, str]:
    """The base commit and how it was chosen, for messages that say what was compared."""
    if rev is not None:
        return commit_at(repo, rev, "--base"), f"--base {rev}"
    for candidate in ("origin/main", "main"):
        try:
            other = repo.revparse_single(candidate).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        merge_base = repo.merge_base(head.id, other.id)
        if merge_base is not None:
            return repo[merge_base].peel(pygit2.Commit), f"the merge-base with {candidate}"
    raise UsageError("no --base given and neither origin/main nor main shares history with --head")


def working_tree(repo: pygit2.Repository) -> Path | None:
    """The repository's working tree; None for a bare one, and for a git directory without `core.bare` (a
    bare clone copied without its config), which libgit2 takes for a working tree's and git for bare: a
    working tree holds a `.git` entry unless the config names it (`core.worktree`)."""
    if repo.workdir is None:
        return None
    root = Path(repo.workdir)
    return root if (root / ".git").exists() or "core.worktree" in repo.config else None


def uncommitted(repo: pygit2.Repository, config: Config) -> list[str]:
    """Working-tree changes to any pin's version file or patches.

    `regenerate` analyses the committed revision but writes the working tree, so it
    would overwrite an edited patch or ignore an uncommitted version bump.
    """
    ignored = pygit2.enums.FileStatus.IGNORED
    return sorted(
        path
        for path, flags in repo.status().items()
        if flags != pygit2.enums.FileStatus.CURRENT
        and not flags & ignored
        and config.touched_pins({path}, also_watch=False)
    )


def shown(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
