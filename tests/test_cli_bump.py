"""`python -m bot bump` in a local checkout: a new branch with the version file and the rebuilt patches as
two commits, the current branch, index and working tree left alone, nothing pushed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from tests.conftest import HOOK_PATCH, NEW_SOURCE, OLD_SOURCE, PATCH_PATH
from tests.fakegithub import commit
from tests.fixtures import RepoBuilder
from tests.gitutil import git_apply_stack

BRANCH = "llama-bot/bump-llama.cpp-b200"


def bot(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture
def checkout(tmp_path):
    """An upstream with releases b100 and b200, and an Ollama checkout on its own branch `work` (main pins
    b100 with one carried patch), with an uncommitted edit."""
    up = RepoBuilder(tmp_path / "llama.git")
    up.commit("base", {"src/f.c": OLD_SOURCE})
    up.tag("b100")
    up.commit("upstream moves things (#4242)", {"src/f.c": NEW_SOURCE})
    up.tag("b200")
    ollama = RepoBuilder(tmp_path / "ollama", bare=False)
    ollama.commit(
        "pin llama.cpp b100", {"README.md": "ollama\n", "LLAMA_CPP_VERSION": "b100\n", PATCH_PATH: HOOK_PATCH}
    )
    repo = ollama.repo
    work = repo.branches.local.create("work", repo[ollama.head])
    repo.checkout(work)
    (tmp_path / "ollama" / "README.md").write_text("an edit nobody committed\n")
    env = {**os.environ, "LLAMA_BOT_DATA_DIR": str(tmp_path / "data")}
    return up, repo, env


def _bump(up: RepoBuilder, repo: pygit2.Repository, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return bot(
        "bump",
        "--repo",
        repo.workdir,
        "--pin",
        "llama.cpp",
        "--upstream-dir",
        f"llama.cpp={up.path}",
        *extra,
        env=env,
    )


def test_bump_makes_the_branch_and_two_commits_and_leaves_the_checkout_alone(checkout, tmp_path):
    up, repo, env = checkout
    head, status = repo.head.target, repo.status()

    result = _bump(up, repo, env)

    assert result.returncode == 1, result.stderr  # a patch needed a change: rebuilt in the second commit
    assert BRANCH in result.stderr and "llama.cpp: b100 -> b200" in result.stderr  # what was made
    assert result.stdout.startswith("## 🦙 llama-bot")  # the checklist alone
    assert "regenerated" in result.stdout
    branch = repo.references[f"refs/heads/{BRANCH}"].peel(pygit2.Commit)
    patches, version = branch, branch.parents[0]
    assert version.parents[0].id == head  # from the current HEAD
    assert version.tree["LLAMA_CPP_VERSION"].data == b"b200\n"
    assert {d.new_file.path for d in repo.diff(version.parents[0], version).deltas} == {"LLAMA_CPP_VERSION"}
    moved = str(up.repo.references["refs/tags/b200"].peel(pygit2.Commit).id)
    assert (
        f"llama.cpp brings 1 upstream commit:\n- {moved[:12]} upstream moves things (#4242)\n"
        in version.message
    )
    assert {d.new_file.path for d in repo.diff(version, patches).deltas} == {PATCH_PATH}
    git_apply_stack(up.path, "b200", [patches.tree[PATCH_PATH].data], tmp_path / "apply")
    # HEAD, the current branch, the index and the working tree did not move
    assert repo.head.name == "refs/heads/work" and repo.head.target == head
    assert repo.status() == status
    assert (Path(repo.workdir) / "README.md").read_text() == "an edit nobody committed\n"
    assert not repo.remotes  # nowhere to push, and nothing tried to

    again = _bump(up, repo, env)
    assert again.returncode == 2 and "already exists" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


def test_already_at_the_ref_and_bad_arguments(checkout):
    up, repo, env = checkout
    same = _bump(up, repo, env, "--ref", "b100")
    assert same.returncode == 0 and "already at b100" in same.stderr and same.stdout == ""
    assert not [r for r in repo.references if r.startswith("refs/heads/llama-bot/")]

    unknown = bot("bump", "--repo", repo.workdir, "--pin", "llama", env=env)
    assert unknown.returncode == 2 and "is not a pin" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1

    garbage = _bump(up, repo, env, "--ref", "b100..b200")
    assert garbage.returncode == 2 and "not an upstream tag" in garbage.stderr

    for ref, hint in (("b999", "b200"), ("b20", "b200"), ("nope", "b200")):  # the error names what was typed
        missing = _bump(up, repo, env, "--ref", ref)
        said = (
            f"--ref {ref} is not a tag or branch of https://github.com/ggml-org/llama.cpp (give a tag, a branch "
            "or a 40-hex commit id)"
        )
        assert (missing.returncode, missing.stderr) == (2, f"llama-bot: {said}; {hint}, perhaps.\n")
        assert "LLAMA_CPP_VERSION" not in missing.stderr

    commit(repo, {"LLAMA_CPP_VERSION": "b300\n"}, ref="refs/heads/work")  # a release upstream no longer has
    older = _bump(up, repo, env)
    assert older.returncode == 2 and "older than the pinned b300" in older.stderr
    assert "--pin llama.cpp --ref b200" in older.stderr
    assert not [r for r in repo.references if r.startswith("refs/heads/llama-bot/")]
