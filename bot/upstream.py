"""Upstream sources: mirrors keyed by URL, ref resolution, partial clones and commit attribution.

Upstream files are read from git objects at exact commits. A mirror lives at
`<data dir>/mirrors/<pin>-<sha1(url)[:12]>.git`, named after the URL it is
fetched from (after the LLAMA_BOT_URL_INSTEADOF rewrites, without credentials),
and records that URL: it refuses to serve another, so a pin moved to a fork
never reads the old repository's tags.

A mirror is a blobless partial clone kept by the git CLI: it fetches only the
refs it lacks (`tag X`, a commit id by id, else the branches), with every
commit and tree but no blob (`--filter=blob:none`; a source that cannot filter
sends everything, and the log says so). The remote's URL, which may carry
credentials, is handed to git in its environment for each run and never written
into the mirror. A file lock per mirror serialises fetches across threads and
processes; a fetch killed halfway leaves temporary files and stale lock files,
which the next fetch removes before it starts (new objects become visible only
when whole, and a mirror is created under a temporary name).

Before the analysis reads a partial clone (a mirror, or an `--upstream-dir`
made with `--filter=blob:none` or lacking its largest blobs), the blobs it will
read are fetched in one `git fetch --stdin` from the promisor remote, as git's
own lazy fetch does (`git cat-file --batch` fetches them one request each: 4 s
against 0.03 s for 300 blobs over file://). What still cannot be read is named:
the patches touching it fail with the reason, the review lists it.

Credentials in an upstream URL are used to fetch and shown nowhere: every URL
and message leaving this module goes through `public_url`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.gitcli import (
    REMOTE,
    fetch_blobs,
    fetch_command,
    git_env,
    git_error,
    is_commit_id,
    missing_remote_ref,
    public_url,
    ref_specs,
    run_git,
)
from bot.history import History, needed_blobs
from bot.model import AnalysisError, Commit

log = logging.getLogger("bot.upstream")
log.addHandler(logging.NullHandler())  # the CLI configures no logging: its user hears `announce` instead

URL_KEY = "llama-bot.url"  # the mirror's config entry naming the URL it mirrors
NO_FILTER = "filtering not recognized by server"  # git's warning when the source sends every blob


def parse_url_rewrites(value: str | None) -> list[tuple[str, str]]:
    """LLAMA_BOT_URL_INSTEADOF's `NEW=OLD,...` as (OLD, NEW) prefix pairs, like git's url.NEW.insteadOf OLD.

    Raises AnalysisError naming the first item that is not NEW=OLD, so a typo is not silently ignored.
    """
    rules = []
    for item in (i.strip() for i in (value or "").split(",")):
        if not item:
            continue
        new, sep, old = item.partition("=")
        if not sep or not new.strip() or not old.strip():
            raise AnalysisError(f"LLAMA_BOT_URL_INSTEADOF item {public_url(item)!r}: expected NEW=OLD")
        rules.append((old.strip(), new.strip()))
    return rules


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


def _check_source(url: str, fetch_url: str) -> None:
    """A local source that does not exist, named before libgit2 calls it an unsupported URL protocol."""
    path = local_path(fetch_url)
    if path is None or os.path.exists(path):
        return
    if fetch_url != url:
        raise AnalysisError(
            f"LLAMA_BOT_URL_INSTEADOF rewrites {public_url(url)} to {public_url(path)}, which does not exist"
        )
    raise AnalysisError(f"the upstream {public_url(path)} does not exist")


def mirror_path(data_dir: Path, name: str, url: str) -> Path:
    """The mirror of `url` (the URL fetched, after rewrites) for pin `name`: named by both, so that two pins,
    or two installations with different upstreams, never share objects or tags."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    key = hashlib.sha1(public_url(url).encode()).hexdigest()[:12]
    return data_dir / "mirrors" / f"{safe}-{key}.git"


@contextlib.contextmanager
def mirror_lock(path: Path) -> Iterator[None]:
    """Hold the lock of the mirror at `path` (`<data dir>/locks/<mirror>.lock`, which exists before the
    mirror does): one fetch at a time per mirror, across threads (each opens the file afresh) and processes."""
    locks = path.parent.parent / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{path.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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


def _open_mirror(path: Path, url: str) -> pygit2.Repository:
    """The bare mirror at `path`, created on first use; one that records another URL is not trusted.
    Call it holding `mirror_lock(path)`."""
    shown = public_url(url)
    leftovers = stale_leftovers(path)
    if leftovers:
        log.warning(
            "removing what an interrupted fetch left",
            extra={"mirror": str(path), "paths": [str(p) for p in leftovers]},
        )
        _remove(leftovers)
    if not path.exists():
        _create_mirror(path, shown)
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError:
        raise AnalysisError(
            f"the mirror {path} is not a git repository: remove it to fetch {shown} afresh"
        ) from None
    try:
        stored = repo.config[URL_KEY]
    except KeyError:
        stored = None
    if stored is None and not list(repo.references):  # created, then interrupted before the URL was recorded
        repo.config[URL_KEY] = stored = shown
    if stored != shown:
        raise AnalysisError(
            f"the mirror {path} holds {stored or 'an unrecorded upstream'}, not {shown}: "
            f"remove it to fetch {shown} afresh"
        )
    return repo


def _tag_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    try:
        return repo.lookup_reference(f"refs/tags/{ref}").peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, ValueError):
        return None


