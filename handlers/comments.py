"""New comments on pull requests and issues may hold slash commands.

The command prefix lives in the repository's configuration, which the
router cannot read without an API call; it lets through any new human
comment with a line that looks like a command and the job parses it exactly
(on an issue, it runs only the commands that need no pull request).
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.commands import looks_like_command
from bot.stores.jobs import JobRequest, pull_key
from handlers.payload import repository_payload

router = routing.Router()


def is_bot(user: dict) -> bool:
    """Comments by bots, this App included, are never commands."""
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def command_request(data: dict) -> JobRequest | None:
    issue, comment = data["issue"], data["comment"]
    if is_bot(comment["user"]):
        return None
    if not looks_like_command(comment.get("body") or ""):
        return None
    job = repository_payload(data)
    if job is None:
        return None
    return JobRequest(
        "command",
        pull_key(job["owner"], job["repo"], issue["number"]),
        {
            **job,
            "number": issue["number"],
            "on_pull": "pull_request" in issue,
            "default_branch": data["repository"]["default_branch"],
            "comment_id": comment["id"],
            "comment_url": comment.get("html_url"),
            "body": comment["body"],
            "author": comment["user"]["login"],
            # the commands act only on the head the author saw then (`bot.decisions.approval`)
            "comment_created_at": comment.get("created_at"),
        },
    )


@router.register("issue_comment", action="created")
async def on_comment_created(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = command_request(event.data)
    if request is not None:
        jobs.append(request)
