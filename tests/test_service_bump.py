"""`/llama bump`: the service opens the pull request that moves a pin, from a comment on a plain issue, with
the version file and the rebuilt patches as two commits, and updates it instead of opening another."""

from __future__ import annotations

import copy
import dataclasses

import pygit2
import pytest

from bot.decisions.bump import BRANCH_PREFIX
from bot.render.env import MARKER
from bot.service.app import SERVICE
from bot.stores.sqlitejobs import DB_NAME, read_jobs
from tests.conftest import (
    HOOK_PATCH,
    NAME,
    NEW_SOURCE,
    OLD_SOURCE,
    OWNER,
    PATCH_PATH,
    UPSTREAM_URL,
    Bot,
    bot_settings,
)
from tests.fakegithub import commit, payload
from tests.fixtures import RepoBuilder
from tests.gitutil import git_apply_stack
from tests.mlxcases import mlx_case

ISSUE = 3
BRANCH = f"{BRANCH_PREFIX}llama.cpp-b200"


@dataclasses.dataclass
class BumpWorld:
    bot: Bot
    fake: object
    git: pygit2.Repository
    upstream: RepoBuilder
    main: str

    @property
    def full_name(self) -> str:
        return f"{OWNER}/{NAME}"

    def delivery(self, name: str, **overrides) -> dict:
        """The payload `name` (e.g. "pull_request.closed") from this repository's installation."""
        installation = {
            "id": self.fake.installation_id,
            "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==",
        }
        return payload(
            name, repository=self.fake._repo_json(self.full_name), installation=installation, **overrides
        )

    def comment(self, body: str, login: str = "maintainer", number: int = ISSUE) -> dict:
        """An `issue_comment.created` delivery on the plain issue `number`."""
        comment = self.fake.add_comment(OWNER, NAME, number, body, login)
        data = self.delivery("issue_comment.created", comment=copy.deepcopy(comment))
        data["issue"].update(number=number)
        return data

    async def command(self, body: str, login: str = "maintainer") -> None:
        status, _ = await self.bot.deliver("issue_comment", self.comment(body, login))
        assert status == 202
        await self.bot.settle(120)

    def replies(self, number: int = ISSUE) -> list[str]:
        issue = f"/issues/{number}"
        return [
            c["body"]
            for c in self.fake.comments.values()
            if c["user"]["type"] == "Bot" and c["issue_url"].endswith(issue)
        ]

    def bump_pulls(self) -> list[dict]:
        return [p for (full, _), p in self.fake.pulls.items() if p["head"]["ref"].startswith(BRANCH_PREFIX)]

    def branch_commits(self, pull: dict) -> list[pygit2.Commit]:
        """The commits of the pull request's branch that main does not have, oldest first."""
        walker = self.git.walk(pygit2.Oid(hex=pull["head"]["sha"]), pygit2.enums.SortMode.TOPOLOGICAL)
        walker.hide(self.git.references["refs/heads/main"].target)
        return list(reversed(list(walker)))

    def changed(self, c: pygit2.Commit) -> set[str]:
        diff = self.git.diff(c.parents[0], c)
        return {d.new_file.path for d in diff.deltas}

    def read(self, sha: str, path: str) -> bytes:
        return self.git[pygit2.Oid(hex=sha)].peel(pygit2.Commit).tree[path].data


@pytest.fixture
async def world(fake_github, scenario, tmp_path):
    """ollama/ollama whose main pins llama.cpp b100 with one carried patch; upstream's newest release is
    b200, where the patch needs rebuilding."""
    up = RepoBuilder(tmp_path / "llama.git")
    up.commit("base", {"src/f.c": OLD_SOURCE})
    up.tag("b100")
    up.commit("upstream moves things (#4242)", {"src/f.c": NEW_SOURCE})
    up.tag("b200")
    up.tag("v9-not-a-release")
    git = pygit2.init_repository(str(tmp_path / "ollama-bump.git"), bare=True)
    main = commit(
        git,
        {"README.md": "ollama\n", "LLAMA_CPP_VERSION": "b100\n", PATCH_PATH: HOOK_PATCH},
        ref="refs/heads/main",
        message="pin llama.cpp b100",
    )
    fake_github.repos.pop(f"{OWNER}/{NAME}", None)
    fake_github.pulls.clear()
    fake_github.add_repo(OWNER, NAME, git)
    fake_github.permissions[(f"{OWNER}/{NAME}", "maintainer")] = "maintain"
    fake_github.permissions[(f"{OWNER}/{NAME}", "reader")] = "read"
    settings = dataclasses.replace(
        bot_settings(fake_github, scenario, tmp_path / "var"), url_instead_of=f"{up.path}={UPSTREAM_URL}"
    )
    bot = await Bot(settings).start()
    yield BumpWorld(bot, fake_github, git, up, main)
    await bot.close()


