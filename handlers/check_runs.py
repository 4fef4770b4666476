"""A person asking GitHub to re-run the bot's check runs re-runs the analysis of that commit."""

from __future__ import annotations

from gidgethub import routing, sansio

from bot.jobs import JobRequest, pull_key

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
    installation = (data.get("installation") or {}).get("id")
    if installation is None:
        return []
    owner, repo = data["repository"]["owner"]["login"], data["repository"]["name"]
    return [JobRequest("analysis", pull_key(owner, repo, number), {
        "installation_id": installation, "owner": owner, "repo": repo, "number": number,
        "head_sha": item["head_sha"], "reason": f"{subject}.rerequested"}, supersedes=True)
        for number in _numbers(item.get("pull_requests") or [], item.get("external_id"))]


@router.register("check_run", action="rerequested")
async def on_check_run_rerequested(event: sansio.Event, jobs: list[JobRequest]) -> None:
    jobs.extend(rerun_requests(event.data, "check_run"))


@router.register("check_suite", action="rerequested")
async def on_check_suite_rerequested(event: sansio.Event, jobs: list[JobRequest]) -> None:
    jobs.extend(rerun_requests(event.data, "check_suite"))
