"""GitHub carried out a POST whose answer was lost, or a job stopped halfway and is tried again: what the
first attempt made on GitHub is found and finished, never made a second time."""

from __future__ import annotations

import time

from bot.stores.jobs import JobRequest, pull_key
from bot.stores.sqlitejobs import DB_NAME, SqliteJobQueue
from bot.worker.runner import JobBackoff
from tests.conftest import NAME, OWNER, Bot, bot_settings
from tests.test_service_validation import WORKFLOW, command, run_event, validation_runs

LOST = {"status": 502, "times": 1, "after": True}  # GitHub made it, then answered 502


async def test_a_lost_check_run_answer_makes_no_second_check_run(bot, scenario):
    scenario.fake.fail("POST", r"/check-runs$", **LOST)
    assert (await bot.deliver("pull_request", scenario.pull_event("opened")))[0] == 202
    await bot.settle()
    runs = scenario.check_runs(scenario.head_sha)
    assert sorted(r["name"] for r in runs) == ["llama.cpp: patches", "llama.cpp: upstream review"]
    assert {r["status"] for r in runs} == {"completed"}


async def test_a_lost_validation_check_run_answer_makes_no_second_one(bot, scenario):
    scenario.fake.add_workflow("ollama", "ollama", WORKFLOW)
    scenario.fake.fail("POST", r"/check-runs$", **LOST)
    await command(bot, scenario, "/llama validate cuda")
    (run,) = validation_runs(scenario, "cuda")
    (sent,) = scenario.fake.dispatches
    await run_event(bot, scenario, sent["run_id"], "completed", "completed", "success")
    assert (run["status"], run["conclusion"]) == ("completed", "success")


async def test_a_workflow_run_job_tried_again_still_completes_the_check_run(fake_github, scenario, tmp_path):
    """The first attempt stored the run as completed, then GitHub failed the check run's update: the job
    tried again finds the store already moved and must update the check run all the same."""
    backoff = JobBackoff(first=0.1, cap=0.1, total=30.0)
    bot = await Bot(bot_settings(fake_github, scenario, tmp_path / "var"), backoff=backoff).start()
    try:
        fake_github.add_workflow("ollama", "ollama", WORKFLOW)
        await command(bot, scenario, "/llama validate cuda")
        (sent,) = fake_github.dispatches
        fake_github.fail("PATCH", r"/check-runs/\d+$", 503, times=3)  # every try of the first attempt
        await run_event(bot, scenario, sent["run_id"], "completed", "completed", "failure")
        (run,) = validation_runs(scenario, "cuda")
        assert (run["status"], run["conclusion"]) == ("completed", "failure")
    finally:
        await bot.close()


async def test_a_reply_a_killed_job_had_posted_is_not_posted_again(fake_github, scenario, tmp_path):
    """The worker posted the reply and died before saving that it had: the job claimed again after the lease
    finds the reply by its key and does not post a second one."""
    data_dir = tmp_path / "var"
    dead = SqliteJobQueue(data_dir / DB_NAME, clock=lambda: time.time() - 120)  # its lease is long over
    comment = scenario.fake.add_comment(OWNER, NAME, scenario.number, "/llama help", "maintainer")
    payload = {
        "installation_id": fake_github.installation_id,
        "owner": OWNER,
        "repo": NAME,
        "number": scenario.number,
        "default_branch": "main",
        "comment_id": comment["id"],
        "body": "/llama help",
        "author": "maintainer",
    }
    (job_id,) = await dead.enqueue(
        "help-once", "issue_comment", [JobRequest("command", pull_key(OWNER, NAME, scenario.number), payload)]
    )
    await dead.claim("dead-host:1:0")
    await dead.close()
    fake_github.add_comment(
        OWNER,
        NAME,
        scenario.number,
        f"the help text\n<!-- llama-bot:reply {job_id}.0 -->",
        fake_github.bot_login,
        "Bot",
    )
    bot = await Bot(bot_settings(fake_github, scenario, data_dir)).start()
    try:
        await bot.settle()
        assert (await bot.queue.get(job_id)).status == "done"
    finally:
        await bot.close()
    assert [c["body"].splitlines()[-1] for c in scenario.bot_comments()] == [
        f"<!-- llama-bot:reply {job_id}.0 -->"
    ]
