"""Check runs: the analysis's pair per pin, validation's per platform, and the general failure run."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Awaitable, Callable

from bot.config import Pin
from bot.gh.posted import PostedByJob
from bot.render.checkruns import ANNOTATIONS_PER_REQUEST, CHECK_TEXT_LIMIT
from bot.render.env import render_template
from bot.times import human, iso

GENERAL_CHECK = "llama-bot"  # the check run for failures that belong to no pin
PIN_CHECKS = (": patches", ": upstream review")  # each pin's two analysis check runs, after its name


def check_run_updates(conclusion: str, output: dict) -> list[dict]:
    """The PATCH bodies that complete a check run: at most 50 annotations per request, the rest appended."""
    annotations = output.get("annotations") or []
    head = {k: output[k] for k in ("title", "summary", "text") if k in output}
    first_output = {**head, "annotations": annotations[:ANNOTATIONS_PER_REQUEST]} if annotations else head
    first = {"status": "completed", "conclusion": conclusion, "output": first_output}
    more = [
        {
            "output": {
                "title": head.get("title", ""),
                "summary": head.get("summary", ""),
                "annotations": annotations[i : i + ANNOTATIONS_PER_REQUEST],
            }
        }
        for i in range(ANNOTATIONS_PER_REQUEST, len(annotations), ANNOTATIONS_PER_REQUEST)
    ]
    return [first, *more]


def started_by_job(job_id: int, check_run: dict) -> bool:
    """Whether an analysis check run is the one job `job_id` started: its summary names the job
    (bot/templates/check_in_progress.md.j2)."""
    return f"(llama-bot job {job_id})" in ((check_run.get("output") or {}).get("summary") or "")


def failed_by_job(job_id: int, check_run: dict) -> bool:
    """Whether a general check run is the one job `job_id` made: its summary names the job
    (bot/templates/check_failed.md.j2)."""
    summary = (check_run.get("output") or {}).get("summary") or ""
    return summary.endswith(f"llama-bot job {job_id}\n")


class CheckRuns(PostedByJob):
    """A pull request's check runs as one job makes and completes them."""

    async def start(self, head_sha: str, pins: list[Pin], since: dt.datetime) -> dict[str, int]:
        """`<pin>: patches` and `<pin>: upstream review`, in progress. The ones this job made on `head_sha` are
        reused, completed ones too: a job stopped between completing them and ending runs again, and a
        second pair would show the commit's checks twice."""
        made = self.progress.check_runs if self.progress.checks_sha == head_sha else {}
        summary = render_template(
            "check_in_progress.md.j2", head_sha=head_sha, since=human(since), job_id=self.job_id
        )
        runs = {}
        for pin in pins:
            for name in (pin.name + suffix for suffix in PIN_CHECKS):
                output = {"title": f"Checking {pin.name} at {head_sha[:12]}", "summary": summary}
                runs[name] = made.get(name) or await self._started(head_sha, name, since, output)
        self.progress.checks_sha, self.progress.check_runs = head_sha, runs
        await self.save()
        return runs

    async def _started(self, head_sha: str, name: str, since: dt.datetime, output: dict) -> int:
        """The id of check run `name` in progress: the one this job made before it stopped, else a new one."""
        body = {
            "name": name,
            "head_sha": head_sha,
            "status": "in_progress",
            "started_at": iso(since),
            "external_id": str(self.ref.number),
            "output": output,
        }
        find = functools.partial(self.made, head_sha, name, functools.partial(started_by_job, self.job_id))
        # A resumed job may have made it before it stopped, a POST whose answer was lost as well.
        created = (await find() if self.resumed else None) or await self.create(body, find)
        return created["id"]

    async def made(self, head_sha: str, name: str, made: Callable[[dict], bool]) -> dict | None:
        """The check run `name` on `head_sha` for which `made` holds (the one this job made), if any."""
        found = await self.gh.getitem(
            "/repos/{owner}/{repo}/commits/{ref}/check-runs{?check_name,filter,per_page}",
            {**self.ref.names, "ref": head_sha, "check_name": name, "filter": "all", "per_page": 100},
        )
        return next((r for r in found.get("check_runs") or [] if made(r)), None)

    async def create(self, body: dict, find: Callable[[], Awaitable[dict | None]]) -> dict:
        """A new check run, unless `find` finds the one an earlier attempt made."""
        return await self.gh.post_once(
            "/repos/{owner}/{repo}/check-runs", self.ref.names, data=body, find=find
        )

    async def update(self, check_id: int, body: dict) -> None:
        await self.gh.patch(
            "/repos/{owner}/{repo}/check-runs/{id}", {**self.ref.names, "id": check_id}, data=body
        )

    async def complete(self, check_id: int, conclusion: str, output: dict) -> None:
        for body in check_run_updates(conclusion, output):
            await self.update(check_id, body)

    async def complete_all(self, conclusion: str, output: dict) -> None:
        """Every analysis check run this job started ends with `conclusion`."""
        for check_id in self.progress.check_runs.values():
            await self.complete(check_id, conclusion, output)

    async def fail_all(self, head_sha: str, title: str, message: str, hint: str = "") -> None:
        """Every check run this job made on `head_sha` ends as failed with `message`; one general run when
        there are none."""
        summary = render_template(
            "check_failed.md.j2",
            message=message[: CHECK_TEXT_LIMIT // 2],  # the job's line at the end stays
            hint=hint,
            head_sha=head_sha,
            job_id=self.job_id,
        )
        output = {"title": title[:200], "summary": summary[:CHECK_TEXT_LIMIT]}
        if self.progress.checks_sha == head_sha and self.progress.check_runs:
            await self.complete_all("failure", output)
            return
        body = {
            "name": GENERAL_CHECK,
            "head_sha": head_sha,
            "status": "completed",
            "conclusion": "failure",
            "external_id": str(self.ref.number),
            "output": output,
        }
        find = functools.partial(
            self.made, head_sha, GENERAL_CHECK, functools.partial(failed_by_job, self.job_id)
        )
        made = (await find() if self.resumed else None) or await self.create(body, find)
        self.progress.checks_sha, self.progress.check_runs = head_sha, {GENERAL_CHECK: made["id"]}
        await self.save()
