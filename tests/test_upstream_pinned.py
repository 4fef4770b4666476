"""Commits a pull request pins by id, which only `refs/pull/N/head` reaches, kept apart from the mirror
(bot/repos/pinned.py): a fork pushing new ones grows neither the mirror nor the data directory past the
bound, and a closed pull request leaves none. Real upstreams served by git, real fetches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from bot.config import parse_config
from bot.engine import analyse
from bot.repos import pinned
from bot.repos.mirrors import mirror_path
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.pinned_growth import push_to_pull, size

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
PUSHED_MIB = 3  # new blobs in each hostile push


def _source(root: Path) -> RepoBuilder:
    up = RepoBuilder(root / "ggml-org" / "llama.cpp")
    up.repo.config["uploadpack.allowFilter"] = True
    up.commit("base", {"src/f.c": "int f(void);\n", "README.md": "one\n"})
    up.tag("b1")
    return up


def _analyse(tmp_path: Path, ref: str, pull: str | None) -> None:
    data, rules = tmp_path / "data", f"{tmp_path}/src/=https://github.com/"
    analyse(
        parse_config(None),
        MemorySnapshot({"LLAMA_CPP_VERSION": b"b1\n"}),
        MemorySnapshot({"LLAMA_CPP_VERSION": f"{ref}\n".encode()}),
        lambda pin, refs: Upstream.mirror(data, pin.name, pin.upstream, refs, rules, pull=pull),
        ["LLAMA_CPP_VERSION"],
    )


def _mirror(tmp_path: Path) -> Path:
    return mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")


def test_hostile_pushes_grow_neither_the_mirror_nor_the_data_directory_past_the_bound(tmp_path):
    up = _source(tmp_path / "src")
    _analyse(tmp_path, "b1", "ollama/ollama#7")
    mirror = _mirror(tmp_path)
    before = size(mirror)
    pushed = [push_to_pull(up.repo, 7, PUSHED_MIB) for _ in range(3)]
    for sha in pushed:
        _analyse(tmp_path, sha, "ollama/ollama#7")
    assert size(mirror) - before < 64 << 10  # none of it in the mirror
    assert not pygit2.Repository(str(mirror)).odb.exists(pushed[-1])
    stores = pinned.stores_of(tmp_path / "data", mirror, "ollama/ollama#7")
    assert len(stores) == pinned.PER_PULL  # the oldest push's store is gone
    assert pygit2.Repository(str(stores[0])).odb.exists(pushed[-1])
    assert size(tmp_path / "data" / "pinned") < (pinned.PER_PULL * PUSHED_MIB + 1) << 20


def test_the_stores_of_every_pull_request_together_keep_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(pinned, "MAX_BYTES", (2 * PUSHED_MIB + 1) << 20)
    up = _source(tmp_path / "src")
    for number in (1, 2, 3):
        _analyse(tmp_path, push_to_pull(up.repo, number, PUSHED_MIB), f"someone/fork#{number}")
    data, mirror = tmp_path / "data", _mirror(tmp_path)
    assert size(data / "pinned") < pinned.MAX_BYTES
    assert [len(pinned.stores_of(data, mirror, f"someone/fork#{n}")) for n in (1, 2, 3)] == [0, 1, 1]


def test_a_pinned_commit_is_read_again_from_its_store_without_a_fetch(tmp_path):
    up = _source(tmp_path / "src")
    sha = push_to_pull(up.repo, 7, PUSHED_MIB)
    _analyse(tmp_path, sha, "ollama/ollama#7")
    shutil.move(up.path, tmp_path / "gone")  # a fetch would fail
    data, rules = tmp_path / "data", f"{tmp_path}/src/=https://github.com/"
    again = Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1", sha], rules, pull="ollama/ollama#7")
    assert str(again.commit(sha, "V").id) == sha
    assert again.pinned == pinned.stores_of(data, _mirror(tmp_path), "ollama/ollama#7")[0]
    other = Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1"], rules, pull="someone/fork#8")
    assert other.pinned is None and not other.repo.odb.exists(sha)  # another pull request's are not read


def test_what_a_killed_fetch_left_in_a_store_goes_when_the_store_is_used_again(tmp_path):
    up = _source(tmp_path / "src")
    sha = push_to_pull(up.repo, 7, 1)
    _analyse(tmp_path, sha, "ollama/ollama#7")
    data = tmp_path / "data"
    (store,) = pinned.stores_of(data, _mirror(tmp_path), "ollama/ollama#7")
    left = store / "objects" / "pack" / "tmp_pack_XYZ"  # a blob fetch killed halfway
    left.write_bytes(b"PACK")
    rules = f"{tmp_path}/src/=https://github.com/"
    again = Upstream.mirror(data, "llama.cpp", UPSTREAM, ["b1", sha], rules, pull="ollama/ollama#7")
    assert again.pinned == store and not left.exists()


def test_forget_pull_removes_every_store_of_the_pull_request_and_no_other(tmp_path):
    up = _source(tmp_path / "src")
    _analyse(tmp_path, push_to_pull(up.repo, 7, PUSHED_MIB), "ollama/ollama#7")
    _analyse(tmp_path, push_to_pull(up.repo, 8, PUSHED_MIB), "ollama/ollama#8")
    data, mirror = tmp_path / "data", _mirror(tmp_path)
    pinned.forget_pull(data, "ollama/ollama#7")
    assert pinned.stores_of(data, mirror, "ollama/ollama#7") == []
    assert len(pinned.stores_of(data, mirror, "ollama/ollama#8")) == 1


@pytest.mark.parametrize("head_repo", ["someone/ollama", None])  # a fork's pull request, a branch's
async def test_the_service_keeps_a_pull_requests_pinned_commit_apart_until_it_closes(
    bot, scenario, head_repo
):
    sha = push_to_pull(pygit2.Repository(str(scenario.upstream_path)), 9, mib=1, tag="v1")
    scenario.open_pull(9, {"LLAMA_CPP_VERSION": f"{sha}\n"}, "pin", head_repo_full_name=head_repo)
    await bot.deliver("pull_request", scenario.pull_event("opened", number=9))
    await bot.settle()
    data = bot.settings.data_dir
    mirror = mirror_path(data, "llama.cpp", str(scenario.upstream_path))
    (store,) = pinned.stores_of(data, mirror, "ollama/ollama#9")
    assert pygit2.Repository(str(store)).odb.exists(sha) and not pygit2.Repository(str(mirror)).odb.exists(
        sha
    )
    scenario.fake.pulls[(scenario.full_name, 9)]["state"] = "closed"
    await bot.deliver("pull_request", scenario.pull_event("closed", number=9))
    await bot.settle()
    assert pinned.stores_of(data, mirror, "ollama/ollama#9") == []
    assert list((data / "pinned").glob("*/*/*.git")) == []
