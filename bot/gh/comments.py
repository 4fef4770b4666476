"""The checklist comment and the replies: posted once each, found again after a lost answer or a crash."""

from __future__ import annotations

import http

from gidgethub import BadRequest

from bot.gh import refused
from bot.gh.posted import PostedByJob
from bot.render.checklist import COMMENT_LIMIT
from bot.render.env import MARKER


class ChecklistComment(PostedByJob):
    """The bot's one checklist comment on a pull request, and its reply comments there."""

    async def find(self) -> dict | None:
        """The checklist comment: the one this job posted or found before, else the bot's marked one."""
        if self.progress.comment_id:
            try:
                found = await self.gh.getitem(
                    "/repos/{owner}/{repo}/issues/comments/{id}",
                    {**self.ref.names, "id": self.progress.comment_id},
                )
            except BadRequest as exc:
                if not refused(exc, http.HTTPStatus.NOT_FOUND):
                    raise
                self.progress.comment_id = None  # someone deleted it: find or create another
            else:
                return found
        found = await self._bot_comment_with(MARKER)
        return found

    async def adopt(self) -> dict | None:
        """`find`, remembering the comment found as the one to edit."""
        found = await self.find()
        if found is not None:
            self.progress.comment_id = found["id"]
        return found

    async def _bot_comment_with(self, text: str) -> dict | None:
        """The bot's comment on the PR whose body holds `text` (a hidden marker), if there is one."""
        async for comment in self.gh.getiter(
            "/repos/{owner}/{repo}/issues/{number}/comments?per_page=100", self.ref.names
        ):
            if text in (comment.get("body") or "") and comment["user"].get("type") == "Bot":
                return comment
        return None

    async def put(self, body: str) -> None:
        """Create the checklist comment once, edit it in place afterwards."""
        if self.progress.comment_id:
            await self.gh.patch(
                "/repos/{owner}/{repo}/issues/comments/{id}",
                {**self.ref.names, "id": self.progress.comment_id},
                data={"body": body},
            )
            return
        created = await self.gh.post_once(
            "/repos/{owner}/{repo}/issues/{number}/comments",
            self.ref.names,
            data={"body": body},
            find=lambda: self._bot_comment_with(MARKER),
        )
        self.progress.comment_id = created["id"]
        await self.save()

    async def reply(self, body: str) -> None:
        """A reply comment, with a hidden key so that a POST whose answer was lost is not made twice, nor one
        that a job tried again had posted before it stopped without saving so."""
        sent = self.progress.replies
        key = f"<!-- llama-bot:reply {self.job_id}.{sent} -->"
        posted = await self._bot_comment_with(key) if self.resumed else None
        if posted is None:
            await self.gh.post_once(
                "/repos/{owner}/{repo}/issues/{number}/comments",
                self.ref.names,
                data={"body": f"{body[: COMMENT_LIMIT - len(key) - 1]}\n{key}"},
                find=lambda: self._bot_comment_with(key),
            )
        self.progress.replies = sent + 1
        await self.save()
