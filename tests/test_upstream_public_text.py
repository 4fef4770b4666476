"""What the mirrors say reaches the public checklist and check runs: it names the upstream by the pin's URL,
never by the URL LLAMA_BOT_URL_INSTEADOF made of it, and shows no path of the server's."""

from __future__ import annotations

from tests.conftest import UPSTREAM_URL


async def test_a_ref_upstream_lacks_is_named_without_the_servers_path_or_fetch_url(bot, scenario, tmp_path):
    sha = scenario.push({"LLAMA_CPP_VERSION": "b99999\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()
    (run,) = [r for r in scenario.check_runs(sha) if r["name"] == "llama.cpp: patches"]
    (comment,) = scenario.bot_comments()
    summary = run["output"]["summary"]
    assert f"names 'b99999', which is not a tag or commit of {UPSTREAM_URL}" in summary
    for public in (summary, run["output"].get("text") or "", comment["body"]):
        assert str(tmp_path) not in public  # neither the data directory nor the upstream's path
