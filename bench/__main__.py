"""`make bench`: build the synthetic inputs once, then time each stage in a fresh child process."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

RUNS = 5


def _child(stage: str, root: Path, *more: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.stage", stage, str(root), *map(str, more)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def patch_stage(root: Path) -> None:
    from bench.synthetic import build

    started = time.perf_counter()
    up, patches = build(root)
    for path, data in patches.items():
        (root / "patches" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "patches" / path).write_bytes(data)
    old, new = (up.repo.revparse_single(t).peel(pygit2.Commit) for t in ("v1", "v2"))
    diff = up.repo.diff(old.tree, new.tree)
    walker = up.repo.walk(up.repo.revparse_single("v2").id)
    walker.hide(up.repo.revparse_single("v1").id)
    print(
        f"synthetic upstream: {len(up.files)} files, {sum(1 for _ in walker)} commits and "
        f"{diff.stats.insertions + diff.stats.deletions} changed lines between the refs "
        f"(built in {time.perf_counter() - started:.1f} s)"
    )
    runs = [_child("patches", root) for _ in range(RUNS)]
    first = runs[0]
    print(
        f"patch stage ({first['hunks']} hunks in {first['patches']} patches; statuses {first['statuses']}):"
    )
    print(
        f"  median wall time over {RUNS} runs: {statistics.median(r['seconds'] for r in runs) * 1000:.0f} ms"
        f"  (aim < 1000 ms)"
    )
    print(
        f"  peak memory (max RSS of the process): {max(r['max_rss_mb'] for r in runs):.0f} MB  (aim < 200 MB)"
    )
    work = root / "work"
    subprocess.run(["git", "clone", "-q", str(up.path), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", "v2"], check=True)
    started = time.perf_counter()
    for path in sorted(patches):
        subprocess.run(
            ["git", "-C", str(work), "apply", "-3", str(root / "patches" / path)],
            check=False,
            capture_output=True,
        )
    print(f"  reference: git apply -3 of the same patches: {(time.perf_counter() - started) * 1000:.0f} ms")


def review_stage(root: Path) -> None:
    from bench.synthetic import build_review

    started = time.perf_counter()
    up = build_review(root)
    old, new = (up.repo.revparse_single(t).peel(pygit2.Commit) for t in ("v1", "v2"))
    stats = old.tree.diff_to_tree(new.tree).stats
    print(
        f"review input: {stats.files_changed} files and {stats.insertions + stats.deletions} changed lines "
        f"between the refs (built in {time.perf_counter() - started:.1f} s)"
    )
    runs = [_child("review", root) for _ in range(RUNS)]
    print(f"review stage ({runs[0]['findings']}):")
    print(
        f"  median wall time over {RUNS} runs: {statistics.median(r['seconds'] for r in runs) * 1000:.0f} ms"
        f"  (aim < 2000 ms)"
    )
    print(
        f"  peak memory (max RSS of the process): {max(r['max_rss_mb'] for r in runs):.0f} MB  (aim < 300 MB)"
    )
    store = root / "facts"
    first = _child("review", root, store)
    rechecks = [_child("review", root, store) for _ in range(RUNS)]
    assert rechecks[0]["findings"] == first["findings"], "a re-check found other things"
    print(
        f"  first analysis (facts store empty) {first['seconds'] * 1000:.0f} ms; re-check (store filled, "
        f"{rechecks[0]['facts_hits']} facts found): median {statistics.median(r['seconds'] for r in rechecks) * 1000:.0f} ms"
    )
    print(
        f"  reference: git diff of the refs: {_git_diff_seconds(root / 'review-upstream.git') * 1000:.0f} ms"
    )


def _git_diff_seconds(git_dir: Path) -> float:
    """The median wall time of `git diff v1 v2` over RUNS runs."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "diff", "v1", "v2"], check=True, capture_output=True
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="llama-bot-bench-") as tmp:
        patch_stage(Path(tmp))
        review_stage(Path(tmp))
    from bench.real_cases import real_cases_stage

    real_cases_stage()
    from bench.mutations import mutations_stage

    mutations_stage()
    from bench.service import service_stage

    service_stage()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
