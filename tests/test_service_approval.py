"""The bot acts only on the commit a person with write access approved: the real service on loopback,
the fake GitHub (its clock moved on where a person would wait), real git repositories."""

import asyncio
import copy
import time

import pygit2
import pytest

from tests.conftest import NAME, OWNER, PATCH_PATH
from tests.fakegithub import commit, payload

WORKFLOW = "test-llamacpp-update.yaml"


@pytest.fixture
def workflow(scenario):
    return scenario.fake.add_workflow(OWNER, NAME, WORKFLOW)


async def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def replies(scenario, number=None):
    return [c["body"] for c in scenario.bot_comments(number) if c["body"].startswith("> ")]


def git_writes(scenario):
    """Every blob, tree, commit or ref the bot wrote through the Git Data API."""
    return [r for r in scenario.fake.requests if r["method"] in ("POST", "PATCH") and "/git/" in r["path"]]


def open_fork_pull(scenario, number=9):
    return scenario.open_pull(
        number, {"README.md": "from a fork\n"}, f"fork-{number}", head_repo_full_name="someone/ollama"
    )


async def deliver(bot, event, data):
    status, _ = await bot.deliver(event, data)
    assert status == 202
    await bot.settle()


async def pushed_while_the_command_waits(bot, scenario, body, number, push):
    """`body` commented on PR `number` at its head; `push()` lands after the comment, before the command's
    job reads the PR (held at its permission check), and GitHub delivers the push."""
    await deliver(bot, "pull_request", scenario.pull_event("opened", number=number))
    scenario.fake.advance(2)  # the maintainer reads the PR, then comments
    scenario.fake.delay(r"/collaborators/maintainer/permission$", 1.0)
    status, _ = await bot.deliver("issue_comment", scenario.comment_event(body, number=number))
    assert status == 202
    await wait_for(lambda: any(r["path"].endswith("/maintainer/permission") for r in scenario.fake.requests))
    new_head = push()
    status, _ = await bot.deliver("pull_request", scenario.pull_event("synchronize", number=number))
    assert status == 202
    await bot.settle()
    scenario.fake.clear_delays()
    return new_head


def rerequest(scenario, check, login):
    return payload(
        "check_run.rerequested",
        check_run=copy.deepcopy(check),
        repository=scenario.repository(),
        installation=scenario.installation(),
        sender=scenario.fake._user(login),
    )


def validation_check(scenario, sha):
    (check,) = [r for r in scenario.check_runs(sha) if r["name"] == "validate: cuda"]
    return check


# -- re-requested validation check runs --


async def test_a_read_only_sender_rerequesting_an_old_validation_after_a_push_runs_nothing(
    bot, scenario, workflow
):
    old = open_fork_pull(scenario)
    await deliver(bot, "issue_comment", scenario.comment_event("/llama validate cuda", number=9))
    assert [d["ref"] for d in scenario.fake.dispatches] == ["llama-bot/pr-9"]
    check = validation_check(scenario, old)
    new = commit(scenario.git, {"README.md": "unreviewed\n"}, parents=[old])
    scenario.fake.set_pull_head(OWNER, NAME, 9, new)  # the fork pushes

    await deliver(bot, "check_run", rerequest(scenario, check, "visitor"))  # read access only

    assert len(scenario.fake.dispatches) == 1
    assert str(scenario.git.references["refs/heads/llama-bot/pr-9"].target) == old
    assert [r["name"] for r in scenario.check_runs(new)] == []
    output = scenario.fake.check_runs[check["id"]]["output"]
    assert output["title"] == "cuda: re-run refused"
    assert "@visitor" in output["summary"] and "write access" in output["summary"]
    assert "`read`" in output["summary"]


async def test_a_writer_rerequesting_a_validation_whose_commit_is_no_longer_the_head_runs_nothing(
    bot, scenario, workflow
):
    old = open_fork_pull(scenario)
    await deliver(bot, "issue_comment", scenario.comment_event("/llama validate cuda", number=9))
    check = validation_check(scenario, old)
    new = commit(scenario.git, {"README.md": "unreviewed\n"}, parents=[old])
    scenario.fake.set_pull_head(OWNER, NAME, 9, new)

    await deliver(bot, "check_run", rerequest(scenario, check, "maintainer"))

    assert len(scenario.fake.dispatches) == 1
    assert str(scenario.git.references["refs/heads/llama-bot/pr-9"].target) == old
    output = scenario.fake.check_runs[check["id"]]["output"]
    assert output["title"] == "cuda: not re-run, the head moved"
    assert new[:12] in output["summary"] and old[:12] in output["summary"]
    assert "/llama validate cuda" in output["summary"]


