"""What every patch of one pin is checked against, and what placing one file of a patch found."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pygit2

from bot.cache import facts
from bot.config import Pin
from bot.model import Commit, HunkResult
from bot.patches.patchfile import FilePatch, Hunk
from bot.patches.tree import Tree
from bot.repos.history import History
from bot.repos.upstream import Upstream

OpenUpstream = Callable[[Pin, list[str]], Upstream]


@dataclass
class PinContext:
    """What every patch of one pin is checked against."""

    pin: Pin
    upstream: Upstream
    history: History
    new_ref: str
    old_tree: Tree | None
    new_tree: Tree
    local_sources: dict[str, bytes] = field(default_factory=dict)  # Ollama's own files beside the patches
    binary_bytes: int = 0  # binary data the patches checked so far carry (binarypatch.BINARY_BYTES in all)
    # What the stacked trees hold, as one id: the upstream commits and each patch checked on them so far
    # (only checking a patch changes them); with the patch, what checking the next one depends on.
    stacked: str = ""

    def __post_init__(self) -> None:
        if not self.stacked:
            old = str(self.history.old.id) if self.old_tree is not None else "none"
            local = sorted((path, facts.bytes_id(data)) for path, data in self.local_sources.items())
            self.stacked = facts.text_id(f"{old}:{self.history.new.id}:{local}")

    def stack(self, path: str, data: bytes) -> None:
        """The patch `data` at `path` was checked: the stacked trees hold what it changed."""
        self.stacked = facts.text_id(f"{self.stacked}:{path}:{facts.bytes_id(data)}")

    def old_blob(self, fp: FilePatch) -> bytes | None:
        """The file the patch was written against: the old stacked tree, else the `index` line's blob."""
        if self.old_tree is not None and fp.old_path:
            data = self.old_tree.read(fp.old_path)
            if data is not None:
                return data
        return self._index_blob(fp.index_old)

    def _index_blob(self, index: str | None) -> bytes | None:
        """The blob an `index` line names, when upstream's repository has it; none for a missing or
        all-zero id, or one too short to look up."""
        if not index or len(index) < 4 or set(index) == {"0"}:
            return None
        try:
            obj = self.upstream.repo.revparse_single(index)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return obj.data if isinstance(obj, pygit2.Blob) else None

    def stacked_file(self, fp: FilePatch) -> bytes | None:
        """The file the patch changes as the stacked new tree has it before the patch; None for a new file."""
        return self.new_tree.read(fp.old_path) if fp.old_path else None

    def commits_near(self, path: str | None, line: int, length: int, hunk: Hunk) -> list[Commit]:
        """Upstream commits that changed the hunk's surroundings: lines there now, or its old context."""
        if not path:
            return []
        return self.history.commits_for_lines(path, line - 3, line + length + 3, hunk.before)


@dataclass
class FileOutcome:
    fp: FilePatch
    status: str  # clean|offset|merged|relocated|conflict
    changes: dict[str, bytes | None]
    hunks: list[HunkResult]
    reason: str = ""

    def placed_text(self, changes: dict[str, bytes | None]) -> bytes | None:
        """The placed text file as `changes` has it; None for a binary or deleted file."""
        return changes.get(self.fp.new_path) if self.fp.new_path and not self.fp.is_binary else None


def note(outcome: FileOutcome, line: int, note: str, commits: list[Commit] | None = None) -> None:
    """A note on the hunk of the outcome that holds 0-based `line` of the new file, with the upstream
    commits behind it; the hunk and the file no longer apply as they are."""
    hunk = max(
        (h for h in outcome.hunks if h.new_line - 1 <= line),
        key=lambda h: h.new_line,
        default=outcome.hunks[0],
    )
    hunk.status = "relocated"
    hunk.detail = "; ".join(filter(None, [hunk.detail, note]))
    hunk.upstream_commits += [c for c in commits or [] if c not in hunk.upstream_commits]
    outcome.status = "relocated"


def commits_at(ctx: PinContext, path: str, lines: list[int], removed: Iterable[bytes] = ()) -> list[Commit]:
    return ctx.history.commits_for_lines(path, min(lines), max(lines), removed) if lines else []
