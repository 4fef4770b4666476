"""Mirrors on disk: where each lives, the URL it mirrors, its lock, and repair after an interrupted fetch.

A mirror lives at `<data dir>/mirrors/<pin>-<sha1(url)[:12]>.git`, named after
the URL it is fetched from (after the LLAMA_BOT_URL_INSTEADOF rewrites, without
credentials), and records that URL: it refuses to serve another, so a pin moved
to a fork never reads the old repository's tags. A file lock per mirror
serialises fetches across threads and processes, and every git writing into
the mirror holds it too (it inherits the lock's descriptor): a git, or a helper
of it, outliving a killed process keeps the mirror locked. A fetch killed
halfway leaves temporary files and stale lock files, which the next fetch
removes before it starts, once it holds the lock: nothing is writing them then
(new objects become visible only when whole, and a mirror is created under a
temporary name).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pygit2

from bot.model import AnalysisError
from bot.repos.gitcli import NO_SPACE, REMOTE, public_url
from bot.repos.snapshot import size_text

log = logging.getLogger("bot.upstream")

URL_KEY = "llama-bot.url"  # the mirror's config entry naming the URL it mirrors


def parse_url_rewrites(value: str | None) -> list[tuple[str, str]]:
    """LLAMA_BOT_URL_INSTEADOF's `NEW=OLD,...` as (OLD, NEW) prefix pairs, like git's url.NEW.insteadOf OLD.

    Raises AnalysisError naming the first item that is not NEW=OLD, so a typo is not silently ignored.
    """
    items = (item.strip() for item in (value or "").split(","))
    return [_url_rewrite(item) for item in items if item]


def _url_rewrite(item: str) -> tuple[str, str]:
    """One `NEW=OLD` item as (OLD, NEW); AnalysisError when it is not one."""
    new, sep, old = item.partition("=")
    if "" in (sep, new.strip(), old.strip()):
        raise AnalysisError(f"LLAMA_BOT_URL_INSTEADOF item {public_url(item)!r}: expected NEW=OLD")
    return old.strip(), new.strip()


def rewrite_url(url: str, instead_of: str | None) -> str:
    """Apply the `NEW=OLD` prefix rewrites (longest OLD wins)."""
    rules = parse_url_rewrites(instead_of)
    best = max((r for r in rules if url.startswith(r[0])), key=lambda r: len(r[0]), default=None)
    return best[1] + url[len(best[0]) :] if best else url


def local_path(url: str) -> str | None:
    """The path a URL names on this machine (a plain path or file://), None for a remote URL."""
    if url.startswith("file://"):
        return url[len("file://") :]
    if "://" in url or re.match(r"[^/]+:", url):  # a scheme, or scp-like [user@]host:path
        return None
    return url


def check_source(url: str, fetch_url: str) -> None:
    """A local source that does not exist, named before libgit2 calls it an unsupported URL protocol."""
    path = local_path(fetch_url)
    if path is None or os.path.exists(path):
        return
    if fetch_url != url:  # the path is this server's: the log names it, the public text does not
        log.warning("the rewritten upstream does not exist", extra={"url": public_url(url), "path": path})
        raise AnalysisError(
            f"LLAMA_BOT_URL_INSTEADOF rewrites {public_url(url)} to a path that does not exist"
        )
    raise AnalysisError(f"the upstream {public_url(path)} does not exist")


def mirror_path(data_dir: Path, name: str, url: str) -> Path:
    """The mirror of `url` (the URL fetched, after rewrites) for pin `name`: named by both, so that two pins,
    or two installations with different upstreams, never share objects or tags."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    key = hashlib.sha1(public_url(url).encode()).hexdigest()[:12]
    return data_dir / "mirrors" / f"{safe}-{key}.git"


def no_space(data_dir: Path) -> str:
    """A full disk in one line of public text: how much is free, not where."""
    try:
        free = size_text(shutil.disk_usage(data_dir).free)
    except OSError:
        free = "how much is free unknown"
    return f"no space left on the device holding LLAMA_BOT_DATA_DIR ({free} free)"


@contextlib.contextmanager
def disk_full_said(data_dir: Path) -> Iterator[None]:
    """A full disk while a mirror or its stores are written, by our own writes (ENOSPC) or by git's and
    libgit2's (`No space left on device`), as AnalysisError(`no_space`): one clear line, not a bug."""
    try:
        yield
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise AnalysisError(no_space(data_dir)) from None
    except (AnalysisError, pygit2.GitError) as exc:
        if NO_SPACE not in str(exc):
            raise
        raise AnalysisError(no_space(data_dir)) from None


@contextlib.contextmanager
def mirror_lock(path: Path) -> Iterator[int]:
    """Hold the lock of the mirror at `path` (`<data dir>/locks/<mirror>.lock`, which exists before the
    mirror does): one fetch at a time per mirror, across threads (each opens the file afresh) and processes.
    Yields the lock's descriptor, for the gits that write into the mirror to inherit (`run_git`): the lock
    is never unlocked, only closed, so that it is free once the last process holding it is gone."""
    locks = path.parent.parent / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{path.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield handle.fileno()


def _create_mirror(path: Path, shown: str) -> None:
    """An empty blobless partial clone of `shown` at `path`, configured under a temporary name and then
    renamed into place, so a kill leaves either no mirror or a whole one. The promisor remote is marked the
    way `git clone --filter` marks it (no extensions.partialClone, which libgit2 refuses to open)."""
    staging = path.with_name(f"{path.name}.new-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    repo = pygit2.init_repository(str(staging), bare=True)
    config = repo.config
    config[f"remote.{REMOTE}.promisor"] = True
    config[f"remote.{REMOTE}.partialCloneFilter"] = "blob:none"
    config["gc.auto"] = 0  # a repack under a reading analysis would pull its packs away
    config[URL_KEY] = shown
    os.rename(staging, path)


def stale_leftovers(git_dir: Path) -> list[Path]:
    """What a git killed halfway leaves in a repository nobody is writing: lock files, which would make
    the next fetch refuse to update a ref, and half-written packs and staging directories."""
    found = [p for p in (git_dir / "refs").rglob("*.lock")]
    found += [git_dir / n for n in ("packed-refs.lock", "config.lock", "shallow.lock", "FETCH_HEAD.lock")]
    found += list((git_dir / "objects" / "pack").glob("tmp_*"))
    found += list((git_dir / "objects").glob("incoming-*"))
    found += list(git_dir.parent.glob(f"{git_dir.name}.new-*"))
    return [p for p in found if p.exists()]


def _remove(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def open_mirror(path: Path, url: str, pin_url: str) -> pygit2.Repository:
    """The bare mirror at `path` of `url` (the pin's `pin_url` after the rewrites), created on first use;
    one that records another URL is not trusted. Call it holding `mirror_lock(path)`."""
    shown = public_url(url)
    remove_leftovers(path)
    if not path.exists():
        _create_mirror(path, shown)
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError:
        log.warning("a mirror is not a git repository", extra={"mirror": str(path)})
        raise AnalysisError(
            f"{mirror_name(path, pin_url)} is not a git repository: remove it to fetch afresh"
        ) from None
    _check_url(repo, path, shown, pin_url)
    return repo


def mirror_name(path: Path, pin_url: str) -> str:
    """How public text names the mirror at `path`: by the pin's URL and its place in the data directory,
    never by this server's path or the URL it is fetched from."""
    return f"the mirror of {public_url(pin_url)} (LLAMA_BOT_DATA_DIR/mirrors/{path.name})"


def remove_leftovers(path: Path) -> None:
    """Remove what an interrupted fetch left in the mirror, saying so in the log."""
    leftovers = stale_leftovers(path)
    if leftovers:
        log.warning(
            "removing what an interrupted fetch left",
            extra={"mirror": str(path), "paths": [str(p) for p in leftovers]},
        )
        _remove(leftovers)


def _check_url(repo: pygit2.Repository, path: Path, shown: str, pin_url: str) -> None:
    """Refuse a mirror that records another URL than `shown`; record it in one created but not yet used."""
    try:
        stored = repo.config[URL_KEY]
    except KeyError:
        stored = None
    if stored is None and not list(repo.references):  # created, then interrupted before the URL was recorded
        repo.config[URL_KEY] = stored = shown
    if stored != shown:
        log.warning(
            "a mirror holds another upstream",
            extra={"mirror": str(path), "holds": stored, "wanted": shown},
        )
        raise AnalysisError(
            f"{mirror_name(path, pin_url)} holds {'another' if stored else 'an unrecorded'} upstream: "
            "remove it to fetch afresh"
        )
