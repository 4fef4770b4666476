"""The checklist comment while a run is under way or after one failed, and what `regenerate-patches`
could not do: signed webhooks into the bot on loopback, the fake GitHub over real git repositories."""

import asyncio
import re
import threading
import time

import pygit2
import pytest

from bot.gh.rest import RestSnapshot
from bot.render.env import MARKER, RUNNING
from tests.conftest import OLD_SOURCE, PATCH_PATH
from tests.gitutil import make_patch

HOOKED = OLD_SOURCE.replace("d();\n", "d();\n    ollama_hook();\n")  # v1 with the carried patch applied
# Written on top of the hook patch; upstream v2 rewrote `g();` to `g(2);`, so it cannot be rebuilt.
CONFLICT_PATH = "llama/compat/0002-rename-g.patch"
CONFLICT_PATCH = make_patch(HOOKED, HOOKED.replace("    g();\n", "    g_ollama();\n"), "src/f.c")
GO_TEST = "Run `go test ./...` <!-- id:go-test -->"


async def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


def the_comment(scenario) -> dict:
    (comment,) = scenario.bot_comments()
    return comment


async def checked_and_ticked(bot, scenario) -> str:
    """The PR's first checklist, with `go test` ticked by a person on GitHub; its commit."""
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await bot.settle()
    comment = the_comment(scenario)
    assert f"- [ ] {GO_TEST}" in comment["body"]
    comment["body"] = comment["body"].replace(f"- [ ] {GO_TEST}", f"- [x] {GO_TEST}")
    return scenario.head_sha


class Hold:
    """Once `armed`, analyses wait at their first read of the pull request's files until `release` is set:
    a run caught in the middle."""

    def __init__(self):
        self.armed, self.reached, self.release = threading.Event(), threading.Event(), threading.Event()


@pytest.fixture
def hold(bot, monkeypatch):
    read, held = RestSnapshot.read, Hold()

    def waiting(snapshot, path):
        if held.armed.is_set():
            held.reached.set()
            held.release.wait(60)
        return read(snapshot, path)

    monkeypatch.setattr(RestSnapshot, "read", waiting)
    yield held
    held.release.set()


