"""What happened upstream between two refs: the commits, the files each changed, and which commit
brought a line; and the blobs reading that takes, for a partial clone to fetch first."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from bot.cache import facts
from bot.model import Commit
from bot.repos.snapshot import GitSnapshot, blob_cache

if TYPE_CHECKING:
    from bot.repos.upstream import Upstream

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
    old, new = history.old.tree, history.new.tree
    stored = facts.remembered(
        TREE_SIDES,
        (str(old.id), str(new.id)),
        lambda: [(p, str(oid), int(mode)) for p, oid, mode in _sides(old.diff_to_tree(new))],
    )
    sides = [(p, pygit2.Oid(hex=oid), mode) for p, oid, mode in stored]
    sides += [side for files in history.file_changes for side in files]
    return {oid for _, oid, mode in sides if mode != pygit2.GIT_FILEMODE_COMMIT}


def _sides(diff: pygit2.Diff) -> list[tuple[str, pygit2.Oid, int]]:
    """Both sides (path, blob id, mode) of every file a diff touches."""
    return [(f.path, f.id, f.mode) for delta in diff.deltas for f in (delta.old_file, delta.new_file)]


# What each commit between two refs changes, as `History.file_changes` gives it: it never changes, so a
# re-check of the same refs diffs no commit again (on b10091 -> b10242, 151 diffs: 0.1 s).
COMMIT_FILES = facts.Extractor("commit-files", 1, __name__)
# The same of the two refs' trees: a re-check of them diffs no tree to list the blobs a partial clone fetches.
TREE_SIDES = facts.Extractor("tree-change-sides", 1, __name__)


def cut_off(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit) -> pygit2.Oid | None:
    """The first commit from `new` back to `old` whose parents this clone lacks (the boundary of a shallow
    clone, a grafted commit): the commits between the refs are then not the upstream's. None when the
    history between them is whole."""
    cut = _boundary(repo)
    if not cut:
        return None
    walker = repo.walk(new.id)
    walker.hide(old.id)
    return next((c.id for c in walker if c.id in cut), None)


def _boundary(repo: pygit2.Repository) -> set[pygit2.Oid]:
    """The commits a shallow clone (`shallow`) or a graft (`info/grafts`) cuts the parents of."""
    found: set[pygit2.Oid] = set()
    for name in ("shallow", "info/grafts"):
        try:
            text = (Path(repo.path) / name).read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines()[:1_000_000]:
            word = line.split(" ", 1)[0].strip()
            if len(word) == 40 and all(ch in "0123456789abcdef" for ch in word):
                found.add(pygit2.Oid(hex=word))
    return found


def _lineage(commits: list[pygit2.Commit]) -> str:
    """The commits and the first parent each is diffed against, as this repository has them: a shallow
    clone's cut-off commit has none, and its change is not the one a full history shows."""
    digest = hashlib.sha256()
    for c in commits:
        digest.update(f"{c.id}:{c.parents[0].id if c.parents else ''}\n".encode())
    return digest.hexdigest()


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

    Attribution works like blame over the lines in question, followed back
    through each commit between the refs that touched the file: a commit
    whose change added a line at one of their positions changed it (a line
    with the same text elsewhere in the file is not evidence). A commit that
    removed one of the lines that used to be there changed them too, which
    finds the commit that deleted a patch's context as blame cannot. Where a
    commit's copy does not continue the one followed (history that is not a
    line), the text of the lines stands in for their positions. A copy of
    the file that a partial clone lacks is no evidence either way.
    """

    upstream: Upstream
    old: pygit2.Commit
    new: pygit2.Commit

    def __post_init__(self) -> None:
        self._commits: list[pygit2.Commit] | None = None
        self._file_changes: list[list[tuple[str, pygit2.Oid, int]]] | None = None
        self._touched: list[set[str]] | None = None
        self._touching: dict[str, list[pygit2.Commit]] = {}
        self._changes: dict[tuple[str, str], _FileChange | None] = {}
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
            stored = facts.remembered(
                COMMIT_FILES,
                (_lineage(self.commits),),
                lambda: [
                    [(p, str(oid), int(mode)) for p, oid, mode in _sides(_first_parent_diff(c))]
                    for c in self.commits
                ],
            )
            self._file_changes = [
                [(p, pygit2.Oid(hex=oid), mode) for p, oid, mode in sides] for sides in stored
            ]
        return self._file_changes

    @property
    def between(self) -> set[str]:
        return {str(c.id) for c in self.commits}

    def read(self, commit: pygit2.Commit, path: str) -> bytes | None:
        """`path` at `commit` (b"" when there is no such file); None when the clone lacks its object, which
        is noted in `upstream.unreadable`."""
        return self._read(commit, path, _copy(commit, path))

    def _read(self, commit: pygit2.Commit, path: str, blob: pygit2.Oid) -> bytes | None:
        """The copy `blob` of `path` at `commit` (`read`)."""
        try:
            return self._text(blob)
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

    def _changed(self, commit: pygit2.Commit, path: str) -> _FileChange | None:
        """The commit's change of `path`; None when the clone lacks a side (no evidence either way)."""
        key = (str(commit.id), path)
        if key not in self._changes:
            parent = commit.parents[0] if commit.parents else None
            ids = (_copy(parent, path), _copy(commit, path))
            before = self._read(parent, path, ids[0]) if parent is not None else b""
            after = self._read(commit, path, ids[1])
            self._changes[key] = None if before is None or after is None else _file_change(before, after, ids)
        return self._changes[key]

    def _text(self, blob: pygit2.Oid) -> bytes:
        """A copy by its blob id (the empty one for no file); KeyError when the clone lacks it. A file change
        keeps ids and reads its copies again: a long jump's history of a large file would hold every copy."""
        return b"" if blob == EMPTY_BLOB else self._blobs.read(blob)

    def commits_for_lines(
        self, path: str, start: int, end: int, removed: Iterable[bytes] = ()
    ) -> list[Commit]:
        """Commits between the refs that changed lines start..end (1-based) of `path` at the new ref,
        or that removed any of `removed` (lines that used to be there)."""
        touching = self.touching(path)
        if not touching:
            return []
        copy = _copy(self.new, path)
        text = self._read(self.new, path, copy) or b""
        followed = _followed(text, start, end)
        gone = _meaningful_set(removed)
        found = []
        for commit in touching:
            change = self._changed(commit, path)
            if change is None:
                continue
            brought, followed = self._followed_back(change, copy, followed)
            if brought or change.deleted & gone:
                found.append(self.upstream.describe(commit))
            copy = change.before
        return found

    def _followed_back(
        self, change: _FileChange, copy: pygit2.Oid, followed: dict[int, bytes]
    ) -> tuple[bool, dict[int, bytes]]:
        """Whether the change wrote one of the `followed` lines of `copy` (its new copy), and the lines it
        kept, followed back to its old copy. A new copy that is not `copy` (history that is not a line) is
        followed by the lines' text."""
        if change.after != copy:
            followed = _by_text(self._text(change.after), set(followed.values()))
        brought = {n for n in followed if change.added_at(n)}
        return bool(brought), {change.before_line(n): t for n, t in followed.items() if n not in brought}


