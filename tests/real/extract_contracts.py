"""Extract the Ollama files the contract inventory reads at one real commit into tests/data/contracts/.

Runs where the mirror is: LLAMA_BOT_REAL_OLLAMA names a git directory of ollama/ollama. It computes the
inventory on the whole tree at COMMIT and keeps every file an entry names, plus SUPPORT (the files that give
the types and module path the entries' values are read through), each unchanged and gzip-compressed under
tests/data/contracts/ollama/<path>.gz; manifest.json names the commit and each file's blob id.
tests/test_contracts_real.py reads them back.

    LLAMA_BOT_REAL_OLLAMA=<ollama git dir> python -m tests.real.extract_contracts
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from pathlib import Path

import pygit2

from bot.repos.snapshot import GitSnapshot
from bot.review.consumers import SnapshotTexts
from bot.review.consumers.contracts import contract_inventory

COMMIT = "cd37044093f1023091975ed9f342dc0ae6283472"  # "llama.cpp update (#17851)"
OUT = Path(__file__).resolve().parent.parent / "data" / "contracts" / "ollama"
# what the named files' values are read through: the module path, the option and configuration types
SUPPORT = ("go.mod", "api/types.go", "llm/server.go", "envconfig/config.go")


def named_files(inventory_json: dict) -> set[str]:
    """Every path an entry of the inventory names."""
    found: set[str] = set()
    stack: list[object] = [inventory_json]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("path"), str):
                found.add(item["path"])
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return found


def extract(ollama_dir: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(ollama_dir))
    commit = repo.revparse_single(COMMIT).peel(pygit2.Commit)
    snapshot = GitSnapshot(repo, commit)
    inventory = contract_inventory(SnapshotTexts(snapshot))
    paths = sorted(named_files(inventory.to_json()) | set(SUPPORT))
    shutil.rmtree(OUT, ignore_errors=True)
    blobs = {}
    for path in paths:
        data = snapshot.read(path)
        if data is None:
            raise SystemExit(f"{path} is not in {COMMIT}")
        target = OUT / f"{path}.gz"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.compress(data, mtime=0))
        blobs[path] = str(commit.tree[path].id)
    manifest = {"repository": "https://github.com/ollama/ollama", "commit": COMMIT, "files": blobs}
    (OUT.parent / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return inventory.sizes()


def main() -> int:
    ollama = os.environ.get("LLAMA_BOT_REAL_OLLAMA", "")
    if not ollama or not Path(ollama).is_dir():
        print("set LLAMA_BOT_REAL_OLLAMA to the git directory of an ollama/ollama mirror", file=sys.stderr)
        return 2
    sizes = extract(Path(ollama))
    print(f"wrote {OUT}; the inventory at {COMMIT[:12]}: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
