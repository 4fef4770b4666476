"""Git data: the regenerated patches' commit on the head branch, and the branches made for forks."""

from __future__ import annotations

import base64
import http
from urllib.parse import quote

from gidgethub import BadRequest

from bot.gh import refused
from bot.gh.github import GitHubClient


class BranchMoved(Exception):
    """The head branch is no longer at the commit the patches were regenerated for."""

    def __init__(self, now_sha: str):
        super().__init__(now_sha)
        self.now_sha = now_sha


def _ref_path(owner: str, repo: str, branch: str, kind: str = "refs") -> str:
    return f"/repos/{quote(owner)}/{quote(repo)}/git/{kind}/heads/{quote(branch, safe='/')}"


class GitData:
    """One repository's blobs, trees, commits and branch refs."""

    def __init__(self, gh: GitHubClient, owner: str, repo: str):
        self.gh, self.owner, self.repo = gh, owner, repo
        self.names = {"owner": owner, "repo": repo}

    async def commit(
        self, branch: str, head_sha: str, files: list[tuple[str, str, bytes]], message: str
    ) -> tuple[str, str]:
        """One commit of `files` (path, mode, bytes) on `branch` at `head_sha`; the ref moves only by
        fast-forward. BranchMoved when the branch has moved on; a refusal raises as GitHub answered it."""
        sha, url = await self.make_commit(head_sha, files, message)
        await self.advance(branch, head_sha, sha)
        return sha, url

    async def make_commit(
        self, parent_sha: str, files: list[tuple[str, str, bytes]], message: str
    ) -> tuple[str, str]:
        """A commit of `files` (path, mode, bytes) on `parent_sha`, on no branch yet: its sha and page."""
        tree_items = [
            {"path": path, "mode": mode, "type": "blob", "sha": await self._blob(data)}
            for path, mode, data in files
        ]
        parent = await self.gh.getitem(
            "/repos/{owner}/{repo}/git/commits/{sha}", {**self.names, "sha": parent_sha}
        )
        tree = await self.gh.post(
            "/repos/{owner}/{repo}/git/trees",
            self.names,
            data={"base_tree": parent["tree"]["sha"], "tree": tree_items},
        )
        new = await self.gh.post(
            "/repos/{owner}/{repo}/git/commits",
            self.names,
            data={"message": message, "tree": tree["sha"], "parents": [parent_sha]},
        )
        return new["sha"], new.get("html_url") or new["url"]

    async def _blob(self, data: bytes) -> str:
        blob = await self.gh.post(
            "/repos/{owner}/{repo}/git/blobs",
            self.names,
            data={"content": base64.b64encode(data).decode(), "encoding": "base64"},
        )
        return blob["sha"]

    async def advance(self, branch: str, head_sha: str, new_sha: str) -> None:
        """`branch` moved from `head_sha` to `new_sha`, its descendant. A fast-forward alone would also take
        a branch moved back to an ancestor of `head_sha` since, bringing back what its author dropped: the
        branch is read first, and a 422 read again (it moved meanwhile, or is protected)."""
        now = await self.branch_sha(branch)
        if now != head_sha:
            raise BranchMoved(now)
        try:
            await self.gh.patch(
                _ref_path(self.owner, self.repo, branch), data={"sha": new_sha, "force": False}
            )
        except BadRequest as exc:
            if not refused(exc, http.HTTPStatus.UNPROCESSABLE_ENTITY):
                raise
            now = await self.branch_sha(branch)
            if now != head_sha:
                raise BranchMoved(now) from None
            raise  # not moved: a refusal (a protected branch), answered like a 403

    async def branch_sha(self, branch: str) -> str:
        """The commit `branch` is at (a branch that is gone answers 404, as a refused write does)."""
        ref = await self.gh.getitem(_ref_path(self.owner, self.repo, branch, "ref"))
        return ref["object"]["sha"]

    async def branch(self, branch: str) -> dict | None:
        """GitHub's description of `branch` (whether it is protected, among others); None when it has none.
        Read access is enough, unlike for the branch's protection rules."""
        try:
            return await self.gh.getitem(
                f"/repos/{quote(self.owner)}/{quote(self.repo)}/branches/{quote(branch, safe='/')}"
            )
        except BadRequest as exc:
            if not refused(exc, http.HTTPStatus.NOT_FOUND):
                raise
            return None

    async def force_branch(self, branch: str, sha: str) -> None:
        """`branch` at `sha`: created, or moved there whatever it held."""
        try:
            await self.gh.patch(_ref_path(self.owner, self.repo, branch), data={"sha": sha, "force": True})
        except BadRequest as exc:
            if not refused(exc, http.HTTPStatus.UNPROCESSABLE_ENTITY):
                raise
            await self.gh.post(
                "/repos/{owner}/{repo}/git/refs", self.names, data={"ref": f"refs/heads/{branch}", "sha": sha}
            )

    async def delete_branch(self, branch: str) -> None:
        """`branch` deleted; one already gone is no error."""
        try:
            await self.gh.delete(_ref_path(self.owner, self.repo, branch))
        except BadRequest as exc:
            if not refused(exc, http.HTTPStatus.NOT_FOUND, http.HTTPStatus.UNPROCESSABLE_ENTITY):
                raise
