"""Whether a commit is on a branch or tag of its upstream.

A version file may name any commit the upstream's URL serves, and GitHub serves every commit of a
repository's forks and pull requests (`refs/pull/N/head`) through it: fetched by id, a commit nobody upstream
merged looks like any other. Only the branches and tags count (`refs/heads/*`, `refs/tags/*`).

A local git directory (`--upstream-dir`) answers from its own branches and tags, and from the
remote-tracking branches of its remotes at the upstream's URL (not those of a fork it also fetches). A
mirror asks the upstream what it advertises now (`local_tips` is never used on it: its refs hold whatever
commit a version file named); `bot/repos/upstream.py` fetches the tips it lacks. Ancestry is one revision walk
from the commit with the tips hidden: commits only, never a tree or blob.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import pygit2

from bot.model import AnalysisError
from bot.repos.gitcli import REMOTE, git_env, git_error, in_public, public_url, run_git

MAX_LISTING = 64 << 20  # bytes of `git ls-remote` output read: some 700,000 branches and tags
RECENT_SECONDS = 60.0  # how long one listing of an upstream's branches and tags may confirm a commit again
MAX_KEPT_LISTINGS = 16  # upstream URLs whose last listing is kept, ...
MAX_KEPT_TIPS = 200_000  # ... each of at most this many tips (llama.cpp advertises some 10,000)
OID_SIZE = 20  # bytes of a raw commit id
_LISTED = re.compile(r"([0-9a-f]{40})\t(refs/(?:heads|tags)/\S+)")


def repository_key(url: str) -> str:
    """What names one repository whatever the URL's form: `https://github.com/o/r`, `git@github.com:o/r.git`
    and `ssh://git@github.com/o/r` are all `github.com/o/r`."""
    url = public_url(url).strip().rstrip("/").removesuffix(".git")
    found = re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/]*)(/.*)?", url) or re.fullmatch(
        r"(?:[^@/]+@)?([^/:]{2,}):(.*)", url
    )
    if found is None:
        return url
    host, path = found[1], (found[2] or "").strip("/")
    return f"{host.split(':')[0].lower()}/{path.lower()}"


def contains(repo: pygit2.Repository, commit: pygit2.Oid, tips: Iterable[pygit2.Oid]) -> bool:
    """Whether `commit` is one of `tips` or an ancestor of one; a tip the repository lacks does not count.
    AnalysisError when the walk meets a commit the repository lacks."""
    present = [tip for tip in dict.fromkeys(tips) if _is_commit(repo, tip)]
    if commit in present:
        return True
    if not present:
        return False
    walker = repo.walk(commit, pygit2.enums.SortMode.NONE)
    try:
        for tip in present:
            walker.hide(tip)
        return next(walker, None) is None  # what a hidden tip reaches is never walked
    except (KeyError, pygit2.GitError) as exc:
        raise AnalysisError(f"the history in {repo.path.rstrip('/')} is incomplete ({exc})") from None


def _is_commit(repo: pygit2.Repository, oid: pygit2.Oid) -> bool:
    obj = repo.get(oid)
    return obj is not None and obj.type == pygit2.enums.ObjectType.COMMIT


def local_tips(repo: pygit2.Repository, url: str) -> tuple[list[pygit2.Oid], list[pygit2.Oid]]:
    """A local clone's default branch (the branch HEAD names), and its branches, tags and remote-tracking
    branches of remotes at `url`, as commits."""
    prefixes = ("refs/heads/", "refs/tags/", *_remote_prefixes(repo, url))
    tips = [peeled(repo, name) for name in repo.references if name.startswith(prefixes)]
    first = _default_branch_tip(repo)
    return [t for t in (first,) if t is not None], [t for t in tips if t is not None]


def _default_branch_tip(repo: pygit2.Repository) -> pygit2.Oid | None:
    """The commit of the branch HEAD names; None when HEAD names no branch."""
    head = repo.references.get("HEAD")
    if head is None or head.type != pygit2.enums.ReferenceType.SYMBOLIC:
        return None
    default = head.target
    return peeled(repo, default) if isinstance(default, str) and default.startswith("refs/heads/") else None


def _remote_prefixes(repo: pygit2.Repository, url: str) -> list[str]:
    """`refs/remotes/<name>/` of every remote whose URL is the upstream's."""
    key = repository_key(url)
    return [f"refs/remotes/{r.name}/" for r in repo.remotes if r.url and repository_key(r.url) == key]


def peeled(repo: pygit2.Repository, name: str) -> pygit2.Oid | None:
    """The commit a ref names; None for a tag of a tree or blob, or an object the clone lacks."""
    try:
        return repo.references[name].peel(pygit2.Commit).id
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def advertised_tips(
    git_dir: str, url: str, shown: str, progress: Callable[[str], None] | None
) -> list[pygit2.Oid]:
    """The commits of every branch and tag the upstream at `url` (the pin's `shown`) advertises now
    (annotated tags peeled), asked with `git ls-remote --heads --tags`, which asks the server for nothing
    else (no refs/pull/*). AnalysisError when it cannot be asked, or answers more than MAX_LISTING."""
    command = [
        "git",
        "--git-dir",
        git_dir,
        "-c",
        "credential.helper=",
        "ls-remote",
        "--heads",
        "--tags",
        REMOTE,
    ]
    return parse_listing(_listing(command, git_env(url), url, shown, "branches and tags", progress))


