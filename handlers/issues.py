"""Issue events: an edit of the pin dashboard that ticks a box asks for that pin's bump.

Whether the editor may ask needs their permission (an API call), so the job decides that, not the router;
the bot's own rewrites (its sender is a bot) and edits that tick nothing are let go here.
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.decisions.dashboard import any_ticked
from bot.gh.issues import is_dashboard
from bot.stores.jobs import JobRequest, bump_key
from handlers.comments import is_bot
from handlers.payload import repository_payload

router = routing.Router()


def tick_request(data: dict) -> JobRequest | None:
    """The dashboard's ticked boxes, run under the repository's bump key (never beside another bump)."""
    issue, sender = data["issue"], data.get("sender") or {}
    if is_bot(sender) or "body" not in (data.get("changes") or {}):
        return None
    if not is_dashboard(issue) or not any_ticked(issue.get("body") or ""):
        return None
    job = repository_payload(data)
    if job is None:
        return None
    return JobRequest(
        "dashboard_tick",
        bump_key(job["owner"], job["repo"]),
        {
            **job,
            "number": issue["number"],
            "sender": sender.get("login", ""),
            "default_branch": data["repository"]["default_branch"],
        },
    )


@router.register("issues", action="edited")
async def on_issue_edited(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = tick_request(event.data)
    if request is not None:
        jobs.append(request)
