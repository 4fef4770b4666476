"""The pin dashboard: one issue the service keeps, per pin how far behind it is and what a bump there would
meet, with a checkbox a writer ticks to open the bump; on the fake GitHub with real git upstreams."""

# ruff: noqa: F811  (the tests take test_service_bump's `world` fixture, imported below)
from __future__ import annotations

import copy
import re

from bot.decisions.dashboard import MARKER
from bot.service.app import SERVICE
from bot.stores.sqlitejobs import DB_NAME, read_jobs
from tests.fakegithub import commit
from tests.test_service_bump import world  # noqa: F401  (the fixture)

DASHBOARD = """[[pin]]
name = "llama.cpp"
version_file = "LLAMA_CPP_VERSION"
patches = "llama/compat"
upstream = "https://github.com/ggml-org/llama.cpp"
release_tags = 'b(\\d+)'

[dashboard]
enabled = true
label = "dependencies"
"""
BOX = "- [ ] Bump `llama.cpp` from `b100` to `b200` <!-- id:bump-llama.cpp -->"


def enable(world, text: str = DASHBOARD) -> None:
    commit(world.git, {".github/llama-bot.toml": text}, parents=[world.main], ref="refs/heads/main")


def dashboards(world) -> list[dict]:
    return [i for i in world.fake.issues.values() if i["body"].startswith(MARKER)]


async def edit(world, issue: dict, body: str, login: str, user_type: str = "User") -> int:
    """A person edits the dashboard's body: GitHub keeps it and delivers `issues.edited`."""
    before = issue["body"]
    issue["body"] = body
    sender = world.fake._user(login, user_type)
    data = world.delivery(
        "issues.edited", issue=copy.deepcopy(issue), sender=sender, changes={"body": {"from": before}}
    )
    status, _ = await world.bot.deliver("issues", data)
    await world.bot.settle(120)
    return status


async def test_the_dashboard_forecasts_the_newest_release_and_its_box_opens_the_bump(world):
    enable(world)
    await world.command("/llama dashboard")

    (board,) = dashboards(world)
    assert [label["name"] for label in board["labels"]] == ["dependencies"]
    assert board["user"]["type"] == "Bot" and board["title"] == "llama-bot: pin dashboard"
    body = board["body"]
    assert BOX in body
    assert "1 upstream commit behind" in body and "/compare/b100...b200" in body
    assert "No forecast" not in body and "The review found nothing high or medium." in body
    # the forecast: the carried patch does not apply as it is at b200, and is rebuilt
    assert "| `llama/compat/0001-hook.patch` | 🔁 regenerated |" in body
    assert f"[#{board['number']}]({board['html_url']})" in world.replies()[-1]
    assert world.bump_pulls() == []  # a forecast commits nothing

    assert await edit(world, board, body.replace("- [ ] Bump", "- [x] Bump"), "maintainer") == 202
    (pull,) = world.bump_pulls()
    assert pull["title"] == "llama.cpp: b100 -> b200"
    assert world.read(pull["head"]["sha"], "LLAMA_CPP_VERSION") == b"b200\n"
    assert f"on the pin dashboard (#{board['number']})" in world.branch_commits(pull)[0].message
    reply = world.replies(board["number"])[-1]
    assert "@maintainer ticked: bump llama.cpp" in reply and f"Opened [#{pull['number']}]" in reply
    (board,) = dashboards(world)  # rewritten: the box unticked, the pull request linked
    assert BOX in board["body"] and "- [x]" not in board["body"]
    assert f"Open bump pull request: [#{pull['number']}]({pull['html_url']}), at `b200`." in board["body"]

    # ticked again: the open bump pull request is already there, nothing new is opened
    await edit(world, board, board["body"].replace("- [ ] Bump", "- [x] Bump"), "maintainer")
    assert [p["number"] for p in world.bump_pulls()] == [pull["number"]]
    assert "already moves `llama.cpp` to `b200`" in world.replies(board["number"])[-1]
    assert world.fake.violations == []


async def test_a_box_ticked_by_someone_without_write_access_is_unticked_and_nothing_is_bumped(world):
    enable(world)
    await world.command("/llama dashboard")
    (board,) = dashboards(world)

    await edit(world, board, board["body"].replace("- [ ] Bump", "- [x] Bump"), "reader")
    assert world.bump_pulls() == []
    assert "@reader, thank you, but I only take commands" in world.replies(board["number"])[-1]
    (board,) = dashboards(world)
    assert BOX in board["body"]

    # the bot's own rewrite (its sender a bot) and an edit that ticks nothing queue no job
    jobs, unticked = len(read_jobs(world.bot.settings.data_dir / DB_NAME, limit=500)), board["body"]
    await edit(world, board, unticked.replace("- [ ] Bump", "- [x] Bump"), "llama-bot[bot]", "Bot")
    await edit(world, board, unticked + "\nnotes\n", "maintainer")
    assert len(read_jobs(world.bot.settings.data_dir / DB_NAME, limit=500)) == jobs
    assert world.bump_pulls() == []


async def test_the_schedule_refreshes_it_at_start_and_when_an_upstream_moves_only(world):
    enable(world)
    service = world.bot.app[SERVICE]
    await service.queue_bumps(now=1_000_000, started=True)
    await world.bot.settle(120)
    (board,) = dashboards(world)
    updated = board["updated_at"]

    await service.queue_bumps(now=1_000_000 + 3600)  # nothing moved, not six hours yet: left as it is
    await world.bot.settle(120)
    assert dashboards(world)[0]["updated_at"] == updated

    world.upstream.commit("upstream goes on", {"README": "newer\n"})
    world.upstream.tag("b300")
    world.fake.advance(5)
    await service.queue_bumps(now=1_000_000 + 7200)
    await world.bot.settle(120)
    (board,) = dashboards(world)
    assert "from `b100` to `b300`" in board["body"] and "2 upstream commits behind" in board["body"]
    assert len(dashboards(world)) == 1 and world.fake.violations == []


async def test_a_skipped_release_is_not_offered_and_a_dashboard_that_is_off_says_so(world):
    await world.command("/llama dashboard")  # the defaults keep no dashboard
    assert "I did not refresh the pin dashboard: the dashboard is off" in world.replies()[-1]
    assert dashboards(world) == []

    enable(world)
    await world.command("/llama skip llama.cpp b200")
    await world.command("/llama dashboard")
    (board,) = dashboards(world)
    assert "At `b100`: up to date." in board["body"] and "- [ ]" not in board["body"]
    assert world.fake.violations == []


async def test_a_pin_name_stays_data_on_the_dashboard_and_one_no_box_id_can_carry_gets_none(world):
    enable(world, DASHBOARD.replace('name = "llama.cpp"', 'name = "llama.cpp --> <b>@team"'))
    await world.command("/llama dashboard")
    (board,) = dashboards(world)
    body = board["body"]
    assert "### llama.cpp --&gt; &lt;b&gt; @&#8203;team" in body.replace("&lt;b&gt;@", "&lt;b&gt; @")
    assert "<b>" not in re.sub(r"`[^`\n]*`", "", body)  # only inside code spans
    assert "id:bump-" not in body and "- [ ]" not in body
    assert "`/llama bump llama.cpp --> <b>@team`" in body  # the command still opens it
    assert world.fake.violations == []