def _listing(
    command: list[str],
    env: dict[str, str],
    url: str,
    pin_url: str,
    what: str,
    progress: Callable[[str], None] | None,
) -> str:
    """The output of a `git ls-remote` of the upstream at `url`, held to MAX_LISTING (in a file, not in
    memory, while git writes it); AnalysisError naming `what` was listed, and the upstream by the pin's
    `pin_url`, when git fails or it is longer."""
    shown = public_url(pin_url)
    with tempfile.TemporaryFile() as listing:
        code, stderr = run_git(
            command, env, f"listing the {what} of {public_url(url)}", progress=progress, output=listing
        )
        if code != 0:
            raise AnalysisError(
                f"cannot list the {what} of {shown}: {in_public(git_error(stderr), url, shown)}"
            )
        if os.fstat(listing.fileno()).st_size > MAX_LISTING:
            raise AnalysisError(f"{shown} lists more than {MAX_LISTING >> 20} MiB of {what}")
        listing.seek(0)
        return listing.read().decode(errors="replace")


def parse_listing(text: str) -> list[pygit2.Oid]:
    """`git ls-remote` lines as the commits they name: a tag's peeled line (`refs/tags/v1^{}`) stands for
    the tag object before it."""
    named: dict[str, str] = {}
    for line in text.splitlines():
        found = _LISTED.fullmatch(line.strip())
        if found is None:
            continue
        oid, name = found[1], found[2]
        if name.endswith("^{}"):
            named[name[:-3]] = oid
        else:
            named.setdefault(name, oid)
    return [pygit2.Oid(hex=oid) for oid in dict.fromkeys(named.values())]


@dataclass(frozen=True)
class Advertised:
    """What an upstream advertises now: its tags' names, and each branch's head commit."""

    tags: list[str]
    heads: dict[str, str]  # branch name -> 40-hex commit id


def advertised_refs(url: str, shown: str, progress: Callable[[str], None] | None = None) -> Advertised:
    """The tags and branch heads the upstream at `url` (the pin's `shown`) advertises now, asked with `git
    ls-remote --tags --heads --refs` (the release tags and tracked branches a bump chooses from).
    AnalysisError when it cannot be asked, or answers more than MAX_LISTING."""
    command = ["git", "-c", "credential.helper=", "ls-remote", "--tags", "--heads", "--refs", REMOTE]
    # No repository (a path below /dev/null never is one): the one around the working directory would lend
    # its own `origin` URL first.
    env = {**git_env(url), "GIT_DIR": os.path.join(os.devnull, "no-repository")}
    text = _listing(command, env, url, shown, "tags and branches", progress)
    tags, heads = [], {}
    for line in text.splitlines():
        if found := _LISTED.fullmatch(line.strip()):
            kind, _, name = found[2].removeprefix("refs/").partition("/")
            if kind == "tags":
                tags.append(name)
            else:
                heads[name] = found[1]
    return Advertised(tags, heads)


class Listings(Protocol):
    """Where the branches and tags an upstream advertised are kept for the analyses that follow."""

    def recent(self, url: str) -> list[pygit2.Oid] | None: ...

    def remember(self, url: str, tips: list[pygit2.Oid]) -> None: ...


class RecentListings:
    """The tips each upstream URL advertised within the last `seconds`, as raw ids (20 bytes a tip), so
    that the service lists an upstream once a minute however many analyses ask. A listing only ever
    confirms a commit (`Upstream`): one it does not show is asked of the upstream again."""

    def __init__(self, seconds: float = RECENT_SECONDS, clock: Callable[[], float] = time.monotonic):
        self._seconds, self._clock = seconds, clock
        self._kept: dict[str, tuple[float, bytes]] = {}  # url -> (when listed, the tips' raw ids)
        self._lock = threading.Lock()

    def recent(self, url: str) -> bytes | None:
        with self._lock:
            kept = self._kept.get(url)
        if kept is None or self._clock() - kept[0] > self._seconds:
            return None
        return kept[1]

    def remember(self, url: str, raw: bytes) -> None:
        """Keep a listing (the oldest kept one goes when MAX_KEPT_LISTINGS are); a larger one than
        MAX_KEPT_TIPS, or one that is not whole ids, is not kept."""
        if not isinstance(raw, bytes) or len(raw) % OID_SIZE or len(raw) > MAX_KEPT_TIPS * OID_SIZE:
            return
        with self._lock:
            self._kept.pop(url, None)
            self._kept[url] = (self._clock(), raw)
            while len(self._kept) > MAX_KEPT_LISTINGS:
                del self._kept[next(iter(self._kept))]


def packed_tips(tips: list[pygit2.Oid]) -> bytes:
    return b"".join(tip.raw for tip in tips)


def unpacked_tips(raw: bytes) -> list[pygit2.Oid]:
    return [pygit2.Oid(raw=raw[at : at + OID_SIZE]) for at in range(0, len(raw), OID_SIZE)]
