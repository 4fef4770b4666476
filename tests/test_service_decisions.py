"""The service's decisions as pure functions: no server, no GitHub."""

import http

import aiohttp
from gidgethub import BadRequest, GitHubBroken

from bot.commands import COMMANDS
from bot.decisions.approval import may_write
from bot.gh.checkruns import check_run_updates
from bot.gh.github import BodyTooLarge
from bot.model import PatchResult, PinReport, Report
from bot.render.bodies import carried_ticks, with_ticks
from bot.render.env import MARKER, render_template
from bot.worker.commands import HANDLERS
from bot.worker.regenerate import (
    PatchChange,
    commit_message,
    patch_changes,
    push_refusal,
    push_target,
    shown_patches,
)
from bot.worker.runner import short_reason


def test_ticks_are_carried_through_a_progress_body():
    checklist = "- [x] Run `go test ./...` <!-- id:go-test -->\n- [ ] Build <!-- id:build-cpu -->\n"
    assert carried_ticks(checklist) == {"go-test"}
    progress = with_ticks(f"{MARKER}\n⏳ Checking", carried_ticks(checklist))
    assert carried_ticks(progress) == {"go-test"}
    assert with_ticks("body", set()) == "body"
    assert carried_ticks(None) == set()


def test_annotations_go_fifty_per_request():
    annotations = [
        {"path": "p", "start_line": i, "end_line": i, "annotation_level": "notice", "message": "m"}
        for i in range(1, 121)
    ]
    updates = check_run_updates(
        "failure", {"title": "t", "summary": "s", "text": "x", "annotations": annotations}
    )
    assert [len(u["output"]["annotations"]) for u in updates] == [50, 50, 20]
    assert updates[0]["status"] == "completed" and updates[0]["conclusion"] == "failure"
    assert updates[0]["output"]["text"] == "x"
    assert all("conclusion" not in u and u["output"]["summary"] == "s" for u in updates[1:])
    assert [a["start_line"] for u in updates for a in u["output"]["annotations"]] == list(range(1, 121))


def test_no_annotations_means_one_request_without_the_key():
    (update,) = check_run_updates("success", {"title": "t", "summary": "s"})
    assert "annotations" not in update["output"]


def test_write_maintain_and_admin_may_run_commands():
    assert may_write({"permission": "admin"})
    assert may_write({"permission": "write", "role_name": "write"})
    assert may_write({"permission": "write", "role_name": "maintain"})
    assert may_write({"permission": "read", "role_name": "maintain"})
    assert not may_write({"permission": "read", "role_name": "triage"})
    assert not may_write({"permission": "none"})


def _pr(head_full="o/r", base_full="o/r", can_modify=False, head_repo=True):
    repo = {
        "full_name": head_full,
        "name": head_full.split("/")[1],
        "owner": {"login": head_full.split("/")[0]},
    }
    return {
        "head": {"ref": "feature", "repo": repo if head_repo else None},
        "base": {"repo": {"full_name": base_full}},
        "maintainer_can_modify": can_modify,
    }


def test_push_target_same_repo_or_fork_that_allows_maintainers():
    assert push_target(_pr()) == ("o", "r", "feature")
    assert push_target(_pr("fork/r")) is None
    assert push_target(_pr("fork/r", can_modify=True)) == ("fork", "r", "feature")
    assert push_target(_pr(head_repo=False)) is None


def test_no_push_to_the_default_branch_or_a_protected_one():
    pr = _pr()
    pr["head"]["repo"]["default_branch"] = "main"
    assert push_refusal(pr, "main", {"protected": False}) == "it is the default branch of `o/r`"
    assert push_refusal(pr, "feature", {"protected": True}) == "it is a protected branch"
    assert push_refusal(pr, "feature", {"protected": False}) is None
    assert push_refusal(pr, "feature", None) is None  # not shown to the App: nor writable by it


def _report(*patches):
    pin = PinReport(
        "llama.cpp", "LLAMA_CPP_VERSION", "b1", "b2", "a" * 40, "b" * 40, "https://x/compare/b1...b2"
    )
    pin.patches = list(patches)
    return Report([pin])


def test_patch_changes_skip_unchanged_and_unresolved():
    report = _report(
        PatchResult("p/1.patch", "regenerated", "m", "p/1.patch", new_text=b"new"),
        PatchResult("p/2.patch", "offset", "m", None, new_text=b"same"),
        PatchResult("p/3.patch", "conflict", "m", None, new_text=None),
        PatchResult("p/4.patch", "fuzzy", "m", "p/4.patch", new_text=b"fuzzy"),
        PatchResult("p/5.patch", "clean", "m", None, new_text=b"clean but different"),
    )
    current = {"p/1.patch": b"old", "p/2.patch": b"same", "p/4.patch": b"old", "p/5.patch": b"x"}
    changes = patch_changes(report, current.get)
    assert [(c.path, c.status) for c in changes] == [("p/1.patch", "regenerated"), ("p/4.patch", "fuzzy")]
    message = commit_message(report, changes)
    assert message.splitlines()[0] == "Regenerate carried patches for llama.cpp b2"
    assert "llama.cpp: b1 -> b2" in message and "- p/4.patch (fuzzy)" in message


def test_fence_is_longer_than_any_backtick_run():
    assert PatchChange("p", "regenerated", b"+ ```code```\n").fence == "````"
    assert PatchChange("p", "regenerated", b"plain").fence == "```"


def test_shown_patches_stay_within_the_budget():
    changes = [PatchChange(f"p{i}", "regenerated", b"x" * 1000) for i in range(5)]
    shown, omitted = shown_patches(changes, 3500)
    assert [c.path for c in shown] == ["p0", "p1", "p2"] and [c.path for c in omitted] == ["p3", "p4"]


def test_short_reasons_are_one_line():
    assert short_reason(GitHubBroken(http.HTTPStatus.BAD_GATEWAY)) == "GitHub answered 502 Bad Gateway"
    assert (
        short_reason(BadRequest(http.HTTPStatus.FORBIDDEN, "Resource not accessible by integration"))
        == "GitHub answered 403 Forbidden (Resource not accessible by integration)"
    )
    assert short_reason(TimeoutError()) == "GitHub did not answer in time"
    assert short_reason(aiohttp.ClientConnectionError()) == "could not reach GitHub (ClientConnectionError)"
    assert short_reason(ValueError("bad\nsecond line")) == "ValueError: bad"
    assert (
        short_reason(BodyTooLarge(32 << 20))
        == "GitHub answered with more than 32 MiB, which llama-bot does not read"
    )


def test_every_command_has_a_handler():
    assert set(HANDLERS) == {c.name for c in COMMANDS}


def test_help_reply_lists_every_command_and_escapes_table_pipes():
    text = render_template(
        "reply_help.md.j2",
        line="/llama nope",
        problem="I do not know the command `/llama nope`.",
        prefix="/llama",
        commands=COMMANDS,
    )
    assert "> /llama nope" in text and "I do not know" in text
    assert "`/llama validate <platform> [<platform> ...] \\| all`" in text
    for command in COMMANDS:
        assert f"/llama {command.name}" in text
