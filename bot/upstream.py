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
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.model import AnalysisError, Commit
from bot.snapshot import GitSnapshot, blob_cache

log = logging.getLogger("bot.upstream")
log.addHandler(logging.NullHandler())  # the CLI configures no logging: its user hears `announce` instead

URL_KEY = "llama-bot.url"  # the mirror's config entry naming the URL it mirrors
REMOTE = "origin"  # the mirror's promisor remote; its URL lives only in the environment of each git run
FETCH_TIMEOUT = 600  # seconds for one git fetch (refs, or a partial clone's missing blobs)
PROGRESS_AFTER = 2.0  # seconds a fetch runs silently before its progress is shown
PROGRESS_EVERY = 5.0  # seconds between progress lines after that
NO_FILTER = "filtering not recognized by server"  # git's warning when the source sends every blob
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")
_ZERO = pygit2.Oid(hex="0" * 40)


def public_url(text: str) -> str:
    """`text` with the user and password taken out of every URL in it: what links, logs and messages show."""
    return _USERINFO.sub(r"\1", text)


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


def _git_error(stderr: str) -> str:
    """git's own reason from its stderr: the first `fatal:`/`error:` line, else the first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    reason = next(
        (line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else ""
    )
    return public_url(re.sub(r"^(fatal|error): ", "", reason)) or "no reason given"


_COUNTING = re.compile(r"^(?:remote: )?[A-Z][A-Za-z ]+: +\d+")


def latest_progress(stderr: str) -> str | None:
    """The last of git's counting lines in what it wrote so far (`Receiving objects:  45% (450/1000), 1.20
    MiB | 2.00 MiB/s`): git redraws them with carriage returns, the newest says where the fetch is."""
    for line in reversed(re.split(r"[\r\n]", stderr)):
        line = line.strip()
        if _COUNTING.match(line):
            return public_url(line)
    return None


def _git_env(url: str | None) -> dict[str, str]:
    """git's environment: no prompt, no credential helper storing the URL's password, and the remote's URL
    as configuration that lives only in this process's environment (GIT_CONFIG_COUNT), never on disk."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    if url is not None:
        index = int(env.get("GIT_CONFIG_COUNT") or 0)
        env.update(
            {
                "GIT_CONFIG_COUNT": str(index + 1),
                f"GIT_CONFIG_KEY_{index}": f"remote.{REMOTE}.url",
                f"GIT_CONFIG_VALUE_{index}": url,
            }
        )
    return env


def _git_fetch_command(git_dir: str, *args: str) -> list[str]:
    """`git fetch` into `git_dir` without side work: automatic gc would repack under libgit2's feet, and a
    credential helper would store the password of a URL that carries one."""
    return [
        "git",
        "--git-dir",
        git_dir,
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "-c",
        "credential.helper=",
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--progress",
        *args,
    ]


def run_git(
    command: list[str],
    env: dict[str, str],
    what: str,
    stdin: str = "",
    progress: Callable[[str], None] | None = None,
) -> tuple[int, str]:
    """Run git, and when it takes longer than PROGRESS_AFTER, tell `progress` (and the log) every
    PROGRESS_EVERY seconds how long it has run and git's latest object counts. Returns git's exit status
    (-1 when it could not start or took longer than FETCH_TIMEOUT) and its stderr."""
    try:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
    except FileNotFoundError:
        return -1, "fatal: git is not installed"
    chunks: list[bytes] = []
    assert proc.stderr is not None and proc.stdin is not None
    fd = proc.stderr.fileno()  # read what git has written so far, as it comes: its progress lines
    reader = threading.Thread(
        target=lambda: chunks.extend(iter(lambda: os.read(fd, 65536), b"")), daemon=True
    )
    reader.start()
    try:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except BrokenPipeError:  # git ended before reading: its stderr says why
        pass
    started = time.monotonic()
    shown_at = started + PROGRESS_AFTER
    while True:
        now = time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(shown_at, started + FETCH_TIMEOUT) - now))
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if now >= started + FETCH_TIMEOUT:
                proc.kill()
                proc.wait()
                reader.join()
                return -1, f"fatal: {what} took longer than {FETCH_TIMEOUT} s"
            counts = latest_progress(b"".join(chunks).decode(errors="replace"))
            line = f"still {what} ({now - started:.0f} s): {counts or 'waiting for the upstream'}"
            log.info(line)
            if progress is not None:
                progress(line)
            shown_at = now + PROGRESS_EVERY
    reader.join()
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def fetch_blobs(
    repo: pygit2.Repository,
    oids: list[str],
    remote: str,
    url: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> str | None:
    """Fetch `oids` from `remote` (at `url` when the repository does not record it) in one request, as
    git's lazy fetch of a partial clone does; None when git succeeded, else why not."""
    command = _git_fetch_command(repo.path, "--filter=blob:none", "--stdin", "--", remote)
    command[3:3] = ["-c", "fetch.negotiationAlgorithm=noop"]  # blobs by id: no history to negotiate
    code, stderr = run_git(
        command, _git_env(url), f"fetching {len(oids)} blobs", "".join(f"{o}\n" for o in oids), progress
    )
    if code != 0:
        return f"git fetch from the remote {remote!r} failed: {_git_error(stderr)}"
    return None


def _missing_remote_ref(stderr: str) -> str | None:
    """The ref git says the remote lacks (`couldn't find remote ref refs/tags/b999`), else None."""
    found = re.search(r"couldn't find remote ref (\S+)", stderr)
    return found[1] if found else None


