"""Platform validation (`/llama validate`): what to dispatch, and how each run finds its way back.

Every decision is a pure function over plain data (the config, the PR and
workflow_run JSON, stored `Dispatch` records), so the service only moves
data between GitHub and `ValidationStore`. The store is SQLite because a
dispatch that is still waiting for its run must survive a restart.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path

from bot.config import Config, Platform
from bot.render.platforms import PLATFORM_LABELS

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "workflow_dispatch.yml"
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
STATE_TEXT = {"queued": "queued", "in_progress": "in progress", "completed": "completed"}


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


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(moment: dt.datetime) -> str:
    """A time as GitHub writes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(stamp: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(stamp)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def format_duration(seconds: float) -> str:
    """'12m 03s', '1h 02m 03s' or '45s': short enough for a table cell."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def _duration(start: str | None, end: str | None) -> str | None:
    return format_duration((_time(end) - _time(start)).total_seconds()) if start and end else None


# -- the command -----------------------------------------------------------------------------------


def select_platforms(args: Iterable[str], config: Config) -> tuple[list[Platform], list[str]]:
    """The configured platforms the arguments name (`all` = every one, in config order), and unknown names.

    Names match case-insensitively and may be separated by commas, as people type them.
    """
    by_name = {p.name.lower(): p for p in config.platforms}
    chosen: list[Platform] = []
    unknown: list[str] = []
    for word in (w for arg in args for w in arg.split(",") if w.strip()):
        name = word.strip()
        for platform in config.platforms if name.lower() == "all" else [by_name.get(name.lower())]:
            if platform is None:
                if name not in unknown:
                    unknown.append(name)
            elif platform not in chosen:
                chosen.append(platform)
    return chosen, unknown


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
    repo: str, pull: dict, platform: Platform, now: str, request_id: str | None = None
) -> Dispatch:
    """The record to store before the dispatch call, so a run reported at once is already expected."""
    return Dispatch(
        repo,
        pull["number"],
        platform.name,
        platform.workflow,
        dispatch_ref(pull),
        pull["head"]["sha"],
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


def check_run_create(dispatch: Dispatch) -> dict:
    """POST .../check-runs when dispatching: queued on the PR head, `external_id` = the request id."""
    return {
        "name": check_name(dispatch.platform),
        "head_sha": dispatch.head_sha,
        "status": "queued",
        "external_id": dispatch.request_id,
        "output": {
            "title": f"{dispatch.platform}: dispatched",
            "summary": f"Dispatched `{dispatch.workflow}` on `{dispatch.ref}` "
            f"(request `{dispatch.request_id}`); waiting for the run to start.",
        },
    }


def dispatch_failed_update(platform: str, reply: str, now: str) -> dict:
    """PATCH for the check run of a dispatch GitHub refused: failure, explained as in the reply."""
    return {
        "status": "completed",
        "conclusion": "failure",
        "completed_at": now,
        "output": {"title": f"{platform}: could not dispatch the workflow", "summary": reply},
    }


def _template_block() -> str:
    """The YAML of templates/workflow_dispatch.yml without its header comment, for replies."""
    lines = TEMPLATE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("run-name:"))
    return "\n".join(lines[start:]).strip() + "\n"


def _inputs_snippet(names: Sequence[str]) -> str:
    lines = ["on:", "  workflow_dispatch:", "    inputs:"]
    for name in names:
        lines += [
            f"      {name}:",
            '        description: "Sent by llama-bot"',
            "        type: string",
            "        required: false",
        ]
    if "request_id" in names:
        lines.insert(
            0, 'run-name: "llama-bot ${{ inputs.platform }} PR #${{ inputs.pr }} (${{ inputs.request_id }})"'
        )
    return "\n".join(lines) + "\n"


def dispatch_error_reply(platform: Platform, status: int, message: str) -> str:
    """What to tell the maintainer when GitHub refuses a dispatch: exactly what to add, and where."""
    path = f".github/workflows/{platform.workflow}"
    head = f"**{platform.name}**: "
    where = (
        "(`run-name` at the top level, `workflow_dispatch` under the existing `on:`; "
        "the file must be on the default branch)"
    )
    if status == 404:
        return (
            f"{head}this repository has no workflow `{path}` (GitHub answered 404). Add it with this "
            f"trigger {where}, or point `platforms.{platform.name}.workflow` in `.github/llama-bot.toml` "
            f"at an existing workflow:\n\n```yaml\n{_template_block()}```\n"
        )
    if status == 422 and "workflow_dispatch" in message:
        return (
            f"{head}`{path}` has no `workflow_dispatch` trigger, so it cannot be started on request "
            f"(GitHub: {message}). Add this {where}:\n\n```yaml\n{_template_block()}```\n"
        )
    unexpected = re.search(r"Unexpected inputs provided: \[(.*)\]", message) if status == 422 else None
    if unexpected:
        names = re.findall(r'"([^"]+)"', unexpected[1]) or [n.strip(" '") for n in unexpected[1].split(",")]
        listed = ", ".join(f"`{n}`" for n in names)
        plural = len(names) > 1
        return (
            f"{head}`{path}` does not declare the input{'s' if plural else ''} {listed} that the bot "
            f"sends. Add {'them' if plural else 'it'} under `on: workflow_dispatch: inputs:` "
            f"{where}:\n\n```yaml\n{_inputs_snippet(names)}```\n"
        )
    if status == 422 and message.startswith("No ref found"):
        return (
            f"{head}GitHub cannot find the branch to run `{path}` on ({message}). "
            "If the branch was deleted, push it again and repeat the command."
        )
    if status == 422:
        return (
            f"{head}GitHub refused to dispatch `{path}` (422: {message}). The workflow needs this "
            f"trigger {where}:\n\n```yaml\n{_template_block()}```\n"
        )
    return f"{head}GitHub refused to dispatch `{path}` ({status}: {message})."


def validate_reply(
    dispatched: Sequence[Dispatch],
    unknown: Sequence[str],
    errors: Sequence[str],
    config: Config,
    pull: dict,
    requester: str,
) -> str:
    """The answer to `/llama validate`: what runs where, the fork warning, unknown names and refusals."""
    parts = []
    if dispatched:
        names = ", ".join(f"`{d.platform}`" for d in dispatched)
        first = dispatched[0]
        parts.append(
            f"Started validation of {names} on `{first.ref}` (commit `{first.head_sha[:12]}`). "
            "Each platform has a `validate: <platform>` check run on this PR that follows its "
            "workflow run; the checklist's platform table shows the results."
        )
        if is_fork(pull):
            fork = (pull["head"].get("repo") or {}).get("full_name") or "a deleted fork"
            parts.append(
                f"⚠️ This pull request comes from `{fork}`. Its head commit was pushed to the "
                f"branch `{first.ref}` of this repository, so **the run uses the fork's code with "
                f"this repository's secrets**, because @{requester}, a maintainer, asked for it. "
                "The branch is deleted when the pull request closes."
            )
    if unknown:
        configured = ", ".join(f"`{p.name}`" for p in config.platforms)
        listed = ", ".join(f"`{n}`" for n in unknown)
        parts.append(
            f"Unknown platform{'s' if len(unknown) > 1 else ''} {listed}. "
            + (
                f"Configured: {configured}, or `all`."
                if configured
                else "No platforms are configured: add them under `[platforms]` in `.github/llama-bot.toml`."
            )
        )
    parts.extend(errors)
    return "\n\n".join(parts) + "\n"


# -- the runs --------------------------------------------------------------------------------------


def _same_workflow(run: dict, workflow: str) -> bool:
    path = run.get("path") or ""
    return path.split("@", 1)[0].rsplit("/", 1)[-1] == workflow or str(run.get("workflow_id")) == workflow


def match_run(dispatches: Iterable[Dispatch], run: dict) -> Dispatch | None:
    """The dispatch a `workflow_run` object belongs to, or None: a run nobody dispatched is ignored.

    By run id (from the 200 dispatch answer); else by a request id in the run's title (its run-name);
    a title naming a request id that is not waiting here belongs to nobody. Else, for a
    workflow_dispatch run, by workflow file, head commit and creation time, oldest dispatch first.
    """
    dispatches = list(dispatches)
    found = next((d for d in dispatches if d.run_id is not None and d.run_id == run.get("id")), None)
    if found:
        return found
    waiting = [d for d in dispatches if d.run_id is None]
    ids = set(_REQUEST_ID.findall(f"{run.get('display_title') or ''} {run.get('name') or ''}"))
    if ids:
        return next((d for d in waiting if d.request_id in ids), None)
    if run.get("event") != "workflow_dispatch" or not run.get("created_at"):
        return None
    created = _time(run["created_at"])
    candidates = [
        d
        for d in waiting
        if d.status != "completed"
        and d.head_sha == run.get("head_sha")
        and _same_workflow(run, d.workflow)
        and _time(d.dispatched_at) - CLOCK_SKEW <= created <= _time(d.dispatched_at) + MATCH_WINDOW
    ]
    return min(candidates, key=lambda d: d.dispatched_at, default=None)


def check_conclusion(run_conclusion: str | None) -> str:
    """A run's conclusion as a check-run conclusion (`stale`, `startup_failure` and unknown ones fail)."""
    return run_conclusion if run_conclusion in CHECK_CONCLUSIONS else "failure"


def apply_run(dispatch: Dispatch, run: dict, action: str) -> Dispatch | None:
    """The dispatch after a workflow_run event; None when the event changes nothing worth posting.

    Deliveries may arrive out of order: an older state never replaces a newer one, except for a
    re-run (a later `run_started_at`), which starts the run over.
    """
    status = ACTION_STATUS.get(action)
    if status is None:
        return None
    started = run.get("run_started_at") or run.get("created_at")
    rerun = bool(dispatch.started_at and started and _time(started) > _time(dispatch.started_at))
    if _RANK[status] < _RANK[dispatch.status] and not rerun:
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
    )