async def test_a_writer_rerequesting_a_validation_of_the_head_dispatches_that_commit(bot, scenario, workflow):
    head = open_fork_pull(scenario)
    await deliver(bot, "issue_comment", scenario.comment_event("/llama validate cuda", number=9))
    check = validation_check(scenario, head)

    await deliver(bot, "check_run", rerequest(scenario, check, "maintainer"))

    first, again = scenario.fake.dispatches
    assert again["ref"] == "llama-bot/pr-9" and again["inputs"]["pr"] == "9"
    assert scenario.fake.workflow_runs[again["run_id"]]["head_sha"] == head
    assert first["inputs"]["request_id"] != again["inputs"]["request_id"]
    assert len([r for r in scenario.check_runs(head) if r["name"] == "validate: cuda"]) == 2


# -- a push between the comment and its job --


async def test_validate_does_nothing_when_the_head_moved_after_the_comment(bot, scenario, workflow):
    seen = open_fork_pull(scenario)

    def push():
        new = commit(scenario.git, {"README.md": "pushed after the comment\n"}, parents=[seen])
        scenario.fake.set_pull_head(OWNER, NAME, 9, new)
        return new

    new = await pushed_while_the_command_waits(bot, scenario, "/llama validate cuda", 9, push)

    assert scenario.fake.dispatches == []
    assert "refs/heads/llama-bot/pr-9" not in scenario.git.references
    assert not [r for r in scenario.check_runs() if r["name"].startswith("validate: ")]
    (reply,) = replies(scenario, 9)
    assert f"you saw `{seen[:12]}`, it is now `{new[:12]}`" in reply
    assert f"again to validate `{new[:12]}`" in reply

    scenario.fake.advance(1)  # having looked at the new head, the maintainer asks again
    await deliver(bot, "issue_comment", scenario.comment_event("/llama validate cuda", number=9))
    (sent,) = scenario.fake.dispatches
    assert scenario.fake.workflow_runs[sent["run_id"]]["head_sha"] == new


async def test_regenerate_does_nothing_when_the_head_moved_after_the_comment(bot, scenario):
    new = await pushed_while_the_command_waits(
        bot,
        scenario,
        "/llama regenerate-patches",
        scenario.number,
        lambda: scenario.push({"README.md": "pushed after the comment\n"}),
    )

    assert str(scenario.git.references["refs/heads/bump"].target) == new
    assert git_writes(scenario) == []
    (reply,) = replies(scenario)
    assert f"you saw `{scenario.head_sha[:12]}`, it is now `{new[:12]}`" in reply
    assert "I did nothing" in reply and "ollama_hook();" not in reply


# -- branches nobody asked to change --


async def test_regenerate_on_a_head_branch_that_is_the_default_branch_shows_the_patches(bot, scenario):
    git = scenario.git
    git.references.create("refs/heads/release", scenario.base_sha)
    main = commit(git, {"LLAMA_CPP_VERSION": "v2\n"}, parents=[scenario.base_sha], ref="refs/heads/main")
    scenario.fake.add_pull(OWNER, NAME, 11, main, "main", base_ref="release")

    await deliver(bot, "issue_comment", scenario.comment_event("/llama regenerate-patches", number=11))

    assert str(git.references["refs/heads/main"].target) == main
    assert git_writes(scenario) == []
    (reply,) = replies(scenario, 11)
    assert "I cannot push to `main` (it is the default branch of `ollama/ollama`)" in reply
    assert "<details>" in reply and "ollama_hook();" in reply


async def test_regenerate_on_a_protected_head_branch_shows_the_patches(bot, scenario):
    scenario.fake.protect(OWNER, NAME, "bump")

    await deliver(bot, "issue_comment", scenario.comment_event("/llama regenerate-patches"))

    assert str(scenario.git.references["refs/heads/bump"].target) == scenario.head_sha
    assert git_writes(scenario) == []
    (reply,) = replies(scenario)
    assert "I cannot push to `bump` (it is a protected branch)" in reply
    assert "<details>" in reply and "ollama_hook();" in reply
    assert any(r["path"] == "/repos/ollama/ollama/branches/bump" for r in scenario.fake.requests)


async def test_regenerate_then_validate_in_one_comment_validates_the_regenerated_commit(
    bot, scenario, workflow
):
    await deliver(
        bot, "issue_comment", scenario.comment_event("/llama regenerate-patches\n/llama validate cuda")
    )

    branch = scenario.git.references["refs/heads/bump"].peel(pygit2.Commit)
    assert [str(p) for p in branch.parent_ids] == [scenario.head_sha]
    assert PATCH_PATH in replies(scenario)[0]
    (sent,) = scenario.fake.dispatches
    assert sent["ref"] == "bump"
    assert [r["head_sha"] for r in scenario.check_runs() if r["name"] == "validate: cuda"] == [str(branch.id)]