async def test_a_bump_on_an_issue_opens_one_pull_request_with_two_commits_whose_patches_apply(
    world, tmp_path
):
    await world.command("/llama bump llama.cpp")

    (pull,) = world.bump_pulls()
    assert pull["head"]["ref"] == BRANCH and pull["base"]["ref"] == "main"
    assert pull["title"] == "llama.cpp: b100 -> b200"
    assert pull["user"]["type"] == "Bot"
    version, patches = world.branch_commits(pull)
    assert world.changed(version) == {"LLAMA_CPP_VERSION"} and world.changed(patches) == {PATCH_PATH}
    assert str(version.parents[0].id) == world.main  # from the default branch's head
    assert world.read(pull["head"]["sha"], "LLAMA_CPP_VERSION") == b"b200\n"
    assert "@maintainer" in version.message
    rebuilt = world.read(pull["head"]["sha"], PATCH_PATH)
    assert rebuilt != HOOK_PATCH
    git_apply_stack(world.upstream.path, "b200", [rebuilt], tmp_path / "apply")  # raises when git refuses
    body = pull["body"]
    assert "`b100` to `b200`" in body and f"{UPSTREAM_URL}/compare/b100...b200" in body
    assert f"`{PATCH_PATH}` | 🔁 regenerated" in body and "@maintainer" in body
    # the reply on the issue links the pull request; main did not move
    (reply,) = world.replies()
    assert pull["html_url"] in reply and "Opened" in reply
    assert str(world.git.references["refs/heads/main"].target) == world.main
    assert world.fake.violations == []

    # the ordinary pull request flow then checks it: the rebuilt patch applies as it is
    pr_event = payload(
        "pull_request.opened",
        action="opened",
        number=pull["number"],
        pull_request=copy.deepcopy(pull),
        repository=world.fake._repo_json(world.full_name),
        installation={"id": world.fake.installation_id},
    )
    await world.bot.deliver("pull_request", pr_event)
    await world.bot.settle(120)
    (checklist,) = [b for b in world.replies(pull["number"]) if b.startswith(MARKER)]
    runs = {r["name"]: r for r in world.fake.check_runs.values() if r["head_sha"] == pull["head"]["sha"]}
    assert runs["llama.cpp: patches"]["conclusion"] == "success"
    assert "b200" in checklist


async def test_the_command_again_leaves_the_open_pull_request_and_a_newer_release_updates_it(world):
    await world.command("/llama bump llama.cpp")
    (pull,) = world.bump_pulls()
    first_head = pull["head"]["sha"]

    await world.command("/llama bump llama.cpp")
    assert len(world.bump_pulls()) == 1 and pull["head"]["sha"] == first_head
    assert f"[#{pull['number']}]" in world.replies()[-1] and "already moves" in world.replies()[-1]

    world.upstream.commit("upstream goes on", {"README": "newer\n"})
    world.upstream.tag("b300")
    await world.command("/llama bump llama.cpp")
    (updated,) = world.bump_pulls()
    assert updated["number"] == pull["number"] and world.fake.opened_pulls == [pull["number"]]
    assert updated["title"] == "llama.cpp: b100 -> b300"
    assert "`b100` to `b300`" in updated["body"]
    new = world.branch_commits(updated)
    assert len(new) == 3 and str(new[1].id) == first_head  # new commits on its branch, the old ones kept
    assert world.changed(new[2]) == {"LLAMA_CPP_VERSION"}
    assert world.read(updated["head"]["sha"], "LLAMA_CPP_VERSION") == b"b300\n"
    assert "Updated" in world.replies()[-1]
    assert world.fake.violations == []


async def test_a_reader_is_refused_and_nothing_is_pushed(world):
    await world.command("/llama bump llama.cpp", login="reader")
    (reply,) = world.replies()
    assert "write access" in reply and "`read`" in reply
    assert world.bump_pulls() == []
    assert [r for r in world.git.references if r.startswith(f"refs/heads/{BRANCH_PREFIX}")] == []