def check_run_update(run: dict, action: str, platform: str) -> dict:
    """PATCH .../check-runs/{id} for a workflow_run event (action: requested, in_progress or completed)."""
    status = ACTION_STATUS[action]
    started = run.get("run_started_at") or run.get("created_at")
    body: dict = {"status": status, "details_url": run["html_url"]}
    attempt = run.get("run_attempt") or 1
    workflow, sha = (run.get("path") or "").rsplit("/", 1)[-1], (run.get("head_sha") or "")[:12]
    where = (
        f"Workflow run [#{run.get('run_number')}]({run['html_url']})"
        f"{f' attempt {attempt}' if attempt > 1 else ''} of `{workflow}` on commit `{sha}`"
        f"{' (branch `' + run['head_branch'] + '`)' if run.get('head_branch') else ''}"
    )
    if status == "queued":
        title, summary = f"{platform}: queued", f"{where} is queued."
    elif status == "in_progress":
        body["started_at"] = started
        title, summary = f"{platform}: in progress", f"{where} is running."
    else:
        conclusion = check_conclusion(run.get("conclusion"))
        took = _duration(started, run.get("updated_at"))
        body.update(started_at=started, conclusion=conclusion, completed_at=run.get("updated_at") or started)
        title = f"{platform}: {conclusion}" + (f" in {took}" if took else "")
        raw = run.get("conclusion")
        summary = (
            f"{where} finished: `{raw}`"
            + (f" (reported as `{conclusion}`)" if raw != conclusion else "")
            + (f", after {took}." if took else ".")
        )
    body["output"] = {"title": title, "summary": summary}
    return body


