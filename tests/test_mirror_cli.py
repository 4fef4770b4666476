"""Mirrors as blobless partial clones kept by the git CLI, against real local upstreams."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot.repos.gitcli import latest_progress
from bot.repos.mirrors import mirror_path
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.test_upstream_partial import PATCHES, _analyse, _blob, _upstream

UPSTREAM = "https://github.com/ggml-org/llama.cpp"


def _source(root: Path, allow_filter: bool = True) -> RepoBuilder:
    src = _upstream(root / "ggml-org" / "llama.cpp")
    src.repo.config["uploadpack.allowFilter"] = allow_filter
    return src


def _mirror(tmp_path: Path, refs: list[str]) -> Upstream:
    return Upstream.mirror(
        tmp_path / "data", "llama.cpp", UPSTREAM, refs, f"{tmp_path}/src/=https://github.com/"
    )


def test_a_mirror_is_blobless_records_no_remote_url_and_fetches_blobs_the_analysis_reads(tmp_path):
    src = _source(tmp_path / "src")
    up = _mirror(tmp_path, ["v1"])
    assert not up.repo.odb.exists(_blob(up.repo, "v1", "src/big.c"))  # commits and trees only
    assert "remote.origin.url" not in up.repo.config and up.repo.config.get_bool("remote.origin.promisor")
    up = _mirror(tmp_path, ["v1", "v2"])  # an update brings v2
    assert str(up.commit("v2", "V").id) == str(src.head)

    from bot.config import parse_config
    from bot.engine import analyse
    from bot.repos.snapshot import MemorySnapshot

    report = analyse(
        parse_config(None),
        MemorySnapshot({"LLAMA_CPP_VERSION": b"v1\n", **PATCHES}),
        MemorySnapshot({"LLAMA_CPP_VERSION": b"v2\n", **PATCHES}),
        lambda pin, refs: _mirror(tmp_path, refs),
        ["LLAMA_CPP_VERSION"],
    )
    assert report.to_json() == _analyse(src.path).to_json()  # as with every blob at hand
    assert not up.repo.odb.exists(_blob(up.repo, "v2", "models/vocab.gguf"))  # nothing read it


def test_a_source_that_cannot_filter_sends_everything_and_the_log_says_so(tmp_path, caplog):
    _source(tmp_path / "src", allow_filter=False)
    with caplog.at_level(logging.WARNING, "bot.upstream"):
        up = _mirror(tmp_path, ["v1"])
    assert up.repo.odb.exists(_blob(up.repo, "v1", "models/vocab.gguf"))
    assert any(
        "cannot serve a blobless fetch (uploadpack.allowFilter is off there)" in r.message
        for r in caplog.records
    )


@pytest.mark.parametrize("protocol", ["2", "0"])  # v0 refuses a commit id: the branches bring it
def test_a_commit_id_on_a_side_branch_resolves(tmp_path, monkeypatch, protocol):
    src = _source(tmp_path / "src")
    side = src.commit("side work", {"side.c": "int side;\n"})
    src.repo.references.create("refs/heads/side", side)
    src.repo.references["refs/heads/main"].set_target(src.repo.revparse_single("v2").id)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.version")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", protocol)
    up = _mirror(tmp_path, [str(side)])
    assert up.commit(str(side), "V").id == side
    up = _mirror(tmp_path, ["f" * 40])  # no such commit: named by the analysis, not a fetch failure
    with pytest.raises(Exception, match="names 'ffff.*which is not a tag or commit"):
        up.commit("f" * 40, "V")


def test_what_a_killed_fetch_leaves_is_cleaned_up_by_the_next(tmp_path):
    _source(tmp_path / "src")
    up = _mirror(tmp_path, ["v1"])
    git_dir = Path(up.repo.path)
    (git_dir / "refs" / "tags" / "v2.lock").write_text("")  # git was killed while writing the ref
    (git_dir / "objects" / "pack" / "tmp_pack_XYZ").write_bytes(b"PACK")
    up = _mirror(tmp_path, ["v1", "v2"])
    assert up.commit("v2", "V") is not None
    assert not (git_dir / "refs" / "tags" / "v2.lock").exists()
    assert not (git_dir / "objects" / "pack" / "tmp_pack_XYZ").exists()


def test_latest_progress_is_gits_newest_counting_line():
    stderr = "remote: Enumerating objects: 12, done.\nReceiving objects:  10% (1/10)\rReceiving objects:  60% (6/10)\r"
    assert latest_progress(stderr) == "Receiving objects:  60% (6/10)"
    assert latest_progress("warning: something\n") is None


def _ollama(path: Path) -> Path:
    ollama = RepoBuilder(path)
    ollama.commit("pin v1", {"LLAMA_CPP_VERSION": "v1\n", **PATCHES})
    ollama.commit("bump to v2", {"LLAMA_CPP_VERSION": "v2\n"})
    return path


def _slow_git(tmp_path: Path, seconds: int) -> dict[str, str]:
    """An environment in which the local upstream waits `seconds` before it sends a pack."""
    hook = tmp_path / "slow-pack-objects"
    hook.write_text(f'#!/bin/sh\nsleep {seconds}\nexec "$@"\n')
    hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n")
    return {"GIT_CONFIG_GLOBAL": str(config)}


def _check(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            "--repo",
            str(tmp_path / "ollama.git"),
            "--base",
            "HEAD~1",
            "--format",
            "json",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "LLAMA_BOT_DATA_DIR": str(tmp_path / "data"),
            "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/src/=https://github.com/",
            **(env or {}),
        },
    )


def test_a_slow_fetch_shows_progress_a_fast_one_does_not_and_quiet_silences_it(tmp_path):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    out, err = _check(tmp_path, env=_slow_git(tmp_path, 4)).communicate()
    assert "llama-bot: still fetching v1, v2 (2 s): waiting for the upstream" in err
    assert json.loads(out)["pins"][0]["new_ref"] == "v2"
    (tmp_path / "data").rename(tmp_path / "slow-data")
    out, err = _check(tmp_path).communicate()
    mirror = mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")
    assert err.splitlines() == [
        (
            f"llama-bot: creating a mirror of {tmp_path}/src/ggml-org/llama.cpp for llama.cpp in {mirror}: "
            "fetching v1, v2"
        ),
    ]
    (tmp_path / "data").rename(tmp_path / "fast-data")
    out, err = _check(tmp_path, "--quiet", env=_slow_git(tmp_path, 3)).communicate()
    assert err == "" and json.loads(out)["pins"][0]["new_ref"] == "v2"


def test_two_processes_analysing_one_upstream_share_one_mirror(tmp_path):
    _source(tmp_path / "src")
    _ollama(tmp_path / "ollama.git")
    slow = _slow_git(tmp_path, 2)  # the second starts while the first is still fetching
    first, second = _check(tmp_path, env=slow), _check(tmp_path, env=slow)
    (out1, err1), (out2, err2) = first.communicate(), second.communicate()
    assert first.returncode == second.returncode == 1  # a patch needs regenerating, in both
    assert out1 == out2
    assert (err1 + err2).count("creating a mirror") == 1  # the other waited, then found the refs there
    assert [p.name for p in (tmp_path / "data" / "mirrors").iterdir()] == [
        mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp").name
    ]
    assert pygit2.Repository(str(next((tmp_path / "data" / "mirrors").iterdir()))).references
