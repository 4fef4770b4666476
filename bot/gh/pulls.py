"""A pull request: its metadata, changed files, both commits' trees, configuration and people."""

from __future__ import annotations

import base64
import http
from collections.abc import Awaitable, Callable

from gidgethub import BadRequest

from bot.config import CONFIG_PATH, Config, load_config, parse_config
from bot.gh import refused
from bot.gh.github import GitHubClient
from bot.gh.pullref import PullRef
from bot.gh.rest import BlobCache, RestSnapshot
from bot.model import AnalysisError
from bot.repos.snapshot import MemorySnapshot


class PullRequests:
    def __init__(
        self,
        gh: GitHubClient,
        ref: PullRef,
        blobs: BlobCache,
        saw_head: Callable[[str], Awaitable[None]] | None = None,
    ):
        self.gh, self.ref, self.blobs = gh, ref, blobs
        self.saw_head = saw_head  # hears the head of every read: what a command may act on is decided by it

    async def get(self) -> dict:
        pr = await self.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", self.ref.names)
        if self.saw_head is not None:
            await self.saw_head(pr["head"]["sha"])
        return pr

    async def changed_paths(self) -> list[str]:
        """Every path the PR changes, a renamed file's old path too."""
        paths: list[str] = []
        async for item in self.gh.getiter(
            "/repos/{owner}/{repo}/pulls/{number}/files?per_page=100", self.ref.names
        ):
            paths.append(item["filename"])
            if item.get("previous_filename"):
                paths.append(item["previous_filename"])
        return paths

    async def snapshots(self, pr: dict) -> tuple[RestSnapshot, RestSnapshot]:
        """The PR's merge base and head, as the files API compares them."""
        head = pr["head"]["sha"]
        compare = await self.gh.getitem(
            "/repos/{owner}/{repo}/compare/{basehead}?per_page=1",
            {**self.ref.names, "basehead": f"{pr['base']['sha']}...{head}"},
        )
        base = (compare.get("merge_base_commit") or {}).get("sha") or pr["base"]["sha"]
        owner, repo = self.ref.owner, self.ref.repo
        return (
            await RestSnapshot.load(self.gh, owner, repo, base, self.blobs),
            await RestSnapshot.load(self.gh, owner, repo, head, self.blobs),
        )

    async def config(self, default_branch: str) -> Config:
        """`.github/llama-bot.toml` on the default branch; defaults when absent, AnalysisError when broken."""
        try:
            item = await self.gh.getitem(
                "/repos/{owner}/{repo}/contents/{+path}{?ref}",
                {**self.ref.names, "path": CONFIG_PATH, "ref": default_branch},
            )
        except BadRequest as exc:
            if refused(exc, http.HTTPStatus.NOT_FOUND):
                return parse_config(None)
            raise
        if not isinstance(item, dict) or item.get("type") != "file":
            raise AnalysisError(f"{CONFIG_PATH} on {default_branch} is not a file")
        return load_config(MemorySnapshot({CONFIG_PATH: base64.b64decode(item.get("content") or "")}))

    async def repo_config(self, pr: dict) -> Config:
        """The configuration, the defaults when it is broken (for jobs that report no analysis)."""
        try:
            return await self.config(pr["base"]["repo"]["default_branch"])
        except AnalysisError:
            return parse_config(None)

    async def permission(self, login: str) -> dict:
        """The collaborator permission of `login`; `none` for someone GitHub does not know here."""
        try:
            return await self.gh.getitem(
                "/repos/{owner}/{repo}/collaborators/{username}/permission",
                {**self.ref.names, "username": login},
            )
        except BadRequest as exc:
            if refused(exc, http.HTTPStatus.NOT_FOUND):
                return {"permission": "none"}
            raise

    async def react(self, comment_id: int, content: str) -> None:
        await self.gh.post(
            "/repos/{owner}/{repo}/issues/comments/{id}/reactions",
            {**self.ref.names, "id": comment_id},
            data={"content": content},
        )
