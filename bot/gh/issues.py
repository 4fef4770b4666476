"""The pin dashboard's issue: found by its number or, when the store has none, among the label's open
issues by the bot's marker; opened once; rewritten in place."""

from __future__ import annotations

import http

from gidgethub import BadRequest

from bot.decisions.dashboard import MARKER
from bot.gh import refused
from bot.gh.github import GitHubClient


class DashboardIssue:
    """One repository's dashboard issue."""

    def __init__(self, gh: GitHubClient, owner: str, repo: str):
        self.gh = gh
        self.names = {"owner": owner, "repo": repo}

    async def get(self, number: int) -> dict | None:
        """Issue `number`, or None when it is gone or is a pull request."""
        try:
            issue = await self.gh.getitem(
                "/repos/{owner}/{repo}/issues/{number}", {**self.names, "number": number}
            )
        except BadRequest as exc:
            if refused(exc, http.HTTPStatus.NOT_FOUND, http.HTTPStatus.GONE):
                return None
            raise
        return None if "pull_request" in issue else issue

    async def find(self, label: str) -> dict | None:
        """The bot's open issue under `label` whose body carries the dashboard's marker."""
        found = await self.gh.getitem(
            "/repos/{owner}/{repo}/issues{?state,labels,per_page}",
            {**self.names, "state": "open", "labels": label, "per_page": 100},
        )
        return next((i for i in found if is_dashboard(i)), None)

    async def open(self, title: str, body: str, label: str) -> dict:
        """A new dashboard issue; one a lost answer had already opened is found, not opened twice."""
        return await self.gh.post_once(
            "/repos/{owner}/{repo}/issues",
            self.names,
            data={"title": title, "body": body, "labels": [label]},
            find=lambda: self.find(label),
        )

    async def update(self, number: int, title: str, body: str) -> dict:
        """The issue's title and body rewritten, and the issue open again if someone closed it."""
        return await self.gh.patch(
            "/repos/{owner}/{repo}/issues/{number}",
            {**self.names, "number": number},
            data={"title": title, "body": body, "state": "open"},
        )


def is_dashboard(issue: dict) -> bool:
    """Whether an issue is a dashboard the bot wrote: by a bot, its body opening with the marker."""
    return (issue.get("user") or {}).get("type") == "Bot" and (issue.get("body") or "").startswith(MARKER)
