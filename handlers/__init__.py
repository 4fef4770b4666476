"""Webhook routing: one gidgethub router per concern, composed here.

Routers only decide which jobs a delivery asks for (pure and fast: no
GitHub calls, no analysis); the service's workers run the jobs.
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.stores.jobs import JobRequest
from handlers import check_runs, comments, issues, pull_requests, workflow_runs

router = routing.Router(
    pull_requests.router, comments.router, issues.router, check_runs.router, workflow_runs.router
)
# The events the routers act on (a test holds this to the routers' registrations).
EVENTS = frozenset({"pull_request", "issue_comment", "issues", "check_run", "check_suite", "workflow_run"})


async def job_requests(event: sansio.Event) -> list[JobRequest]:
    """The jobs a delivery needs; empty when the bot ignores it."""
    found: list[JobRequest] = []
    await router.dispatch(event, found)
    return found
