"""GitHub Actions: the platform workflows the bot dispatches, their runs, and cancelling them."""

from __future__ import annotations

import http
from collections.abc import Awaitable, Callable

from gidgethub import BadRequest

from bot.gh import refused
from bot.gh.github import GitHubClient


class Actions:
    """One repository's workflow dispatches and runs."""

    def __init__(self, gh: GitHubClient, owner: str, repo: str):
        self.gh = gh
        self.names = {"owner": owner, "repo": repo}

    async def dispatch(self, workflow: str, body: dict, find: Callable[[], Awaitable[dict | None]]) -> dict:
        """The dispatch call, made once: before a retry `find` looks for the run it may have started."""
        return await self.gh.post_once(
            "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches",
            {**self.names, "workflow": workflow},
            data=body,
            find=find,
        )

    async def run(self, run_id: int) -> dict | None:
        """The workflow run `run_id`, None when GitHub has none."""
        try:
            return await self.gh.getitem(
                "/repos/{owner}/{repo}/actions/runs/{run_id}", {**self.names, "run_id": run_id}
            )
        except BadRequest as exc:
            if refused(exc, http.HTTPStatus.NOT_FOUND):
                return None
            raise

    async def runs(self, workflow: str, query: dict) -> list[dict]:
        """The runs of `workflow` that `query` (event, branch, head_sha, created, per_page) selects."""
        found = await self.gh.getitem(
            "/repos/{owner}/{repo}/actions/workflows/{workflow}/runs{?event,branch,head_sha,created,per_page}",
            {**self.names, "workflow": workflow, **query},
        )
        return found.get("workflow_runs") or []

    async def artifact(self, run_id: int, name: str) -> dict | None:
        """The run's unexpired artifact called `name`, None when it has none."""
        found = await self.gh.getitem(
            "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts{?name,per_page}",
            {**self.names, "run_id": run_id, "name": name, "per_page": 10},
        )
        listed = found.get("artifacts") or []
        return next((a for a in listed if a.get("name") == name and not a.get("expired")), None)

    async def archive(self, artifact_id: int, max_bytes: int) -> bytes:
        """An artifact's zip archive, held to `max_bytes`. GitHub answers with a redirect to a short-lived
        address elsewhere, which is followed without the installation token (another origin)."""
        return await self.gh.get_capped(
            "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/zip",
            {**self.names, "artifact_id": artifact_id},
            accept="application/vnd.github+json",
            max_bytes=max_bytes,
        )

    async def cancel(self, run_id: int) -> bool:
        """Cancel a run; False when it had already finished (409) or is gone (404)."""
        try:
            await self.gh.post(
                "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
                {**self.names, "run_id": run_id},
                data={},
            )
        except BadRequest as exc:
            if refused(exc, http.HTTPStatus.CONFLICT, http.HTTPStatus.NOT_FOUND):
                return False
            raise
        return True
