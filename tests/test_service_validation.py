"""Platform validation end to end: signed webhooks into the bot, the fake GitHub's Actions API."""

import asyncio
import copy
import time
from dataclasses import replace

import pytest

from bot.config import parse_config
from bot.decisions.validation import REQUEST_ID_PREFIX, new_dispatch
from bot.service.app import SERVICE
from bot.stores.sqlitejobs import SqliteJobQueue
from bot.stores.validationstore import ValidationStore
from tests.conftest import NAME, OWNER, Bot, bot_settings
from tests.fakegithub import commit, payload

WORKFLOW = "test-llamacpp-update.yaml"
PLATFORMS = ("metal", "cuda", "rocm", "vulkan", "windows", "mlx-metal", "mlx-cuda", "contract-probe")


@pytest.fixture
def workflow(scenario):
    return scenario.fake.add_workflow(OWNER, NAME, WORKFLOW)


def validation_runs(scenario, platform=None, sha=None):
    return [
        r
        for r in scenario.check_runs(sha)
        if r["name"].startswith("validate: ") and (platform is None or r["name"] == f"validate: {platform}")
    ]


def replies(scenario, number=None):
    return [c["body"] for c in scenario.bot_comments(number) if c["body"].startswith("> ")]


def checklist(scenario):
    (comment,) = [c for c in scenario.bot_comments() if "llama-bot:checklist" in c["body"]]
    return comment["body"]


async def command(bot, scenario, body, number=None):
    status, _ = await bot.deliver("issue_comment", scenario.comment_event(body, number=number))
    assert status == 202
    await bot.settle()


async def run_event(bot, scenario, run_id, action, status, conclusion=None):
    code, _ = await bot.deliver(
        "workflow_run", scenario.fake.workflow_run_payload(run_id, action, status, conclusion)
    )
    assert code == 202
    await bot.settle()


def check_patches(scenario, check_id):
    return [
        r["body"] for r in scenario.fake.check_run_requests if r["method"] == "PATCH" and r["id"] == check_id
    ]


