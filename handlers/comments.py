"""New comments on pull requests may hold slash commands.

The command prefix lives in the repository's configuration, which the
router cannot read without an API call; it lets through any new human
comment with a line that looks like a command and the job parses it exactly.
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.commands import looks_like_command
from bot.jobs import JobRequest, pull_key

router = routing.Router()


def is_bot(user: dict) -> bool:
    """Comments by bots, this App included, are never commands."""
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def command_request(data: dict) -> JobRequest | None:
    issue, comment = data["issue"], data["comment"]
    installation = (data.get("installation") or {}).get("id")
    if "pull_request" not in issue or installation is None or is_bot(comment["user"]):
        return None
    if not looks_like_command(comment.get("body") or ""):
        return None
    repository = data["repository"]
    owner, repo = repository["owner"]["login"], repository["name"]
    return JobRequest(
        "command",
        pull_key(owner, repo, issue["number"]),
        {
            "installation_id": installation,
            "owner": owner,
            "repo": repo,
            "number": issue["number"],
            "default_branch": repository["default_branch"],
            "comment_id": comment["id"],
            "body": comment["body"],
            "author": comment["user"]["login"],
        },
    )


@router.register("issue_comment", action="created")
async def on_comment_created(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = command_request(event.data)
    if request is not None:
        jobs.append(request)