async def test_already_at_the_newest_release_and_a_downgrade_needs_its_ref_named(world):
    on_top = commit(world.git, {"LLAMA_CPP_VERSION": "b200\n"}, parents=[world.main], ref="refs/heads/main")
    await world.command("/llama bump llama.cpp")
    assert "already at `b200`" in world.replies()[-1] and world.bump_pulls() == []

    # main pins a commit past the newest release: the newest release is older, and taken only when named
    past = str(world.upstream.commit("upstream after b200", {"README": "later\n"}))
    commit(world.git, {"LLAMA_CPP_VERSION": f"{past}\n"}, parents=[on_top], ref="refs/heads/main")
    await world.command("/llama bump llama.cpp")
    assert "older than" in world.replies()[-1] and "/llama bump llama.cpp b200" in world.replies()[-1]
    assert world.bump_pulls() == []

    await world.command("/llama bump llama.cpp b200")
    (pull,) = world.bump_pulls()
    assert pull["title"] == f"llama.cpp: {past[:12]} -> b200" and "downgrade" in pull["body"]
    assert world.fake.violations == []


@pytest.fixture
async def mlx_world(fake_github, scenario, tmp_path):
    """Ollama's real MLX bump that broke mlx-c: main pins MLX and mlx-c at commits of their `main`
    branches (which they track), MLX's newer commit is its head (and release v0.31.0), mlx-c's head (and
    release v0.5.0) a commit past its pin."""
    case = mlx_case(tmp_path, "mlx-breaks-mlx-c")
    case.mlx.tag("v0.31.0", pygit2.Oid(hex=case.new))
    case.mlx_c.commit("mlx-c moves on", {"NEWS.md": "v0.5.0\n"})
    case.mlx_c.tag("v0.5.0")
    git = pygit2.init_repository(str(tmp_path / "ollama-mlx.git"), bare=True)
    main = commit(git, case.ollama("base"), ref="refs/heads/main", message="pin MLX")
    fake_github.repos.pop(f"{OWNER}/{NAME}", None)
    fake_github.pulls.clear()
    fake_github.add_repo(OWNER, NAME, git)
    fake_github.permissions[(f"{OWNER}/{NAME}", "maintainer")] = "maintain"
    rewrites = f"{case.mlx.path}=https://github.com/ml-explore/mlx,{case.mlx_c.path}=https://github.com/ml-explore/mlx-c"
    settings = dataclasses.replace(
        bot_settings(fake_github, scenario, tmp_path / "var"), url_instead_of=rewrites
    )
    bot = await Bot(settings).start()
    yield BumpWorld(bot, fake_github, git, case.mlx, main), case
    await bot.close()


async def test_a_bump_that_breaks_a_consumer_pin_offers_the_bump_that_moves_both(mlx_world):
    world, case = mlx_world
    await world.command("/llama bump mlx")
    (pull,) = world.bump_pulls()
    assert pull["title"] == f"mlx: {case.old[:12]} -> {case.new[:12]}"  # the head of the branch it tracks
    assert pull["head"]["ref"] == f"llama-bot/bump-mlx-{case.new[:12]}"
    assert "no longer compiles against the new `mlx`" in pull["body"]
    assert "`/llama bump mlx mlx-c`" in pull["body"] and "/llama bump mlx mlx-c" in world.replies()[-1]

    await world.command("/llama bump mlx mlx-c")
    (both,) = world.bump_pulls()  # the same pull request, moving both pins
    assert both["number"] == pull["number"] and world.fake.opened_pulls == [pull["number"]]
    mlx_c_head = str(case.mlx_c.head)
    assert (
        both["title"]
        == f"mlx: {case.old[:12]} -> {case.new[:12]}, mlx-c: {case.pin[:12]} -> {mlx_c_head[:12]}"
    )
    assert world.read(both["head"]["sha"], "MLX_C_VERSION") == f"{mlx_c_head}\n".encode()
    assert world.read(both["head"]["sha"], "MLX_VERSION") == f"{case.new}\n".encode()
    assert "/llama bump mlx mlx-c`" not in both["body"]  # nothing left to offer
    assert world.fake.violations == []


SCHEDULED = """[[pin]]
name = "llama.cpp"
version_file = "LLAMA_CPP_VERSION"
patches = "llama/compat"
upstream = "https://github.com/ggml-org/llama.cpp"
release_tags = 'b(\\d+)'
bump_every = "7d"
"""
WEEK = 7 * 86400


