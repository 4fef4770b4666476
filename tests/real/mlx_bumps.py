"""Check every real MLX / mlx-c bump of Ollama and print what llama-bot says, first push and merged.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_MLX and LLAMA_BOT_REAL_MLX_C name git
directories of ollama/ollama, ml-explore/mlx and ml-explore/mlx-c. For every Ollama commit that changed
MLX_VERSION or MLX_C_VERSION it analyses the bump's first push (the parent with only the version files
changed) and the merged commit, with the default configuration, over the mirrors' objects (read only), and
prints one line per pin and finding and the time each analysis took.

    python -m tests.real.mlx_bumps                  # every bump
    python -m tests.real.mlx_bumps 0bb092592 --md   # one bump's first push, as the checklist the PR gets
    python -m tests.real.mlx_bumps --forced         # the baseline table: tests/data/mlx-real/forced.toml's
                                                    # forced changes found, every high/medium item labelled
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
import tomllib
from pathlib import Path

import pygit2

from bot.config import parse_config
from bot.engine import analyse
from bot.model import Report
from bot.render.checklist import render_markdown
from bot.render.steps import merge_steps
from bot.repos.snapshot import GitSnapshot
from bot.repos.upstream import Upstream
from tests.real.review_bumps import VersionBumpOnly

VERSION_FILES = ("MLX_VERSION", "MLX_C_VERSION")
DATA = Path(__file__).resolve().parent.parent / "data" / "mlx-real"


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
    parser.add_argument("--forced", action="store_true", help="print the forced changes found, per bump")
    args = parser.parse_args(argv)
    names = ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_MLX", "LLAMA_BOT_REAL_MLX_C")
    if not all(os.environ.get(n) for n in names):
        print(f"set {', '.join(names)} to the fetched mirrors", file=sys.stderr)
        return 2
    ollama, mlx, mlx_c = (pygit2.Repository(os.environ[n]) for n in names)
    checker = Checker(ollama, {"mlx": mlx, "mlx-c": mlx_c})
    if args.forced:
        return forced_table(checker)
    commits = [ollama.revparse_single(c).peel(pygit2.Commit) for c in args.commits] or bumps(ollama)
    for commit in commits:
        for label in ("first push", "merged"):
            report, changed, took = checker.check(commit, label)
            if args.md and label == "first push":
                print(checker.markdown(report, changed, commit))
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


class Checker:
    """The analyses of one bump, first push or merged, with the default configuration over the mirrors."""

    def __init__(self, ollama: pygit2.Repository, upstreams: dict[str, pygit2.Repository]):
        self.ollama = ollama
        self.upstreams = upstreams
        config = parse_config(None)
        self.config = dataclasses.replace(config, pins=tuple(p for p in config.pins if p.name in upstreams))

    def check(self, commit: pygit2.Commit, label: str) -> tuple[Report, list[str], float]:
        base, merged = GitSnapshot(self.ollama, commit.parents[0]), GitSnapshot(self.ollama, commit)
        head = first_push(base, merged) if label == "first push" else merged
        changed = (
            [p for p in VERSION_FILES if base.read(p) != head.read(p)]
            if label == "first push"
            else _changed(base, merged)
        )
        started = time.perf_counter()
        report = analyse(
            self.config,
            base,
            head,
            lambda pin, refs: Upstream(self.upstreams[pin.name], pin.upstream),
            changed,
            errors={},
            also_watch=False,
        )
        return report, changed, time.perf_counter() - started

    def markdown(self, report: Report, changed: list[str], commit: pygit2.Commit) -> str:
        return render_markdown(
            report, changed, head_sha=str(commit.id), patch_dirs={p.name: p.patches for p in self.config.pins}
        )


def _said(report: Report, changed: list[str]) -> list[str]:
    """What a run says that can find a forced change: its high and medium items, its "Before merging" steps."""
    items = [f"{f.title}\n{f.detail}" for pin in report.pins for f in pin.findings if f.severity != "info"]
    return items + [s.text for s in merge_steps(report, changed)]


def _label(labels: list[dict], commit: str, title: str) -> str:
    """The label tests/data/mlx-real/labels.toml gives an item of this bump, else "unlabelled"."""
    for entry in labels:
        if commit.startswith(entry["ollama"][:9]) and re.search(entry["title"], title):
            return entry["label"]
    return "unlabelled"


def forced_table(checker: Checker) -> int:
    """Per bump: its forced changes and which the review finds (first push or merged), then each high and
    medium item of its first push with its label."""
    bumps_data = tomllib.loads((DATA / "forced.toml").read_text())["bump"]
    labels_path = DATA / "labels.toml"
    labels = tomllib.loads(labels_path.read_text())["label"] if labels_path.exists() else []
    totals = [0, 0]
    for bump in bumps_data:
        commit = checker.ollama.revparse_single(bump["ollama"]).peel(pygit2.Commit)
        runs = {label: checker.check(commit, label) for label in ("first push", "merged")}
        said = [text for report, changed, _ in runs.values() for text in _said(report, changed)]
        findable = [f for f in bump.get("forced", []) if f["kind"] != "behaviour"]
        found = [f["id"] for f in findable if any(re.search(f["match"], s, re.IGNORECASE) for s in said)]
        totals[0] += len(findable)
        totals[1] += len(found)
        behaviour = [f["id"] for f in bump.get("forced", []) if f["kind"] == "behaviour"]
        print(f"{str(commit.id)[:9]} {bump['date']} {bump['subject']}")
        print(
            f"  forced: {len(findable)}, found {len(found)}: "
            + ", ".join(f"{f['id']} {'FOUND' if f['id'] in found else 'missed'}" for f in findable)
            + (f"; behaviour only: {', '.join(behaviour)}" if behaviour else "")
        )
        report = runs["first push"][0]
        for pin in report.pins:
            for f in pin.findings:
                if f.severity != "info":
                    print(
                        f"    {f.severity:6} [{_label(labels, bump['ollama'], f.title)}] {pin.name}: {f.title}"
                    )
    print(f"total: {totals[1]} of {totals[0]} forced build/API changes found")
    return 0


def _changed(base: GitSnapshot, head: GitSnapshot) -> list[str]:
    diff = base.tree.diff_to_tree(head.tree)
    return sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)})


if __name__ == "__main__":
    sys.exit(main())