def runs_query(dispatch: Dispatch) -> dict:
    """Query for GET .../actions/workflows/{workflow}/runs that finds a run whose events were missed."""
    since = (_time(dispatch.dispatched_at) - CLOCK_SKEW).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "event": "workflow_dispatch",
        "branch": dispatch.ref,
        "head_sha": dispatch.head_sha,
        "created": f">={since}",
        "per_page": 100,
    }


def platform_rows(
    dispatches: Iterable[Dispatch], head_sha: str, platforms: Sequence[Platform] = ()
) -> list[dict]:
    """Rows for the checklist's platform table: the latest dispatch of each platform.

    Once anything was dispatched every configured platform gets a row (so the checklist keeps a box
    for each); before that there are none and the checklist shows its default list.
    """
    latest: dict[str, Dispatch] = {}
    for d in sorted(dispatches, key=lambda d: d.dispatched_at):
        latest[d.platform] = d
    if not latest:
        return []
    names = [p.name for p in platforms] + [n for n in latest if n not in {p.name for p in platforms}]
    rows = []
    for name in names:
        last = latest.get(name)
        row = {
            "name": name,
            "label": PLATFORM_LABELS.get(name, name),
            "state": "not run",
            "conclusion": None,
            "url": None,
            "duration": None,
            "sha": None,
            "stale": False,
        }
        if last:
            row.update(
                state=STATE_TEXT[last.status],
                conclusion=last.conclusion,
                url=last.run_url,
                duration=_duration(last.started_at, last.completed_at),
                sha=last.head_sha,
                stale=last.head_sha != head_sha,
            )
        rows.append(row)
    return rows


