"""Upstream sources: mirrors keyed by URL, ref resolution, partial clones and commit attribution.

Upstream files are read from git objects at exact commits. A mirror lives at
`<data dir>/mirrors/<pin>-<sha1(url)[:12]>.git`, named after the URL it is
fetched from (after the LLAMA_BOT_URL_INSTEADOF rewrites, without credentials),
and records that URL: it refuses to serve another, so a pin moved to a fork
never reads the old repository's tags. A mirror fetches only when a ref it
needs is missing, and libgit2 negotiates so that only missing objects travel
(the local transport has no shallow fetch).

An `--upstream-dir` may be a partial clone (`--filter=blob:none`, or a copy
that lacks its largest blobs). Before the analysis reads it, the blobs it will
read are fetched in one `git fetch --stdin` from the promisor remote, as git's
own lazy fetch does (`git cat-file --batch` fetches them one request each: 4 s
against 0.03 s for 300 blobs over file://). What still cannot be read is named:
the patches touching it fail with the reason, the review lists it.

Credentials in an upstream URL are used to fetch and shown nowhere: every URL
and message leaving this module goes through `public_url`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.model import AnalysisError, Commit
from bot.snapshot import GitSnapshot

log = logging.getLogger("bot.upstream")

URL_KEY = "llama-bot.url"  # the mirror's config entry naming the URL it mirrors
FETCH_TIMEOUT = 600  # seconds for fetching a partial clone's missing blobs
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


def _open_mirror(path: Path, url: str) -> pygit2.Repository:
    """The bare mirror at `path`, created on first use; one that records another URL is not trusted."""
    shown = public_url(url)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        repo = pygit2.init_repository(str(path), bare=True)
        repo.config[URL_KEY] = shown
        return repo
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


def fetch_blobs(repo: pygit2.Repository, oids: list[str], remote: str) -> str | None:
    """Fetch `oids` from `remote` in one request, as git's lazy fetch of a partial clone does; None when git
    succeeded, else why not. Automatic gc is off: it would repack under libgit2's feet."""
    command = [
        "git",
        "--git-dir",
        repo.path,
        "-c",
        "fetch.negotiationAlgorithm=noop",
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--filter=blob:none",
        "--stdin",
        "--",
        remote,
    ]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            command,
            input="".join(f"{oid}\n" for oid in oids),
            capture_output=True,
            text=True,
            env=env,
            timeout=FETCH_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return "git is not installed"
    except subprocess.TimeoutExpired:
        return f"git fetch from the remote {remote!r} took longer than {FETCH_TIMEOUT} s"
    if done.returncode != 0:
        return f"git fetch from the remote {remote!r} failed: {_git_error(done.stderr)}"
    return None


class Upstream:
    """One pin's upstream repository, where it was found, and what of it could not be read."""

    def __init__(self, repo: pygit2.Repository, web_url: str, source: str | None = None):
        self.repo = repo
        self.web_url = public_url(web_url).removesuffix(".git").rstrip("/")
        # Where refs and objects are looked up, for the messages that say so.
        self.source = source or f"the repository {repo.path.rstrip('/')}"
        self.unreadable: dict[str, str] = {}  # path -> the first commit whose copy of it could not be read
        self.fetch_problem: str | None = None  # why the partial clone's missing blobs could not be fetched

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
    ) -> Upstream:
        """Open (or create) the mirror of the pin's URL and fetch when one of `refs` is missing;
        `announce` hears what is fetched from where into where, before the fetch starts."""
        fetch_url = rewrite_url(url, instead_of)
        path = mirror_path(data_dir, name, fetch_url)
        created = not path.exists()
        upstream = cls(
            _open_mirror(path, fetch_url), url, f"the mirror {path}, fetched from {public_url(fetch_url)}"
        )
        missing = [ref for ref in refs if resolve(upstream.repo, ref) is None]
        if missing:
            _check_source(url, fetch_url)
            if announce is not None:
                what = "creating a mirror" if created else "updating the mirror"
                announce(
                    f"{what} of {public_url(fetch_url)} for {name} in {path}: fetching {', '.join(missing)}"
                )
            upstream._fetch(fetch_url, refs, path)
        return upstream

    def _fetch(self, url: str, refs: list[str], path: Path) -> None:
        remote = self.repo.remotes.create_anonymous(url)  # never saved: the URL may carry credentials
        tags = [r for r in refs if not re.fullmatch(r"[0-9a-f]{40}", r)]
        specs = [f"+refs/tags/{t}:refs/tags/{t}" for t in tags]
        if len(specs) < len(refs):  # a commit id: bring the branches, it is on one of them
            specs.append("+refs/heads/*:refs/heads/*")
        try:
            remote.fetch(specs, depth=0)
        except pygit2.GitError as exc:
            message = public_url(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
            missing = ", ".join(r for r in refs if resolve(self.repo, r) is None)
            if missing:
                raise AnalysisError(
                    f"cannot fetch {missing} from {public_url(url)} into {path}: {message}"
                ) from None

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
        for remote in remotes:
            problem = fetch_blobs(self.repo, missing, remote)
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


def needed_blobs(history: History, wanted: Callable[[str], bool]) -> set[pygit2.Oid]:
    """The blobs checking and reviewing old..new reads: both sides of the change between the refs and of every
    commit between them (the review, and commit attribution), and the `wanted` files at both refs."""
    found: set[pygit2.Oid] = set()
    diffs = [history.old.tree.diff_to_tree(history.new.tree)]
    diffs += [
        c.parents[0].tree.diff_to_tree(c.tree) if c.parents else c.tree.diff_to_tree()
        for c in history.commits
    ]
    for diff in diffs:
        for delta in diff.deltas:
            found.update(
                f.id for f in (delta.old_file, delta.new_file) if f.mode != pygit2.GIT_FILEMODE_COMMIT
            )
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

    def read(self, commit: pygit2.Commit, path: str) -> bytes | None:
        """`path` at `commit` (b"" when there is no such file); None when the clone lacks its object, which
        is noted in `upstream.unreadable`."""
        blob_id = self._blob_id(commit, path)
        if blob_id is None:
            return b""
        try:
            obj = self.upstream.repo[blob_id]
        except KeyError:
            self.upstream.note_unreadable(path, str(commit.id))
            return None
        return obj.data if isinstance(obj, pygit2.Blob) else b""

    def touching(self, path: str) -> list[pygit2.Commit]:
        """Commits between the refs that changed `path` (against their first parent), newest first."""
        if path not in self._touching:
            self._touching[path] = [
                c
                for c in self.commits
                if self._blob_id(c, path) != (self._blob_id(c.parents[0], path) if c.parents else None)
            ]
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
        lines = (self.read(self.new, path) or b"").split(b"\n")
        now = {t for t in map(_meaningful, lines[max(0, start - 1) : max(0, end)]) if t}
        gone = {t for t in map(_meaningful, removed) if t}
        found = []
        for commit in touching:
            added, deleted = self._changed_lines(commit, path)
            if added & now or deleted & gone:
                found.append(self.upstream.describe(commit))
        return found
