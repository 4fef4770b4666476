"""A version file that pins a commit on no branch or tag of the upstream (a fork's, or an unmerged pull
request's, which GitHub serves through the upstream's URL) gets a high finding; one on any branch or tag
gets none. Through `python -m bot check`, with `--upstream-dir` and with a mirror."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot import cli
from bot.repos.mirrors import mirror_path
from bot.repos.upstreamrefs import repository_key
from tests.fixtures import SIGNATURE, RepoBuilder
from tests.gitutil import make_patch

UPSTREAM = "https://github.com/ggml-org/llama.cpp"
SOURCE = "int f(void) {\n" + "".join(f"    step_{i}();\n" for i in range(12)) + "}\n"
PATCH = make_patch(
    SOURCE, SOURCE.replace("    step_5();\n", "    step_5();\n    ollama_hook();\n"), "src/f.c"
)
NOWHERE = "is on no branch or tag of"


class Served:
    """A llama.cpp-like upstream: tags b1 and b2 on `main`, an untagged commit on `main` after b2, and
    commits that are on `main` neither: a pull request's, a side branch's, and one only a tag reaches."""

    def __init__(self, path: Path):
        self.builder = up = RepoBuilder(path)
        up.repo.config["uploadpack.allowFilter"] = True
        up.commit("base", {"src/f.c": SOURCE, "README.md": "one\n"})
        up.tag("b1")
        b2 = up.commit("docs (#2)", {"README.md": "two\n"})
        up.tag("b2")
        self.main = str(up.commit("docs (#3)", {"README.md": "three\n"}))
        up.commit("docs (#4)", {"README.md": "four\n"})  # the default branch moved on
        self.pull = self._off_main(b2, "a pull request's commit")
        up.repo.references.create("refs/pull/1/head", pygit2.Oid(hex=self.pull))
        self.side = self._off_main(b2, "side branch work")
        up.branch("feature", pygit2.Oid(hex=self.side))
        self.tagged = self._off_main(b2, "a hotfix before its release")
        release = self._off_main(pygit2.Oid(hex=self.tagged), "the hotfix release")
        up.repo.create_tag("b2.1", pygit2.Oid(hex=release), pygit2.enums.ObjectType.COMMIT, SIGNATURE, "b2.1")
        up.tag("b2.2", pygit2.Oid(hex=self._off_main(b2, "a release upstream withdraws")))

    def _off_main(self, parent: pygit2.Oid, message: str) -> str:
        repo = self.builder.repo
        tree = repo[parent].peel(pygit2.Commit).tree_id
        blob = repo.create_blob(f"{message}\n".encode())
        builder = repo.TreeBuilder(repo[tree])
        builder.insert("NOTES", blob, pygit2.enums.FileMode.BLOB)
        return str(repo.create_commit(None, SIGNATURE, SIGNATURE, message, builder.write(), [parent]))


def _ollama(path: Path, ref: str) -> Path:
    """An Ollama-like repository whose last commit bumps LLAMA_CPP_VERSION from b1 to `ref`."""
    ollama = RepoBuilder(path)
    ollama.commit("pin", {"LLAMA_CPP_VERSION": "b1\n", "llama/compat/0001-hook.patch": PATCH})
    ollama.commit("bump", {"LLAMA_CPP_VERSION": f"{ref}\n"})
    return path


def _check(tmp_path: Path, ref: str, capfd, *extra: str) -> tuple[int, dict, str]:
    repo = _ollama(tmp_path / f"ollama-{ref[:12]}.git", ref)
    code = cli.main(["check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json", *extra])
    out, err = capfd.readouterr()
    return code, json.loads(out) if out else {}, err


def _nowhere(pin: dict) -> list[dict]:
    return [f for f in pin["findings"] if NOWHERE in f["title"]]


@pytest.fixture
def upstream(tmp_path) -> Served:
    return Served(tmp_path / "src" / "ggml-org" / "llama.cpp")


def test_a_pull_requests_commit_gets_a_high_finding_and_its_patches_are_still_checked(tmp_path, upstream):
    repo = _ollama(tmp_path / "ollama.git", upstream.pull)
    result = subprocess.run(
        [sys.executable, "-m", "bot", "check", "--repo", str(repo), "--base", "HEAD~1", "--format", "json"]
        + ["--upstream-dir", f"llama.cpp={upstream.builder.path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    (pin,) = json.loads(result.stdout)["pins"]
    assert result.returncode == 0, result.stderr  # the patch applies: the finding alone does not fail it
    assert [p["status"] for p in pin["patches"]] == ["clean"]
    assert pin["new_commit"] == upstream.pull
    (finding,) = _nowhere(pin)
    assert pin["findings"][0] == finding  # the gravest first
    assert (finding["severity"], finding["area"]) == ("high", "build")
    gated = subprocess.run(
        [sys.executable, "-m", "bot", "check", "--repo", str(repo), "--base", "HEAD~1", "--quiet"]
        + ["--upstream-dir", f"llama.cpp={upstream.builder.path}", "--fail-on", "high"],
        capture_output=True,
        check=False,
    )
    assert gated.returncode == 1, "a CI gating on high findings fails on it"
    assert finding["title"] == f"`{upstream.pull[:12]}` {NOWHERE} {UPSTREAM}"
    assert upstream.pull in finding["detail"] and "pull request" in finding["detail"]
    assert "Pin one of the upstream's tags, or a commit of its default branch" in finding["detail"]
    assert finding["local_refs"] == [{"path": "LLAMA_CPP_VERSION", "line": 1}]


def test_upstream_dir_counts_its_branches_tags_and_the_upstreams_remote_branches_only(
    tmp_path, upstream, capfd
):
    """Any branch, any tag (an ancestor of one too): no finding. A commit only a fork's remote-tracking
    branch reaches is a fork's commit; the same under a remote at the upstream's URL is the upstream's."""
    given = ("--upstream-dir", f"llama.cpp={upstream.builder.path}")
    for ref in (upstream.main, upstream.side, upstream.tagged, "b2"):
        code, report, err = _check(tmp_path, ref, capfd, *given)
        assert (code, _nowhere(report["pins"][0])) == (0, []), (ref, err)
    repo = upstream.builder.repo
    repo.remotes.create("fork", "git@github.com:someone/llama.cpp.git")
    repo.references.create("refs/remotes/fork/feature", pygit2.Oid(hex=upstream.pull))
    (finding,) = _nowhere(_check(tmp_path / "fork", upstream.pull, capfd, *given)[1]["pins"][0])
    assert finding["severity"] == "high"
    assert f"looked in --upstream-dir {upstream.builder.path}" in finding["detail"]
    repo.remotes.create("upstream", f"{UPSTREAM}.git")
    repo.references.create("refs/remotes/upstream/feature", pygit2.Oid(hex=upstream.pull))
    assert _nowhere(_check(tmp_path / "upstream", upstream.pull, capfd, *given)[1]["pins"][0]) == []


