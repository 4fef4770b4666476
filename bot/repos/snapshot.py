"""Read-only views of a repository at one revision.

The engine reads the Ollama repository and the upstream trees only through
`Snapshot`, so the same analysis runs on a local git checkout (the CLI), on
files fetched through the REST API (the service) and on git objects of an
upstream mirror.

A partial clone may lack a file's object: `GitSnapshot.missing` tells, and
reading such a file raises `MissingBlob` (an AnalysisError that names it)
instead of pygit2's bare lookup error, since None would mean "no such file".

Every reader of one repository object (the snapshots of both refs, the
review's diff, the commit attribution) reads blobs through its `BlobCache`:
the patch stage, the review and the attribution read the same files, and
each reads them from the object database once.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections import OrderedDict
from typing import Protocol

import pygit2
from cachetools import LRUCache

from bot.cache import facts
from bot.model import AnalysisError


class MissingBlob(AnalysisError):
    """A file whose object the repository lacks (a partial clone): it exists at the commit but cannot be read."""

    def __init__(self, path: str, commit: pygit2.Commit, repo: pygit2.Repository):
        super().__init__(
            f"{path} at commit {str(commit.id)[:12]} cannot be read: its object is missing from "
            f"{repo.path.rstrip('/')}"
        )
        self.path = path


BLOB_CACHE_BYTES = 4 << 20  # what one repository's cache keeps: the re-read files, not the whole diff


class BlobCache:
    """Blob contents by object id, the least recently read dropped beyond `budget` bytes (a blob larger
    than it is read and not kept). Readers re-read the same few files, so a small budget catches them."""

    def __init__(self, repo: pygit2.Repository, budget: int = BLOB_CACHE_BYTES):
        self.repo = repo
        self.odb = repo.odb
        self.budget = budget
        self._data: OrderedDict[pygit2.Oid, bytes] = OrderedDict()
        self._size = 0

    def read(self, oid: pygit2.Oid) -> bytes:
        """The blob's bytes; KeyError when the repository lacks the object (a partial clone)."""
        data = self._data.get(oid)
        if data is not None:
            self._data.move_to_end(oid)
            return data
        data = self.odb.read(oid)[1]  # not `repo[oid]`, which inflates the object once more to look it up
        if len(data) <= self.budget:
            self._data[oid] = data
            self._size += len(data)
            while self._size > self.budget:
                _, dropped = self._data.popitem(last=False)
                self._size -= len(dropped)
        return data


_CACHES: weakref.WeakKeyDictionary[pygit2.Repository, BlobCache] = weakref.WeakKeyDictionary()


def blob_cache(repo: pygit2.Repository) -> BlobCache:
    """The cache every reader of this repository object shares; it goes with the object, so an analysis,
    which opens its own, has its own."""
    cache = _CACHES.get(repo)
    if cache is None:
        cache = _CACHES[repo] = BlobCache(repo)
    return cache


class Snapshot(Protocol):
    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when there is no such file."""

    def size(self, path: str) -> int | None:
        """The file's size in bytes, without reading it (0 when not known before reading), or None when
        there is no such file."""

    def files(self, prefix: str = "") -> list[str]:
        """Paths of all files under `prefix` (a directory, '' for all), sorted."""


# Files of the tree listings kept, all listings together, by tree id: an analysis lists the same few trees
# (llama.cpp's: some 2,000 files); one larger than the bound is not kept.
KEPT_LISTED_FILES = 50_000
_listings: LRUCache[pygit2.Oid, list[str]] = LRUCache(maxsize=KEPT_LISTED_FILES, getsizeof=len)
_listings_lock = threading.Lock()


def _tree_files(root: pygit2.Tree) -> list[str]:
    """Every file's path under `root`, sorted (the list is shared: never changed). The patch stage, the
    blob fetch and the review list the same trees through snapshots of their own: the walk is done once."""
    with _listings_lock:
        found = _listings.get(root.id)
    if found is None:
        found = _blob_paths(root)
        with _listings_lock, contextlib.suppress(ValueError):  # more files than all listings may hold
            _listings[root.id] = found
    return found


def _blob_paths(root: pygit2.Tree) -> list[str]:
    """Every file's path under `root`, sorted."""
    found: list[str] = []
    stack: list[tuple[str, pygit2.Tree]] = [("", root)]
    while stack:
        base, tree = stack.pop()
        for entry in tree:
            path = base + (entry.name or "")
            if isinstance(entry, pygit2.Tree):
                stack.append((path + "/", entry))
            elif entry.type == pygit2.GIT_OBJECT_BLOB:
                found.append(path)
    return sorted(found)


