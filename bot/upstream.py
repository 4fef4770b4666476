"""Upstream sources: persistent bare mirrors, ref resolution and commit attribution.

Upstream files are read from git objects at exact commits. A mirror fetches
only when a ref it needs is missing, and libgit2 negotiates so that only
missing objects travel (the local transport has no shallow fetch).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.model import AnalysisError, Commit


def rewrite_url(url: str, instead_of: str | None) -> str:
    """Apply `NEW=OLD` prefix rewrites like git's url.NEW.insteadOf OLD (longest OLD wins)."""
    rules = []
    for item in (instead_of or "").split(","):
        if "=" in item:
            new, old = item.split("=", 1)
            rules.append((old.strip(), new.strip()))
    best = max((r for r in rules if r[0] and url.startswith(r[0])), key=lambda r: len(r[0]), default=None)
    return best[1] + url[len(best[0]):] if best else url


def mirror_path(data_dir: Path, name: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return data_dir / "mirrors" / f"{safe}.git"


def _tag_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    try:
        return repo.lookup_reference(f"refs/tags/{ref}").peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return None


def resolve(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    """A validated ref (tag or 40-hex id) to its commit, or None when this repository lacks it.

    Branches are never consulted: a version file names a fixed upstream state (CONTRACT
    section 4), and a mirror only fetches tags, so `master` would resolve through
    --upstream-dir but not through the mirror.
    """
    commit = _tag_commit(repo, ref)
    if commit is None and re.fullmatch(r"[0-9a-f]{40}", ref):
        try:
            commit = repo[ref].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            commit = None
    return commit


class Upstream:
    """One pin's upstream repository and the commits the analysis compares."""

    def __init__(self, repo: pygit2.Repository, web_url: str):
        self.repo = repo
        self.web_url = web_url.removesuffix(".git").rstrip("/")

    @classmethod
    def open_dir(cls, git_dir: str, web_url: str) -> Upstream:
        try:
            return cls(pygit2.Repository(git_dir), web_url)
        except pygit2.GitError:
            raise AnalysisError(f"--upstream-dir {git_dir}: not a git repository") from None

    @classmethod
    def mirror(cls, data_dir: Path, name: str, url: str, refs: list[str], instead_of: str | None) -> Upstream:
        """Open (or create) the pin's mirror and fetch when one of `refs` is missing."""
        path = mirror_path(data_dir, name)
        fetch_url = rewrite_url(url, instead_of)
        if path.exists():
            repo = pygit2.Repository(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            repo = pygit2.init_repository(str(path), bare=True)
        if any(resolve(repo, ref) is None for ref in refs):
            cls._fetch(repo, fetch_url, refs)
        return cls(repo, url)

    @staticmethod
    def _fetch(repo: pygit2.Repository, url: str, refs: list[str]) -> None:
        remote_name = "origin-" + hashlib.sha1(url.encode()).hexdigest()[:8]
        try:
            remote = repo.remotes[remote_name]
        except KeyError:
            remote = repo.remotes.create_anonymous(url)
        tags = [r for r in refs if not re.fullmatch(r"[0-9a-f]{40}", r)]
        specs = [f"+refs/tags/{t}:refs/tags/{t}" for t in tags]
        if len(specs) < len(refs):  # a commit id: bring the branches, it is on one of them
            specs.append("+refs/heads/*:refs/heads/*")
        try:
            remote.fetch(specs, depth=0)
        except pygit2.GitError as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if any(resolve(repo, r) is None for r in refs):
                missing = ", ".join(r for r in refs if resolve(repo, r) is None)
                raise AnalysisError(f"cannot fetch {missing} from {url}: {message}") from None

    def commit(self, ref: str, where: str) -> pygit2.Commit:
        commit = resolve(self.repo, ref)
        if commit is None:
            raise AnalysisError(f"{where} names {ref!r}, which is not a tag or commit of {self.web_url}")
        return commit

    def describe(self, commit: pygit2.Commit) -> Commit:
        subject = commit.message.split("\n", 1)[0].strip()
        return Commit(str(commit.id), subject, f"{self.web_url}/commit/{commit.id}")


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
    """

    upstream: Upstream
    old: pygit2.Commit
    new: pygit2.Commit

    def __post_init__(self):
        self._commits: list[pygit2.Commit] | None = None
        self._touching: dict[str, list[pygit2.Commit]] = {}
        self._changes: dict[tuple[str, str], tuple[set[bytes], set[bytes]]] = {}

    @property
    def commits(self) -> list[pygit2.Commit]:
        """Newest first."""
        if self._commits is None:
            walker = self.upstream.repo.walk(self.new.id, pygit2.enums.SortMode.TOPOLOGICAL)
            walker.hide(self.old.id)
            self._commits = list(walker)
        return self._commits

    @property
    def between(self) -> set[str]:
        return {str(c.id) for c in self.commits}

    @staticmethod
    def _blob_id(commit: pygit2.Commit, path: str):
        try:
            return commit.tree[path].id
        except KeyError:
            return None

    def touching(self, path: str) -> list[pygit2.Commit]:
        """Commits between the refs that changed `path` (against their first parent), newest first."""
        if path not in self._touching:
            self._touching[path] = [
                c for c in self.commits
                if self._blob_id(c, path) != (self._blob_id(c.parents[0], path) if c.parents else None)]
        return self._touching[path]

    def _changed_lines(self, commit: pygit2.Commit, path: str) -> tuple[set[bytes], set[bytes]]:
        key = (str(commit.id), path)
        if key not in self._changes:
            def data(c):
                blob_id = self._blob_id(c, path)
                return self.upstream.repo[blob_id].data if blob_id is not None else b""
            # Both buffers must stay referenced while the patch's lines are read: libgit2 points into them.
            before, after = (data(commit.parents[0]) if commit.parents else b""), data(commit)
            patch = pygit2.Patch.create_from(before, after, context_lines=0)
            added: set[bytes] = set()
            removed: set[bytes] = set()
            for hunk in patch.hunks:
                for line in hunk.lines:
                    text = _meaningful(line.raw_content)
                    if text is not None:
                        (added if line.origin == "+" else removed).add(text)
            self._changes[key] = (added, removed)
        return self._changes[key]

    def commits_for_lines(self, path: str, start: int, end: int, removed: Iterable[bytes] = ()) -> list[Commit]:
        """Commits between the refs that changed lines start..end (1-based) of `path` at the new ref,
        or that removed any of `removed` (lines that used to be there)."""
        touching = self.touching(path)
        if not touching:
            return []
        blob_id = self._blob_id(self.new, path)
        blob = self.upstream.repo[blob_id] if blob_id is not None else None
        lines = blob.data.split(b"\n") if isinstance(blob, pygit2.Blob) else []
        now = {t for t in map(_meaningful, lines[max(0, start - 1):max(0, end)]) if t}
        gone = {t for t in map(_meaningful, removed) if t}
        found = []
        for commit in touching:
            added, deleted = self._changed_lines(commit, path)
            if added & now or deleted & gone:
                found.append(self.upstream.describe(commit))
        return found
