"""`auto = true` platforms end to end: signed pull_request webhooks into the bot on loopback, real git
repositories, the fake GitHub's Actions API. A platform is dispatched once per head when the bump changes
upstream's build, only on a head in the base repository that someone with write access pushed."""

import pygit2
import pytest

from tests.conftest import HOOK_PATCH, NAME, NEW_SOURCE, OLD_SOURCE, OWNER, PATCH_PATH, Scenario
from tests.fakegithub import commit
from tests.fixtures import RepoBuilder

WORKFLOW = "build.yaml"
CONFIG = f"""
[platforms.cpu]
workflow = "{WORKFLOW}"
inputs = {{ platform = "cpu" }}
auto = true

[platforms.metal]
workflow = "{WORKFLOW}"
inputs = {{ platform = "metal" }}
"""
TOP = "project(x)\nadd_library(ggml src/f.c)\n"
WRITER = "maintainer"  # has `maintain` on the repository (tests/conftest.py)
READER = "Codertocat"  # the fake GitHub gives anyone else `read`


@pytest.fixture
def scenario(fake_github, tmp_path) -> Scenario:
    """main pins upstream v1 and configures `cpu` as `auto`; PR 7 bumps to v3, whose commit changes
    upstream's top CMakeLists.txt; v2 changes only a source file; v4 also changes the lines the carried
    patch needs."""
    up = RepoBuilder(tmp_path / "up.git")
    up.commit("base", {"src/f.c": OLD_SOURCE, "CMakeLists.txt": TOP})
    up.tag("v1")
    up.commit("a source change", {"src/f.c": OLD_SOURCE + "int h(void) { return 0; }\n"})
    up.tag("v2")
    up.commit(
        "build : compile g.c (#77)",
        {"src/g.c": "int g;\n", "CMakeLists.txt": TOP.replace("f.c", "f.c src/g.c")},
    )
    up.tag("v3")
    up.commit("rewrite f (#78)", {"src/f.c": NEW_SOURCE})  # the carried patch needs rebuilding
    up.tag("v4")
    git = pygit2.init_repository(str(tmp_path / "ollama.git"), bare=True)
    base = commit(
        git,
        {"LLAMA_CPP_VERSION": "v1\n", PATCH_PATH: HOOK_PATCH, ".github/llama-bot.toml": CONFIG},
        ref="refs/heads/main",
    )
    head = commit(git, {"LLAMA_CPP_VERSION": "v3\n"}, parents=[base], ref="refs/heads/bump")
    fake_github.add_repo(OWNER, NAME, git)
    fake_github.add_pull(OWNER, NAME, 7, head, "bump")
    fake_github.permissions[(f"{OWNER}/{NAME}", WRITER)] = "maintain"
    fake_github.add_workflow(OWNER, NAME, WORKFLOW)
    scenario = Scenario(fake_github, git, up.path, base, head)
    scenario.build_commit = str(up.repo.revparse_single("v3").id)
    return scenario


async def analysed(bot, scenario, action="opened", number=None, sender=WRITER):
    data = scenario.pull_event(action, number=number)
    data["sender"] = {**data["sender"], "login": sender}
    status, _ = await bot.deliver("pull_request", data)
    assert status == 202
    await bot.settle()


def validation_runs(scenario, sha=None):
    return [r for r in scenario.check_runs(sha) if r["name"].startswith("validate: ")]


def build_box(scenario, number=7) -> str:
    (comment,) = [c for c in scenario.bot_comments(number) if "llama-bot:checklist" in c["body"]]
    (line,) = [line for line in comment["body"].splitlines() if "<!-- id:build-cpu" in line]
    return line


async def test_a_writers_push_that_changes_upstreams_build_dispatches_the_auto_platform_once(bot, scenario):
    await analysed(bot, scenario)
    (sent,) = scenario.fake.dispatches  # `metal` is not `auto`
    assert sent["workflow_id"] == WORKFLOW and sent["ref"] == scenario.branch
    assert sent["inputs"]["platform"] == "cpu" and sent["inputs"]["pr"] == "7"
    (check,) = validation_runs(scenario, scenario.head_sha)
    assert check["name"] == "validate: cpu" and check["external_id"] == sent["inputs"]["request_id"]
    box = build_box(scenario)
    assert f"upstream changed `CMakeLists.txt` ([`{scenario.build_commit[:10]}`]" in box
    assert box.endswith("; dispatched as `validate: cpu` <!-- id:build-cpu -->")
    assert "| cpu | queued |" in scenario.bot_comments()[0]["body"]