def ref_specs(refs: list[str], by_id: bool) -> list[str]:
    """The refspecs that bring `refs` into a mirror: each tag by name, and each commit id either by id
    (kept under refs/llama-bot/commits/, so it stays reachable) or, when `by_id` is off, through every
    branch, since it is on one of them."""
    specs = [f"+refs/tags/{r}:refs/tags/{r}" for r in refs if not _is_commit_id(r)]
    ids = [r for r in refs if _is_commit_id(r)]
    if by_id:
        specs += [f"+{r}:refs/llama-bot/commits/{r}" for r in ids]
    elif ids:
        specs.append("+refs/heads/*:refs/heads/*")
    return specs


def _is_commit_id(ref: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{40}", ref) is not None


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
        for by_id in (True, False) if any(map(_is_commit_id, refs)) else (True,):
            while wanted:
                code, stderr = run_git(
                    _git_fetch_command(
                        self.repo.path, "--filter=blob:none", REMOTE, *ref_specs(wanted, by_id)
                    ),
                    _git_env(url),
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
                absent = (_missing_remote_ref(stderr) or "").removeprefix("refs/tags/") if code else ""
                if absent not in wanted:
                    problem = _git_error(stderr) if code else None
                    break
                wanted.remove(absent)  # no such tag: fetch the others
            wanted = [r for r in refs if resolve(self.repo, r) is None]
            if not any(map(_is_commit_id, wanted)):
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


def needed_blobs(history: History, wanted: Callable[[str], bool]) -> set[pygit2.Oid]:
    """The blobs checking and reviewing old..new reads: both sides of the change between the refs and of every
    commit between them (the review, and commit attribution), and the `wanted` files at both refs."""
    found: set[pygit2.Oid] = set()
    for delta in history.old.tree.diff_to_tree(history.new.tree).deltas:
        found.update(f.id for f in (delta.old_file, delta.new_file) if f.mode != pygit2.GIT_FILEMODE_COMMIT)
    for files in history.file_changes:
        found.update(oid for _, oid, mode in files if mode != pygit2.GIT_FILEMODE_COMMIT)
    repo = history.upstream.repo
    for commit in {history.old.id: history.old, history.new.id: history.new}.values():
        snapshot = GitSnapshot(repo, commit)
        found.update(
            entry.id for entry in (snapshot.entry(p) for p in snapshot.files() if wanted(p)) if entry
        )
    found.discard(_ZERO)
    return found


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
    A copy of the file that a partial clone lacks is no evidence either way.
    """

    upstream: Upstream
    old: pygit2.Commit
    new: pygit2.Commit

    def __post_init__(self) -> None:
        self._commits: list[pygit2.Commit] | None = None
        self._file_changes: list[list[tuple[str, pygit2.Oid, int]]] | None = None
        self._touched: list[set[str]] | None = None
        self._touching: dict[str, list[pygit2.Commit]] = {}
        self._changes: dict[tuple[str, str], tuple[set[bytes], set[bytes]]] = {}
        self._lines_now: dict[str, list[bytes]] = {}
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
            self._file_changes = [
                [
                    (f.path, f.id, f.mode)
                    for delta in (
                        c.parents[0].tree.diff_to_tree(c.tree) if c.parents else c.tree.diff_to_tree()
                    ).deltas
                    for f in (delta.old_file, delta.new_file)
                ]
                for c in self.commits
            ]
        return self._file_changes

    @property
    def between(self) -> set[str]:
        return {str(c.id) for c in self.commits}

    def read(self, commit: pygit2.Commit, path: str) -> bytes | None:
        """`path` at `commit` (b"" when there is no such file); None when the clone lacks its object, which
        is noted in `upstream.unreadable`."""
        try:
            entry = commit.tree[path]
        except KeyError:
            return b""
        if not isinstance(entry, pygit2.Blob):
            return b""  # a directory or a submodule: no file text
        try:
            return self._blobs.read(entry.id)
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

    def _changed_lines(self, commit: pygit2.Commit, path: str) -> tuple[set[bytes], set[bytes]]:
        key = (str(commit.id), path)
        if key not in self._changes:
            # Both buffers must stay referenced while the patch's lines are read: libgit2 points into them.
            before = self.read(commit.parents[0], path) if commit.parents else b""
            after = self.read(commit, path)
            added: set[bytes] = set()
            removed: set[bytes] = set()
            if before is not None and after is not None:
                patch = pygit2.Patch.create_from(before, after, context_lines=0)
                for hunk in patch.hunks:
                    for line in hunk.lines:
                        text = _meaningful(line.raw_content)
                        if text is not None:
                            (added if line.origin == "+" else removed).add(text)
            self._changes[key] = (added, removed)
        return self._changes[key]

    def commits_for_lines(
        self, path: str, start: int, end: int, removed: Iterable[bytes] = ()
    ) -> list[Commit]:
        """Commits between the refs that changed lines start..end (1-based) of `path` at the new ref,
        or that removed any of `removed` (lines that used to be there)."""
        touching = self.touching(path)
        if not touching:
            return []
        if path not in self._lines_now:
            self._lines_now[path] = (self.read(self.new, path) or b"").split(b"\n")
        lines = self._lines_now[path]
        now = {t for t in map(_meaningful, lines[max(0, start - 1) : max(0, end)]) if t}
        gone = {t for t in map(_meaningful, removed) if t}
        found = []
        for commit in touching:
            added, deleted = self._changed_lines(commit, path)
            if added & now or deleted & gone:
                found.append(self.upstream.describe(commit))
        return found
