"""A person asking GitHub to re-run the bot's check runs re-runs the analysis of that commit."""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.decisions.validation import platform_of_check
from bot.stores.jobs import JobRequest, pull_key
from handlers.payload import repository_payload

router = routing.Router()


def _numbers(pull_requests: list[dict], external_id: str | None) -> list[int]:
    """The PRs a check belongs to: GitHub lists same-repository PRs; the bot stores the number for forks."""
    numbers = [pr["number"] for pr in pull_requests]
    if not numbers and (external_id or "").isdigit():
        numbers = [int(external_id or "")]
    return numbers


def rerun_requests(data: dict, subject: str) -> list[JobRequest]:
    """Analyses of `subject`'s head commit (a check run or suite) for each of its PRs."""
    item = data[subject]
    job = repository_payload(data)
    if job is None:
        return []
    return [
        JobRequest(
            "analysis",
            pull_key(job["owner"], job["repo"], number),
            {
                **job,
                "number": number,
                "head_sha": item["head_sha"],
                "reason": f"{subject}.rerequested",
            },
            supersedes=True,
        )
        for number in _numbers(item.get("pull_requests") or [], item.get("external_id"))
    ]


def revalidate_request(data: dict) -> JobRequest | None:
    """A `validate: <platform>` check run asked again: that platform is dispatched again (the job finds
    the PR in the validation store by the check run's external id, the request id)."""
    check = data["check_run"]
    if platform_of_check(check.get("name") or "") is None:
        return None
    job = repository_payload(data)
    if job is None:
        return None
    return JobRequest(
        "revalidate",
        _revalidate_key(job["owner"], job["repo"], check),
        {
            **job,
            "check_run_id": check["id"],
            "external_id": check.get("external_id"),
            "name": check["name"],
            "sender": (data.get("sender") or {}).get("login"),
        },
    )


def _revalidate_key(owner: str, repo: str, check: dict) -> str:
    """The job's key: its PR's, so it waits for the PR's other jobs; the check run's own when it names none."""
    numbers = [pr["number"] for pr in check.get("pull_requests") or []]
    return pull_key(owner, repo, numbers[0]) if numbers else f"{owner}/{repo}:check-{check['id']}".lower()


@router.register("check_run", action="rerequested")
async def on_check_run_rerequested(event: sansio.Event, jobs: list[JobRequest]) -> None:
    request = revalidate_request(event.data)
    if request is not None:
        jobs.append(request)
    else:
        jobs.extend(rerun_requests(event.data, "check_run"))


@router.register("check_suite", action="rerequested")
async def on_check_suite_rerequested(event: sansio.Event, jobs: list[JobRequest]) -> None:
    jobs.extend(rerun_requests(event.data, "check_suite"))
