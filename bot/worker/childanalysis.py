"""The service's analysis in a child process (`bot.child.sandbox`).

The child holds no GitHub token: it reads the pull request's files by asking the service, which reads
them over REST through its blob cache, within the bounds of `bot.gh.rest`: a file it does not read is
answered with its FileNotRead, which the child raises (the pin's check says which file and why). The child
tells the service when an upstream fetch starts and ends (the checklist's banner). Upstream mirrors it opens itself, in the data directory (file locks keep two
children from fetching into one mirror at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.cache import facts
from bot.child.sandbox import Channel
from bot.config import Config, Pin
from bot.gh.rest import BlobCache, FileNotRead, RestSnapshot, files_under
from bot.model import Report
from bot.repos.upstream import Mirrors, Upstream
from bot.repos.upstreamrefs import packed_tips, unpacked_tips

CHILD_BLOB_CACHE = 32 << 20  # what the child keeps of the files it asked for: the engine re-reads a few


@dataclass(frozen=True)
class SnapshotSpec:
    """What the child knows of one side of the pull request: its commit and file list, not its contents."""

    side: str  # "base" or "head": how the child names it when it asks for a file
    commit_sha: str
    entries: dict[str, tuple[str, str, int]]  # path -> (blob sha, mode, size: 0 when unknown)

    @classmethod
    def of(cls, side: str, snapshot: RestSnapshot) -> SnapshotSpec:
        return cls(side, snapshot.commit_sha, snapshot.entries)


class AskedSnapshot:
    """A side of the pull request in the child: the file list it was given, contents asked for."""

    def __init__(self, spec: SnapshotSpec, channel: Channel, blobs: BlobCache):
        self.commit_sha = spec.commit_sha
        self._spec, self._channel, self._blobs = spec, channel, blobs
        self._paths = sorted(spec.entries)

    def read(self, path: str) -> bytes | None:
        """The file's bytes, asked of the service; a file it did not read raises its FileNotRead here."""
        entry = self._spec.entries.get(path)
        if entry is None:
            return None
        data = self._blobs.get(entry[0])
        if data is None:
            data = self._channel.ask("read", self._spec.side, path)
            if isinstance(data, FileNotRead):
                raise data
            self._blobs.put(entry[0], data)
        return data

    def size(self, path: str) -> int | None:
        entry = self._spec.entries.get(path)
        return entry[2] if entry else None

    def blob_id(self, path: str) -> str | None:
        """The file's blob sha, as the listing gives it: nothing asked for."""
        entry = self._spec.entries.get(path)
        return entry[0] if entry else None

    def files(self, prefix: str = "") -> list[str]:
        return files_under(self._paths, prefix)


class AskedListings:
    """The upstreams' recent listings of branches and tags in the child: kept by the service, which
    outlives the child (`bot.repos.upstreamrefs.RecentListings`)."""

    def __init__(self, channel: Channel):
        self._channel = channel

    def recent(self, url: str) -> list[pygit2.Oid] | None:
        raw = self._channel.ask("tips", url)
        return unpacked_tips(raw) if raw is not None else None

    def remember(self, url: str, tips: list[pygit2.Oid]) -> None:
        self._channel.tell("tips", url, packed_tips(tips))


@dataclass(frozen=True)
class ChildAnalysis:
    """One analysis as the child runs it: everything in it crosses the process boundary by pickling."""

    config: Config
    base: SnapshotSpec
    head: SnapshotSpec
    changed: list[str] | None
    review: bool
    data_dir: Path
    url_instead_of: str | None
    pull: str | None = None  # the pull request analysed (`owner/repo#7`): its pinned commits are its own

    def __call__(self, channel: Channel) -> tuple[Report, dict[str, str]]:
        from bot.engine import analyse

        blobs = BlobCache(CHILD_BLOB_CACHE)
        mirrors = Mirrors(self.data_dir, self.url_instead_of, listings=AskedListings(channel), pull=self.pull)

        def open_upstream(pin: Pin, refs: list[str]) -> Upstream:
            return mirrors.open(
                pin.name, pin.upstream, refs, lambda started: channel.tell("fetching", pin.name, started)
            )

        errors: dict[str, str] = {}
        store = facts.store_in(self.data_dir)
        with facts.using(store):
            report = analyse(
                self.config,
                AskedSnapshot(self.base, channel, blobs),
                AskedSnapshot(self.head, channel, blobs),
                open_upstream,
                self.changed,
                review=self.review,
                errors=errors,
            )
            channel.tell("facts", store.hits, store.misses)
        return report, errors


PRELOADED = ["bot.worker.preload"]  # what the service's forkserver imports, and builds, once