def resolve(repo: pygit2.Repository, ref: str) -> pygit2.Commit | None:
    """A validated ref (tag or 40-hex id) to its commit, or None when this repository lacks it.

    Branches are never consulted: a version file names a fixed upstream state, and a mirror
    only fetches tags, so `master` would resolve through --upstream-dir but not through the mirror.
    """
    commit = _tag_commit(repo, ref)
    if commit is None and re.fullmatch(r"[0-9a-f]{40}", ref):
        try:
            commit = repo[ref].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            commit = None
    return commit


def promisor_remotes(repo: pygit2.Repository) -> list[str]:
    """The remotes a partial clone fetches its missing objects from (`remote.<name>.promisor`)."""
    names = []
    for entry in repo.config:
        key = entry.name
        if key.lower() == "extensions.partialclone" and entry.value:
            names.append(entry.value)
        elif (
            key.lower().startswith("remote.")
            and key.lower().endswith(".promisor")
            and (entry.value or "").lower() in ("true", "yes", "on", "1")
        ):
            names.append(key[len("remote.") : -len(".promisor")])
    return list(dict.fromkeys(names))


def _may_lack_objects(repo: pygit2.Repository) -> bool:
    """Whether git marks the repository as a partial clone (or a copy of one): a promisor remote or pack."""
    return bool(promisor_remotes(repo)) or any((Path(repo.path) / "objects" / "pack").glob("*.promisor"))


