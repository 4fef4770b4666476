"""workflow_run events: a run the bot dispatched moves its `validate: <platform>` check run.

Which dispatch a run belongs to is decided in the job, against the durable
validation store (no GitHub call): the router only drops runs that no
`workflow_dispatch` could have started.
"""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.stores.jobs import JobRequest
from handlers.payload import repository_payload

router = routing.Router()

ACTIONS = ("requested", "in_progress", "completed")
# What matching and the check-run update read; the rest of the run object is not stored.
RUN_FIELDS = (
    "id",
    "name",
    "display_title",
    "event",
    "status",
    "conclusion",
    "workflow_id",
    "path",
    "head_sha",
    "head_branch",
    "html_url",
    "run_number",
    "run_attempt",
    "created_at",
    "updated_at",
    "run_started_at",
)


def run_request(data: dict) -> JobRequest | None:
    run = data["workflow_run"]
    if run.get("event") != "workflow_dispatch":
        return None
    job = repository_payload(data)
    if job is None:
        return None
    return JobRequest(
        "workflow_run",
        f"{job['owner']}/{job['repo']}:workflow_runs".lower(),
        {
            **job,
            "action": data["action"],
            "workflow_run": {k: run.get(k) for k in RUN_FIELDS},
        },
    )


async def on_workflow_run(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = run_request(event.data)
    if request is not None:
        jobs.append(request)


for _action in ACTIONS:
    router.add(on_workflow_run, "workflow_run", action=_action)
