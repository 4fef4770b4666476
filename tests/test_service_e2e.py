"""End to end: signed webhooks into the bot on loopback, the fake GitHub over real git repositories."""

import asyncio
import json
import re
import sqlite3
import time

import pygit2

from bot import cli
from bot.render.env import MARKER
from bot.service.app import SERVICE, SETTINGS
from bot.stores.jobs import JobRequest
from bot.stores.sqlitejobs import DB_NAME, SqliteJobQueue
from tests.conftest import HOOK_PATCH, NAME, NEW_SOURCE, OWNER, PATCH_PATH, Bot, bot_settings
from tests.fakegithub import commit
from tests.gitutil import make_patch


def runs_by_name(scenario, sha):
    return {r["name"]: r for r in scenario.check_runs(sha)}


async def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def test_opened_posts_one_comment_and_the_check_runs(bot, scenario):
    status, answer = await bot.deliver("pull_request", scenario.pull_event("opened"))
    assert status == 202 and answer["status"] == "queued"
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert comment["body"].startswith(MARKER)
    assert scenario.head_sha[:12] in comment["body"] and "regenerated" in comment["body"]
    runs = runs_by_name(scenario, scenario.head_sha)
    assert set(runs) == {"llama.cpp: patches", "llama.cpp: upstream review"}
    patches = runs["llama.cpp: patches"]
    assert (patches["status"], patches["conclusion"]) == ("completed", "action_required")
    assert PATCH_PATH in patches["output"]["text"]
    assert scenario.fake.annotations[patches["id"]][0]["path"] == PATCH_PATH
    assert runs["llama.cpp: upstream review"]["conclusion"] in ("neutral", "success")
    assert patches["external_id"] == str(scenario.number)
    # while it ran, the comment and the check runs said so
    first_body = next(
        r["json"]["body"]
        for r in scenario.fake.requests
        if r["method"] == "POST" and r["path"].endswith("/issues/7/comments")
    )
    assert "Checking commit" in first_body and scenario.head_sha[:12] in first_body
    created = [r["body"] for r in scenario.fake.check_run_requests if r["method"] == "POST"]
    assert all(body["status"] == "in_progress" and "started_at" in body for body in created)