class Upstream:
    """One pin's upstream repository, where it was found, and what of it could not be read."""

    def __init__(self, repo: pygit2.Repository, web_url: str, source: str | None = None):
        self.repo = repo
        self.web_url = public_url(web_url).removesuffix(".git").rstrip("/")
        # Where refs and objects are looked up, for the messages that say so.
        self.source = source or f"the repository {repo.path.rstrip('/')}"
        self.unreadable: dict[str, str] = {}  # path -> the first commit whose copy of it could not be read
        self.fetch_problem: str | None = None  # why the partial clone's missing blobs could not be fetched
        # A mirror's remote URL (never in its config), its lock, and who hears about slow fetches.
        self.fetch_url: str | None = None
        self.lock_path: Path | None = None
        self.announce: Callable[[str], None] | None = None
        # Told True when a fetch from the upstream starts and False when it ends (the service's banner).
        self.fetching: Callable[[bool], None] | None = None

    @classmethod
    def open_dir(cls, git_dir: str, web_url: str) -> Upstream:
        try:
            return cls(pygit2.Repository(git_dir), web_url, f"--upstream-dir {git_dir}")
        except pygit2.GitError:
            raise AnalysisError(f"--upstream-dir {git_dir}: not a git repository") from None

    @classmethod
    def mirror(
        cls,
        data_dir: Path,
        name: str,
        url: str,
        refs: list[str],
        instead_of: str | None,
        announce: Callable[[str], None] | None = None,
        fetching: Callable[[bool], None] | None = None,
    ) -> Upstream:
        """Open (or create) the mirror of the pin's URL and fetch when one of `refs` is missing;
        `announce` hears what is fetched from where into where, before the fetch starts, and how a fetch
        longer than a few seconds is getting on; `fetching` hears when each fetch, of refs now or of
        blobs later, starts and ends."""
        fetch_url = rewrite_url(url, instead_of)
        path = mirror_path(data_dir, name, fetch_url)
        with mirror_lock(path):
            created = not path.exists()
            upstream = cls(
                _open_mirror(path, fetch_url), url, f"the mirror {path}, fetched from {public_url(fetch_url)}"
            )
            upstream.fetch_url, upstream.lock_path, upstream.announce = fetch_url, path, announce
            upstream.fetching = fetching
            missing = [ref for ref in refs if resolve(upstream.repo, ref) is None]
            if missing:
                _check_source(url, fetch_url)
                what = "creating a mirror" if created else "updating the mirror"
                line = (
                    f"{what} of {public_url(fetch_url)} for {name} in {path}: fetching {', '.join(missing)}"
                )
                log.info(line)
                if announce is not None:
                    announce(line)
                with upstream._fetching():
                    upstream._fetch(fetch_url, missing, path)
        return upstream

    @contextlib.contextmanager
    def _fetching(self) -> Iterator[None]:
        if self.fetching is not None:
            self.fetching(True)
        try:
            yield
        finally:
            if self.fetching is not None:
                self.fetching(False)

    def _fetch(self, url: str, refs: list[str], path: Path) -> None:
        """Fetch `refs` into the mirror: commit ids by id first (GitHub serves any commit), through the
        branches when the source refuses that; a tag or id the source lacks is left for `commit` to name."""
        wanted = list(refs)
        problem = None
        for by_id in (True, False) if any(map(is_commit_id, refs)) else (True,):
            while wanted:
                code, stderr = run_git(
                    fetch_command(self.repo.path, "--filter=blob:none", REMOTE, *ref_specs(wanted, by_id)),
                    git_env(url),
                    f"fetching {', '.join(wanted)}",
                    progress=self.announce,
                )
                if NO_FILTER in stderr:
                    line = (
                        f"{public_url(url)} cannot serve a blobless fetch (uploadpack.allowFilter is off "
                        f"there): fetched every blob of the history instead"
                    )
                    log.warning(line)
                    if self.announce is not None:
                        self.announce(line)
                absent = (missing_remote_ref(stderr) or "").removeprefix("refs/tags/") if code else ""
                if absent not in wanted:
                    problem = git_error(stderr) if code else None
                    break
                wanted.remove(absent)  # no such tag: fetch the others
            wanted = [r for r in refs if resolve(self.repo, r) is None]
            if not any(map(is_commit_id, wanted)):
                break
        if problem is not None and wanted:
            raise AnalysisError(
                f"cannot fetch {', '.join(wanted)} from {public_url(url)} into {path}: {problem}"
            )

    def commit(self, ref: str, where: str) -> pygit2.Commit:
        commit = resolve(self.repo, ref)
        if commit is None:
            raise AnalysisError(
                f"{where} names {ref!r}, which is not a tag or commit of {self.web_url} "
                f"(looked in {self.source})"
            )
        if not self.repo.odb.exists(commit.tree_id):
            raise AnalysisError(
                f"{where} names {ref!r}, whose tree is missing from {self.source}: the analysis "
                "needs every tree (a --filter=blob:none clone has them, --filter=tree:0 does not)"
            )
        return commit

    def describe(self, commit: pygit2.Commit) -> Commit:
        subject = commit.message.split("\n", 1)[0].strip()
        return Commit(str(commit.id), subject, f"{self.web_url}/commit/{commit.id}")

    def fetch_missing(self, history: History, wanted: Callable[[str], bool]) -> None:
        """In a partial clone, fetch the blobs the analysis of `history` will read, in one batch, before it
        reads them; when some cannot be fetched, `fetch_problem` says why (the readers name the files)."""
        if not _may_lack_objects(self.repo):
            return
        odb = self.repo.odb
        missing = sorted(str(oid) for oid in needed_blobs(history, wanted) if not odb.exists(oid))
        if not missing:
            return
        wanted_count = len(missing)
        remotes = promisor_remotes(self.repo)
        problems = []
        with mirror_lock(self.lock_path) if self.lock_path else contextlib.nullcontext(), self._fetching():
            for remote in remotes:
                url = self.fetch_url if remote == REMOTE else None
                problem = fetch_blobs(self.repo, missing, remote, url, self.announce)
                missing = [oid for oid in missing if not odb.exists(oid)]
                if not missing:
                    break
                problems.append(problem or f"the remote {remote!r} did not send them")
        if missing:
            self.fetch_problem = "; ".join(problems) or "the clone has no promisor remote to fetch them from"
        log.info(
            "fetched missing upstream blobs",
            extra={
                "source": self.source,
                "missing": wanted_count,
                "unfetched": len(missing),
                "problem": self.fetch_problem,
            },
        )

    def note_unreadable(self, path: str, commit: str) -> None:
        self.unreadable.setdefault(path, commit)

    def missing_note(self, path: str, ref: str) -> str:
        """Why `path` at `ref` cannot be read, for whoever needed it."""
        why = f" and could not be fetched: {self.fetch_problem}" if self.fetch_problem else ""
        return f"{path} at {ref} is missing from the upstream clone ({self.source}){why}"


@dataclass
class Mirrors:
    """Every upstream mirror of one data directory: where each lives, the URL rewriting, one lock per mirror
    for the threads of this process (the file lock guards other processes), and the git directories a
    user named to be used as they are (`--upstream-dir`)."""

    data_dir: Path
    instead_of: str | None = None  # LLAMA_BOT_URL_INSTEADOF
    local: Mapping[str, str] = field(default_factory=dict)  # pin name -> a git directory used as it is
    announce: Callable[[str], None] | None = None  # hears what is fetched, and how a slow fetch goes
    _locks: dict[str, threading.Lock] = field(default_factory=dict, init=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, init=False)

    def open(
        self, name: str, url: str, refs: list[str], fetching: Callable[[bool], None] | None = None
    ) -> Upstream:
        """The upstream of pin `name` (its git URL `url`) holding `refs`, fetched into its mirror if need be;
        `fetching` hears when each fetch from it starts and ends."""
        if name in self.local:
            return Upstream.open_dir(self.local[name], url)
        path = mirror_path(self.data_dir, name, rewrite_url(url, self.instead_of))
        with self._guard:
            lock = self._locks.setdefault(str(path), threading.Lock())
        with lock:  # two jobs fetching into one mirror at once would fight over its lock files
            return Upstream.mirror(
                self.data_dir, name, url, refs, self.instead_of, announce=self.announce, fetching=fetching
            )
