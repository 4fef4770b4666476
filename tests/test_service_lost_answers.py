"""A check run POST that GitHub carried out but whose answer was lost is not made twice."""

from __future__ import annotations

from tests.test_service_e2e import runs_by_name


async def test_a_lost_check_run_answer_makes_no_second_check_run(bot, scenario):
    scenario.fake.fail("POST", r"/check-runs$", 502, times=1, after=True)  # created, then a 502
    assert (await bot.deliver("pull_request", scenario.pull_event("opened")))[0] == 202
    await bot.settle()
    runs = scenario.check_runs(scenario.head_sha)
    assert sorted(r["name"] for r in runs) == ["llama.cpp: patches", "llama.cpp: upstream review"]
    assert {r["status"] for r in runs} == {"completed"}
    assert set(runs_by_name(scenario, scenario.head_sha)) == {"llama.cpp: patches", "llama.cpp: upstream review"}
