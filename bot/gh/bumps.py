"""A repository as a bump uses it: any commit's files, and the bump pull
requests on the bot's branches (found, opened, refreshed)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from bot.decisions.bump import BRANCH_PREFIX
from bot.gh.github import GitHubClient
from bot.gh.rest import BlobCache, RestSnapshot

MAX_BUMP_BRANCHES = 100  # the bump branches GitHub lists that are looked at, beside those the store recorded


class BumpPulls:
    """One repository's bump branches and their pull requests."""

    def __init__(self, gh: GitHubClient, owner: str, repo: str, blobs: BlobCache):
        self.gh, self.owner, self.repo, self.blobs = gh, owner, repo, blobs
        self.names = {"owner": owner, "repo": repo}

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    async def snapshot(self, sha: str) -> RestSnapshot:
        return await RestSnapshot.load(self.gh, self.owner, self.repo, sha, self.blobs)

    async def merge_base(self, base_sha: str, head_sha: str) -> str:
        """The commit a pull request from `head_sha` into `base_sha` is compared with."""
        compare = await self.gh.getitem(
            "/repos/{owner}/{repo}/compare/{basehead}?per_page=1",
            {**self.names, "basehead": f"{base_sha}...{head_sha}"},
        )
        return (compare.get("merge_base_commit") or {}).get("sha") or base_sha

    async def open_bumps(self, recorded: Iterable[str] = ()) -> list[dict]:
        """The open pull requests whose head is one of the bot's bump branches in this repository: those
        its store `recorded` (however many), then those GitHub lists under the prefix (a branch made before
        the store kept them; at most MAX_BUMP_BRANCHES)."""
        found: list[dict] = []
        for branch in dict.fromkeys([*recorded, *await self._bump_branches()]):
            found += await self.open_from(branch)
        return found

    async def _bump_branches(self) -> list[str]:
        """The branches under BRANCH_PREFIX (GitHub lists a prefix's refs in one answer)."""
        refs = await self.gh.getitem(
            f"/repos/{quote(self.owner)}/{quote(self.repo)}/git/matching-refs/"
            f"heads/{quote(BRANCH_PREFIX, safe='/')}"
        )
        names = [str(r.get("ref", "")).removeprefix("refs/heads/") for r in refs if isinstance(r, dict)]
        return [n for n in names if n.startswith(BRANCH_PREFIX)][:MAX_BUMP_BRANCHES]

    async def open_from(self, branch: str) -> list[dict]:
        """The open pull requests from `branch` of this repository."""
        return await self.gh.getitem(
            "/repos/{owner}/{repo}/pulls{?state,head,per_page}",
            {**self.names, "state": "open", "head": f"{self.owner}:{branch}", "per_page": 100},
        )

    async def open_pull(self, branch: str, base: str, title: str, body: str) -> dict:
        """A pull request from `branch` into `base`; the one a lost answer had already opened is found, not
        opened twice."""

        async def opened() -> dict | None:
            return next(iter(await self.open_from(branch)), None)

        return await self.gh.post_once(
            "/repos/{owner}/{repo}/pulls",
            self.names,
            data={"title": title, "head": branch, "base": base, "body": body},
            find=opened,
        )

    async def refresh_pull(self, number: int, title: str, body: str) -> dict:
        return await self.gh.patch(
            "/repos/{owner}/{repo}/pulls/{number}",
            {**self.names, "number": number},
            data={"title": title, "body": body},
        )