@dataclass(frozen=True)
class _FileChange:
    """One commit's change of a file: the blob ids of both copies, its hunks as (old start, old count, new
    start, new count), 1-based, and the meaningful lines it removed."""

    before: pygit2.Oid
    after: pygit2.Oid
    hunks: tuple[tuple[int, int, int, int], ...]
    deleted: frozenset[bytes]

    def added_at(self, line: int) -> bool:
        """Whether the change wrote line `line` of the new copy."""
        return any(new <= line < new + count for _, _, new, count in self.hunks)

    def before_line(self, line: int) -> int:
        """Where a line the change kept (line `line` of the new copy) was in the old copy."""
        shift = sum(old - new for _, old, start, new in self.hunks if start + max(new, 1) <= line)
        return line + shift


def _file_change(before: bytes, after: bytes, ids: tuple[pygit2.Oid, pygit2.Oid]) -> _FileChange:
    # Both buffers must stay referenced while the patch's lines are read: libgit2 points into them.
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    deleted = {
        text
        for hunk in patch.hunks
        for line in hunk.lines
        if line.origin == "-" and (text := _meaningful(line.raw_content)) is not None
    }
    hunks = tuple((h.old_start, h.old_lines, h.new_start, h.new_lines) for h in patch.hunks)
    return _FileChange(*ids, hunks, frozenset(deleted))


EMPTY_BLOB = pygit2.hash(b"")


def _copy(commit: pygit2.Commit | None, path: str) -> pygit2.Oid:
    """The blob id of `path` at `commit`; no such file (or no commit) is the empty one, as `read` gives it."""
    if commit is None:
        return EMPTY_BLOB
    try:
        entry = commit.tree[path]
    except KeyError:
        return EMPTY_BLOB
    return entry.id if isinstance(entry, pygit2.Blob) else EMPTY_BLOB


def _followed(text: bytes, start: int, end: int) -> dict[int, bytes]:
    """Lines start..end (1-based) of `text` worth following, by line."""
    lines = text.split(b"\n")
    return {n: t for n in range(max(1, start), min(end, len(lines)) + 1) if (t := _meaningful(lines[n - 1]))}


def _by_text(text: bytes, wanted: set[bytes]) -> dict[int, bytes]:
    """The lines of `text` (1-based) whose meaningful text is one of `wanted`."""
    lines = text.split(b"\n")
    return {n: t for n, line in enumerate(lines, 1) if (t := _meaningful(line)) in wanted}


def _meaningful_set(lines: Iterable[bytes]) -> set[bytes]:
    return {t for t in map(_meaningful, lines) if t}
