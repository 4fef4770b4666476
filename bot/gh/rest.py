"""A `Snapshot` of a commit of the target repository, read only through GitHub's REST API.

The file list comes from one recursive git tree listing; file contents are
git blobs fetched when the engine first reads them. The engine runs in a
worker thread, which reads through a `ThreadReader`: its own event loop and
HTTP session, so no read waits on the service's loop. Blobs and trees are
immutable, so they are cached by sha across jobs: another pull request, or a
push that leaves the base where it was, lists no tree twice.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
from collections.abc import Callable
from typing import Self

import aiohttp
from cachetools import LRUCache
from gidgethub.abc import GitHubAPI

from bot.gh.github import GitHubClient
from bot.model import AnalysisError

BLOB_CACHE_BYTES = 64 * 1024 * 1024
# Files of the tree listings kept, all listings together (Ollama's tree: some 1,200 files, a few hundred kB):
# a pull request's tree of up to 100,000 files would otherwise be kept whole, a dozen times over.
KEPT_LISTED_FILES = 50_000


class BlobCache:
    """Blob contents by sha, bounded by total size, and the files of the last trees listed; safe to share
    between worker threads."""

    def __init__(self, max_bytes: int = BLOB_CACHE_BYTES):
        self._cache: LRUCache[str, bytes] = LRUCache(maxsize=max_bytes, getsizeof=len)
        self._listings: LRUCache[str, dict[str, tuple[str, str, int]]] = LRUCache(
            maxsize=KEPT_LISTED_FILES, getsizeof=len
        )
        self._lock = threading.Lock()

    def listing(self, tree_sha: str) -> dict[str, tuple[str, str, int]] | None:
        """A tree's files as listed before (path -> blob sha, mode, size), or None."""
        with self._lock:
            return self._listings.get(tree_sha)

    def keep_listing(self, tree_sha: str, entries: dict[str, tuple[str, str, int]]) -> None:
        with self._lock:
            try:
                self._listings[tree_sha] = entries
            except ValueError:  # more files than all listings may hold: not kept
                pass

    def get(self, sha: str) -> bytes | None:
        with self._lock:
            return self._cache.get(sha)

    def put(self, sha: str, data: bytes) -> None:
        with self._lock:
            try:
                self._cache[sha] = data
            except ValueError:  # larger than the whole cache: not kept
                pass