async def test_bump_every_opens_then_updates_the_pull_request_once_a_period_without_a_burst(world):
    commit(world.git, {".github/llama-bot.toml": SCHEDULED}, parents=[world.main], ref="refs/heads/main")
    service = world.bot.app[SERVICE]
    start = 1000 * WEEK + 3600  # an hour into a period

    def bump_jobs() -> list:
        return [j for j in read_jobs(world.bot.settings.data_dir / DB_NAME, limit=100) if j.kind == "bump"]

    await service.queue_bumps(now=start)
    await world.bot.settle(120)
    (pull,) = world.bump_pulls()
    assert pull["title"] == "llama.cpp: b100 -> b200" and 'Scheduled by `bump_every = "7d"`' in pull["body"]
    assert world.replies() == []  # no comment asked for it: nothing to answer

    await service.queue_bumps(now=start + 5 * 86400)  # the same period: not again
    assert len(bump_jobs()) == 1

    world.upstream.commit("upstream goes on", {"README": "newer\n"})
    world.upstream.tag("b300")
    await service.queue_bumps(now=start + WEEK)  # the next period: the newer release updates the pull request
    await world.bot.settle(120)
    (updated,) = world.bump_pulls()
    assert updated["number"] == pull["number"] and updated["title"] == "llama.cpp: b100 -> b300"

    # down for three periods: one job for the current period, none for those missed
    await service.queue_bumps(now=start + 4 * WEEK)
    await world.bot.settle(120)
    assert len(bump_jobs()) == 3 and world.fake.opened_pulls == [pull["number"]]
    assert world.fake.violations == []


async def test_a_branch_someone_opened_a_pull_request_from_is_never_overwritten(world):
    theirs = commit(world.git, {"README.md": "mine\n"}, parents=[world.main], ref=f"refs/heads/{BRANCH}")
    world.fake.add_pull(OWNER, NAME, 9, theirs, BRANCH)
    await world.command("/llama bump llama.cpp")
    assert "is the head of [#9]" in world.replies()[-1] and world.fake.opened_pulls == []
    assert str(world.git.references[f"refs/heads/{BRANCH}"].target) == theirs

    world.fake.pulls[(world.full_name, 9)]["state"] = "closed"  # the bot's name, but a person's branch
    await world.command("/llama bump llama.cpp")
    assert f"a branch `{BRANCH}` exists (at `{theirs[:12]}`) that I did not make" in world.replies()[-1]
    assert str(world.git.references[f"refs/heads/{BRANCH}"].target) == theirs  # their commit kept
    assert world.fake.opened_pulls == [] and world.fake.violations == []


async def test_the_bots_own_branch_left_by_a_closed_bump_is_reused_and_a_moved_one_is_not(world):
    """A bump pull request closed while its close event was missed leaves the bot's branch: the next
    bump reuses it; once a person pushed to it, it is theirs and left alone."""
    await world.command("/llama bump llama.cpp")
    (first,) = world.bump_pulls()
    world.fake.pulls[(world.full_name, first["number"])]["state"] = "closed"
    await world.command("/llama bump llama.cpp")
    (second,) = [p for p in world.bump_pulls() if p["state"] == "open"]
    assert second["head"]["ref"] == BRANCH and world.fake.opened_pulls == [first["number"], second["number"]]
    world.fake.pulls[(world.full_name, second["number"])]["state"] = "closed"
    pushed = commit(
        world.git, {"README.md": "mine\n"}, parents=[second["head"]["sha"]], ref=f"refs/heads/{BRANCH}"
    )
    await world.command("/llama bump llama.cpp")
    assert "that I did not make, or that moved since I last set it" in world.replies()[-1]
    assert str(world.git.references[f"refs/heads/{BRANCH}"].target) == pushed
    assert world.fake.violations == []


async def test_two_maintainers_bumping_one_pin_at_once_get_one_pull_request(world):
    """Two `/llama bump llama.cpp` on two issues, delivered together: the bumps run one after the other
    (one queue key for the repository's bumps, decided where jobs are claimed), so the second finds the
    first's pull request and answers with it: one pull request, opened once."""
    other = ISSUE + 1
    for number, login in ((ISSUE, "maintainer"), (other, "maintainer")):
        status, _ = await world.bot.deliver(
            "issue_comment", world.comment("/llama bump llama.cpp", login, number)
        )
        assert status == 202
    await world.bot.settle(120)
    (pull,) = world.bump_pulls()
    assert world.fake.opened_pulls == [pull["number"]]
    assert (
        f"#{pull['number']}" in world.replies(ISSUE)[-1] and f"#{pull['number']}" in world.replies(other)[-1]
    )
    assert world.fake.violations == []


