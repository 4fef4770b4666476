"""Pull-request events: a new head, a (re)opened or ready PR, or a new base asks for an analysis.

Whether the PR touches a pin needs its file list (an API call), so the job
decides that, not the router.
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.stores.jobs import JobRequest, pull_key
from handlers.payload import repository_payload

router = routing.Router()

ANALYSED_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review", "edited")


def analysis_request(data: dict) -> JobRequest | None:
    """An analysis of the PR's head, superseding any still queued for an older head; the head is recorded
    as seen when the delivery is stored (what a command may act on is decided by it)."""
    pr = data["pull_request"]
    if data.get("action") == "edited" and "base" not in (data.get("changes") or {}):
        return None  # a new title or body changes nothing the analysis looks at
    if pr.get("state") != "open":
        return None
    job = repository_payload(data)
    if job is None:
        return None
    return JobRequest(
        "analysis",
        pull_key(job["owner"], job["repo"], pr["number"]),
        {
            **job,
            "number": pr["number"],
            "head_sha": pr["head"]["sha"],
            "reason": f"pull_request.{data['action']}",
            "sender": (data.get("sender") or {}).get(
                "login"
            ),  # who pushed or opened it: bot/worker/autovalidate.py
        },
        supersedes=True,
        head=pr["head"]["sha"],
    )


async def on_pull_request(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = analysis_request(event.data)
    if request is not None:
        jobs.append(request)


for _action in ANALYSED_ACTIONS:
    router.add(on_pull_request, "pull_request", action=_action)


def closed_request(data: dict) -> JobRequest | None:
    """A closed PR: the job removes the upstream commits it pinned by id (bot/repos/pinned.py) and, for a
    fork's, deletes the `llama-bot/pr-<n>` branch its validation runs used (only a fork's head gets one)."""
    pr = data["pull_request"]
    job = repository_payload(data)
    if job is None:
        return None
    head_repo = pr["head"].get("repo")
    fork = head_repo is None or head_repo["full_name"] != pr["base"]["repo"]["full_name"]
    return JobRequest(
        "closed",
        pull_key(job["owner"], job["repo"], pr["number"]),
        {
            **job,
            "number": pr["number"],
            "fork": fork,
            "head_ref": pr["head"]["ref"],
            "head_sha": pr["head"]["sha"],
        },
    )


@router.register("pull_request", action="closed")
async def on_pull_request_closed(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = closed_request(event.data)
    if request is not None:
        jobs.append(request)
