"""Platform validation (`/llama validate`): what to dispatch, and how each run finds its way back.

Every decision is a pure function over plain data (the config, the PR and
workflow_run JSON, stored `Dispatch` records), so the service only moves
data between GitHub and the store of dispatches (`bot.stores.validationstore`). The
texts (replies, check-run outputs, the checklist's platform rows) are made
in `bot.render`.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from bot.config import Config, Platform
from bot.model import Report
from bot.times import iso

CHECK_PREFIX = "validate: "
FORK_BRANCH_PREFIX = "llama-bot/pr-"
REQUEST_ID_PREFIX = "lb-"
_REQUEST_ID = re.compile(r"\blb-[0-9a-f]{12}\b")
# Runs are matched without an id only when created near their dispatch: the clocks of
# GitHub and the bot may differ a little, and GitHub creates the run within seconds.
CLOCK_SKEW = dt.timedelta(seconds=60)
MATCH_WINDOW = dt.timedelta(minutes=30)
ACTION_STATUS = {"requested": "queued", "in_progress": "in_progress", "completed": "completed"}
_RANK = {"queued": 0, "in_progress": 1, "completed": 2}
# Check runs take these conclusions as they are; GitHub lets only itself set `stale`.
CHECK_CONCLUSIONS = {"success", "failure", "cancelled", "timed_out", "action_required", "neutral", "skipped"}
_T = TypeVar("_T")


@dataclass(frozen=True)
class Dispatch:
    """One platform run asked for on one PR commit, from the dispatch until the run's conclusion."""

    repo: str  # owner/name of the base repository (where the workflow runs)
    pr: int
    platform: str
    workflow: str  # the workflow file name (or id) the platform names
    ref: str  # the branch dispatched: the PR's head branch, or llama-bot/pr-<n> for a fork
    head_sha: str  # the PR head commit the check run is on
    request_id: str
    dispatched_at: str  # ISO 8601 UTC, as GitHub writes times
    check_run_id: int | None = None
    run_id: int | None = None
    run_url: str | None = None
    status: str = "queued"  # queued | in_progress | completed (the check run's status)
    conclusion: str | None = None  # a check-run conclusion once completed
    started_at: str | None = None
    completed_at: str | None = None
    # what the run's report artifact said, as bot/decisions/runreport.py keeps it (JSON)
    report: str | None = None


def parse_time(stamp: str) -> dt.datetime:
    """A time as GitHub writes it, read back; one without a zone is UTC."""
    parsed = dt.datetime.fromisoformat(stamp)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def elapsed(start: str | None, end: str | None) -> float | None:
    """Seconds from `start` to `end`; None until both are known."""
    return (parse_time(end) - parse_time(start)).total_seconds() if start and end else None


# -- the command -----------------------------------------------------------------------------------


def _unique(items: Iterable[_T]) -> list[_T]:
    """The items in order, each once (by equality: a platform's inputs make it unhashable)."""
    out: list[_T] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _words(args: Iterable[str]) -> list[str]:
    """The names in the arguments, each argument split at its commas."""
    return [word.strip() for arg in args for word in arg.split(",") if word.strip()]


def select_platforms(args: Iterable[str], config: Config) -> tuple[list[Platform], list[str]]:
    """The configured platforms the arguments name (`all` = every one, in config order), and unknown names.

    Names match case-insensitively and may be separated by commas, as people type them.
    """
    by_name = {p.name.lower(): p for p in config.platforms}

    def named(name: str) -> list[Platform | None]:
        return list(config.platforms) if name.lower() == "all" else [by_name.get(name.lower())]

    found = [(name, platform) for name in _words(args) for platform in named(name)]
    chosen = _unique(platform for _, platform in found if platform is not None)
    return chosen, _unique(name for name, platform in found if platform is None)


def new_request_id() -> str:
    """48 random bits with a fixed prefix: unique per dispatch, and recognisable in any run title."""
    return REQUEST_ID_PREFIX + secrets.token_hex(6)


def is_fork(pull: dict) -> bool:
    """Whether the PR's head lives outside the base repository (a deleted fork counts as one)."""
    head_repo = pull["head"].get("repo")
    return head_repo is None or head_repo["full_name"] != pull["base"]["repo"]["full_name"]


def fork_branch(pr_number: int) -> str:
    return f"{FORK_BRANCH_PREFIX}{pr_number}"