def blob_id(data: bytes) -> str:
    """The id git gives a blob holding `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


async def get_blob(gh: GitHubAPI, owner: str, repo: str, sha: str) -> bytes:
    blob = await gh.getitem(
        "/repos/{owner}/{repo}/git/blobs/{sha}", {"owner": owner, "repo": repo, "sha": sha}
    )
    return base64.b64decode(blob["content"])


class ThreadReader:
    """Blob reads for one worker thread over the thread's own event loop and HTTP session (an aiohttp
    session serves one loop): the engine never waits on the service's loop, so a busy loop delays no read
    and a stopping one strands none. Use it in one thread, and close it there."""

    def __init__(self, client: Callable[[aiohttp.ClientSession], GitHubAPI]):
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None
        self._gh: GitHubAPI | None = None

    def blob(self, owner: str, repo: str, sha: str) -> bytes:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._session = self._loop.run_until_complete(_open_session())
            self._gh = self._client(self._session)
        assert self._gh is not None
        return self._loop.run_until_complete(get_blob(self._gh, owner, repo, sha))

    def close(self) -> None:
        if self._loop is not None:
            assert self._session is not None
            self._loop.run_until_complete(self._session.close())
            self._loop.close()
            self._loop = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


async def _open_session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession()


def files_under(paths: list[str], prefix: str) -> list[str]:
    """The sorted `paths` below the directory `prefix` (all of them for "")."""
    if not prefix:
        return list(paths)
    prefix = prefix.rstrip("/") + "/"
    return [p for p in paths if p.startswith(prefix)]


class RestSnapshot:
    """One commit's files: paths from the tree listing, contents fetched lazily by blob sha."""

    def __init__(
        self,
        gh: GitHubClient,
        owner: str,
        repo: str,
        commit_sha: str,
        entries: dict[str, tuple[str, str, int]],
        blobs: BlobCache,
        reader: ThreadReader | None = None,
        edits: dict[str, bytes] | None = None,
    ):
        self.gh, self.owner, self.repo, self.commit_sha = gh, owner, repo, commit_sha
        self.entries = entries  # path -> (blob sha, mode, size: 0 when the listing gave none)
        self._paths = sorted(entries)
        self._blobs = blobs
        self._reader = reader
        self._edits = edits or {}  # files changed in memory, not on GitHub (`with_files`)

    @classmethod
    async def load(
        cls, gh: GitHubClient, owner: str, repo: str, commit_sha: str, blobs: BlobCache
    ) -> RestSnapshot:
        names = {"owner": owner, "repo": repo}
        commit = await gh.getitem("/repos/{owner}/{repo}/git/commits/{sha}", {**names, "sha": commit_sha})
        tree_sha = commit["tree"]["sha"]
        entries = blobs.listing(tree_sha)
        if entries is None:
            tree = await gh.getitem(
                "/repos/{owner}/{repo}/git/trees/{sha}?recursive=1", {**names, "sha": tree_sha}
            )
            if tree.get("truncated"):
                raise AnalysisError(
                    f"the file tree of {owner}/{repo} at {commit_sha[:12]} is too large for GitHub "
                    "to list (over 100,000 entries)"
                )
            entries = {
                item["path"]: (item["sha"], item["mode"], item.get("size") or 0)
                for item in tree["tree"]
                if item["type"] == "blob"
            }
            blobs.keep_listing(tree_sha, entries)
        return cls(gh, owner, repo, commit_sha, dict(entries), blobs)

    async def thread_reader(self) -> ThreadReader:
        """A reader for a worker thread, holding the installation token valid now."""
        return ThreadReader(await self.gh.for_another_loop())

    def reading_with(self, reader: ThreadReader) -> RestSnapshot:
        """This snapshot, its `read` going through `reader`."""
        return RestSnapshot(
            self.gh, self.owner, self.repo, self.commit_sha, self.entries, self._blobs, reader, self._edits
        )

    def with_files(self, files: dict[str, bytes]) -> RestSnapshot:
        """This commit with `files` (path -> bytes) written over it in memory: what the tree would be after
        committing them. Their entries carry the blob ids git would give them; reads answer from memory,
        since GitHub has no such blobs yet."""
        entries = dict(self.entries)
        for path, data in files.items():
            mode = entries[path][1] if path in entries else "100644"
            entries[path] = (blob_id(data), mode, len(data))
        edits = {**self._edits, **files}
        return RestSnapshot(
            self.gh, self.owner, self.repo, self.commit_sha, entries, self._blobs, self._reader, edits
        )

    async def fetch(self, path: str) -> bytes | None:
        """The file's bytes, from the event loop."""
        if path in self._edits:
            return self._edits[path]
        entry = self.entries.get(path)
        if entry is None:
            return None
        sha = entry[0]
        data = self._blobs.get(sha)
        if data is None:
            data = await get_blob(self.gh, self.owner, self.repo, sha)
            self._blobs.put(sha, data)
        return data

    def read(self, path: str) -> bytes | None:
        """The file's bytes, from a worker thread reading through its `ThreadReader`."""
        if path in self._edits:
            return self._edits[path]
        if path not in self.entries:
            return None
        sha = self.entries[path][0]
        data = self._blobs.get(sha)
        if data is None:
            if self._reader is None:
                raise RuntimeError(
                    "RestSnapshot.read() needs a ThreadReader (reading_with); on the event loop use "
                    "`await fetch(path)`"
                )
            data = self._reader.blob(self.owner, self.repo, sha)
            self._blobs.put(sha, data)
        return data

    def size(self, path: str) -> int | None:
        entry = self.entries.get(path)
        return entry[2] if entry else None

    def blob_id(self, path: str) -> str | None:
        """The file's blob sha, as the listing gives it (an edit's is its own): nothing fetched."""
        entry = self.entries.get(path)
        return entry[0] if entry else None

    def files(self, prefix: str = "") -> list[str]:
        return files_under(self._paths, prefix)

    def mode(self, path: str) -> str | None:
        entry = self.entries.get(path)
        return entry[1] if entry else None
