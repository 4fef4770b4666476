"""Check every real MLX / mlx-c bump of Ollama and print what llama-bot says, first push and merged.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_MLX and LLAMA_BOT_REAL_MLX_C name git
directories of ollama/ollama, ml-explore/mlx and ml-explore/mlx-c. For every Ollama commit that changed
MLX_VERSION or MLX_C_VERSION it analyses the bump's first push (the parent with only the version files
changed) and the merged commit, with the default configuration, over the mirrors' objects (read only), and
prints one line per pin and finding and the time each analysis took.

    python -m tests.real.mlx_bumps                  # every bump
    python -m tests.real.mlx_bumps 0bb092592 --md   # one bump's first push, as the checklist the PR gets
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

import pygit2

from bot.config import parse_config
from bot.engine import analyse
from bot.render.checklist import render_markdown
from bot.snapshot import GitSnapshot
from bot.upstream import Upstream
from tests.real.review_bumps import VersionBumpOnly

VERSION_FILES = ("MLX_VERSION", "MLX_C_VERSION")


def bumps(ollama: pygit2.Repository) -> list[pygit2.Commit]:
    """Ollama's commits on its first-parent line that changed an MLX version file, oldest first."""
    found = []
    for commit in ollama.walk(ollama.head.target, pygit2.enums.SortMode.TOPOLOGICAL):
        if len(commit.parents) != 1:
            continue
        before, after = GitSnapshot(ollama, commit.parents[0]), GitSnapshot(ollama, commit)
        if any(before.read(f) not in (None, after.read(f)) for f in VERSION_FILES):
            found.append(commit)
    return found[::-1]


def first_push(base: GitSnapshot, merged: GitSnapshot) -> VersionBumpOnly | GitSnapshot:
    head: VersionBumpOnly | GitSnapshot = base
    for path in VERSION_FILES:
        data = merged.read(path)
        if data is not None and data != base.read(path):
            head = VersionBumpOnly(head, path, data)  # type: ignore[arg-type]
    return head


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.real.mlx_bumps")
    parser.add_argument("commits", nargs="*", help="Ollama commits to check (default: every MLX bump)")
    parser.add_argument("--md", action="store_true", help="print the first push's checklist")
    args = parser.parse_args(argv)
    names = ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_MLX", "LLAMA_BOT_REAL_MLX_C")
    if not all(os.environ.get(n) for n in names):
        print(f"set {', '.join(names)} to the fetched mirrors", file=sys.stderr)
        return 2
    ollama, mlx, mlx_c = (pygit2.Repository(os.environ[n]) for n in names)
    upstreams = {"mlx": mlx, "mlx-c": mlx_c}
    config = parse_config(None)
    config = dataclasses.replace(config, pins=tuple(p for p in config.pins if p.name in upstreams))
    commits = [ollama.revparse_single(c).peel(pygit2.Commit) for c in args.commits] or bumps(ollama)
    for commit in commits:
        base, merged = GitSnapshot(ollama, commit.parents[0]), GitSnapshot(ollama, commit)
        for label, head in (("first push", first_push(base, merged)), ("merged", merged)):
            changed = (
                [p for p in VERSION_FILES if base.read(p) != head.read(p)] if label == "first push" else None
            )
            started = time.perf_counter()
            report = analyse(
                config,
                base,
                head,
                lambda pin, refs: Upstream(upstreams[pin.name], pin.upstream),
                changed or _changed(base, merged),
                errors={},
                also_watch=False,
            )
            took = time.perf_counter() - started
            if args.md and label == "first push":
                print(
                    render_markdown(
                        report,
                        changed or [],
                        head_sha=str(commit.id),
                        patch_dirs={p.name: p.patches for p in config.pins},
                    )
                )
                continue
            subject = commit.message.splitlines()[0]
            print(f"{str(commit.id)[:9]} {label:10} {took:5.2f} s  {subject}")
            for pin in [*report.pins, *report.failed]:
                patches = ", ".join(f"{p.path.rsplit('/', 1)[-1]} {p.status}" for p in pin.patches)
                print(f"    {pin.name}: {pin.old_ref[:12]} -> {pin.new_ref[:12]}  {pin.error or patches}")
                for f in pin.findings:
                    if f.severity != "info":
                        print(f"      {f.severity:6} {f.title}")
    return 0


def _changed(base: GitSnapshot, head: GitSnapshot) -> list[str]:
    diff = base.tree.diff_to_tree(head.tree)
    return sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)})


if __name__ == "__main__":
    sys.exit(main())
