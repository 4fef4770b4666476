"""A `Snapshot` of a commit of the target repository, read only through GitHub's REST API.

The file list comes from one recursive git tree listing; file contents are
git blobs fetched when the engine first reads them. The engine runs in a
worker thread, so `read` hands the request to the event loop and waits for
it. Blobs are immutable, so they are cached by sha across jobs.
"""

from __future__ import annotations

import asyncio
import base64
import threading

from cachetools import LRUCache
from gidgethub.abc import GitHubAPI

from bot.model import AnalysisError

BLOB_CACHE_BYTES = 64 * 1024 * 1024
READ_TIMEOUT = 600.0  # a worker thread never waits forever on an event loop that went away


class BlobCache:
    """Blob contents by sha, bounded by total size; safe to share between worker threads."""

    def __init__(self, max_bytes: int = BLOB_CACHE_BYTES):
        self._cache: LRUCache[str, bytes] = LRUCache(maxsize=max_bytes, getsizeof=len)
        self._lock = threading.Lock()

    def get(self, sha: str) -> bytes | None:
        with self._lock:
            return self._cache.get(sha)

    def put(self, sha: str, data: bytes) -> None:
        with self._lock:
            try:
                self._cache[sha] = data
            except ValueError:  # larger than the whole cache: not kept
                pass


class RestSnapshot:
    """One commit's files: paths from the tree listing, contents fetched lazily by blob sha."""

    def __init__(
        self,
        gh: GitHubAPI,
        owner: str,
        repo: str,
        commit_sha: str,
        entries: dict[str, tuple[str, str]],
        loop: asyncio.AbstractEventLoop,
        blobs: BlobCache,
    ):
        self.gh, self.owner, self.repo, self.commit_sha = gh, owner, repo, commit_sha
        self.entries = entries  # path -> (blob sha, mode)
        self._paths = sorted(entries)
        self._loop = loop
        self._blobs = blobs

    @classmethod
    async def load(
        cls, gh: GitHubAPI, owner: str, repo: str, commit_sha: str, blobs: BlobCache
    ) -> RestSnapshot:
        names = {"owner": owner, "repo": repo}
        commit = await gh.getitem("/repos/{owner}/{repo}/git/commits/{sha}", {**names, "sha": commit_sha})
        tree = await gh.getitem(
            "/repos/{owner}/{repo}/git/trees/{sha}?recursive=1", {**names, "sha": commit["tree"]["sha"]}
        )
        if tree.get("truncated"):
            raise AnalysisError(
                f"the file tree of {owner}/{repo} at {commit_sha[:12]} is too large for GitHub "
                "to list (over 100,000 entries)"
            )
        entries = {
            item["path"]: (item["sha"], item["mode"]) for item in tree["tree"] if item["type"] == "blob"
        }
        return cls(gh, owner, repo, commit_sha, entries, asyncio.get_running_loop(), blobs)

    async def fetch(self, path: str) -> bytes | None:
        """The file's bytes, from the event loop."""
        entry = self.entries.get(path)
        if entry is None:
            return None
        sha = entry[0]
        data = self._blobs.get(sha)
        if data is None:
            blob = await self.gh.getitem(
                "/repos/{owner}/{repo}/git/blobs/{sha}", {"owner": self.owner, "repo": self.repo, "sha": sha}
            )
            data = base64.b64decode(blob["content"])
            self._blobs.put(sha, data)
        return data

    def read(self, path: str) -> bytes | None:
        """The file's bytes, from a worker thread (the event loop must not block on itself)."""
        if path not in self.entries:
            return None
        cached = self._blobs.get(self.entries[path][0])
        if cached is not None:
            return cached
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run_coroutine_threadsafe(self.fetch(path), self._loop).result(READ_TIMEOUT)
        raise RuntimeError("RestSnapshot.read() blocks: on the event loop use `await fetch(path)`")

    def files(self, prefix: str = "") -> list[str]:
        if not prefix:
            return list(self._paths)
        prefix = prefix.rstrip("/") + "/"
        return [p for p in self._paths if p.startswith(prefix)]

    def mode(self, path: str) -> str | None:
        entry = self.entries.get(path)
        return entry[1] if entry else None