class GitSnapshot:
    """A commit's tree in a pygit2 repository: reads git objects, never a working tree."""

    def __init__(self, repo: pygit2.Repository, commit: pygit2.Commit | str):
        self.repo = repo
        self.commit = repo[commit].peel(pygit2.Commit) if isinstance(commit, str) else commit
        self.tree = self.commit.tree
        self.blobs = blob_cache(repo)
        self._files: list[str] | None = None

    def entry(self, path: str) -> pygit2.Object | None:
        try:
            return self.tree[path]
        except KeyError:
            return None

    def read(self, path: str) -> bytes | None:
        obj = self.entry(path)
        if not isinstance(obj, pygit2.Blob):
            return None
        try:
            return self.blobs.read(obj.id)
        except KeyError:  # pygit2.NotFoundError: the tree names a blob the clone does not hold
            raise MissingBlob(path, self.commit, self.repo) from None

    def size(self, path: str) -> int | None:
        obj = self.entry(path)
        if not isinstance(obj, pygit2.Blob):
            return None
        try:
            return self.repo.odb.read_header(obj.id)[1]
        except KeyError:  # the tree names a blob the clone does not hold
            raise MissingBlob(path, self.commit, self.repo) from None

    def blob_id(self, path: str) -> str | None:
        """The file's git blob id, from the tree, nothing read; None for no such file, and for one whose
        object the clone lacks (`read` raises MissingBlob: a reading of the texts does without it)."""
        obj = self.entry(path)
        if not isinstance(obj, pygit2.Blob) or not self.repo.odb.exists(obj.id):
            return None
        return str(obj.id)

    def missing(self, path: str) -> bool:
        """Whether `path` is a file at this commit whose object the repository lacks."""
        obj = self.entry(path)
        return isinstance(obj, pygit2.Blob) and not self.repo.odb.exists(obj.id)

    def files(self, prefix: str = "") -> list[str]:
        if self._files is None:
            self._files = _tree_files(self.tree)
        if not prefix:
            return list(self._files)
        prefix = prefix.rstrip("/") + "/"
        return [p for p in self._files if p.startswith(prefix)]


class MemorySnapshot:
    """Files already in memory: what the service fetched through the REST API."""

    def __init__(self, files: dict[str, bytes]):
        self._data = dict(files)

    def read(self, path: str) -> bytes | None:
        return self._data.get(path)

    def size(self, path: str) -> int | None:
        data = self._data.get(path)
        return None if data is None else len(data)

    def files(self, prefix: str = "") -> list[str]:
        if not prefix:
            return sorted(self._data)
        prefix = prefix.rstrip("/") + "/"
        return sorted(p for p in self._data if p.startswith(prefix))


class EditedSnapshot:
    """A revision with some files written over it in memory: its tree as it would be once they are committed
    (a bump's version files, before the commit is made)."""

    def __init__(self, under: Snapshot, files: dict[str, bytes]):
        self._under, self._files = under, dict(files)

    def read(self, path: str) -> bytes | None:
        return self._files[path] if path in self._files else self._under.read(path)

    def size(self, path: str) -> int | None:
        return len(self._files[path]) if path in self._files else self._under.size(path)

    def blob_id(self, path: str) -> str | None:
        if path in self._files:
            return facts.bytes_id(self._files[path])
        return blob_id_of(self._under, path)

    def files(self, prefix: str = "") -> list[str]:
        below = prefix.rstrip("/") + "/" if prefix else ""
        return sorted({*self._under.files(prefix), *(p for p in self._files if p.startswith(below))})


def size_text(size: int) -> str:
    """A byte count as a person reads it: `512 bytes`, `30 KiB`, `8 MiB`, `1.5 GiB`."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value >= 10 or value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def blob_id_of(snapshot: Snapshot, path: str) -> str | None:
    """A file's git blob id (its content address), from the snapshot's listing where it has one (`blob_id`),
    else of its bytes; None for no such file."""
    listed = getattr(snapshot, "blob_id", None)
    if listed is not None:
        return listed(path)
    data = snapshot.read(path)
    return None if data is None else facts.bytes_id(data)


class NotedSnapshot:
    """A snapshot that notes every answer it gives (a file's content address for a read): another snapshot
    that gives the same answers to the same questions gives the same reading of it (`gives`)."""

    def __init__(self, under: Snapshot):
        self.under = under
        self.answers: dict[tuple[str, str], str | int | None] = {}

    def read(self, path: str) -> bytes | None:
        data = self.under.read(path)
        self.answers["read", path] = None if data is None else facts.bytes_id(data)
        return data

    def size(self, path: str) -> int | None:
        size = self.under.size(path)
        self.answers["size", path] = size
        return size

    def files(self, prefix: str = "") -> list[str]:
        listed = self.under.files(prefix)
        self.answers["files", prefix] = facts.text_id("\n".join(listed))
        return listed


def gives(snapshot: Snapshot, answers: dict[tuple[str, str], str | int | None]) -> bool:
    """Whether `snapshot` answers each noted question as noted (a read by the file's content address: from
    the listing, where the snapshot has one, nothing read)."""
    noted = NotedSnapshot(snapshot)
    for (question, path), answer in answers.items():
        now: str | int | None
        if question == "read":
            try:
                now = blob_id_of(snapshot, path)
            except MissingBlob:
                return False
        else:
            getattr(noted, question)(path)
            now = noted.answers[question, path]
        if now != answer:
            return False
    return True