def dispatch_ref(pull: dict) -> str:
    """The branch to run on: a workflow can only be dispatched on a branch of the base repository."""
    return fork_branch(pull["number"]) if is_fork(pull) else pull["head"]["ref"]


def new_dispatch(
    repo: str, pull: dict, head_sha: str, platform: Platform, now: str, request_id: str | None = None
) -> Dispatch:
    """The record to store before the dispatch call, so a run reported at once is already expected;
    `head_sha` is the commit approved for it."""
    return Dispatch(
        repo,
        pull["number"],
        platform.name,
        platform.workflow,
        dispatch_ref(pull),
        head_sha,
        request_id or new_request_id(),
        now,
    )


def dispatch_body(platform: Platform, ref: str, pr_number: int, request_id: str) -> dict:
    """POST .../actions/workflows/{workflow}/dispatches: the configured inputs plus `pr` and `request_id`.

    `return_run_details` makes GitHub answer 200 with the new run's id (204 and no body where it is not
    supported); `pr` and `request_id` always win over configured inputs of the same name.
    """
    inputs = {**platform.inputs, "pr": str(pr_number), "request_id": request_id}
    return {"ref": ref, "inputs": inputs, "return_run_details": True}


def check_name(platform: str) -> str:
    return CHECK_PREFIX + platform


def platform_of_check(name: str) -> str | None:
    """The platform a `validate: <platform>` check run is about; None for any other check run."""
    platform = name.removeprefix(CHECK_PREFIX)
    return platform if name.startswith(CHECK_PREFIX) and platform else None


# -- `auto = true`: dispatched when a bump changes upstream's build ---------------------------------


@dataclass(frozen=True)
class AutoValidation:
    """The `auto` platforms of one analysed head: those with a run for it, and those that did not start
    (`held`), with why: the head is a fork's ("fork"), nobody with write access pushed or approved it
    ("approval"), its committed patches do not apply so its build fails before compiling ("patches"), or
    GitHub refused the dispatch ("failed")."""

    dispatched: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    why: str = ""


def auto_due(
    platforms: Sequence[Platform], report: Report, ran: Collection[str]
) -> tuple[list[Platform], AutoValidation | None]:
    """The `auto` platforms to dispatch for an analysed head, and what to say of the others; (`[]`, None)
    when there are none, or none is due: a "build" platform when upstream's build changed, a "bump" one
    whenever the head moves a pin. `ran` are the platforms with a dispatch for the head already: each
    platform runs once per head."""
    due_on = {"build": bool(report.build_changes), "bump": any(p.old_ref != p.new_ref for p in report.pins)}
    auto = [p for p in platforms if due_on.get(p.auto)]
    if not auto:
        return [], None
    due, done = _split_ran(auto, ran)
    if due and report.needs_change:
        return [], AutoValidation(done, tuple(p.name for p in due), "patches")
    return due, AutoValidation(done)


def _split_ran(platforms: list[Platform], ran: Collection[str]) -> tuple[list[Platform], tuple[str, ...]]:
    """(the platforms not in `ran`, the names of those in it)."""
    return [p for p in platforms if p.name not in ran], tuple(p.name for p in platforms if p.name in ran)


def auto_refusal(fork: bool, approved: bool) -> str | None:
    """Why a head's due `auto` platforms are not dispatched ("fork", "approval"), or None: they are, only
    for a head in the base repository that someone with write access pushed or approved."""
    if fork:
        return "fork"
    return None if approved else "approval"


# -- the runs --------------------------------------------------------------------------------------


def _same_workflow(run: dict, workflow: str) -> bool:
    path = run.get("path") or ""
    return path.split("@", 1)[0].rsplit("/", 1)[-1] == workflow or str(run.get("workflow_id")) == workflow


def _near_in_time(d: Dispatch, created: dt.datetime) -> bool:
    dispatched = parse_time(d.dispatched_at)
    return dispatched - CLOCK_SKEW <= created <= dispatched + MATCH_WINDOW


def _by_time(waiting: list[Dispatch], run: dict) -> Dispatch | None:
    """A workflow_dispatch run without an id: the oldest unfinished dispatch of its workflow and commit
    made shortly before it."""
    if run.get("event") != "workflow_dispatch" or not run.get("created_at"):
        return None
    created = parse_time(run["created_at"])
    candidates = [d for d in waiting if _may_have_started(d, run, created)]
    return min(candidates, key=lambda d: d.dispatched_at, default=None)


