"""Commits a pull request pinned by id, kept apart from the mirror and pruned.

GitHub serves every commit of a repository's forks and pull requests through its URL, so a fork can pin a
new commit with every push. Fetched into the mirror, each would stay there for good, with the blobs the
analysis read at it. A commit id the mirror lacks is fetched instead into a store of its own: a bare
repository at `<data dir>/pinned/<mirror>/<pull request>/<commits>.git` whose `objects/info/alternates`
names the mirror's objects, so that git fetches into it only what the mirror lacks, and the blobs the
analysis reads there go into it too. Removing its directory frees all of it.

A pull request keeps its PER_PULL most recently used stores, the data directory MAX_BYTES of them in all
(the least recently used go first; the one in use is kept, whatever its size), and a closed pull request
none (`forget_pull`). Stores are created and pruned under their mirror's lock; one pull request's analyses
run one at a time, so only the bound in all, reached meanwhile by other pull requests, may remove a store
that an analysis still reads.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

import pygit2

from bot.repos.gitcli import REMOTE
from bot.repos.mirrors import remove_leftovers

log = logging.getLogger("bot.upstream")

PER_PULL = 2  # stores one pull request keeps: the commits its last two pushes pinned
MAX_BYTES = 256 << 20  # the stores of every pull request together
LOCAL = "local"  # the stores of analyses for no pull request (the command line's)


def pull_dir(pull: str | None) -> str:
    """The directory name of pull request `pull`'s stores (`owner/repo#7`): readable, and one per key."""
    if pull is None:
        return LOCAL
    return (
        f"{re.sub(r'[^a-z0-9]+', '-', pull.lower()).strip('-')}-{hashlib.sha1(pull.encode()).hexdigest()[:8]}"
    )


def stores_of(data_dir: Path, mirror: Path, pull: str | None) -> list[Path]:
    """Pull request `pull`'s stores for `mirror`, the most recently used first."""
    return _by_use((data_dir / "pinned" / mirror.name / pull_dir(pull)).glob("*.git"))


def create_store(data_dir: Path, mirror: Path, pull: str | None, commits: list[str]) -> Path:
    """The store for `commits` of pull request `pull`: an empty blobless partial clone whose alternate is
    `mirror`'s objects, made under a temporary name and renamed into place (a kill leaves no half store)."""
    path = data_dir / "pinned" / mirror.name / pull_dir(pull) / f"{_key(commits)}.git"
    if path.exists():  # its fetch was killed: what that left would stop the next
        remove_leftovers(path)
        return used(path)
    staging = path.with_name(f"{path.name}.new-{uuid.uuid4().hex}")
    repo = pygit2.init_repository(str(staging), bare=True)
    repo.config[f"remote.{REMOTE}.promisor"] = True
    repo.config[f"remote.{REMOTE}.partialCloneFilter"] = "blob:none"
    repo.config["gc.auto"] = 0
    (staging / "objects" / "info" / "alternates").write_text(f"{(mirror / 'objects').resolve()}\n")
    os.rename(staging, path)
    return path


def used(store: Path) -> Path:
    """Mark `store` as just used: pruning removes the least recently used first."""
    os.utime(store)
    return store


def prune(data_dir: Path, keep: Path) -> None:
    """Remove each pull request's stores beyond its PER_PULL most recently used, then the least recently
    used while all of them take more than MAX_BYTES; never `keep`, the store in use. Call it holding the
    lock of `keep`'s mirror: what a creation killed halfway left beside its stores is removed too."""
    root = data_dir / "pinned"
    _remove([*root.glob("*/*.gone-*"), *root.glob("*/*/*.gone-*")])  # removals killed halfway
    _remove(list(root.glob(f"{keep.parent.parent.name}/*/*.new-*")))
    stores = _kept_per_pull(root, keep)
    sizes = {store: _size(store) for store in stores}
    total = _size(keep) + sum(sizes.values())
    for store in reversed(_by_use(stores)):
        if total <= MAX_BYTES:
            break
        total -= sizes[store]
        _remove([store])


def _kept_per_pull(root: Path, keep: Path) -> list[Path]:
    """Each pull request's PER_PULL most recently used stores (`keep` aside), the others removed."""
    stores = []
    for pull in root.glob("*/*"):
        if pull.is_dir() and ".gone-" not in pull.name:
            recent = _by_use(pull.glob("*.git"))
            _remove([s for s in recent[PER_PULL:] if s != keep])
            stores += [s for s in recent[:PER_PULL] if s != keep]
    return stores


def forget_pull(data_dir: Path, pull: str) -> None:
    """Remove every store of pull request `pull` (it was closed): renamed away first, so that no analysis
    opens a store half removed."""
    for pull_stores in (data_dir / "pinned").glob(f"*/{pull_dir(pull)}"):
        _remove([pull_stores])
    log.info("removed a closed pull request's pinned commits", extra={"pull": pull})


def _key(commits: list[str]) -> str:
    return hashlib.sha1(" ".join(sorted(commits)).encode()).hexdigest()[:16]


def _by_use(paths: Iterable[Path]) -> list[Path]:
    """`paths`, the most recently used first."""
    return sorted(paths, key=_used_at, reverse=True)


def _used_at(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:  # removed meanwhile
        return 0.0


def _size(path: Path) -> int:
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except FileNotFoundError:
                pass
    return total


def remove(store: Path) -> None:
    """Remove one store (the fetch into it failed)."""
    _remove([store])


def _remove(paths: list[Path]) -> None:
    """Rename each of `paths` aside, then remove it."""
    for path in paths:
        gone = path.with_name(path.name if ".gone-" in path.name else f"{path.name}.gone-{uuid.uuid4().hex}")
        try:
            os.rename(path, gone)
        except FileNotFoundError:
            continue
        shutil.rmtree(gone, ignore_errors=True)
