"""What happened upstream between two refs: the commits, the files each changed, and which commit
brought a line; and the blobs reading that takes, for a partial clone to fetch first."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygit2

from bot.model import Commit
from bot.snapshot import GitSnapshot, blob_cache

if TYPE_CHECKING:
    from bot.upstream import Upstream

_ZERO = pygit2.Oid(hex="0" * 40)


def needed_blobs(history: History, wanted: Callable[[str], bool]) -> set[pygit2.Oid]:
    """The blobs checking and reviewing old..new reads: both sides of the change between the refs and of every
    commit between them (the review, and commit attribution), and the `wanted` files at both refs."""
    found = _changed_blobs(history)
    repo = history.upstream.repo
    for commit in {history.old.id: history.old, history.new.id: history.new}.values():
        found |= _wanted_blobs(GitSnapshot(repo, commit), wanted)
    found.discard(_ZERO)
    return found


def _changed_blobs(history: History) -> set[pygit2.Oid]:
    """Both sides of every file the change between the refs and each commit between them touch, submodules
    aside (their ids name commits of another repository)."""
    sides = _sides(history.old.tree.diff_to_tree(history.new.tree))
    sides += [side for files in history.file_changes for side in files]
    return {oid for _, oid, mode in sides if mode != pygit2.GIT_FILEMODE_COMMIT}


def _sides(diff: pygit2.Diff) -> list[tuple[str, pygit2.Oid, int]]:
    """Both sides (path, blob id, mode) of every file a diff touches."""
    return [(f.path, f.id, f.mode) for delta in diff.deltas for f in (delta.old_file, delta.new_file)]


def _first_parent_diff(commit: pygit2.Commit) -> pygit2.Diff:
    """A commit's change against its first parent; a root commit's against the empty tree."""
    return commit.parents[0].tree.diff_to_tree(commit.tree) if commit.parents else commit.tree.diff_to_tree()


def _wanted_blobs(snapshot: GitSnapshot, wanted: Callable[[str], bool]) -> set[pygit2.Oid]:
    entries = (snapshot.entry(p) for p in snapshot.files() if wanted(p))
    return {entry.id for entry in entries if entry}


def _meaningful(line: bytes) -> bytes | None:
    """A line worth matching on: whitespace-normalised, and more than a brace or a blank."""
    text = b" ".join(line.split())
    return text if len(text) > 3 else None


@dataclass
class History:
    """The upstream commits between two refs, for attributing changes to them.

    Attribution works like `git log -S` over the lines in question: a commit
    between the refs that touched the file and added one of the lines now
    there, or removed one of the lines that used to be there, changed them.
    Unlike blame this also finds the commit that deleted a patch's context.
    A copy of the file that a partial clone lacks is no evidence either way.
    """

    upstream: Upstream
    old: pygit2.Commit
    new: pygit2.Commit

    def __post_init__(self) -> None:
        self._commits: list[pygit2.Commit] | None = None
        self._file_changes: list[list[tuple[str, pygit2.Oid, int]]] | None = None
        self._touched: list[set[str]] | None = None
        self._touching: dict[str, list[pygit2.Commit]] = {}
        self._changes: dict[tuple[str, str], tuple[set[bytes], set[bytes]]] = {}
        self._lines_now: dict[str, list[bytes]] = {}
        self._blobs = blob_cache(self.upstream.repo)

    @property
    def commits(self) -> list[pygit2.Commit]:
        """Newest first."""
        if self._commits is None:
            walker = self.upstream.repo.walk(self.new.id, pygit2.enums.SortMode.TOPOLOGICAL)
            walker.hide(self.old.id)
            self._commits = list(walker)
        return self._commits

    @property
    def file_changes(self) -> list[list[tuple[str, pygit2.Oid, int]]]:
        """For each of `commits`, both sides (path, blob id, mode) of every file its change against its first
        parent touches: diffed once for the blobs a partial clone fetches and for `touching`."""
        if self._file_changes is None:
            self._file_changes = [_sides(_first_parent_diff(c)) for c in self.commits]
        return self._file_changes

    @property
    def between(self) -> set[str]:
        return {str(c.id) for c in self.commits}

    def read(self, commit: pygit2.Commit, path: str) -> bytes | None:
        """`path` at `commit` (b"" when there is no such file); None when the clone lacks its object, which
        is noted in `upstream.unreadable`."""
        try:
            entry = commit.tree[path]
        except KeyError:
            return b""
        if not isinstance(entry, pygit2.Blob):
            return b""  # a directory or a submodule: no file text
        try:
            return self._blobs.read(entry.id)
        except KeyError:
            self.upstream.note_unreadable(path, str(commit.id))
            return None

    def touching(self, path: str) -> list[pygit2.Commit]:
        """Commits between the refs that changed `path` (against their first parent), newest first."""
        if self._touched is None:
            self._touched = [{p for p, _, _ in files} for files in self.file_changes]
        if path not in self._touching:
            self._touching[path] = [c for c, paths in zip(self.commits, self._touched) if path in paths]
        return self._touching[path]

    def _changed_lines(self, commit: pygit2.Commit, path: str) -> tuple[set[bytes], set[bytes]]:
        key = (str(commit.id), path)
        if key not in self._changes:
            before = self.read(commit.parents[0], path) if commit.parents else b""
            after = self.read(commit, path)
            if before is None or after is None:  # the clone lacks one: no evidence either way
                self._changes[key] = (set(), set())
            else:
                self._changes[key] = _line_changes(before, after)
        return self._changes[key]

    def commits_for_lines(
        self, path: str, start: int, end: int, removed: Iterable[bytes] = ()
    ) -> list[Commit]:
        """Commits between the refs that changed lines start..end (1-based) of `path` at the new ref,
        or that removed any of `removed` (lines that used to be there)."""
        touching = self.touching(path)
        if not touching:
            return []
        now = _meaningful_set(self._lines_at_new(path)[max(0, start - 1) : max(0, end)])
        gone = _meaningful_set(removed)
        found = []
        for commit in touching:
            added, deleted = self._changed_lines(commit, path)
            if added & now or deleted & gone:
                found.append(self.upstream.describe(commit))
        return found

    def _lines_at_new(self, path: str) -> list[bytes]:
        if path not in self._lines_now:
            self._lines_now[path] = (self.read(self.new, path) or b"").split(b"\n")
        return self._lines_now[path]


def _meaningful_set(lines: Iterable[bytes]) -> set[bytes]:
    return {t for t in map(_meaningful, lines) if t}


def _line_changes(before: bytes, after: bytes) -> tuple[set[bytes], set[bytes]]:
    """The meaningful lines the change from `before` to `after` adds, and those it removes."""
    added: set[bytes] = set()
    removed: set[bytes] = set()
    # Both buffers must stay referenced while the patch's lines are read: libgit2 points into them.
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    for line in (line for hunk in patch.hunks for line in hunk.lines):
        text = _meaningful(line.raw_content)
        if text is not None:
            (added if line.origin == "+" else removed).add(text)
    return added, removed