# -- the store -------------------------------------------------------------------------------------

_COLUMNS = ", ".join(f.name for f in fields(Dispatch))
_SCHEMA = """
CREATE TABLE IF NOT EXISTS validation_dispatches (
    repo TEXT NOT NULL,
    pr INTEGER NOT NULL,
    platform TEXT NOT NULL,
    workflow TEXT NOT NULL,
    ref TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    request_id TEXT PRIMARY KEY,
    dispatched_at TEXT NOT NULL,
    check_run_id INTEGER,
    run_id INTEGER,
    run_url TEXT,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'in_progress', 'completed')),
    conclusion TEXT,
    started_at TEXT,
    completed_at TEXT
);
CREATE INDEX IF NOT EXISTS validation_by_repo_status ON validation_dispatches (repo, status);
CREATE INDEX IF NOT EXISTS validation_by_pr ON validation_dispatches (repo, pr);
CREATE INDEX IF NOT EXISTS validation_by_run ON validation_dispatches (repo, run_id);
"""


class ValidationStore:
    """Dispatches in SQLite: a file of its own, or a connection the service already has open."""

    def __init__(self, db: str | Path | sqlite3.Connection):
        if isinstance(db, sqlite3.Connection):
            self._db, self._owned = db, False
        else:
            Path(db).parent.mkdir(parents=True, exist_ok=True)
            # Usable from worker threads too; the lock serialises the statements.
            self._db = sqlite3.connect(db, isolation_level=None, timeout=10.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._owned = True
        self._lock = threading.Lock()
        with self._lock, self._db:
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        if self._owned:
            self._db.close()

    def _write(self, sql: str, args: tuple) -> None:
        with self._lock, self._db:
            self._db.execute(sql, args)

    def _select(self, where: str, args: tuple) -> list[Dispatch]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM validation_dispatches WHERE {where} ORDER BY dispatched_at, rowid",
                args,
            ).fetchall()
        return [Dispatch(*row) for row in rows]

    def add(self, dispatch: Dispatch) -> None:
        marks = ", ".join("?" * len(fields(Dispatch)))
        self._write(f"INSERT INTO validation_dispatches ({_COLUMNS}) VALUES ({marks})", astuple(dispatch))

    def get(self, request_id: str) -> Dispatch | None:
        return next(iter(self._select("request_id = ?", (request_id,))), None)

    def update(self, dispatch: Dispatch) -> None:
        """Write back every field of a dispatch (by request id), e.g. the result of `apply_run`."""
        names = [f.name for f in fields(Dispatch) if f.name != "request_id"]
        assignments = ", ".join(f"{n} = ?" for n in names)
        self._write(
            f"UPDATE validation_dispatches SET {assignments} WHERE request_id = ?",
            (*(getattr(dispatch, n) for n in names), dispatch.request_id),
        )

    def attach_run(self, request_id: str, run_id: int, url: str | None) -> None:
        """Record the run id and page from a 200 dispatch answer."""
        self._write(
            "UPDATE validation_dispatches SET run_id = ?, run_url = ? WHERE request_id = ?",
            (run_id, url, request_id),
        )

    def find_open(self, repo: str, run_id: int | None = None) -> list[Dispatch]:
        """Dispatches a workflow_run of `repo` may belong to: unfinished ones, and the one holding `run_id`
        whatever its state (a re-run of a finished run reports under the same id)."""
        return self._select("repo = ? AND (status != 'completed' OR run_id = ?)", (repo, run_id))

    def unfinished(self, dispatched_before: str) -> list[Dispatch]:
        """Dispatches of every repository still waiting for their run's conclusion, dispatched before
        the given time: those whose workflow_run events may have been missed."""
        return self._select("status != 'completed' AND dispatched_at < ?", (dispatched_before,))

    def by_check_run(self, repo: str, check_run_id: int) -> Dispatch | None:
        """The dispatch behind a `validate: <platform>` check run, for `rerequested`."""
        return next(iter(self._select("repo = ? AND check_run_id = ?", (repo, check_run_id))), None)

    def for_pr(self, repo: str, pr: int) -> list[Dispatch]:
        """Every dispatch of a PR, oldest first (what `platform_rows` takes)."""
        return self._select("repo = ? AND pr = ?", (repo, pr))

    def superseded(self, repo: str, pr: int, head_sha: str) -> list[Dispatch]:
        """Unfinished dispatches for older commits of the PR: what `cancel_superseded` cancels."""
        return self._select(
            "repo = ? AND pr = ? AND status != 'completed' AND head_sha != ?", (repo, pr, head_sha)
        )

    def forks_to_clean(self, repo: str, pr: int) -> list[str]:
        """The llama-bot/pr-<n> branches this PR's dispatches ran on: delete them when it closes."""
        return sorted({d.ref for d in self.for_pr(repo, pr) if d.ref.startswith(FORK_BRANCH_PREFIX)})


# -- the checklist's platform section ---------------------------------------------------------------

PLATFORM_HEADING = "### Platform validation"
_FOOTER = "\n<sub>Describes commit"
_TAGGED = re.compile(r"<!-- llama-bot:platforms -->\n.*?<!-- /llama-bot:platforms -->\n", re.DOTALL)


def _untagged_section(body: str) -> tuple[int, int] | None:
    """Where the platform section of a comment written before the section had its tags starts and ends."""
    start = body.find(PLATFORM_HEADING)
    if start < 0:
        return None
    end = body.find(_FOOTER, start)
    return start, (end if end >= 0 else len(body))


def splice_platforms(body: str, section: str) -> str | None:
    """`body` (the checklist comment) with its platform section, between its tags, replaced by `section`
    (`render.platforms.render_platforms`); None when the body has none (a progress or error body).

    The rest of the comment (patches, steps, review) stays as the analysis wrote it, so a workflow_run
    update never needs the analysis report again.
    """
    if _TAGGED.search(body):
        return _TAGGED.sub(lambda _: section, body, count=1)
    old = _untagged_section(body)
    return None if old is None else body[: old[0]] + section + body[old[1] :]