async def test_the_checklist_and_its_ticks_stay_visible_while_a_push_is_checked(bot, scenario, hold):
    old_sha = await checked_and_ticked(bot, scenario)
    hold.armed.set()
    new_sha = scenario.push({"README.md": "a push while the maintainer reads the checklist\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await wait_for(hold.reached.is_set)

    body = the_comment(scenario)["body"]
    banner = re.search(
        rf"^⏳ Re-checking `{new_sha[:12]}` since \d\d:\d\d UTC; the results below are for "
        rf"`{old_sha[:12]}`\.$",
        body,
        re.MULTILINE,
    )
    assert body.startswith(MARKER + RUNNING) and banner
    assert (
        f"- [x] {GO_TEST}" in body
        and "### Before merging" in body
        and "| `llama/compat/0001-hook.patch` |" in body
    )
    assert f"Describes commit `{old_sha[:12]}`" in body and "Checking commit" not in body

    hold.release.set()
    await bot.settle()
    body = the_comment(scenario)["body"]
    assert "Re-checking" not in body and RUNNING not in body
    assert f"Describes commit `{new_sha[:12]}`" in body and f"- [x] {GO_TEST}" in body
    assert len(scenario.bot_comments()) == 1


async def test_a_recheck_of_the_same_commit_keeps_the_checklist_too(bot, scenario, hold):
    sha = await checked_and_ticked(bot, scenario)
    hold.armed.set()
    await bot.deliver("issue_comment", scenario.comment_event("/llama recheck"))
    await wait_for(hold.reached.is_set)
    body = the_comment(scenario)["body"]
    assert (
        f"⏳ Re-checking `{sha[:12]}` since " in body and f"the results below are for `{sha[:12]}`." in body
    )
    assert f"- [x] {GO_TEST}" in body
    hold.release.set()
    await bot.settle()
    assert f"- [x] {GO_TEST}" in the_comment(scenario)["body"]


async def test_a_failed_run_keeps_the_last_checklist_under_the_failure(bot, scenario):
    old_sha = await checked_and_ticked(bot, scenario)
    scenario.fake.fail("GET", r"/git/trees/", 502, times=100)
    new_sha = scenario.push({"README.md": "pushed while GitHub was down\n"})
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await bot.settle()

    body = the_comment(scenario)["body"]
    (banner,) = [line for line in body.splitlines() if line.startswith("⛔")]
    assert (
        banner.startswith(f"⛔ Could not check `{new_sha[:12]}` (")
        and "The run failed: GitHub answered 502" in banner
    )
    assert banner.endswith(
        f"Comment `/llama recheck` to try again. The results below are for `{old_sha[:12]}`."
    )
    assert f"- [x] {GO_TEST}" in body and f"Describes commit `{old_sha[:12]}`" in body and RUNNING not in body

    scenario.fake.clear_faults()  # GitHub is back: a recheck replaces it all with the new result
    await bot.deliver("issue_comment", scenario.comment_event("/llama recheck"))
    await bot.settle()
    body = the_comment(scenario)["body"]
    assert "⛔" not in body and f"Describes commit `{new_sha[:12]}`" in body and f"- [x] {GO_TEST}" in body


async def test_regenerate_commits_what_it_rebuilt_and_names_what_it_could_not(bot, scenario):
    pushed = scenario.push({CONFLICT_PATH: CONFLICT_PATCH}, "carry a rename of g")
    scenario.fake.advance(1)  # the maintainer comments after the push
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches"))
    await bot.settle()

    branch = scenario.git.references["refs/heads/bump"].peel(pygit2.Commit)
    assert [str(p) for p in branch.parent_ids] == [pushed]
    diff = branch.tree.diff_to_tree(scenario.git[pushed].peel(pygit2.Tree))
    assert [d.delta.new_file.path for d in diff] == [PATCH_PATH]  # the rebuilt one only
    assert branch.tree[CONFLICT_PATH].data == CONFLICT_PATCH

    (reply,) = scenario.bot_comments()
    text = reply["body"]
    assert f"🔁 Committed [`{str(branch.id)[:12]}`]" in text and f"- `{PATCH_PATH}` (regenerated)" in text
    assert "This patch was not rebuilt and needs a person:" in text
    assert f"**`{CONFLICT_PATH}`** (conflict): 1 of 1 hunks conflict: rebase it by hand." in text
    assert re.search(
        r"^- `src/f\.c` hunk at old line \d+: hunk 1 expected near src/f\.c:\d+ at v2; ", text, re.MULTILINE
    )
    assert "Changed by: [`" in text and "upstream moves things ([#4242]" in text
    (block,) = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    assert "git remote add upstream https://github.com/ggml-org/llama.cpp\n" in block
    assert "git fetch -q --filter=blob:none upstream tag v1 tag v2" in block
    # 0001 is on the branch now, as rebuilt: the steps read it from the checkout, nothing to rebuild first
    assert f'git apply --index "$OLLAMA"/{PATCH_PATH}' in block and "-m bot check" not in block
    assert f'git apply --check "$OLLAMA"/{CONFLICT_PATH}' in block and "clone" not in block
    assert "Nothing to regenerate" not in text


async def test_regenerate_with_only_a_conflict_commits_nothing_and_says_why(bot, scenario):
    sha = scenario.push(
        {
            PATCH_PATH: None,
            CONFLICT_PATH: make_patch(
                OLD_SOURCE, OLD_SOURCE.replace("    g();\n", "    g_ollama();\n"), "src/f.c"
            ),
        }
    )
    scenario.fake.advance(1)  # the maintainer comments after the push
    await bot.deliver("issue_comment", scenario.comment_event("/llama regenerate-patches"))
    await bot.settle()
    assert str(scenario.git.references["refs/heads/bump"].target) == sha
    (reply,) = scenario.bot_comments()
    text = reply["body"]
    assert "Nothing committed for llama.cpp v1 → v2: no patch could be rebuilt automatically." in text
    assert f"**`{CONFLICT_PATH}`** (conflict): 1 of 1 hunks conflict: rebase it by hand." in text
    assert "-m bot check" not in text  # nothing rebuilt comes before it
    assert f'git apply --check "$OLLAMA"/{CONFLICT_PATH}' in text
