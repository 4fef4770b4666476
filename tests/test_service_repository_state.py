"""What the pull request gets for a misspelt configuration, a deleted version file and a base ref upstream
lacks: a failed check run that says what to fix, never "nothing to check"."""

import pytest

from tests.fakegithub import commit
from tests.test_service_e2e import runs_by_name


@pytest.mark.parametrize(
    "text, words",
    [
        ('comand_prefix = "/llama"\n', "comand_prefix: unknown key (did you mean `command_prefix`?)"),
        ('[[pins]]\nname = "llama.cpp"\n', "pins: unknown key (did you mean `pin`?)"),
    ],
)
async def test_a_misspelt_config_key_fails_a_check_run_naming_the_nearest_key(bot, scenario, text, words):
    commit(scenario.git, {".github/llama-bot.toml": text}, parents=[scenario.base_sha], ref="refs/heads/main")
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    (run,) = scenario.check_runs(scenario.head_sha)
    assert run["conclusion"] == "failure"
    assert words in run["output"]["summary"]


async def test_a_deleted_version_file_is_reported_on_the_pull_request(bot, scenario):
    sha = scenario.push({"LLAMA_CPP_VERSION": None})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    runs = runs_by_name(scenario, sha)
    assert runs, "a change that deletes a pin's version file touches the pin"
    assert {r["conclusion"] for r in runs.values()} == {"failure"}
    assert any("this change deletes LLAMA_CPP_VERSION" in r["output"]["summary"] for r in runs.values())


async def test_a_base_ref_upstream_lacks_fails_the_check_run_naming_it(bot, scenario):
    main = commit(
        scenario.git, {"LLAMA_CPP_VERSION": "b99999\n"}, parents=[scenario.base_sha], ref="refs/heads/main"
    )
    head = commit(scenario.git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[main], ref="refs/heads/repin")
    scenario.fake.add_pull("ollama", "ollama", 9, head, "repin", base_sha=main)
    await bot.deliver("pull_request", scenario.pull_event("opened", number=9))
    await bot.settle()
    runs = runs_by_name(scenario, head)
    assert runs["llama.cpp: patches"]["conclusion"] == "failure"
    assert (
        "LLAMA_CPP_VERSION at the base revision names 'b99999'"
        in runs["llama.cpp: patches"]["output"]["summary"]
    )