def _may_have_started(d: Dispatch, run: dict, created: dt.datetime) -> bool:
    """Whether `d` is an unfinished dispatch of the run's workflow and commit, made shortly before it."""
    return (
        d.status != "completed"
        and d.head_sha == run.get("head_sha")
        and _same_workflow(run, d.workflow)
        and _near_in_time(d, created)
    )


def _by_run_id(dispatches: list[Dispatch], run: dict) -> Dispatch | None:
    return next((d for d in dispatches if d.run_id is not None and d.run_id == run.get("id")), None)


def _request_ids(run: dict) -> set[str]:
    """The request ids the run's title names (its run-name shows the one it was dispatched with)."""
    return set(_REQUEST_ID.findall(f"{run.get('display_title') or ''} {run.get('name') or ''}"))


def match_run(dispatches: Iterable[Dispatch], run: dict) -> Dispatch | None:
    """The dispatch a `workflow_run` object belongs to, or None: a run nobody dispatched is ignored.

    By run id (from the 200 dispatch answer); else by a request id in the run's title (its run-name);
    a title naming a request id that is not waiting here belongs to nobody. Else, for a
    workflow_dispatch run, by workflow file, head commit and creation time, oldest dispatch first.
    """
    dispatches = list(dispatches)
    found = _by_run_id(dispatches, run)
    if found:
        return found
    waiting = [d for d in dispatches if d.run_id is None]
    ids = _request_ids(run)
    if ids:
        return next((d for d in waiting if d.request_id in ids), None)
    return _by_time(waiting, run)


def check_conclusion(run_conclusion: str | None) -> str:
    """A run's conclusion as a check-run conclusion (`stale`, `startup_failure` and unknown ones fail)."""
    return run_conclusion if run_conclusion in CHECK_CONCLUSIONS else "failure"


def run_started(run: dict) -> str | None:
    """When the run (or its latest attempt) started; its creation until GitHub says."""
    return run.get("run_started_at") or run.get("created_at")


def _is_rerun(dispatch: Dispatch, started: str | None) -> bool:
    return bool(dispatch.started_at and started and parse_time(started) > parse_time(dispatch.started_at))


def apply_run(dispatch: Dispatch, run: dict, action: str) -> Dispatch | None:
    """The dispatch after a workflow_run event; None when the event changes nothing worth posting.

    Deliveries may arrive out of order: an older state never replaces a newer one, except for a
    re-run (a later `run_started_at`), which starts the run over.
    """
    status = ACTION_STATUS.get(action)
    if status is None:
        return None
    started = run_started(run)
    if _RANK[status] < _RANK[dispatch.status] and not _is_rerun(dispatch, started):
        return None
    done = status == "completed"
    return replace(
        dispatch,
        run_id=run["id"],
        run_url=run.get("html_url"),
        status=status,
        conclusion=check_conclusion(run.get("conclusion")) if done else None,
        started_at=started,
        completed_at=run.get("updated_at") if done else None,
        report=dispatch.report if done else None,  # a run started over brings a report of its own
    )


def run_fields(run: dict, action: str) -> dict:
    """The check run's state after a workflow_run event (action: requested, in_progress or completed):
    its status, when the run started, and once it is done its conclusion and end."""
    status = ACTION_STATUS[action]
    started = run_started(run)
    state: dict = {"status": status, "details_url": run["html_url"]}
    if status == "in_progress":
        state["started_at"] = started
    elif status == "completed":
        state.update(
            started_at=started,
            conclusion=check_conclusion(run.get("conclusion")),
            completed_at=run.get("updated_at") or started,
        )
    return state


def runs_query(dispatch: Dispatch) -> dict:
    """Query for GET .../actions/workflows/{workflow}/runs that finds a run whose events were missed."""
    since = iso(parse_time(dispatch.dispatched_at) - CLOCK_SKEW)
    return {
        "event": "workflow_dispatch",
        "branch": dispatch.ref,
        "head_sha": dispatch.head_sha,
        "created": f">={since}",
        "per_page": 100,
    }


def latest_dispatches(dispatches: Iterable[Dispatch]) -> dict[str, Dispatch]:
    """Platform -> its latest dispatch, platforms in the order they were first dispatched."""
    latest: dict[str, Dispatch] = {}
    for d in sorted(dispatches, key=lambda d: d.dispatched_at):
        latest[d.platform] = d
    return latest
