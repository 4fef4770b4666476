"""`python -m bot bump` on Ollama's real llama.cpp bumps, its two commits set beside the maintainers' own bump
commit: the version file and every carried patch, equal or not (and why not). Needs the real mirrors
(LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_LLAMA_CPP) and skips without them; `pytest -s` prints the comparison
and the seconds each bump took from a cold data directory.

The upstream is served as bench/real_bump.py serves it (a scratch repository borrowing the llama.cpp mirror's
objects, holding the two refs as tags), so the bump chooses the newer one as the newest release by itself, and
fetches it into its mirror as from GitHub. The llama.cpp mirror here is a partial clone that lacks a blob
b10434 -> b10488 changes (docs/ops/SYCL.csv at b10434), which no fetch can then serve: that bump reads the
served repository in place (`--upstream-dir`), where only that file is missing (an info finding of the review).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from bench.real_bump import _held_tree, _served_upstream

MIRRORS = {name: os.environ.get(name, "") for name in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")}
needs_mirrors = pytest.mark.skipif(
    not all(MIRRORS.values()),
    reason="needs the real mirrors: set LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP to their git dirs",
)
PATCHES = "llama/compat"
# (the maintainers' bump commit, old ref, new ref, whether the bump fetches the upstream into its mirror, the
# patches whose rebuild differs from theirs and why)
BUMPS = (
    ("cd3704409", "b10434", "b10488", False, {}),
    (
        "c82ebbd5b",
        "b10091",
        "b10242",
        True,
        {
            "llama/compat/001-llama-cpp-hooks.patch": "the same include placement and hunks; the maintainers "
            "rewrote the metadata hook's one line `... use_mmap = false;` as a block setting `this->use_mmap`, the "
            "bump keeps the line as it was. Upstream turned the constructor's use_mmap parameter into the member, "
            "so both set the same flag; the engine calls it fuzzy and names the parameter for a person to confirm "
            "(the blob id on the index line and the later hunks' new-side line numbers follow from that)",
        },
    ),
)


def _checkout(ollama: Path, commit: str, where: Path) -> tuple[pygit2.Repository, pygit2.Commit]:
    """A bare repository borrowing Ollama's objects whose HEAD (main) is the bump's parent, less the blobs the
    partial mirror lacks; and the maintainers' bump commit."""
    repo = pygit2.init_repository(str(where), bare=True, initial_head="main")
    (where / "objects" / "info" / "alternates").write_text(str((ollama / "objects").resolve()) + "\n")
    repo = pygit2.Repository(str(where))
    theirs = repo.revparse_single(commit).peel(pygit2.Commit)
    parent = theirs.parents[0]
    tree = _held_tree(repo, parent.tree)
    repo.create_commit("refs/heads/main", parent.author, parent.committer, parent.message, tree, [])
    return repo, theirs


def _patches(repo: pygit2.Repository, commit: pygit2.Commit) -> dict[str, bytes]:
    found = {}
    stack = [(f"{PATCHES}/", repo[commit.tree[PATCHES].id])]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            if entry.type_str == "tree":
                stack.append((f"{prefix}{entry.name}/", repo[entry.id]))
            elif entry.name.endswith(".patch"):
                found[prefix + entry.name] = repo[entry.id].data
    return found


@needs_mirrors
@pytest.mark.parametrize(
    ("commit", "old", "new", "fetched", "differ"), BUMPS, ids=[f"{b[1]}-{b[2]}" for b in BUMPS]
)
def test_the_bump_commits_against_the_maintainers(tmp_path, commit, old, new, fetched, differ):
    ollama, llama = Path(MIRRORS["LLAMA_BOT_REAL_OLLAMA"]), Path(MIRRORS["LLAMA_BOT_REAL_LLAMA_CPP"])
    from tests.real.extract import RefResolver

    _served_upstream(llama, RefResolver(llama), (old, new), tmp_path)
    repo, theirs = _checkout(ollama, commit, tmp_path / "ollama.git")
    env = {
        **os.environ,
        "LLAMA_BOT_DATA_DIR": str(tmp_path / "data"),
        "LLAMA_BOT_URL_INSTEADOF": f"{tmp_path}/src/=https://github.com/",
    }
    local = [] if fetched else ["--upstream-dir", f"llama.cpp={tmp_path}/src/ggml-org/llama.cpp"]
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "bump",
            "--repo",
            str(tmp_path / "ollama.git"),
            "--pin",
            "llama.cpp",
            "--quiet",
            *local,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - started
    # the partial mirror lacks a few large blobs: a file the review needed and could not fetch is said, and
    # the exit status says so (2), the branch made all the same
    errors = [line for line in done.stderr.splitlines() if line.startswith("llama-bot: ")]
    assert done.returncode in (0, 1) or (
        done.returncode == 2 and errors and all("not checked: " in e and "not fetched" in e for e in errors)
    ), done.stderr
    branch = repo.references[f"refs/heads/llama-bot/bump-llama.cpp-{new}"].peel(pygit2.Commit)
    main = repo.references["refs/heads/main"].peel(pygit2.Commit)
    ours = [branch]
    while ours[-1].parents[0].id != main.id:
        ours.append(ours[-1].parents[0])
    version = ours[-1]
    assert (
        version.tree["LLAMA_CPP_VERSION"].data == theirs.tree["LLAMA_CPP_VERSION"].data == f"{new}\n".encode()
    )

    before, mine, maintainers = _patches(repo, main), _patches(repo, branch), _patches(repo, theirs)
    rows, unequal = [], {}
    for path in sorted(set(before) | set(mine) | set(maintainers)):
        equal = mine.get(path) == maintainers.get(path)
        changed = "changed" if mine.get(path) != before.get(path) else "kept"
        theirs_changed = "changed" if maintainers.get(path) != before.get(path) else "kept"
        rows.append(f"  {path}: ours {changed}, theirs {theirs_changed}: {'equal' if equal else 'differ'}")
        if not equal:
            unequal[path] = differ.get(path, "unexplained")
    how = "into an empty data directory" if fetched else "the upstream read in place"
    print(
        f"\n{old} -> {new} (Ollama {commit}): {len(ours)} commit(s), exit {done.returncode}, {seconds:.1f} s ({how})"
    )
    print(f"  LLAMA_CPP_VERSION: equal ({new})")
    print("\n".join(rows))
    for path, why in unequal.items():
        print(f"  {path} differs: {why}")
    assert set(unequal) == set(differ), unequal
    assert len(ours) == (2 if any(mine.get(p) != before.get(p) for p in mine) else 1)
