"""GitHub carried out a POST whose answer was lost, or a job stopped halfway and is tried again: what the
first attempt made on GitHub is found and finished, never made a second time."""

from __future__ import annotations

from bot.service import JobBackoff
from tests.conftest import Bot, bot_settings
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