async def test_analysing_the_same_head_again_does_not_dispatch_again(bot, scenario):
    await analysed(bot, scenario)
    await analysed(bot, scenario, "reopened")
    await analysed(bot, scenario, "synchronize")  # GitHub delivering the push again
    status, _ = await bot.deliver("issue_comment", scenario.comment_event("/llama recheck"))
    assert status == 202
    await bot.settle()
    assert len(scenario.fake.dispatches) == 1 and len(validation_runs(scenario)) == 1
    assert "dispatched as `validate: cpu`" in build_box(scenario)


async def test_a_new_push_that_still_changes_the_build_is_dispatched_again(bot, scenario):
    await analysed(bot, scenario)
    new_sha = scenario.push({"README.md": "a push after the first build\n"})
    await analysed(bot, scenario, "synchronize")
    assert [d["inputs"]["platform"] for d in scenario.fake.dispatches] == ["cpu", "cpu"]
    (check,) = validation_runs(scenario, new_sha)
    assert check["name"] == "validate: cpu"


async def test_a_forks_head_is_not_dispatched_and_the_box_offers_the_command(bot, scenario):
    scenario.open_pull(9, {"LLAMA_CPP_VERSION": "v3\n"}, "fork-bump", head_repo_full_name="someone/ollama")
    await analysed(bot, scenario, number=9)
    assert scenario.fake.dispatches == [] and validation_runs(scenario) == []
    assert "refs/heads/llama-bot/pr-9" not in scenario.git.references
    box = build_box(scenario, 9)
    assert "worth running, as upstream changed `CMakeLists.txt`" in box
    assert "not started for a fork's commit: comment `/llama validate cpu`" in box


async def test_a_push_by_someone_without_write_access_is_not_dispatched_until_a_writer_approves(
    bot, scenario
):
    await analysed(bot, scenario, sender=READER)
    assert scenario.fake.dispatches == []
    box = build_box(scenario)
    assert "nobody with write access pushed or approved this commit: comment `/llama validate cpu`" in box
    scenario.fake.advance(1)  # a maintainer looks at that head and asks for a re-check
    status, _ = await bot.deliver("issue_comment", scenario.comment_event("/llama recheck", login=WRITER))
    assert status == 202
    await bot.settle()
    (sent,) = scenario.fake.dispatches
    assert sent["inputs"]["platform"] == "cpu"
    assert "dispatched as `validate: cpu`" in build_box(scenario)


async def test_a_bump_that_leaves_upstreams_build_alone_dispatches_nothing(bot, scenario):
    scenario.open_pull(8, {"LLAMA_CPP_VERSION": "v2\n"}, "source-only")
    await analysed(bot, scenario, number=8)
    assert scenario.fake.dispatches == [] and validation_runs(scenario) == []
    assert "upstream changed no CMake file or build tool Ollama's build uses" in build_box(scenario, 8)


async def test_auto_that_is_not_a_boolean_is_a_config_error_and_dispatches_nothing(bot, scenario):
    commit(
        scenario.git,
        {".github/llama-bot.toml": CONFIG.replace("auto = true", 'auto = "yes"')},
        parents=[scenario.base_sha],
        ref="refs/heads/main",
    )
    await analysed(bot, scenario)
    assert scenario.fake.dispatches == []
    (run,) = scenario.check_runs(scenario.head_sha)
    assert run["conclusion"] == "failure"
    assert (
        ".github/llama-bot.toml: platforms.cpu.auto: expected true, false or \"bump\", got 'yes'"
        in run["output"]["summary"]
    )


async def test_a_bump_whose_patches_do_not_apply_yet_waits_for_them(bot, scenario):
    scenario.open_pull(8, {"LLAMA_CPP_VERSION": "v4\n"}, "bump-v4")
    await analysed(bot, scenario, number=8)
    assert scenario.fake.dispatches == []  # its configure step would fail on the committed patches
    box = build_box(scenario, 8)
    assert "the patches are rebuilt; `validate: cpu` starts once the committed patches apply" in box


async def test_a_bump_platform_is_dispatched_on_a_bump_that_changes_no_build_file(bot, scenario):
    config = CONFIG.replace("auto = true", 'auto = "bump"')
    base = commit(
        scenario.git,
        {"LLAMA_CPP_VERSION": "v1\n", PATCH_PATH: HOOK_PATCH, ".github/llama-bot.toml": config},
        ref="refs/heads/main",
    )
    head = commit(scenario.git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[base], ref="refs/heads/probe-bump")
    scenario.fake.add_pull(OWNER, NAME, 8, head, "probe-bump")
    await analysed(bot, scenario, number=8)
    (sent,) = (
        scenario.fake.dispatches
    )  # v1 -> v2 changes only a source file: a "build" platform would not run
    assert sent["inputs"]["platform"] == "cpu" and sent["inputs"]["pr"] == "8"
    assert build_box(scenario, 8).endswith(
        "upstream changed no CMake file or build tool Ollama's build uses; dispatched as `validate: cpu` "
        "<!-- id:build-cpu -->"
    )
