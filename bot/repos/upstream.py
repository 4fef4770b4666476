"""Upstream sources: ref resolution, fetching into mirrors, partial clones and commit attribution.

Upstream files are read from git objects at exact commits. A mirror
(`bot/repos/mirrors.py`) is a blobless partial clone kept by the git CLI: it fetches
only the refs it lacks (`tag X`, a commit id by id, else the branches), with
every commit and tree but no blob (`--filter=blob:none`; a source that cannot
filter sends everything, and the log says so). A commit id is fetched into a
store of the pull request's beside the mirror, never into it, and so are the
blobs read at it (`bot/repos/pinned.py`): what a fork pins is pruned. The
remote's URL, which may carry credentials, is handed to git in its environment
for each run and never written into the mirror.

Before the analysis reads a partial clone (a mirror, or an `--upstream-dir`
made with `--filter=blob:none` or lacking its largest blobs), the blobs it will
read are fetched in one `git fetch --stdin` from the promisor remote, as git's
own lazy fetch does (`git cat-file --batch` fetches them one request each: 4 s
against 0.03 s for 300 blobs over file://). What still cannot be read is named:
the patches touching it fail with the reason, the review lists it.

Whether a pinned commit is on a branch or tag (`on_branch_or_tag`,
bot/repos/upstreamrefs.py) is asked of what the upstream advertises; the branches and
tags a mirror fetches for it (commits and trees, pruned as upstream drops them)
live under `refs/llama-bot/upstream/`, apart from the refs `resolve` reads.

Credentials in an upstream URL are used to fetch and shown nowhere: every URL
and message leaving this module goes through `public_url`. Its errors are public
text (check runs show them): they name the upstream by the pin's URL, not the
one LLAMA_BOT_URL_INSTEADOF made of it, and no path of the server's.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from bot.model import AnalysisError, Commit
from bot.repos import pinned
from bot.repos.gitcli import (
    NO_SPACE,
    REMOTE,
    fetch_blobs,
    fetch_command,
    git_env,
    git_error,
    in_public,
    is_commit_id,
    missing_remote_ref,
    public_url,
    ref_specs,
    run_git,
)
from bot.repos.history import History, needed_blobs
from bot.repos.mirrors import (
    check_source,
    disk_full_said,
    mirror_lock,
    mirror_name,
    mirror_path,
    open_mirror,
    remove_leftovers,
    rewrite_url,
)
from bot.repos.upstreamrefs import Listings, advertised_tips, contains, local_tips, peeled

log = logging.getLogger("bot.upstream")
log.addHandler(logging.NullHandler())  # the CLI configures no logging: its user hears `announce` instead

NO_FILTER = "filtering not recognized by server"  # git's warning when the source sends every blob
UPSTREAM_TIPS = "refs/llama-bot/upstream"  # a mirror's copy of the upstream's branches and tags
REFUSED_BLOB = re.compile(r"not our ref ([0-9a-f]{40})")  # the object a remote's upload-pack cannot send
MAX_REFUSED = 8  # blobs one remote may refuse before the rest of a fetch is given up on
# What a mirror fetches, in turn, while the tips it holds do not tell whether a pinned commit is on one.
FETCHED_TIPS = (
    ("the default branch", (f"+HEAD:{UPSTREAM_TIPS}/HEAD",)),
    (
        "every branch and tag",
        (f"+refs/heads/*:{UPSTREAM_TIPS}/heads/*", f"+refs/tags/*:{UPSTREAM_TIPS}/tags/*"),
    ),
)


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
        self.listings: Listings | None = None  # the upstream's recent listings of branches and tags
        self.pull: str | None = None  # the pull request whose analysis this is (`owner/repo#7`), if any
        self.pinned: Path | None = None  # the store of its pinned commits, where their blobs are fetched
        self._held: tuple[int, ...] = ()  # the mirror's lock while this holds it, for every git to hold too

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
        listings: Listings | None = None,
        pull: str | None = None,
    ) -> Upstream:
        """Open (or create) the mirror of the pin's URL and fetch when one of `refs` is missing (a commit id
        into a store of pull request `pull`'s, bot/repos/pinned.py); `announce` hears what is fetched from
        where into where, before the fetch starts, and how a fetch longer than a few seconds is getting on;
        `fetching` hears when each fetch, of refs now or of blobs later, starts and ends; `listings` keeps
        what the upstream advertised."""
        fetch_url = rewrite_url(url, instead_of)
        path = mirror_path(data_dir, name, fetch_url)
        with disk_full_said(data_dir), mirror_lock(path) as held:
            created = not path.exists()
            upstream = cls(open_mirror(path, fetch_url, url), url, mirror_name(path, url))
            upstream.fetch_url, upstream.lock_path, upstream.announce = fetch_url, path, announce
            upstream.fetching, upstream.listings, upstream.pull = fetching, listings, pull
            upstream._with_stores(pinned.stores_of(data_dir, path, pull), refs)
            missing = [ref for ref in refs if resolve(upstream.repo, ref) is None]
            if missing:
                check_source(url, fetch_url)
                what = "creating a mirror" if created else "updating the mirror"
                line = (
                    f"{what} of {public_url(fetch_url)} for {name} in {path}: fetching {', '.join(missing)}"
                )
                log.info(line)
                if announce is not None:
                    announce(line)
                upstream._held = (held,)
                try:
                    with upstream._fetching(), upstream._in_public():
                        upstream._fetch(fetch_url, missing)
                finally:
                    upstream._held = ()
        return upstream

    def _with_stores(self, stores: list[Path], refs: list[str]) -> None:
        """Read the objects of the pull request's `stores` too; the first that holds a commit of `refs` the
        mirror lacks takes the blobs this analysis fetches, once what a killed fetch left in it is gone
        (called holding the mirror's lock, which every git writing into the store holds)."""
        odb = self.repo.odb
        lacked = [r for r in refs if is_commit_id(r) and not odb.exists(r)]
        for store in stores:
            odb.add_disk_alternate(str(store / "objects"))
        holders = (s for s in stores if any(pygit2.Repository(str(s)).odb.exists(r) for r in lacked))
        self.pinned = next(holders, None)
        if self.pinned is not None:
            remove_leftovers(self.pinned)
            pinned.used(self.pinned)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the mirror's lock (a local clone has none), and have every git run meanwhile hold it; a full
        disk meanwhile is said as such (`disk_full_said`)."""
        if self.lock_path is None:
            yield
            return
        with disk_full_said(self.lock_path.parent.parent), mirror_lock(self.lock_path) as held:
            self._held = (held,)
            try:
                yield
            finally:
                self._held = ()

    @contextlib.contextmanager
    def _in_public(self) -> Iterator[None]:
        """Errors as public text: the pin's URL for the one fetched from, no path of the data directory."""
        try:
            yield
        except AnalysisError as exc:
            raise AnalysisError(self._public(str(exc))) from None

    def _public(self, text: str) -> str:
        """`text` naming the upstream by the pin's URL, the mirror by `mirror_name`, and no other path under
        the data directory."""
        if self.fetch_url is None or self.lock_path is None:
            return public_url(text)
        text = text.replace(str(self.lock_path), self.source)
        text = text.replace(str(self.lock_path.parent.parent), "LLAMA_BOT_DATA_DIR")
        return in_public(text, self.fetch_url, self.web_url)

    @contextlib.contextmanager
    def _fetching(self) -> Iterator[None]:
        if self.fetching is not None:
            self.fetching(True)
        try:
            yield
        finally:
            if self.fetching is not None:
                self.fetching(False)

    def _fetch(self, url: str, refs: list[str]) -> None:
        """Fetch `refs`: tags into the mirror, commit ids by id into a store of the pull request's (GitHub
        serves any commit), through the mirror's branches when the source refuses that; a tag or id the
        source lacks is left for `commit` to name."""
        problem = self._fetch_refs(self.repo.path, url, [r for r in refs if not is_commit_id(r)], by_id=True)
        problem = self._fetch_ids(url, [r for r in refs if is_commit_id(r)]) or problem
        wanted = [r for r in refs if resolve(self.repo, r) is None]
        if problem is not None and wanted:
            raise AnalysisError(f"cannot fetch {', '.join(wanted)} from {self.web_url}: {problem}")

    def _fetch_ids(self, url: str, ids: list[str]) -> str | None:
        """Fetch commit `ids` by id into a store of the pull request's, the ones that still do not resolve
        through the mirror's branches; why git failed, or None."""
        if not ids:
            return None
        problem = self._fetch_pinned(url, ids)
        if unresolved := [r for r in ids if resolve(self.repo, r) is None]:
            problem = self._fetch_refs(self.repo.path, url, unresolved, by_id=False)
        return problem

    def _fetch_pinned(self, url: str, ids: list[str]) -> str | None:
        """Fetch commit `ids` by id into a new store of the pull request's, which this analysis then reads
        and fetches its blobs into; why git failed (the store is dropped), or None."""
        assert self.lock_path is not None
        data_dir = self.lock_path.parent.parent
        store = pinned.create_store(data_dir, self.lock_path, self.pull, ids)
        problem = self._fetch_refs(str(store), url, ids, by_id=True)
        if problem is not None:
            pinned.remove(store)
            return problem
        self.repo.odb.add_disk_alternate(str(store / "objects"))
        self.pinned = store
        pinned.prune(data_dir, keep=store)
        return None

    def _fetch_refs(self, git_dir: str, url: str, refs: list[str], by_id: bool) -> str | None:
        """One `git fetch` of `refs` into `git_dir`, again without each tag the source says it lacks; why git
        failed, or None."""
        wanted = list(refs)
        while wanted:
            code, stderr = run_git(
                fetch_command(git_dir, "--filter=blob:none", REMOTE, *ref_specs(wanted, by_id)),
                git_env(url),
                f"fetching {', '.join(wanted)}",
                progress=self.announce,
                hold=self._held,
            )
            self._note_unfiltered(url, stderr)
            absent = (missing_remote_ref(stderr) or "").removeprefix("refs/tags/") if code else ""
            if absent not in wanted:
                return git_error(stderr) if code else None
            wanted.remove(absent)  # no such tag: fetch the others
        return None

    def _note_unfiltered(self, url: str, stderr: str) -> None:
        if NO_FILTER in stderr:
            self._say(
                f"{public_url(url)} cannot serve a blobless fetch (uploadpack.allowFilter is off "
                f"there): fetched every blob of the history instead"
            )

    def on_branch_or_tag(self, commit: pygit2.Oid) -> bool:
        """Whether `commit` is on a branch or tag of the upstream (bot/repos/upstreamrefs.py): a local clone's
        own, a mirror's as the upstream advertises them. AnalysisError when that cannot be told."""
        if self.fetch_url is None:
            default, others = local_tips(self.repo, self.web_url)
            return contains(self.repo, commit, default) or contains(self.repo, commit, others)
        with self._locked(), self._in_public():
            return self._advertised_contains(commit, self.fetch_url)

    def _advertised_contains(self, commit: pygit2.Oid, url: str) -> bool:
        """Test `commit` against the tips the upstream advertises that the mirror holds; while that does not
        decide, fetch the default branch, then every branch and tag (commits and trees, as the mirror keeps
        them: what it holds already is not sent again) and test again."""
        recent = self.listings.recent(url) if self.listings is not None else None
        if recent is not None and contains(self.repo, commit, recent):
            return True  # listed a moment ago; what that listing does not show is asked again
        tips = advertised_tips(self.repo.path, url, self.web_url, self.announce)
        if self.listings is not None:
            self.listings.remember(url, tips)
        if contains(self.repo, commit, tips):
            return True
        for what, specs in FETCHED_TIPS:
            self._say(
                f"is {str(commit)[:12]} on a branch or tag of {public_url(url)}? fetching {what}",
                logging.INFO,
            )
            self._fetch_tips(url, specs, what)
            if contains(self.repo, commit, [*tips, *self._fetched_tips(specs)]):
                return True
        return False

    def _fetch_tips(self, url: str, specs: tuple[str, ...], what: str) -> None:
        """Fetch the upstream's `specs` into the mirror's UPSTREAM_TIPS, pruning the ones it no longer has;
        an upstream without a default branch (an empty one) is no error."""
        command = fetch_command(self.repo.path, "--filter=blob:none", "--prune", REMOTE, *specs)
        with self._fetching():
            code, stderr = run_git(
                command, git_env(url), f"fetching {what}", progress=self.announce, hold=self._held
            )
        self._note_unfiltered(url, stderr)
        if code != 0 and missing_remote_ref(stderr) != "HEAD":
            raise AnalysisError(f"cannot fetch {what} of {public_url(url)}: {git_error(stderr)}")

    def _fetched_tips(self, specs: tuple[str, ...]) -> list[pygit2.Oid]:
        """The commits of the mirror's refs that `specs` fetched into (the default branch's one ref, or every
        branch's and tag's)."""
        prefixes = tuple(spec.split(":", 1)[1].removesuffix("*") for spec in specs)
        return [
            tip
            for name in self.repo.references
            if name.startswith(prefixes) and (tip := peeled(self.repo, name)) is not None
        ]

    def _say(self, line: str, level: int = logging.WARNING) -> None:
        log.log(level, line)
        if self.announce is not None:
            self.announce(line)

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
        missing = self._missing_blobs(history, wanted)
        if not missing:
            return
        with self._locked(), self._fetching():
            unfetched, problems = self._fetch_blobs(missing)
            full = next((problem for problem in problems if NO_SPACE in problem), None)
            if full is not None:  # not a few files the upstream lacks: nothing more can be fetched
                raise AnalysisError(full)
            if self.pinned is not None and self.lock_path is not None:  # the store grew: keep the bound
                pinned.prune(self.lock_path.parent.parent, keep=self.pinned)
        if unfetched:
            self.fetch_problem = self._public(
                "; ".join(problems) or "the clone has no promisor remote to fetch them from"
            )
        log.info(
            "fetched missing upstream blobs",
            extra={
                "source": self.source,
                "missing": len(missing),
                "unfetched": len(unfetched),
                "problem": self.fetch_problem,
            },
        )

    def fetch_tree(self, commit: pygit2.Commit) -> None:
        """In a partial clone, fetch every blob of `commit`'s tree it lacks, in one batch (the probe writes
        the whole tree out); what cannot be fetched stays missing."""
        if not _may_lack_objects(self.repo):
            return
        odb, missing, trees = self.repo.odb, [], [commit.tree]
        while trees:
            for entry in trees.pop():
                if entry.filemode == pygit2.enums.FileMode.TREE:
                    trees.append(self.repo[entry.id].peel(pygit2.Tree))
                elif entry.filemode != pygit2.enums.FileMode.COMMIT and not odb.exists(entry.id):
                    missing.append(str(entry.id))
        if missing:
            with self._locked(), self._fetching():
                self._fetch_blobs(sorted(set(missing)))

    def _missing_blobs(self, history: History, wanted: Callable[[str], bool]) -> list[str]:
        """The blobs the analysis of `history` will read that this clone lacks; none outside a partial clone."""
        if not _may_lack_objects(self.repo):
            return []
        odb = self.repo.odb
        return sorted(str(oid) for oid in needed_blobs(history, wanted) if not odb.exists(oid))

    def _fetch_blobs(self, missing: list[str]) -> tuple[list[str], list[str]]:
        """Ask each promisor remote in turn for the blobs still missing: those none sent, and why each
        remote did not."""
        problems = []
        for remote in promisor_remotes(self.repo):
            url = self.fetch_url if remote == REMOTE else None
            into = str(self.pinned) if self.pinned is not None and remote == REMOTE else self.repo.path
            problem = self._fetch_from(into, remote, url, missing)
            missing = [oid for oid in missing if not self.repo.odb.exists(oid)]
            if not missing:
                break
            problems.append(problem or f"the remote {remote!r} did not send them")
        return missing, problems

    def _fetch_from(self, git_dir: str, remote: str, url: str | None, wanted: list[str]) -> str | None:
        """Fetch `wanted` from one remote into `git_dir`; None when it sent them all, else why not. git
        fetches a batch whole or not at all: a blob the remote says it lacks is set aside and the rest asked
        for again, up to MAX_REFUSED blobs, so a few the remote cannot send do not cost the review every
        other file."""
        first = None
        for _ in range(MAX_REFUSED + 1):
            problem = fetch_blobs(git_dir, wanted, remote, url, self.announce, self._held)
            if problem is None:
                return first
            first = first or problem
            refused = REFUSED_BLOB.search(problem)
            if refused is None or refused[1] not in wanted or len(wanted) == 1:
                return first
            wanted = [oid for oid in wanted if oid != refused[1]]
        return first

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
    listings: Listings | None = None  # keeps what the upstreams advertised, for the analyses that follow
    pull: str | None = None  # the pull request analysed (`owner/repo#7`): where its pinned commits are kept
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
                self.data_dir,
                name,
                url,
                refs,
                self.instead_of,
                announce=self.announce,
                fetching=fetching,
                listings=self.listings,
                pull=self.pull,
            )
