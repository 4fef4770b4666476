"""How much a fork's pushes grow the data directory: three pushes, each pinning a new commit only
`refs/pull/N/head` reaches with a few MiB of new blobs, each checked with `python -m bot check`.

`python -m tests.pinned_growth [CHECKOUT]` measures the code at CHECKOUT (this one by default), so that
two checkouts compare: the figures are the growth of the mirrors and of the pinned commits' stores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pygit2

from tests.fixtures import SIGNATURE, RepoBuilder

PUSHES = 3
PUSHED_MIB = 4  # new blobs in each push
_CHECKOUT = Path(__file__).resolve().parent.parent


def push_to_pull(repo: pygit2.Repository, number: int, mib: int, tag: str = "b1") -> str:
    """A commit on top of `tag` that only `refs/pull/<number>/head` reaches, adding `mib` MiB of new
    blobs the analysis reads (a changed file's both sides)."""
    base = repo.revparse_single(tag).peel(pygit2.Commit)
    builder = repo.TreeBuilder(base.tree)
    blob = repo.create_blob(os.urandom(mib << 20))
    builder.insert(f"data-{number}.bin", blob, pygit2.enums.FileMode.BLOB)
    sha = repo.create_commit(None, SIGNATURE, SIGNATURE, f"push to #{number}", builder.write(), [base.id])
    repo.references.create(f"refs/pull/{number}/head", sha, force=True)
    return str(sha)


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def measure(root: Path, checkout: Path) -> list[tuple[int, int]]:
    """The sizes of the mirrors and of the pinned stores after the base check and after each push."""
    up = RepoBuilder(root / "src" / "ggml-org" / "llama.cpp")
    up.repo.config["uploadpack.allowFilter"] = True
    up.commit("base", {"src/f.c": "int f(void);\n"})
    up.tag("b1")
    ollama = RepoBuilder(root / "ollama.git")
    ollama.commit("pin", {"LLAMA_CPP_VERSION": "b1\n"})
    env = {
        **os.environ,
        "LLAMA_BOT_DATA_DIR": str(root / "data"),
        "LLAMA_BOT_URL_INSTEADOF": f"{root}/src/=https://github.com/",
        "PYTHONPATH": str(checkout),
    }
    sizes = []
    for push in range(PUSHES + 1):
        ref = push_to_pull(up.repo, push, PUSHED_MIB) if push else "b1"
        ollama.commit(f"push {push}", {"LLAMA_CPP_VERSION": f"{ref}\n", "README": f"{push}\n"})
        command = [sys.executable, "-m", "bot", "check", "--repo", str(ollama.path), "--base", "HEAD~1"]
        subprocess.run([*command, "--quiet"], env=env, cwd=checkout, check=False, capture_output=True)
        sizes.append((size(root / "data" / "mirrors"), size(root / "data" / "pinned")))
    return sizes


def main() -> None:
    checkout = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else _CHECKOUT
    with tempfile.TemporaryDirectory() as root:
        sizes = measure(Path(root), checkout)
    print(f"{PUSHES} pushes of {PUSHED_MIB} MiB each, checked by {checkout}:")
    for push, (mirrors, stores) in enumerate(sizes):
        print(
            f"  after {f'push {push}' if push else 'the base'}: mirrors {_kib(mirrors)}, pinned {_kib(stores)}"
        )
    print(f"growth: mirrors {_kib(sizes[-1][0] - sizes[0][0])}, pinned {_kib(sizes[-1][1] - sizes[0][1])}")


def _kib(size: int) -> str:
    return f"{size / 1024:,.0f} KiB"


if __name__ == "__main__":
    main()
