"""Which job a delivery makes: pure decisions of the routers over payloads shaped like GitHub's."""

from gidgethub import sansio

import handlers
from handlers.check_runs import rerun_requests
from handlers.comments import command_request, is_bot
from handlers.pull_requests import analysis_request
from tests.fakegithub import payload


def pr_payload(action="opened", **pr_fields):
    data = payload("pull_request.opened", action=action)
    data["pull_request"].update(pr_fields)
    return data


def comment_payload(body="/llama recheck", login="someone", user_type="User", on_pr=True):
    data = payload("issue_comment.created")
    data["comment"].update(body=body, user={**data["comment"]["user"], "login": login, "type": user_type})
    if on_pr:
        data["issue"]["pull_request"] = {
            "url": "u",
            "html_url": "h",
            "diff_url": "d",
            "patch_url": "p",
            "merged_at": None,
        }
    return data


def test_pull_request_actions_ask_for_an_analysis_of_the_head():
    for action in ("opened", "synchronize", "reopened", "ready_for_review"):
        request = analysis_request(pr_payload(action))
        assert request.kind == "analysis" and request.supersedes
        assert request.key == "codertocat/hello-world#2"
        assert request.payload == {
            "installation_id": 1,
            "owner": "Codertocat",
            "repo": "Hello-World",
            "number": 2,
            "head_sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
            "reason": f"pull_request.{action}",
            "sender": "Codertocat",  # who pushed or opened the head: an `auto` platform needs a writer's
        }
        assert request.head == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"  # recorded as seen when stored


def test_edited_only_when_the_base_changed():
    assert analysis_request(pr_payload("edited")) is None
    title_only = pr_payload("edited")
    title_only["changes"] = {"title": {"from": "old"}}
    assert analysis_request(title_only) is None
    rebased = pr_payload("edited")
    rebased["changes"] = {"base": {"ref": {"from": "old"}, "sha": {"from": "0" * 40}}}
    assert analysis_request(rebased).payload["reason"] == "pull_request.edited"


def test_closed_pull_requests_and_deliveries_without_installation_are_ignored():
    assert analysis_request(pr_payload("reopened", state="closed")) is None
    data = pr_payload()
    del data["installation"]
    assert analysis_request(data) is None


def test_commands_on_pull_requests_and_issues_by_people_only():
    request = command_request(comment_payload())
    assert request.kind == "command" and not request.supersedes
    assert request.payload["body"] == "/llama recheck" and request.payload["author"] == "someone"
    assert request.payload["default_branch"] == "master"
    assert request.payload["comment_created_at"] == "2019-05-15T15:20:21Z"  # acts on the head seen then
    assert request.payload["on_pull"] is True
    on_issue = command_request(
        comment_payload(on_pr=False)
    )  # `bump` runs there; the job says the rest do not
    assert on_issue.kind == "command" and on_issue.payload["on_pull"] is False
    assert command_request(comment_payload(login="llama-bot[bot]")) is None
    assert command_request(comment_payload(login="renovate", user_type="Bot")) is None
    assert command_request(comment_payload(body="LGTM")) is None
    assert command_request(comment_payload(body="```\n/llama recheck\n```")) is None


def test_is_bot():
    assert is_bot({"login": "dependabot[bot]", "type": "Bot"})
    assert is_bot({"login": "someapp[bot]", "type": "User"})
    assert not is_bot({"login": "octocat", "type": "User"})


def test_rerequested_check_run_reruns_its_commit():
    data = payload("check_run.rerequested")
    data["check_run"]["pull_requests"] = [{"number": 5}]
    (request,) = rerun_requests(data, "check_run")
    assert request.key == "github/hello-world#5"
    assert request.payload["head_sha"] == data["check_run"]["head_sha"]
    data["check_run"]["pull_requests"] = []
    data["check_run"]["external_id"] = "12"  # a fork PR: the bot stored the number when it created the run
    assert rerun_requests(data, "check_run")[0].payload["number"] == 12
    data["check_run"]["external_id"] = ""
    assert rerun_requests(data, "check_run") == []


async def dispatch(event: str, data: dict):
    return await handlers.job_requests(sansio.Event(data, event=event, delivery_id="d"))


async def test_composed_router_routes_each_concern():
    assert [r.kind for r in await dispatch("pull_request", pr_payload("synchronize"))] == ["analysis"]
    assert [r.kind for r in await dispatch("issue_comment", comment_payload())] == ["command"]
    edited = comment_payload()
    edited["action"] = "edited"
    assert await dispatch("issue_comment", edited) == []  # edits are never commands
    rerun = payload("check_run.rerequested")
    rerun["check_run"]["pull_requests"] = [{"number": 1}]
    assert [r.kind for r in await dispatch("check_run", rerun)] == ["analysis"]
    assert [r.kind for r in await dispatch("pull_request", pr_payload("closed"))] == ["closed"]
    assert await dispatch("ping", payload("ping")) == []
    assert await dispatch("push", payload("push")) == []


def test_the_events_the_metrics_name_are_those_the_routers_act_on():
    """`handlers.EVENTS` names every event a router registers for, and no other (gidgethub keeps its
    registrations by event name in two mappings)."""
    import handlers

    registered = set(handlers.router._shallow_routes) | set(handlers.router._deep_routes)
    assert registered == handlers.EVENTS