async def test_a_bump_to_a_commit_only_a_pull_request_reaches_says_so_in_the_reply_and_the_body(world):
    """A 40-hex commit that no branch or tag of the upstream holds (only `refs/pull/7/head`): the bump is
    made as asked, and the reply and the pull request's body both warn, not only the checklist."""
    up = world.upstream
    tip = up.repo.references["refs/heads/main"].target
    fork = up.repo.create_commit(
        "refs/pull/7/head",
        up.repo[tip].author,
        up.repo[tip].author,
        "a fork's change",
        up.repo[tip].tree.id,
        [tip],
    )
    await world.command(f"/llama bump llama.cpp {fork}")
    (pull,) = world.bump_pulls()
    assert f"⚠️ **`{fork}` is on no branch or tag of https://github.com/ggml-org/llama.cpp**" in pull["body"]
    assert f"⚠️ `{fork}` is on no branch or tag of `llama.cpp`'s upstream" in world.replies()[-1]
    assert world.fake.violations == []


async def test_a_merged_or_closed_bump_pull_request_takes_its_branch_with_it(world):
    await world.command("/llama bump llama.cpp")
    (pull,) = world.bump_pulls()
    data = world.delivery("pull_request.closed")
    data["number"] = pull["number"]
    data["pull_request"] = {**data["pull_request"], **copy.deepcopy(pull), "state": "closed", "merged": True}
    data["pull_request"]["head"]["repo"] = world.fake._repo_json(world.full_name)
    data["pull_request"]["base"]["repo"] = world.fake._repo_json(world.full_name)
    status, _ = await world.bot.deliver("pull_request", data)
    assert status == 202
    await world.bot.settle(120)
    assert f"refs/heads/{BRANCH}" not in world.git.references
    assert world.fake.violations == []


async def test_the_open_bump_is_found_past_a_hundred_old_bump_branches(world):
    """A hundred stale `llama-bot/bump-` branches sort before the bot's open bump: GitHub's listing is cut
    before it, the store's record is not, so a newer release updates that pull request (no second one)."""
    await world.command("/llama bump llama.cpp")
    (pull,) = world.bump_pulls()
    for n in range(100):
        world.git.references.create(f"refs/heads/llama-bot/bump-a-{n:03}", pygit2.Oid(hex=world.main))
    world.upstream.commit("upstream moves on (#4300)", {"README.md": "b300\n"})
    world.upstream.tag("b300")
    await world.command("/llama bump llama.cpp")
    (updated,) = world.bump_pulls()
    assert updated["number"] == pull["number"] and world.fake.opened_pulls == [pull["number"]]
    assert world.read(updated["head"]["sha"], "LLAMA_CPP_VERSION") == b"b300\n"
    assert world.fake.violations == []


async def test_a_skipped_release_is_left_out_of_scheduled_bumps_but_not_of_a_named_one(world):
    commit(world.git, {".github/llama-bot.toml": SCHEDULED}, parents=[world.main], ref="refs/heads/main")
    service = world.bot.app[SERVICE]
    await world.command("/llama skip llama.cpp b200")
    assert "Scheduled bumps of `llama.cpp` leave `b200` out from now on" in world.replies()[-1]
    await world.command("/llama skip llama.cpp")  # a ref is needed: the help says so
    assert "`/llama skip` needs arguments: `/llama skip <pin> <ref>`" in world.replies()[-1]
    await world.command("/llama skip llama.cpp b20..0")
    assert "I did not skip anything: " in world.replies()[-1]

    await service.queue_bumps(now=1000 * WEEK + 3600)
    await world.bot.settle(120)
    assert world.bump_pulls() == []  # b200 skipped, and nothing newer

    world.upstream.commit("upstream goes on", {"README": "newer\n"})
    world.upstream.tag("b300")
    await service.queue_bumps(now=1001 * WEEK + 3600)
    await world.bot.settle(120)
    (pull,) = world.bump_pulls()
    assert pull["title"] == "llama.cpp: b100 -> b300"

    await world.command("/llama bump llama.cpp b200")  # named: taken all the same
    (named,) = world.bump_pulls()
    assert named["title"] == "llama.cpp: b100 -> b200" and world.fake.violations == []
