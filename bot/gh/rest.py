"""A `Snapshot` of a commit of the target repository, read only through GitHub's REST API.

The file list comes from one recursive git tree listing; file contents are
git blobs fetched when the engine first reads them. The engine runs in a
worker thread, which reads through a `ThreadReader`: its own event loop and
HTTP session, so no read waits on the service's loop. Blobs and trees are
immutable, so they are cached by sha across jobs: another pull request, or a
push that leaves the base where it was, lists no tree twice.

A pull request's files are hostile input read in the service's own process,
which no memory limit holds: a file is read only up to FILE_BYTES and one
analysis only up to ANALYSIS_BYTES, refused by the listed size before any
download and, should the listing be wrong, cut off as the raw blob streams in.
A file not read raises FileNotRead, which names it and the bound for the pull
request.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable
from typing import Self

import aiohttp
from cachetools import LRUCache

from bot.gh.github import BodyTooLarge, GitHubClient
from bot.model import AnalysisError
from bot.repos.snapshot import size_text

BLOB_CACHE_BYTES = 64 * 1024 * 1024
# What the service reads of one file of a pull request. The files an analysis reads (CMake files, carried
# patches, version files, Go sources) have a few hundred kB at most, and carried patches are refused past
# the same 8 MiB (bot/patches/patchsafety.py). A 95 MiB file, some 100 kB gzip'd on the wire, took the
# service's peak RSS from 81 to 599 MB (two at once: 824 MB) going whole through GitHub's base64 JSON.
FILE_BYTES = 8 << 20
# What the service reads of a pull request's files for one analysis, all of them together (each distinct
# file once, from the cache or GitHub, kept or refused): bounds the time and the traffic of a pull request
# with many large files, as FILE_BYTES bounds the memory of one. Ollama's whole tree is some 42 MiB (9 MiB
# of it Go), and an analysis reads a small part of it.
ANALYSIS_BYTES = 64 << 20
RAW = "application/vnd.github.raw+json"  # the blobs endpoint's media type for the blob's bytes as they are
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


class FileNotRead(AnalysisError):
    """A file of the pull request the service did not read, over FILE_BYTES or past ANALYSIS_BYTES: the
    message names it and the bound, for the maintainer."""


def over_file_bound(path: str, size: int | None) -> FileNotRead:
    """The refusal of a file over FILE_BYTES; `size` None when only a streamed read found it over."""
    said = f"is {size_text(size)}, over" if size is not None else "is over"
    return FileNotRead(
        f"{path} {said} the {size_text(FILE_BYTES)} llama-bot reads of one file: it was not read"
    )


def past_analysis_bound(path: str, read: int, bound: int) -> FileNotRead:
    return FileNotRead(
        f"{path} was not read: llama-bot reads {size_text(bound)} of a pull request's files for one "
        f"analysis, and had read {size_text(read)} of them"
    )


async def get_blob(gh: GitHubClient, owner: str, repo: str, sha: str, max_bytes: int = FILE_BYTES) -> bytes:
    """The blob's bytes, streamed raw (not as base64 in JSON, whole in memory): BodyTooLarge past
    `max_bytes`."""
    return await gh.get_capped(
        "/repos/{owner}/{repo}/git/blobs/{sha}",
        {"owner": owner, "repo": repo, "sha": sha},
        accept=RAW,
        max_bytes=max_bytes,
    )


class ThreadReader:
    """One analysis's file reads, in one worker thread over the thread's own event loop and HTTP session (an
    aiohttp session serves one loop): the engine never waits on the service's loop, so a busy loop delays
    no read and a stopping one strands none. It holds the analysis to FILE_BYTES a file and ANALYSIS_BYTES
    in all. Use it in one thread, and close it there."""

    def __init__(
        self, client: Callable[[aiohttp.ClientSession], GitHubClient], max_bytes: int = ANALYSIS_BYTES
    ):
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None
        self._gh: GitHubClient | None = None
        self.max_bytes = max_bytes
        self.read_bytes = 0  # what the analysis has read so far, refused files too
        self._counted: set[str] = set()  # the blobs in `read_bytes`: a file read again is not counted again
        # by (blob sha, path): a file refused once is not read again
        self._refused: dict[tuple[str, str], FileNotRead] = {}

    def file(self, blobs: BlobCache, owner: str, repo: str, path: str, entry: tuple[str, str, int]) -> bytes:
        """The bytes of the file at `path` (`entry` its listing: blob sha, mode, size), from `blobs` or
        GitHub; FileNotRead past FILE_BYTES or what is left of the analysis's ANALYSIS_BYTES, before anything
        is read when the listed size tells."""
        sha, _, listed = entry
        if (sha, path) in self._refused:
            raise self._refused[sha, path]
        counted = sha in self._counted
        cap = FILE_BYTES if counted else min(FILE_BYTES, self.max_bytes - self.read_bytes)
        if listed > cap:
            raise self._refuse(sha, path, listed, cap)
        data = blobs.get(sha)
        if data is None:
            try:
                data = self._blob(owner, repo, sha, cap)
            except BodyTooLarge:
                refusal = self._refuse(sha, path, None, cap)
                self.read_bytes += cap
                raise refusal from None
            blobs.put(sha, data)
        elif len(data) > cap:
            raise self._refuse(sha, path, len(data), cap)
        if not counted:
            self._counted.add(sha)
            self.read_bytes += len(data)
        return data

    def _refuse(self, sha: str, path: str, size: int | None, cap: int) -> FileNotRead:
        """The refusal of a file over `cap` (`size` None: a streamed read passed it), kept."""
        refusal = (
            over_file_bound(path, size)
            if cap == FILE_BYTES or (size or 0) > FILE_BYTES
            else past_analysis_bound(path, self.read_bytes, self.max_bytes)
        )
        self._refused[sha, path] = refusal
        return refusal

    def _blob(self, owner: str, repo: str, sha: str, max_bytes: int) -> bytes:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._session = self._loop.run_until_complete(_open_session())
            self._gh = self._client(self._session)
        assert self._gh is not None
        return self._loop.run_until_complete(get_blob(self._gh, owner, repo, sha, max_bytes))

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
        """The file's bytes, from the event loop; FileNotRead over FILE_BYTES."""
        if path in self._edits:
            return self._edits[path]
        entry = self.entries.get(path)
        if entry is None:
            return None
        sha, _, listed = entry
        if listed > FILE_BYTES:
            raise over_file_bound(path, listed)
        data = self._blobs.get(sha)
        if data is None:
            try:
                data = await get_blob(self.gh, self.owner, self.repo, sha)
            except BodyTooLarge:
                raise over_file_bound(path, None) from None
            self._blobs.put(sha, data)
        return data

    def read(self, path: str) -> bytes | None:
        """The file's bytes, from a worker thread reading through its `ThreadReader`, within the bounds it
        holds the analysis to (FileNotRead past them)."""
        if path in self._edits:
            return self._edits[path]
        entry = self.entries.get(path)
        if entry is None:
            return None
        if self._reader is None:
            raise RuntimeError(
                "RestSnapshot.read() needs a ThreadReader (reading_with); on the event loop use "
                "`await fetch(path)`"
            )
        return self._reader.file(self._blobs, self.owner, self.repo, path, entry)

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
