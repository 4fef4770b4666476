"""Check-run bodies: a pin's `patches` and `upstream review` runs, and a platform's `validate: <platform>`
run from its dispatch to its workflow run's conclusion. The states come from `bot.decisions.validation`; the titles,
summaries and texts are made here."""

from __future__ import annotations

from dataclasses import dataclass

from bot.decisions.validation import Dispatch, check_name, run_fields, run_started
from bot.model import REBUILT, PatchResult, PinReport
from bot.render.env import render_template
from bot.render.findings import review_findings
from bot.render.markdown import code
from bot.render.patches import pin_view
from bot.render.platforms import duration
from bot.render.words import plural

CHECK_TEXT_LIMIT = 65535
ANNOTATIONS_PER_REQUEST = 50
_HUNK_LEVEL = {"conflict": "failure", "relocated": "warning", "merged": "notice"}  # annotated hunks
_UNDER_WAY = {"queued": ("queued", "is queued."), "in_progress": ("in progress", "is running.")}


def patches_conclusion(patches: list[PatchResult]) -> str:
    """Failure when a patch does not go on at all; action required when one must be rebuilt or dropped."""
    statuses = {p.status for p in patches}
    if statuses & {"conflict", "error"}:
        return "failure"
    if statuses & {*REBUILT, "upstreamed"}:
        return "action_required"
    return "success"


def _annotation(path: str, line: int, level: str, title: str, message: str) -> dict:
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "annotation_level": level,
        "title": title,
        "message": message,
    }


def _patch_annotations(patch: PatchResult) -> list[dict]:
    """An unusable patch file at its first line; else its hunks that need a look, at their headers."""
    if patch.status == "error":
        return [_annotation(patch.path, 1, "failure", "error", patch.message)]
    return [
        _annotation(
            patch.path,
            max(1, hunk.patch_line),
            _HUNK_LEVEL[hunk.status],
            f"{hunk.file}: {hunk.status}",
            hunk.detail or patch.message,
        )
        for hunk in patch.hunks
        if hunk.status in _HUNK_LEVEL
    ]


def patch_annotations(pin: PinReport) -> list[dict]:
    """Check-run annotations on the patch files, at the hunks that need a look."""
    return [a for patch in pin.patches for a in _patch_annotations(patch)]


def _clip(text: str, limit: int = CHECK_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 60] + "\n\n… (truncated)\n"


def _output(title: str, text: str) -> dict:
    """A check run's output: the text up to its details as the summary, both within GitHub's limit."""
    return {"title": title, "summary": _clip(text.split("\n\n## ")[0]), "text": _clip(text)}


def _patches_title(pin: PinReport) -> str:
    counts: dict[str, int] = {}
    for p in pin.patches:
        counts[p.status] = counts.get(p.status, 0) + 1
    said = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no carried patches"
    return f"{pin.old_ref} → {pin.new_ref}: {said}"


def check_run_outputs(pin: PinReport, prefix: str = "/llama") -> list[tuple[str, str, dict]]:
    """(name, conclusion, output) for `<pin>: patches` and `<pin>: upstream review`."""
    findings = review_findings(pin)
    patches_text = render_template("check_patches.md.j2", v=pin_view(pin, prefix, None))
    review_text = render_template("check_review.md.j2", pin=pin, findings=findings)
    high = sum(1 for f in findings if f.severity == "high")
    review_title = f"{plural(len(findings), 'finding')} ({high} high)" if findings else "nothing found"
    return [
        (
            f"{pin.name}: patches",
            patches_conclusion(pin.patches),
            {**_output(_patches_title(pin), patches_text), "annotations": patch_annotations(pin)},
        ),
        (
            f"{pin.name}: upstream review",
            "neutral" if findings or pin.unchecked else "success",
            _output(review_title, review_text),
        ),
    ]


# -- platform validation ---------------------------------------------------------------------------


def check_run_create(dispatch: Dispatch) -> dict:
    """POST .../check-runs when dispatching: queued on the PR head, `external_id` = the request id."""
    return {
        "name": check_name(dispatch.platform),
        "head_sha": dispatch.head_sha,
        "status": "queued",
        "external_id": dispatch.request_id,
        "output": {
            "title": f"{dispatch.platform}: dispatched",
            "summary": f"Dispatched {code(dispatch.workflow)} on {code(dispatch.ref)} "
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


def _run_where(run: dict) -> str:
    """The run as a summary names it: number and link, attempt, workflow file, commit and branch."""
    attempt = run.get("run_attempt") or 1
    again = f" attempt {attempt}" if attempt > 1 else ""
    workflow = (run.get("path") or "").rsplit("/", 1)[-1]
    sha = (run.get("head_sha") or "")[:12]
    branch = f" (branch {code(run['head_branch'])})" if run.get("head_branch") else ""
    return f"Workflow run [#{run.get('run_number')}]({run['html_url']}){again} of {code(workflow)} on commit `{sha}`{branch}"


def _finished_output(run: dict, conclusion: str, platform: str, where: str) -> dict:
    """A finished run's title and summary: its conclusion, as GitHub said it if the check run differs,
    and how long it took."""
    took = duration(run_started(run), run.get("updated_at"))
    raw = run.get("conclusion")
    reported = f" (reported as `{conclusion}`)" if raw != conclusion else ""
    after = f", after {took}." if took else "."
    return {
        "title": f"{platform}: {conclusion}" + (f" in {took}" if took else ""),
        "summary": f"{where} finished: `{raw}`{reported}{after}",
    }


def check_run_update(run: dict, action: str, platform: str) -> dict:
    """PATCH .../check-runs/{id} for a workflow_run event (action: requested, in_progress or completed)."""
    body = run_fields(run, action)
    where = _run_where(run)
    if body["status"] in _UNDER_WAY:
        state, doing = _UNDER_WAY[body["status"]]
        output = {"title": f"{platform}: {state}", "summary": f"{where} {doing}"}
    else:
        output = _finished_output(run, body["conclusion"], platform, where)
    return {**body, "output": output}


@dataclass(frozen=True)
class RerunRefused:
    """Why a re-requested `validate:` check run was not run again (`bot.decisions.approval.rerun_refusal`)."""

    reason: str  # "permission" or "moved"
    sender: str
    permission: str  # the sender's role on the repository
    head: str  # the PR's head now
    prefix: str  # the repository's command prefix


def rerun_refused_update(dispatch: Dispatch, refused: RerunRefused) -> dict:
    """PATCH for a re-requested `validate:` check run that was not run again: its output says why and what
    to do; its status and conclusion stay those of the run it shows."""
    platform, sha = dispatch.platform, dispatch.head_sha[:12]
    shown = f"[workflow run]({dispatch.run_url})" if dispatch.run_url else "dispatch"
    if refused.reason == "permission":
        title = f"{platform}: re-run refused"
        why = (
            f"@{refused.sender} asked to run `{check_name(platform)}` again, but only people with write "
            f"access to this repository may (theirs is `{refused.permission}`), so nothing was run."
        )
    else:
        title = f"{platform}: not re-run, the head moved"
        why = (
            f"This check is for `{sha}`, which is no longer the head of the pull request (it is now "
            f"`{refused.head[:12]}`), so it was not run again. Comment `{refused.prefix} validate "
            f"{platform}` to validate `{refused.head[:12]}`."
        )
    return {
        "output": {"title": title, "summary": f"{why}\n\nThis check run still shows the {shown} of `{sha}`."}
    }
