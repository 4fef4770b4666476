"""Partial upstream clones (`--filter=blob:none`, or copies without their largest blobs) as --upstream-dir.

The clones are real: `git clone --bare --filter=...` over file:// from a generated upstream.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Report
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream
from tests.fixtures import RepoBuilder
from tests.gitutil import make_patch

BIG_V1 = "".join(f"int big_{i} = {i};\n" for i in range(200))  # over 1 KiB: left out by blob:limit=1k
BIG_V2 = "".join(f"int moved_{i};\n" for i in range(5)) + BIG_V1
SMALL_V1 = "int f(void) {\n" + "".join(f"    {c}();\n" for c in "abcdefg") + "}\n"
SMALL_V2 = SMALL_V1.replace("g();", "g(2);")
TABLE_V1 = "".join(f"op_{i},supported\n" for i in range(100))
TABLE_V2 = TABLE_V1.replace("op_50,supported", "op_50,unsupported")
VOCAB = bytes(range(256)) * 16  # a large file neither the patches nor the bump touch
PATCHES = {
    "llama/compat/0001-big.patch": make_patch(
        BIG_V1, BIG_V1.replace("int big_150 = 150;\n", "int big_150 = 150;\nint ollama;\n"), "src/big.c"
    ),
    "llama/compat/0002-small.patch": make_patch(
        SMALL_V1, SMALL_V1.replace("    d();\n", "    d();\n    hook();\n"), "src/small.c"
    ),
}


def _upstream(path: Path) -> RepoBuilder:
    src = RepoBuilder(path)
    src.repo.config["uploadpack.allowFilter"] = True
    src.commit(
        "base",
        {
            "src/big.c": BIG_V1,
            "src/small.c": SMALL_V1,
            "docs/table.csv": TABLE_V1,
            "CMakeLists.txt": "project(up)\n",
            "models/vocab.gguf": VOCAB,
        },
    )
    src.tag("v1")
    src.commit("move the big declarations down (#11)", {"src/big.c": BIG_V2})
    src.commit("g takes an argument, op_50 goes (#12)", {"src/small.c": SMALL_V2, "docs/table.csv": TABLE_V2})
    src.tag("v2")
    return src


def _clone(src: RepoBuilder, path: Path, blob_filter: str) -> Path:
    subprocess.run(
        ["git", "clone", "-q", "--bare", f"--filter={blob_filter}", f"file://{src.path}", str(path)],
        check=True,
    )
    return path


def _analyse(upstream_dir: Path) -> Report:
    base = MemorySnapshot({"LLAMA_CPP_VERSION": b"v1\n", **PATCHES})
    head = MemorySnapshot({"LLAMA_CPP_VERSION": b"v2\n", **PATCHES})
    return analyse(
        parse_config(None),
        base,
        head,
        lambda pin, refs: Upstream.open_dir(str(upstream_dir), pin.upstream),
        ["LLAMA_CPP_VERSION"],
    )


def _packs(git_dir: Path) -> int:
    return len(list((git_dir / "objects" / "pack").glob("*.pack")))


def _blob(repo: pygit2.Repository, ref: str, path: str) -> pygit2.Oid:
    return repo.revparse_single(ref).peel(pygit2.Commit).tree[path].id  # the tree's entry: no blob read


def test_blob_none_clone_fetches_what_it_reads_in_one_batch_and_reports_like_a_full_clone(tmp_path):
    src = _upstream(tmp_path / "src.git")
    full = _analyse(src.path)
    assert {p.path.rsplit("/", 1)[1]: p.status for p in full.pins[0].patches} == {
        "0001-big.patch": "offset",
        "0002-small.patch": "regenerated",
    }
    part = _clone(src, tmp_path / "part.git", "blob:none")
    repo = pygit2.Repository(str(part))
    assert not repo.odb.exists(_blob(repo, "v2", "src/big.c"))
    packs = _packs(part)

    report = _analyse(part)

    assert report.to_json() == full.to_json()
    assert _packs(part) == packs + 1  # one fetch brought every blob the analysis read
    assert repo.odb.exists(_blob(repo, "v1", "src/small.c"))  # the three-way merge's base
    assert not repo.odb.exists(_blob(repo, "v2", "models/vocab.gguf"))  # nothing reads it: not fetched
    assert _analyse(part).to_json() == full.to_json() and _packs(part) == packs + 1  # nothing left to fetch


def _ollama(path: Path) -> Path:
    ollama = RepoBuilder(path)
    ollama.commit("pin v1", {"LLAMA_CPP_VERSION": "v1\n", **PATCHES})
    ollama.commit("bump to v2", {"LLAMA_CPP_VERSION": "v2\n"})
    return path


def _source_deleted(src: RepoBuilder, part: Path) -> str:
    shutil.rmtree(src.path)
    return (
        r"git fetch from the remote 'origin' failed: '[^']*src\.git' does not appear to be a git repository"
    )


def _no_promisor_remote(src: RepoBuilder, part: Path) -> str:
    subprocess.run(["git", "--git-dir", str(part), "config", "--unset", "remote.origin.promisor"], check=True)
    return "the clone has no promisor remote to fetch them from"


@pytest.mark.parametrize("cut_off", [_source_deleted, _no_promisor_remote])
def test_blobs_that_cannot_be_fetched_are_named_and_the_rest_is_checked(tmp_path, cut_off):
    src = _upstream(tmp_path / "src.git")
    full = _analyse(src.path).pins[0]
    part = _clone(src, tmp_path / "part.git", "blob:limit=1k")  # like a mirror without its largest blobs
    why = cut_off(src, part)
    ollama = _ollama(tmp_path / "ollama.git")

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "check",
            "--repo",
            str(ollama),
            "--base",
            "HEAD~1",
            "--upstream-dir",
            f"llama.cpp={part}",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    # not all of it could be checked: said on stderr and in the exit status, never read as a clean result
    (pin,) = json.loads(result.stdout)["pins"]
    (unchecked,) = pin["unchecked"]
    # both copies are missing: the first one tried (the old ref's) is named
    assert unchecked.startswith(
        "2 upstream files it needed (`docs/table.csv` at the old ref, `src/big.c` at the old ref), missing "
        f"from --upstream-dir {part} and not fetched: "
    )
    assert re.search(why, unchecked)
    assert (result.returncode, result.stderr) == (2, f"llama-bot: llama.cpp: not checked: {unchecked}\n")
    big, small = pin["patches"]
    assert big["status"] == "error"
    assert re.fullmatch(
        rf"Cannot be checked: src/big\.c at v2 is missing from the upstream clone "
        rf"\(--upstream-dir {re.escape(str(part))}\) and could not be fetched: {why}\.",
        big["message"],
    ), big["message"]
    assert small == full.to_json()["patches"][1]  # checked as with every blob at hand
    assert pin["findings"] == full.to_json()["findings"]  # the review of what could be read is complete


def test_a_patch_checked_while_blobs_could_not_be_fetched_is_checked_again_the_next_time(
    tmp_path, monkeypatch, capsys
):
    """Checked without some upstream files (here the clone's source is gone), a patch may come out otherwise
    than with them: what its check found is not kept, and the next check of the same commits checks it again."""
    from bot import cli
    from bot.cli import analysis
    from bot.engine import patch

    src = _upstream(tmp_path / "src.git")
    part = _clone(src, tmp_path / "part.git", "blob:limit=1k")
    _source_deleted(src, part)
    ollama = _ollama(tmp_path / "ollama.git")
    monkeypatch.setenv("LLAMA_BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(analysis, "run_limited", lambda target, limits: target(None))  # in this process
    checked = []
    monkeypatch.setattr(
        patch, "_check_parsed", lambda *a, real=patch._check_parsed: checked.append(a[1]) or real(*a)
    )
    args = ["check", "--repo", str(ollama), "--base", "HEAD~1", "--upstream-dir", f"llama.cpp={part}"]
    args += ["--format", "json", "--quiet"]
    reports = []
    for _ in range(2):
        assert cli.main(args) == 2  # not everything could be checked
        reports.append(capsys.readouterr().out)
    assert reports[0] == reports[1]
    assert checked == ["llama/compat/0002-small.patch"] * 2  # the big one cannot be checked at all


def _real_pair(repo: pygit2.Repository) -> tuple[str, str, str, str] | None:
    """Two consecutive tags (by commit time, among the newest 100) whose diff has a file the clone lacks:
    (old tag, new tag, path, whether its copy at the new tag is missing)."""
    tags = []
    for name in repo.references:
        if name.startswith("refs/tags/"):
            try:
                tags.append((repo.lookup_reference(name).peel(pygit2.Commit), name[len("refs/tags/") :]))
            except (KeyError, ValueError, pygit2.GitError):
                continue
    tags = sorted(tags, key=lambda t: t[0].commit_time)[-100:]
    odb = repo.odb
    for (old, old_tag), (new, new_tag) in itertools.pairwise(tags):
        for delta in old.tree.diff_to_tree(new.tree).deltas:
            lacks = [
                f.mode == pygit2.GIT_FILEMODE_BLOB and not odb.exists(f.id)
                for f in (delta.old_file, delta.new_file)
            ]
            if any(lacks):
                return old_tag, new_tag, delta.new_file.path, lacks[1]
    return None


def test_a_real_llama_cpp_clone_without_some_blobs():
    where = os.environ.get("LLAMA_BOT_REAL_LLAMA_CPP")
    if not where:
        pytest.skip(
            "LLAMA_BOT_REAL_LLAMA_CPP is not set: it names a llama.cpp clone that lacks some blobs "
            "(a partial clone or a mirror that omits its largest files)"
        )
    repo = pygit2.Repository(where)
    upstream = Upstream.open_dir(where, "https://github.com/ggml-org/llama.cpp")
    if any(e.name.lower().endswith(".promisor") for e in repo.config if e.name.lower().startswith("remote.")):
        pytest.skip(f"{where} has a promisor remote: this test only reads, it would fetch into the clone")
    found = _real_pair(repo)
    if found is None:
        pytest.skip(f"no two consecutive tags of {where} differ in a file whose blob is missing")
    old_tag, new_tag, missing, missing_at_new = found
    license_text = repo.revparse_single(f"{new_tag}:LICENSE").data.decode()
    patches = {
        "llama/compat/0001-missing.patch": (
            f"diff --git a/{missing} b/{missing}\n--- a/{missing}\n+++ b/{missing}\n@@ -0,0 +1 @@\n+ollama\n"
        ).encode(),
        "llama/compat/0002-license.patch": make_patch(license_text, license_text + "ollama\n", "LICENSE"),
    }
    base = MemorySnapshot({"LLAMA_CPP_VERSION": f"{old_tag}\n".encode(), **patches})
    head = MemorySnapshot({"LLAMA_CPP_VERSION": f"{new_tag}\n".encode(), **patches})

    (pin,) = analyse(parse_config(None), base, head, lambda p, refs: upstream, ["LLAMA_CPP_VERSION"]).pins

    first, second = pin.patches
    ref = new_tag if missing_at_new else "the old ref"  # the new ref is looked at first
    assert first.status == "error" and first.message.startswith(f"Cannot be checked: {missing} at {ref}"), (
        first.message
    )
    assert f"is missing from the upstream clone (--upstream-dir {where})" in first.message
    assert second.status == "clean", second.message
    (unchecked,) = pin.unchecked  # what could not be read is said once, as the pin's unchecked line
    assert f"`{missing}` at " in unchecked and f"missing from --upstream-dir {where}" in unchecked, unchecked


def server_upstream(path: Path) -> RepoBuilder:
    """An upstream whose v1 -> v2 changes one llama-server source (server-context.cpp) and leaves the other
    (server-http.cpp) as it was."""
    src = RepoBuilder(path)
    src.repo.config["uploadpack.allowFilter"] = True
    server = {
        "tools/server/server-http.cpp": 'void send(Sink & s) { s.write("data: " + body + "\\n\\n"); }\n',
        "tools/server/server-context.cpp": 'json reply() { return {{"content", text}}; }\n',
    }
    src.commit(
        "base", {"src/big.c": BIG_V1, "src/small.c": SMALL_V1, "CMakeLists.txt": "project(up)\n", **server}
    )
    src.tag("v1")
    changed = server["tools/server/server-context.cpp"].replace("text", "text + more")
    src.commit("server: say more (#13)", {"tools/server/server-context.cpp": changed})
    src.tag("v2")
    return src


def test_a_blob_none_clone_fetches_the_unchanged_server_sources_the_wire_check_reads(tmp_path):
    """The wire check reads every llama-server source at the new ref, changed or not: a partial clone must
    fetch the unchanged ones with the rest, or the review skips them and says so."""
    src = server_upstream(tmp_path / "src.git")
    full = _analyse(src.path)
    part = _clone(src, tmp_path / "part.git", "blob:none")

    report = _analyse(part)

    assert report.pins[0].unchecked == []
    assert report.to_json() == full.to_json()


def test_a_blob_the_remote_cannot_send_costs_only_its_own_file(tmp_path):
    """git fetches a batch of blobs whole or not at all: one the remote lacks is set aside, the rest are
    fetched, and only its file is reported unreadable."""
    src = _upstream(tmp_path / "src.git")
    src.repo.config["uploadpack.allowAnySHA1InWant"] = True
    full = _analyse(src.path).pins[0].to_json()
    part = _clone(src, tmp_path / "part.git", "blob:none")
    lost = str(_blob(src.repo, "v2", "docs/table.csv"))
    (src.path / "objects" / lost[:2] / lost[2:]).unlink()  # the remote's only copy of it

    pin = _analyse(part).pins[0].to_json()

    assert pin["patches"] == full["patches"]  # every blob the patches read was fetched
    (note,) = pin["unchecked"]
    assert note.startswith("1 upstream file it needed (`docs/table.csv` at the new ref), missing from ")
    assert f"not our ref {lost}" in note