async def test_validate_metal_dispatches_the_workflow_on_the_head_branch(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal")
    (sent,) = scenario.fake.dispatches
    assert sent["workflow_id"] == WORKFLOW and sent["ref"] == scenario.branch
    assert sent["return_run_details"] is True
    inputs = sent["inputs"]
    assert inputs["platform"] == "metal" and inputs["pr"] == str(scenario.number)
    assert inputs["request_id"].startswith(REQUEST_ID_PREFIX)
    (check,) = validation_runs(scenario, "metal", scenario.head_sha)
    assert check["status"] == "queued" and check["external_id"] == inputs["request_id"]
    (reply,) = replies(scenario)
    assert "`metal`" in reply and scenario.branch in reply and "secrets" not in reply
    assert any(r["content"] == "eyes" for rs in scenario.fake.reactions.values() for r in rs)


async def test_validate_all_dispatches_every_configured_platform(bot, scenario, workflow):
    scenario.fake.add_workflow(OWNER, NAME, "llama-bot-probe.yaml")  # the probe's, from deploy/
    await command(bot, scenario, "/llama validate all")
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == list(PLATFORMS)
    assert len({d["inputs"]["request_id"] for d in scenario.fake.dispatches}) == len(PLATFORMS)
    assert {r["name"] for r in validation_runs(scenario)} == {f"validate: {p}" for p in PLATFORMS}


async def test_a_fork_gets_a_branch_in_the_base_repository_deleted_on_close(bot, scenario, workflow):
    sha = scenario.open_pull(
        9, {"README.md": "from a fork\n"}, "feature", head_repo_full_name="someone/ollama"
    )
    await command(bot, scenario, "/llama validate cuda", number=9)
    git = scenario.git
    assert str(git.references["refs/heads/llama-bot/pr-9"].target) == sha
    (sent,) = scenario.fake.dispatches
    assert sent["ref"] == "llama-bot/pr-9" and sent["inputs"]["pr"] == "9"
    assert scenario.fake.workflow_runs[sent["run_id"]]["head_sha"] == sha
    (reply,) = replies(scenario, 9)
    assert "someone/ollama" in reply and "secrets" in reply and "@maintainer" in reply
    # a second request force-moves the branch to the new head
    new_sha = commit(git, {"README.md": "fork, again\n"}, parents=[sha])
    scenario.fake.set_pull_head(OWNER, NAME, 9, new_sha)
    scenario.fake.advance(1)  # the maintainer comments after the push
    await command(bot, scenario, "/llama validate cuda", number=9)
    assert str(git.references["refs/heads/llama-bot/pr-9"].target) == new_sha
    scenario.fake.pulls[(scenario.full_name, 9)]["state"] = "closed"
    status, _ = await bot.deliver("pull_request", scenario.pull_event("closed", number=9))
    assert status == 202
    await bot.settle()
    assert "refs/heads/llama-bot/pr-9" not in git.references


@pytest.mark.parametrize("conclusion", ["success", "failure"])
async def test_workflow_run_events_drive_the_check_run_and_the_checklist(bot, scenario, workflow, conclusion):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    assert "### Platform validation" in checklist(scenario)
    await command(bot, scenario, "/llama validate metal")
    (check,) = validation_runs(scenario, "metal")
    run_id = scenario.fake.dispatches[0]["run_id"]
    url = scenario.fake.workflow_runs[run_id]["html_url"]
    assert "| metal | queued |" in checklist(scenario)

    await run_event(bot, scenario, run_id, "requested", "queued")
    check = scenario.fake.check_runs[check["id"]]
    assert check["status"] == "queued" and check["details_url"] == url
    await run_event(bot, scenario, run_id, "in_progress", "in_progress")
    assert scenario.fake.check_runs[check["id"]]["status"] == "in_progress"
    assert "| metal | in progress |" in checklist(scenario)
    await run_event(bot, scenario, run_id, "completed", "completed", conclusion)
    check = scenario.fake.check_runs[check["id"]]
    assert (check["status"], check["conclusion"], check["details_url"]) == ("completed", conclusion, url)
    body = checklist(scenario)
    assert f"| metal | completed | {conclusion} | [run]({url}) |" in body
    assert f"`{scenario.head_sha[:10]}`" in body
    assert ("- [x]" in body.split("### Platform validation")[1]) == (conclusion == "success")
    assert len(scenario.bot_comments()) == 2  # the checklist (edited in place) and the reply


async def test_ticked_boxes_stay_ticked_when_the_platform_table_changes(bot, scenario, workflow):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (comment,) = [c for c in scenario.bot_comments() if "llama-bot:checklist" in c["body"]]
    comment["body"] = comment["body"].replace("- [ ] Run `go test ./...`", "- [x] Run `go test ./...`")
    assert "- [x] Run `go test" in comment["body"]
    await command(bot, scenario, "/llama validate metal")
    run_id = scenario.fake.dispatches[0]["run_id"]
    await run_event(bot, scenario, run_id, "completed", "completed", "success")
    body = checklist(scenario)
    assert "- [x] Run `go test" in body and "| metal | completed | success |" in body


async def test_a_run_nobody_dispatched_is_ignored(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal")
    run_id = scenario.fake.dispatches[0]["run_id"]
    stranger = copy.deepcopy(scenario.fake.workflow_runs[run_id])
    stranger.update(id=run_id + 1000, display_title="someone's run lb-0123456789ab")
    scenario.fake.workflow_runs[stranger["id"]] = stranger
    patches = len([r for r in scenario.fake.check_run_requests if r["method"] == "PATCH"])
    await run_event(bot, scenario, stranger["id"], "completed", "completed", "failure")
    push = scenario.fake.workflow_run_payload(run_id, "completed", "completed", "failure")
    push["workflow_run"]["event"] = "push"
    assert (await bot.deliver("workflow_run", push))[0] == 200
    await bot.settle()
    assert len([r for r in scenario.fake.check_run_requests if r["method"] == "PATCH"]) == patches
    (check,) = validation_runs(scenario, "metal")
    assert check["status"] == "queued"


async def test_an_unknown_platform_gets_the_configured_list(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal2")
    (reply,) = replies(scenario)
    assert "`metal2`" in reply and all(f"`{p}`" in reply for p in PLATFORMS)
    assert scenario.fake.dispatches == [] and validation_runs(scenario) == []


async def test_a_missing_workflow_says_what_to_add(bot, scenario):
    await command(bot, scenario, "/llama validate metal")
    (reply,) = replies(scenario)
    assert f".github/workflows/{WORKFLOW}" in reply and "404" in reply
    assert "workflow_dispatch" in reply and "request_id" in reply and "```yaml" in reply
    (check,) = validation_runs(scenario, "metal")
    assert (check["status"], check["conclusion"]) == ("completed", "failure")


async def test_a_workflow_without_dispatch_trigger_says_what_to_add(bot, scenario):
    scenario.fake.add_workflow(OWNER, NAME, WORKFLOW, dispatchable=False)
    await command(bot, scenario, "/llama validate cuda")
    (reply,) = replies(scenario)
    assert "has no `workflow_dispatch` trigger" in reply and "```yaml" in reply
    assert scenario.fake.dispatches == []
    (check,) = validation_runs(scenario, "cuda")
    assert check["conclusion"] == "failure" and "workflow_dispatch" in check["output"]["summary"]


async def test_a_restart_between_dispatch_and_completion(fake_github, scenario, workflow, tmp_path):
    data_dir = tmp_path / "var"
    first = await Bot(bot_settings(fake_github, scenario, data_dir)).start()
    try:
        await command(first, scenario, "/llama validate metal")
    finally:
        await first.close()
    run_id = scenario.fake.dispatches[0]["run_id"]
    second = await Bot(bot_settings(fake_github, scenario, data_dir)).start()
    try:
        await run_event(second, scenario, run_id, "completed", "completed", "success")
    finally:
        await second.close()
    (check,) = validation_runs(scenario, "metal")
    assert (check["status"], check["conclusion"]) == ("completed", "success")
    assert check["details_url"] == scenario.fake.workflow_runs[run_id]["html_url"]


async def test_without_run_details_the_run_is_matched_by_request_id(bot, scenario, workflow):
    scenario.fake.return_run_details = False
    await command(bot, scenario, "/llama validate cuda")
    (sent,) = scenario.fake.dispatches
    await run_event(bot, scenario, sent["run_id"], "in_progress", "in_progress")
    (check,) = validation_runs(scenario, "cuda")
    assert check["status"] == "in_progress"
    assert check["details_url"] == scenario.fake.workflow_runs[sent["run_id"]]["html_url"]


async def test_a_new_push_cancels_superseded_runs_when_configured(bot, scenario, workflow):
    commit(
        scenario.git,
        {".github/llama-bot.toml": "cancel_superseded = true\n"},
        parents=[scenario.base_sha],
        ref="refs/heads/main",
        message="configure llama-bot",
    )
    await command(bot, scenario, "/llama validate metal")
    run_id = scenario.fake.dispatches[0]["run_id"]
    await run_event(bot, scenario, run_id, "in_progress", "in_progress")
    new_sha = scenario.push({"README.md": "a newer push\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    cancels = [
        r
        for r in scenario.fake.requests
        if r["method"] == "POST" and r["path"].endswith(f"/actions/runs/{run_id}/cancel")
    ]
    assert len(cancels) == 1
    assert scenario.fake.workflow_runs[run_id]["conclusion"] == "cancelled"
    assert "| metal | in progress (stale) |" in checklist(scenario) and new_sha[:12] in checklist(scenario)
    await run_event(bot, scenario, run_id, "completed", "completed", "cancelled")
    (check,) = validation_runs(scenario, "metal")
    assert check["conclusion"] == "cancelled"


async def test_without_the_setting_a_new_push_cancels_nothing(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal")
    scenario.push({"README.md": "a newer push\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    assert not [r for r in scenario.fake.requests if r["path"].endswith("/cancel")]


async def test_rerequesting_a_validate_check_run_dispatches_again(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate cuda")
    (check,) = validation_runs(scenario, "cuda")
    data = payload(
        "check_run.rerequested",
        check_run=copy.deepcopy(check),
        repository=scenario.repository(),
        installation=scenario.installation(),
        sender=scenario.fake._user("maintainer"),  # who may write
    )
    assert (await bot.deliver("check_run", data))[0] == 202
    await bot.settle()
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == ["cuda", "cuda"]
    assert (
        scenario.fake.dispatches[0]["inputs"]["request_id"]
        != scenario.fake.dispatches[1]["inputs"]["request_id"]
    )
    assert len(validation_runs(scenario, "cuda")) == 2
    assert not [c for c in scenario.check_runs() if c["name"].endswith(": patches")]  # no analysis


async def test_a_dispatch_github_keeps_failing_fails_only_that_platform(bot, scenario, workflow):
    scenario.fake.fail("POST", r"/dispatches$", 502, times=3)  # every attempt of the first dispatch
    await command(bot, scenario, "/llama validate metal cuda")
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == ["cuda"]
    (reply,) = replies(scenario)
    assert "**metal**" in reply and "502" in reply and "`cuda`" in reply
    assert validation_runs(scenario, "metal")[0]["conclusion"] == "failure"
    assert validation_runs(scenario, "cuda")[0]["status"] == "queued"


async def test_a_resumed_command_does_not_dispatch_again(fake_github, scenario, workflow, tmp_path):
    data_dir = tmp_path / "var"
    clock = [time.time() - 600]  # the dead worker claimed the job ten minutes ago
    queue = SqliteJobQueue(data_dir / "jobs.sqlite3", lease_seconds=60, clock=lambda: clock[0])
    first = Bot(bot_settings(fake_github, scenario, data_dir, workers=1), queue=queue)
    await first.start()
    await first.app[SERVICE].stop()  # nobody runs the delivery
    assert (await first.deliver("issue_comment", scenario.comment_event("/llama validate metal cuda")))[
        0
    ] == 202
    job = await queue.claim("dead-host:1:0")
    metal = parse_config(None).platforms[0]
    pull = scenario.fake.pulls[(scenario.full_name, scenario.number)]
    earlier = new_dispatch(scenario.full_name, pull, pull["head"]["sha"], metal, "2026-01-01T00:00:00Z")
    store = ValidationStore(data_dir / "validation.sqlite3")
    store.add(earlier)  # what the dead worker dispatched before it died
    store.close()
    await queue.save_progress(
        job.id, {"validation": {"command-0": {"metal": {"request_id": earlier.request_id, "error": None}}}}
    )
    await first.close()

    restarted = await Bot(bot_settings(fake_github, scenario, data_dir, workers=1)).start()
    try:
        await restarted.settle()
    finally:
        await restarted.close()
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == ["cuda"]
    (reply,) = replies(scenario)
    assert "`metal`, `cuda`" in reply


@pytest.mark.parametrize("run_details", [True, False], ids=["run details", "204"])
async def test_a_dispatch_whose_answer_was_lost_starts_one_workflow_run(bot, scenario, workflow, run_details):
    scenario.fake.return_run_details = run_details
    scenario.fake.fail("POST", r"/dispatches$", 502, after=True)  # GitHub made the run, the answer was lost
    await command(bot, scenario, "/llama validate metal")
    (sent,) = scenario.fake.dispatches
    (check,) = validation_runs(scenario, "metal")
    assert check["external_id"] == sent["inputs"]["request_id"]
    await run_event(bot, scenario, sent["run_id"], "completed", "completed", "success")
    check = scenario.fake.check_runs[check["id"]]
    assert (check["status"], check["conclusion"]) == ("completed", "success")


async def test_a_command_stopped_while_dispatching_leaves_no_orphan_check_run(
    fake_github, scenario, workflow, tmp_path
):
    data_dir = tmp_path / "var"
    first = await Bot(bot_settings(fake_github, scenario, data_dir, workers=1)).start()
    scenario.fake.delay(r"/dispatches$", 60)  # the metal dispatch is on its way when the service stops
    assert (await first.deliver("issue_comment", scenario.comment_event("/llama validate metal cuda")))[
        0
    ] == 202
    for _ in range(200):
        if validation_runs(scenario, "metal"):
            break
        await asyncio.sleep(0.02)
    await first.close()
    scenario.fake.clear_delays()

    restarted = await Bot(bot_settings(fake_github, scenario, data_dir, workers=1)).start()
    try:
        await restarted.settle()
    finally:
        await restarted.close()
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == ["metal", "cuda"]
    checks = {p: validation_runs(scenario, p) for p in ("metal", "cuda")}
    assert [len(c) for c in checks.values()] == [1, 1]
    assert [c[0]["external_id"] for c in checks.values()] == [
        d["inputs"]["request_id"] for d in scenario.fake.dispatches
    ]
    (reply,) = replies(scenario)
    assert "`metal`, `cuda`" in reply


@pytest.mark.parametrize(
    "run_details", [True, False], ids=["run id from the dispatch", "request id in the title"]
)
async def test_a_run_that_finished_while_the_service_was_down_is_caught_up_at_start(
    fake_github, scenario, workflow, tmp_path, run_details
):
    fake_github.return_run_details = run_details
    data_dir = tmp_path / "var"
    first = await Bot(bot_settings(fake_github, scenario, data_dir)).start()
    await first.deliver("pull_request", scenario.pull_event("opened"))
    await command(first, scenario, "/llama validate metal")
    await first.close()
    (check,) = validation_runs(scenario, "metal")
    run_id = scenario.fake.dispatches[0]["run_id"]
    scenario.fake.workflow_run_payload(run_id, "completed", "completed", "success")  # its delivery is lost
    store = ValidationStore(data_dir / "validation.sqlite3")
    (d,) = store.for_pr(scenario.full_name, scenario.number)
    store.update(replace(d, dispatched_at="2026-01-01T00:00:00Z"))  # the service was down for a while
    store.close()

    restarted = await Bot(bot_settings(fake_github, scenario, data_dir)).start()
    try:
        for _ in range(100):
            if scenario.fake.check_runs[check["id"]]["status"] == "completed":
                break
            await asyncio.sleep(0.05)
        await restarted.settle()
        check = scenario.fake.check_runs[check["id"]]
        assert (check["status"], check["conclusion"]) == ("completed", "success")
        assert "| metal | completed | success |" in checklist(scenario)
        asked = len(scenario.fake.requests)
        await restarted.app[SERVICE].queue_catch_up()  # nothing is waiting any more: nothing is asked
        await restarted.settle()
        assert not any("/actions/" in r["path"] for r in scenario.fake.requests[asked:])
    finally:
        await restarted.close()


async def test_a_recent_dispatch_is_left_to_its_webhooks(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal")
    asked = len(scenario.fake.requests)
    await bot.app[SERVICE].queue_catch_up()
    await bot.settle()
    assert not any(
        "/actions/" in r["path"] or r["path"].endswith("/installation")
        for r in scenario.fake.requests[asked:]
    )


async def test_catching_up_on_a_run_that_is_still_queued_changes_nothing(bot, scenario, workflow):
    await command(bot, scenario, "/llama validate metal")
    (check,) = validation_runs(scenario, "metal")
    service = bot.app[SERVICE]
    await run_event(bot, scenario, scenario.fake.dispatches[0]["run_id"], "requested", "queued")
    patched = len(check_patches(scenario, check["id"]))
    (d,) = service.store.for_pr(scenario.full_name, scenario.number)
    service.store.update(replace(d, dispatched_at="2026-01-01T00:00:00Z"))  # long enough ago to look
    await service.queue_catch_up()
    await bot.settle()
    assert any(
        r["path"].endswith(f"/actions/runs/{scenario.fake.dispatches[0]['run_id']}")
        for r in scenario.fake.requests
    )  # it did look
    assert len(check_patches(scenario, check["id"])) == patched