async def test_synchronize_edits_the_same_comment(bot, scenario):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    new_sha = scenario.push({"README.md": "ollama, now with more words\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert new_sha[:12] in comment["body"] and scenario.head_sha[:12] not in comment["body"]
    assert set(runs_by_name(scenario, new_sha)) == {"llama.cpp: patches", "llama.cpp: upstream review"}
    assert (
        sum(1 for r in scenario.fake.requests if r["method"] == "POST" and r["path"].endswith("/comments"))
        == 1
    )


async def test_results_for_a_superseded_head_are_never_posted(bot, scenario):
    old_sha = scenario.head_sha
    scenario.fake.delay(r"/git/trees/", 1.0)  # keep the first analysis busy while the PR moves on
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await wait_for(lambda: len(scenario.check_runs(old_sha)) == 2)
    new_sha = scenario.push({"README.md": "pushed while the bot was busy\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    old_runs = scenario.check_runs(old_sha)
    assert {r["conclusion"] for r in old_runs} == {"cancelled"}
    assert {r["conclusion"] for r in scenario.check_runs(new_sha)} <= {
        "action_required",
        "neutral",
        "success",
    }
    checklists = [
        r["json"]["body"]
        for r in scenario.fake.requests
        if r["method"] in ("POST", "PATCH")
        and "/comments" in r["path"]
        and r["json"]
        and "### Before merging" in r["json"]["body"]
    ]
    assert checklists and all(old_sha[:12] not in body for body in checklists)
    (comment,) = scenario.bot_comments()
    assert new_sha[:12] in comment["body"]


async def test_same_delivery_twice_acts_once(bot, scenario):
    data = scenario.pull_event("opened")
    assert (await bot.deliver("pull_request", data, delivery="abc"))[0] == 202
    await bot.settle()
    assert (await bot.deliver("pull_request", data, delivery="abc"))[0] == 200
    await bot.settle()
    assert len(scenario.bot_comments()) == 1 and len(scenario.check_runs()) == 2


async def test_a_pull_request_touching_no_pin_gets_nothing(bot, scenario):
    scenario.open_pull(8, {"README.md": "docs only\n"}, "docs")
    assert (await bot.deliver("pull_request", scenario.pull_event("opened", number=8)))[0] == 202
    await bot.settle()
    assert scenario.bot_comments(8) == [] and scenario.check_runs() == []
    assert not [
        r for r in scenario.fake.requests if r["method"] != "GET" and "access_tokens" not in r["path"]
    ]


async def test_job_of_a_dead_worker_is_resumed_after_a_restart(fake_github, scenario, tmp_path):
    data_dir = tmp_path / "var"
    clock = [time.time() - 600]  # the dead worker claimed the job ten minutes ago
    queue = SqliteJobQueue(data_dir / "jobs.sqlite3", lease_seconds=60, clock=lambda: clock[0])
    first = Bot(bot_settings(fake_github, scenario, data_dir, workers=1), queue=queue)
    await first.start()
    await first.app[SERVICE].stop()  # no live workers: the delivery is stored, nobody runs it
    assert (await first.deliver("pull_request", scenario.pull_event("opened"), delivery="d-1"))[0] == 202
    job = await queue.claim("dead-host:1:0")
    assert job is not None
    await first.close()

    restarted = Bot(bot_settings(fake_github, scenario, data_dir, workers=1))
    await restarted.start()
    try:
        await restarted.settle()
        finished = await restarted.queue.get(job.id)
        assert (finished.status, finished.attempts) == ("done", 2)
        assert len(scenario.bot_comments()) == 1 and len(scenario.check_runs()) == 2
        assert (await restarted.deliver("pull_request", scenario.pull_event("opened"), delivery="d-1"))[
            0
        ] == 200
    finally:
        await restarted.close()


async def _run_again_as_if_killed_before_it_ended(fake_github, scenario, tmp_path):
    """The job of an `opened` delivery runs to its end; then its row is left as SIGKILL would have left it
    just before the job was marked done, and a restarted service runs the job again."""
    data_dir = tmp_path / "var"
    first = Bot(bot_settings(fake_github, scenario, data_dir, workers=1))
    await first.start()
    await first.deliver("pull_request", scenario.pull_event("opened"))
    await first.settle()
    await first.close()
    made = {r["name"]: r["id"] for r in scenario.check_runs()}
    with sqlite3.connect(data_dir / DB_NAME) as db:
        (job_id,) = db.execute("SELECT id FROM jobs").fetchone()
        db.execute("UPDATE jobs SET status = 'running', lease_owner = 'dead-host:1:0', lease_expires = 0")
    restarted = Bot(bot_settings(fake_github, scenario, data_dir, workers=1))
    await restarted.start()
    try:
        await restarted.settle()
        job = await restarted.queue.get(job_id)
        assert (job.status, job.attempts) == ("done", 2)
    finally:
        await restarted.close()
    return made


async def test_a_job_stopped_after_completing_its_check_runs_does_not_make_a_second_pair(
    fake_github, scenario, tmp_path
):
    made = await _run_again_as_if_killed_before_it_ended(fake_github, scenario, tmp_path)
    runs = scenario.check_runs()
    assert len(runs) == 2 and all(r["status"] == "completed" for r in runs)
    assert {r["name"]: r["id"] for r in runs} == made
    assert len(scenario.bot_comments()) == 1


async def test_a_job_stopped_after_failing_its_general_check_run_does_not_make_a_second(
    fake_github, scenario, tmp_path
):
    commit(
        scenario.git,
        {".github/llama-bot.toml": "command_prefix = [broken\n"},
        parents=[scenario.base_sha],
        ref="refs/heads/main",
    )
    made = await _run_again_as_if_killed_before_it_ended(fake_github, scenario, tmp_path)
    (run,) = scenario.check_runs()
    assert {run["name"]: run["id"]} == made and run["conclusion"] == "failure"


async def test_502_and_rate_limits_still_post_exactly_once(bot, scenario):
    fake = scenario.fake
    fake.fail("POST", r"/issues/7/comments$", 502, times=2)
    fake.fail(
        "POST",
        r"/check-runs$",
        403,
        times=1,
        headers={"retry-after": "1"},
        body={"message": "You have exceeded a secondary rate limit."},
    )
    fake.fail(
        "PATCH",
        r"/check-runs/",
        429,
        times=1,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 1)},
    )
    fake.fail("GET", r"/git/blobs/", 503, times=1)
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    assert len(scenario.bot_comments()) == 1
    runs = scenario.check_runs()
    assert len(runs) == 2 and all(r["status"] == "completed" for r in runs)
    statuses = [
        r["status"] for r in fake.requests if r["method"] == "POST" and r["path"].endswith("/comments")
    ]
    assert statuses == [502, 502, 201]


async def test_a_comment_made_before_its_answer_was_lost_is_not_posted_again(bot, scenario):
    """GitHub carried out the POST and the answer was a 502: the checklist and a reply each exist once."""
    fake = scenario.fake
    fake.fail("POST", r"/issues/7/comments$", 502, times=1, after=True)
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (checklist,) = scenario.bot_comments()
    assert "### Before merging" in checklist["body"]
    fake.fail("POST", r"/issues/7/comments$", 502, times=1, after=True)
    await bot.deliver("issue_comment", scenario.comment_event("/llama help"))
    await bot.settle()
    replies = [c for c in scenario.bot_comments() if c["id"] != checklist["id"]]
    assert len(replies) == 1 and "llama-bot takes these commands" in replies[0]["body"]
    statuses = [
        r["status"] for r in fake.requests if r["method"] == "POST" and r["path"].endswith("/comments")
    ]
    assert statuses == [502, 502]  # neither was sent a second time


async def test_a_failed_job_can_be_inspected_from_the_command_line(bot, scenario, monkeypatch, capsys):
    scenario.fake.fail("GET", r"/git/trees/", 502, times=100)
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(bot.app[SETTINGS].data_dir))
    capsys.readouterr()
    assert cli.main(["jobs", "--status", "failed"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    job = json.loads(line)
    assert job["status"] == "failed" and "502" in job["error"] and "payload" not in job
    assert cli.main(["jobs", str(job["id"])]) == 0
    assert json.loads(capsys.readouterr().out)["payload"]["head_sha"] == scenario.head_sha
    assert cli.main(["jobs", "999"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("no job 999 in " + str(bot.app[SETTINGS].data_dir / "jobs.sqlite3"))
    )


async def test_a_run_that_fails_midway_says_so_in_the_comment_not_checking_forever(bot, scenario):
    scenario.fake.fail("GET", r"/git/trees/", 502, times=100)
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert "Checking commit" not in comment["body"] and "The run failed" in comment["body"]
    assert "502" in comment["body"] and "`/llama recheck`" in comment["body"]


async def test_a_failure_on_a_pr_touching_no_pin_posts_no_check_run(bot, scenario):
    sha = scenario.open_pull(8, {"README.md": "docs only\n"}, "docs")
    scenario.fake.fail("GET", r"/pulls/8$", 502, times=3)  # every attempt of the job's first call
    await bot.deliver("pull_request", scenario.pull_event("opened", number=8))
    await bot.settle()
    assert scenario.check_runs(sha) == [] and scenario.bot_comments(8) == []
    scenario.fake.fail("GET", r"/collaborators/", 502, times=3)
    await bot.deliver("issue_comment", scenario.comment_event("/llama help", number=8))
    await bot.settle()
    assert scenario.check_runs(sha) == []
    (reply,) = scenario.bot_comments(8)  # a command is never left unanswered
    assert "502" in reply["body"]


async def test_github_down_ends_in_a_failed_check_run_with_the_job_id(bot, scenario):
    scenario.fake.fail("GET", r"/git/trees/", 502, times=100)
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    counts = await bot.settle()
    assert counts["failed"] == 1
    job = await bot.queue.get(1)
    assert job.status == "failed" and "502" in job.error
    runs = scenario.check_runs(scenario.head_sha)
    assert {r["conclusion"] for r in runs} == {"failure"}
    summary = runs[0]["output"]["summary"]
    assert "502" in summary and f"job {job.id}" in summary


async def test_ticked_box_survives_recheck(bot, scenario):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    ticked = re.sub(r"- \[ \] (Run `go test[^\n]*<!-- id:go-test -->)", r"- [x] \1", comment["body"])
    assert ticked != comment["body"]
    comment["body"] = ticked  # a person ticks the box on GitHub
    command = scenario.comment_event("Ticked it.\n/llama recheck")
    assert (await bot.deliver("issue_comment", command))[0] == 202
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert "- [x] Run `go test ./...` <!-- id:go-test -->" in comment["body"]
    assert [r["content"] for r in scenario.fake.reactions[command["comment"]["id"]]] == ["eyes"]
    progress = [
        r["json"]["body"]
        for r in scenario.fake.requests
        if r["method"] == "PATCH"
        and "/issues/comments/" in r["path"]
        and "⏳ Re-checking" in r["json"]["body"]
    ]
    assert progress and all("go-test" in body for body in progress)  # remembered while the run was under way
    assert len(scenario.check_runs()) == 4  # the recheck made new runs on the same commit


async def test_read_permission_command_is_refused_politely(bot, scenario):
    scenario.fake.permissions[(scenario.full_name, "visitor")] = "read"
    command = scenario.comment_event("/llama regenerate-patches", login="visitor")
    await bot.deliver("issue_comment", command)
    await bot.settle()
    (reply,) = scenario.bot_comments()
    assert "@visitor" in reply["body"] and "write access" in reply["body"]
    assert command["comment"]["id"] not in scenario.fake.reactions
    assert scenario.check_runs() == []
    assert not [r for r in scenario.fake.requests if "/git/" in r["path"]]


async def test_bot_comments_are_ignored(bot, scenario):
    status, _ = await bot.deliver(
        "issue_comment", scenario.comment_event("/llama recheck", login="llama-bot[bot]", user_type="Bot")
    )
    assert status == 200


async def test_help_and_unknown_commands_reply_with_the_help(bot, scenario):
    command = scenario.comment_event("/llama frobnicate")
    await bot.deliver("issue_comment", command)
    await bot.settle()
    (reply,) = scenario.bot_comments()
    assert "frobnicate" in reply["body"] and "/llama regenerate-patches [pin]" in reply["body"]
    assert [r["content"] for r in scenario.fake.reactions[command["comment"]["id"]]] == ["eyes"]


async def test_validate_without_the_workflow_says_what_to_add(bot, scenario):
    await bot.deliver("issue_comment", scenario.comment_event("/llama validate metal"))
    await bot.settle()
    (reply,) = scenario.bot_comments()
    assert "not configured" in reply["body"] and "test-llamacpp-update.yaml" in reply["body"]
    assert scenario.fake.dispatches == []


async def test_one_broken_pin_does_not_fail_the_others(bot, scenario):
    sha = scenario.push({"MLX_VERSION": "not a ref!!\n"})  # the PR also bumps llama.cpp, which is fine
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    runs = runs_by_name(scenario, sha)
    assert runs["llama.cpp: patches"]["conclusion"] == "action_required"  # its patch was regenerated
    assert runs["mlx: patches"]["conclusion"] == runs["mlx: upstream review"]["conclusion"] == "failure"
    assert "MLX_VERSION" in runs["mlx: patches"]["output"]["summary"]
    (comment,) = scenario.bot_comments()
    assert "Could not check **mlx**: MLX_VERSION holds 'not a ref!!'" in comment["body"]
    assert "### llama.cpp: `v1` → `v2`" in comment["body"] and "### Before merging" in comment["body"]


async def test_garbage_version_file_fails_the_check_run_with_the_message(bot, scenario):
    sha = scenario.push({"LLAMA_CPP_VERSION": "not a ref!!\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    runs = runs_by_name(scenario, sha)
    assert {r["conclusion"] for r in runs.values()} == {"failure"}
    summary = runs["llama.cpp: patches"]["output"]["summary"]
    assert "LLAMA_CPP_VERSION" in summary and "not a ref!!" in summary
    (comment,) = scenario.bot_comments()
    assert "Could not check" in comment["body"] and "LLAMA_CPP_VERSION" in comment["body"]
    # the service keeps serving
    scenario.push({"LLAMA_CPP_VERSION": "v2\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    assert "### Before merging" in scenario.bot_comments()[0]["body"]


async def test_unknown_upstream_ref_fails_the_check_run(bot, scenario):
    sha = scenario.push({"LLAMA_CPP_VERSION": "b99999\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    summary = runs_by_name(scenario, sha)["llama.cpp: patches"]["output"]["summary"]
    assert "b99999" in summary


async def test_unreadable_config_fails_a_check_run_saying_what_to_fix(bot, scenario):
    main = commit(
        scenario.git,
        {".github/llama-bot.toml": "command_prefix = [broken\n"},
        parents=[scenario.base_sha],
        ref="refs/heads/main",
    )
    assert main
    scenario.fake.fail("POST", r"/check-runs$", 502, times=1, after=True)  # made, its answer lost
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (run,) = scenario.check_runs(scenario.head_sha)
    assert run["name"] == "llama-bot" and run["conclusion"] == "failure"
    assert "llama-bot.toml" in run["output"]["summary"]


async def test_rerequested_check_run_reruns_the_analysis(bot, scenario):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    run = runs_by_name(scenario, scenario.head_sha)["llama.cpp: patches"]
    data = {
        "action": "rerequested",
        "check_run": {**run, "pull_requests": []},
        "repository": scenario.repository(),
        "installation": scenario.installation(),
        "sender": scenario.fake._user("maintainer"),
    }
    assert (await bot.deliver("check_run", data))[0] == 202
    await bot.settle()
    assert len(scenario.check_runs(scenario.head_sha)) == 4
    assert len(scenario.bot_comments()) == 1


async def test_regenerate_patches_commits_to_the_head_branch(bot, scenario):
    command = scenario.comment_event("/llama regenerate-patches")
    await bot.deliver("issue_comment", command)
    await bot.settle()
    branch = scenario.git.references["refs/heads/bump"].peel(pygit2.Commit)
    assert [str(p) for p in branch.parent_ids] == [scenario.head_sha]
    assert "llama.cpp v2" in branch.message and "v1 -> v2" in branch.message
    new_patch = branch.tree[PATCH_PATH].data
    assert new_patch != HOOK_PATCH and b"ollama_hook();" in new_patch
    assert [
        p.delta.new_file.path
        for p in branch.tree.diff_to_tree(scenario.git[scenario.head_sha].peel(pygit2.Tree))
    ] == [PATCH_PATH]
    (reply,) = scenario.bot_comments()
    assert str(branch.id)[:12] in reply["body"] and PATCH_PATH in reply["body"]
    assert scenario.fake.pulls[(scenario.full_name, 7)]["head"]["sha"] == str(branch.id)


async def test_regenerate_patches_with_nothing_to_do_says_so(bot, scenario):
    scenario.push(
        {
            PATCH_PATH: make_patch(
                NEW_SOURCE, NEW_SOURCE.replace("d();\n", "d();\n    ollama_hook();\n"), "src/f.c"
            )
        }
    )  # made against v2: applies as it is
    scenario.fake.advance(1)  # the maintainer comments after the push
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches llama.cpp"))
    await bot.settle()
    (reply,) = scenario.bot_comments()
    assert "Nothing to regenerate for llama.cpp v1 → v2: every patch applies as it is." in reply["body"]


async def test_regenerate_patches_when_the_branch_moved(bot, scenario):
    scenario.fake.delay(r"/git/blobs$", 1.0)  # creating the blob takes a moment; a push lands meanwhile
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches"))
    await wait_for(
        lambda: any(
            r["method"] == "POST" and r["path"].endswith("/git/blobs") for r in scenario.fake.requests
        )
    )
    moved = commit(
        scenario.git, {"README.md": "racing push\n"}, parents=[scenario.head_sha], ref="refs/heads/bump"
    )
    await bot.settle()
    assert str(scenario.git.references["refs/heads/bump"].target) == moved
    (reply,) = scenario.bot_comments()
    assert "moved" in reply["body"] and moved[:12] in reply["body"]


async def test_regenerate_patches_on_a_protected_branch_replies_with_the_patches(bot, scenario):
    scenario.fake.fail(
        "PATCH",
        r"/git/refs/heads/bump$",
        422,
        times=1,
        body={"message": "Protected branch update failed for refs/heads/bump."},
    )
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches"))
    await bot.settle()
    assert str(scenario.git.references["refs/heads/bump"].target) == scenario.head_sha
    (reply,) = scenario.bot_comments()
    assert "moved" not in reply["body"] and "<details>" in reply["body"] and "ollama_hook();" in reply["body"]


async def test_regenerate_patches_for_a_fork_replies_with_the_patches(bot, scenario):
    sha = commit(scenario.git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[scenario.base_sha])
    scenario.fake.add_pull(OWNER, NAME, 9, sha, "bump-from-fork", head_repo_full_name="someone/ollama")
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches", number=9))
    await bot.settle()
    (reply,) = scenario.bot_comments(9)
    assert "<details>" in reply["body"] and "ollama_hook();" in reply["body"]
    assert "`.venv/bin/python -m bot regenerate --repo <your checkout of this branch>`" in reply["body"]
    assert not [r for r in scenario.fake.requests if r["method"] == "POST" and "/git/" in r["path"]]


async def test_recheck_on_a_pull_request_touching_no_pin_replies(bot, scenario):
    scenario.open_pull(8, {"README.md": "docs only\n"}, "docs")
    await bot.deliver("issue_comment", scenario.comment_event("/llama recheck", number=8))
    await bot.settle()
    (reply,) = scenario.bot_comments(8)
    assert "nothing to check" in reply["body"]


async def test_a_push_that_stops_touching_the_pin_retires_the_checklist(bot, scenario):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (checklist,) = scenario.bot_comments()
    assert "### Before merging" in checklist["body"]
    sha = scenario.push({"LLAMA_CPP_VERSION": "v1\n"}, "revert the bump")
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    (comment,) = scenario.bot_comments()
    assert comment["id"] == checklist["id"] and "### Before merging" not in comment["body"]
    assert f"As of commit `{sha[:12]}`" in comment["body"] and "nothing to check" in comment["body"]


async def test_regenerate_patches_falls_back_when_the_fork_refuses_the_write(bot, scenario):
    sha = commit(scenario.git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[scenario.base_sha])
    scenario.fake.add_pull(
        OWNER,
        NAME,
        9,
        sha,
        "bump-from-fork",
        head_repo_full_name="someone/ollama",
        maintainer_can_modify=True,
    )
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches", number=9))
    await bot.settle()
    (reply,) = scenario.bot_comments(9)
    assert "GitHub refused" in reply["body"] and "ollama_hook();" in reply["body"]


async def test_a_job_that_keeps_killing_its_worker_is_given_up(fake_github, scenario, tmp_path):
    """Each start takes back the job the killed run left running, at once, and counts that claim: the fourth
    start gives up on it instead of being killed by it again."""
    data_dir = tmp_path / "var"
    queue = SqliteJobQueue(data_dir / "jobs.sqlite3")
    await queue.enqueue(
        "d-1",
        "pull_request",
        [
            JobRequest(
                "analysis",
                "ollama/ollama#7",
                {
                    "installation_id": fake_github.installation_id,
                    "owner": OWNER,
                    "repo": NAME,
                    "number": 7,
                    "head_sha": scenario.head_sha,
                    "reason": "pull_request.opened",
                },
                supersedes=True,
            )
        ],
    )
    for n in range(3):  # three runs of the service were killed holding it
        assert await queue.claim(f"dead:{n}")
        await queue.close()
        queue = SqliteJobQueue(data_dir / "jobs.sqlite3")
    await queue.close()
    restarted = Bot(bot_settings(fake_github, scenario, data_dir, workers=1))
    await restarted.start()
    try:
        await restarted.settle()
        job = await restarted.queue.get(1)
        assert job.status == "failed" and "gave up after 3 attempts" in job.error
    finally:
        await restarted.close()
    (run,) = scenario.check_runs(scenario.head_sha)
    assert run["conclusion"] == "failure" and "job 1" in run["output"]["summary"]
