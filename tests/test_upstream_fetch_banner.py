"""The checklist comment says "fetching upstream" while the service fetches a mirror, and only then: signed
webhooks into the bot on loopback, the fake GitHub, and an upstream that git serves once a gate opens."""

from __future__ import annotations

import re
from pathlib import Path

import pygit2
import pytest

from bot.render.env import RUNNING
from tests.test_service_checklist import the_comment, wait_for


@pytest.fixture
def gate(tmp_path, monkeypatch):
    """A file whose absence holds every fetch from the upstream (git's pack-objects hook waits for it)."""
    gate = tmp_path / "gate"
    hook = tmp_path / "gated-pack-objects"
    hook.write_text(f'#!/bin/sh\nwhile [ ! -e "{gate}" ]; do sleep 0.05; done\nexec "$@"\n')
    hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    yield gate
    gate.touch()  # no fetch is left waiting after the test


def _posted_bodies(scenario) -> list[str]:
    """Every body the bot wrote into a PR comment, in order."""
    return [
        r["json"]["body"]
        for r in scenario.fake.requests
        if r["method"] in ("POST", "PATCH") and "/issues/" in r["path"] and (r["json"] or {}).get("body")
    ]


def _fetching(body: str) -> bool:
    return "fetching upstream" in body


def _shows_fetching(scenario) -> bool:
    return any(_fetching(c["body"]) for c in scenario.bot_comments())


async def test_the_checklist_says_fetching_upstream_while_the_mirror_fetches_and_not_after(
    bot, scenario, gate: Path
):
    await bot.deliver("pull_request", scenario.pull_event("opened"))
    await wait_for(lambda: _shows_fetching(scenario))  # a cold data dir: the mirror is created
    body = the_comment(scenario)["body"]
    assert RUNNING in body  # the comment is marked as a run under way
    assert re.search(
        rf"^⏳ Checking commit `{scenario.head_sha[:12]}` \(since .+\): fetching upstream llama\.cpp, then the "
        r"patches are checked against the new upstream ref\.",
        body,
        re.MULTILINE,
    )
    gate.touch()
    await bot.settle()
    posted = _posted_bodies(scenario)
    first = next(i for i, b in enumerate(posted) if _fetching(b))
    assert not _fetching(posted[first + 1])  # the banner went when the fetch ended
    assert not _fetching(posted[-1]) and RUNNING not in posted[-1]
    old_sha = scenario.head_sha
    assert f"Describes commit `{old_sha[:12]}`" in posted[-1]

    gate.unlink()  # a push to a tag the mirror lacks: fetching again, above the last checklist
    upstream = pygit2.Repository(str(scenario.upstream_path))
    v2 = upstream.revparse_single("v2").peel(pygit2.Commit)
    v3 = upstream.create_commit(None, v2.author, v2.committer, "release v3", v2.tree_id, [v2.id])
    upstream.references.create("refs/tags/v3", v3)
    new_sha = scenario.push({"LLAMA_CPP_VERSION": "v3\n"}, message="llama: update llama.cpp to v3")
    await bot.deliver("pull_request", scenario.pull_event("synchronize"))
    await wait_for(lambda: _shows_fetching(scenario))
    assert re.search(
        rf"^⏳ Re-checking `{new_sha[:12]}` since \d\d:\d\d UTC, fetching upstream llama\.cpp; the results "
        rf"below are for `{old_sha[:12]}`\.$",
        the_comment(scenario)["body"],
        re.MULTILINE,
    )
    gate.touch()
    await bot.settle()
    assert f"Describes commit `{new_sha[:12]}`" in the_comment(scenario)["body"]

    gate.unlink()  # the mirror holds every ref now: a re-check fetches nothing, and no banner says so
    before = len(_posted_bodies(scenario))
    await bot.deliver("issue_comment", scenario.comment_event("/llama recheck"))
    await bot.settle()
    rechecked = _posted_bodies(scenario)[before:]
    assert rechecked and any("Re-checking" in b for b in rechecked)
    assert not any(_fetching(b) for b in rechecked)
    assert f"Describes commit `{new_sha[:12]}`" in rechecked[-1]