def _use_mirror(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LLAMA_BOT_URL_INSTEADOF", f"{tmp_path}/src/=https://github.com/")
    return mirror_path(tmp_path / "data", "llama.cpp", f"{tmp_path}/src/ggml-org/llama.cpp")


def _refs(git_dir: Path, prefix: str) -> list[str]:
    listed = subprocess.run(
        ["git", "--git-dir", str(git_dir), "for-each-ref", "--format=%(refname)", prefix],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout.split()


def test_a_mirror_asks_the_upstreams_branches_and_tags_never_its_pull_requests(
    tmp_path, upstream, capfd, monkeypatch
):
    mirror = _use_mirror(tmp_path, monkeypatch)
    code, report, err = _check(tmp_path, upstream.pull, capfd)
    (pin,) = report["pins"]
    assert code == 0, err
    assert [p["status"] for p in pin["patches"]] == ["clean"]
    (finding,) = _nowhere(pin)
    assert finding["severity"] == "high"
    assert finding["title"] == f"`{upstream.pull[:12]}` {NOWHERE} {UPSTREAM}"
    assert "as it advertises them" in finding["detail"]
    assert _refs(mirror, "refs/pull") == []
    assert f"is {upstream.pull[:12]} on a branch or tag of {tmp_path}/src/ggml-org/llama.cpp?" in err
    for ref in (upstream.tagged, upstream.main, upstream.side, "b2.2"):  # a tag's, main's, a side branch's
        code, report, err = _check(tmp_path, ref, capfd)
        assert (code, _nowhere(report["pins"][0])) == (0, []), (ref, err)
    upstream.builder.repo.references.delete("refs/tags/b2.2")  # the mirror still has it: it does not count
    code, report, err = _check(tmp_path / "withdrawn", "b2.2", capfd)
    (finding,) = _nowhere(report["pins"][0])
    assert (code, finding["severity"]) == (0, "high"), err


def test_a_mirror_fetches_only_the_default_branch_for_a_commit_on_it(tmp_path, upstream, capfd, monkeypatch):
    mirror = _use_mirror(tmp_path, monkeypatch)
    code, report, err = _check(tmp_path, upstream.main, capfd)
    assert (code, _nowhere(report["pins"][0])) == (0, []), err
    assert "fetching the default branch" in err and "every branch and tag" not in err
    assert _refs(mirror, "refs/llama-bot/upstream") == ["refs/llama-bot/upstream/HEAD"]
    code, report, err = _check(tmp_path, "b2", capfd)  # a tag the upstream advertises: no more to fetch
    assert (code, _nowhere(report["pins"][0]), "on a branch or tag" in err) == (0, [], False), err


def test_a_mirror_whose_upstream_cannot_be_asked_says_so(tmp_path, upstream, capfd, monkeypatch):
    _use_mirror(tmp_path, monkeypatch)
    assert _check(tmp_path, upstream.main, capfd)[0] == 0  # the mirror now holds b1 and the commit
    shutil.move(upstream.builder.path, tmp_path / "gone")
    code, report, err = _check(tmp_path / "again", upstream.main, capfd)
    (pin,) = report["pins"]
    assert code == 0 and [p["status"] for p in pin["patches"]] == ["clean"], err
    (finding,) = [f for f in pin["findings"] if f["title"].startswith("Could not tell")]
    assert finding["severity"] == "info"
    assert finding["title"] == (
        f"Could not tell whether `{upstream.main[:12]}` is on a branch or tag of {UPSTREAM}"
    )
    assert f"cannot list the branches and tags of {UPSTREAM}: " in finding["detail"]
    assert str(tmp_path) not in finding["detail"]  # the pin's URL, not the one it is fetched from


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/ggml-org/llama.cpp.git",
        "https://builder:s3cret@GitHub.com/ggml-org/llama.cpp/",
        "git@github.com:ggml-org/llama.cpp.git",
        "ssh://git@github.com/ggml-org/llama.cpp",
    ],
)
def test_a_remote_is_the_upstream_whatever_the_form_of_its_url(url):
    assert repository_key(url) == repository_key(UPSTREAM) == "github.com/ggml-org/llama.cpp"
    assert repository_key(url.replace("ggml-org", "someone")) != repository_key(UPSTREAM)
