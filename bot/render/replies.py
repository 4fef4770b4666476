"""Replies to commands: a command that failed or finds no pin touched, and `/llama validate`'s: what runs
where, and when GitHub refuses a dispatch, exactly what the workflow file needs and where it goes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.config import Config, Platform
from bot.decisions.validation import Dispatch, is_fork
from bot.render.env import TEMPLATES, render_template
from bot.render.markdown import code, plain

TEMPLATE = TEMPLATES / "workflow_dispatch.yml"


def failed_reply(line: str, reason: str, job_id: int | None = None) -> str:
    """The reply to the command `line` that could not run, and why; with the job when it failed for good."""
    return render_template("reply_failed.md.j2", line=line, reason=reason, job_id=job_id)


def untouched_reply(line: str, verb: str, config: Config) -> str:
    """The reply to a command about pins when the PR touches none."""
    return render_template("reply_untouched.md.j2", line=line, verb=verb, pins=[p.name for p in config.pins])


_UNEXPECTED = re.compile(r"Unexpected inputs provided: \[(.*)\]")
_WHERE = (
    "(`run-name` at the top level, `workflow_dispatch` under the existing `on:`; "
    "the file must be on the default branch)"
)


def _template_block() -> str:
    """The YAML of bot/templates/workflow_dispatch.yml without its header comment, for replies."""
    lines = TEMPLATE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("run-name:"))
    return "\n".join(lines[start:]).strip() + "\n"


def _yaml(text: str) -> str:
    return f"\n\n```yaml\n{text}```\n"


def _inputs_snippet(names: Sequence[str]) -> str:
    """The `inputs:` entries a workflow lacks, and the run-name that shows the request id if that is one."""
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


@dataclass(frozen=True)
class _Refusal:
    """GitHub's answer to a dispatch it refused."""

    platform: Platform
    status: int
    message: str

    @property
    def path(self) -> str:
        return f".github/workflows/{self.platform.workflow}"


def _no_workflow(r: _Refusal) -> str | None:
    if r.status != 404:
        return None
    return (
        f"this repository has no workflow {code(r.path)} (GitHub answered 404). Add it with this "
        f"trigger {_WHERE}, or point `platforms.{r.platform.name}.workflow` in `.github/llama-bot.toml` "
        f"at an existing workflow:" + _yaml(_template_block())
    )


def _no_trigger(r: _Refusal) -> str | None:
    if r.status != 422 or "workflow_dispatch" not in r.message:
        return None
    return (
        f"{code(r.path)} has no `workflow_dispatch` trigger, so it cannot be started on request "
        f"(GitHub: {plain(r.message)}). Add this {_WHERE}:" + _yaml(_template_block())
    )


def _undeclared_names(listed: str) -> list[str]:
    """The input names in GitHub's `[...]` list: quoted, or else separated by commas."""
    return re.findall(r'"([^"]+)"', listed) or [n.strip(" '") for n in listed.split(",")]


def _undeclared_inputs(r: _Refusal) -> str | None:
    unexpected = _UNEXPECTED.search(r.message) if r.status == 422 else None
    if not unexpected:
        return None
    names = _undeclared_names(unexpected[1])
    listed = ", ".join(code(n) for n in names)
    plural = len(names) > 1
    return (
        f"{code(r.path)} does not declare the input{'s' if plural else ''} {listed} that the bot "
        f"sends. Add {'them' if plural else 'it'} under `on: workflow_dispatch: inputs:` "
        f"{_WHERE}:" + _yaml(_inputs_snippet(names))
    )


def _no_ref(r: _Refusal) -> str | None:
    if r.status != 422 or not r.message.startswith("No ref found"):
        return None
    return (
        f"GitHub cannot find the branch to run {code(r.path)} on ({plain(r.message)}). "
        "If the branch was deleted, push it again and repeat the command."
    )


def _unprocessable(r: _Refusal) -> str | None:
    if r.status != 422:
        return None
    return (
        f"GitHub refused to dispatch {code(r.path)} (422: {plain(r.message)}). The workflow needs this "
        f"trigger {_WHERE}:" + _yaml(_template_block())
    )


def _refused(r: _Refusal) -> str | None:
    return f"GitHub refused to dispatch {code(r.path)} ({r.status}: {plain(r.message)})."


# The first that recognises the refusal answers it; the last answers any.
_ANSWERS: tuple[Callable[[_Refusal], str | None], ...] = (
    _no_workflow,
    _no_trigger,
    _undeclared_inputs,
    _no_ref,
    _unprocessable,
    _refused,
)


def dispatch_error_reply(platform: Platform, status: int, message: str) -> str:
    """What to tell the maintainer when GitHub refuses a dispatch: exactly what to add, and where."""
    refusal = _Refusal(platform, status, message)
    answer = next(text for text in (a(refusal) for a in _ANSWERS) if text)
    return f"**{platform.name}**: {answer}"


def _started(dispatched: Sequence[Dispatch], pull: dict, requester: str) -> list[str]:
    """What was started and where its results show; for a fork, whose code runs with whose secrets."""
    if not dispatched:
        return []
    names = ", ".join(code(d.platform) for d in dispatched)
    first = dispatched[0]
    started = (
        f"Started validation of {names} on {code(first.ref)} (commit `{first.head_sha[:12]}`). "
        "Each platform has a `validate: <platform>` check run on this PR that follows its "
        "workflow run; the checklist's platform table shows the results."
    )
    parts = [started]
    if is_fork(pull):
        fork = (pull["head"].get("repo") or {}).get("full_name") or "a deleted fork"
        parts.append(
            f"⚠️ This pull request comes from {code(fork)}. Its head commit was pushed to the "
            f"branch {code(first.ref)} of this repository, so **the run uses the fork's code with "
            f"this repository's secrets**, because @{requester}, a maintainer, asked for it. "
            "The branch is deleted when the pull request closes."
        )
    return parts


def _unknown(unknown: Sequence[str], config: Config) -> list[str]:
    """The names that are no configured platform, and the ones that are."""
    if not unknown:
        return []
    configured = ", ".join(code(p.name) for p in config.platforms)
    listed = ", ".join(code(n) for n in unknown)
    offer = (
        f"Configured: {configured}, or `all`."
        if configured
        else "No platforms are configured: add them under `[platforms]` in `.github/llama-bot.toml`."
    )
    return [f"Unknown platform{'s' if len(unknown) > 1 else ''} {listed}. " + offer]


def validate_reply(
    dispatched: Sequence[Dispatch],
    unknown: Sequence[str],
    errors: Sequence[str],
    config: Config,
    pull: dict,
    requester: str,
) -> str:
    """The answer to `/llama validate`: what runs where, the fork warning, unknown names and refusals."""
    parts = [*_started(dispatched, pull, requester), *_unknown(unknown, config), *errors]
    return "\n\n".join(parts) + "\n"
