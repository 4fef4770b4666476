"""`make bench-probe`: `python -m bot probe` on a real llama.cpp bump of Ollama, cold (an empty work directory:
both refs built from nothing) and again (the same directory: each ref's changed files rebuilt as the directory
flips between them, from the compiler cache when one is on PATH), beside the figures it was first measured at.
Needs the mirrors (LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_LLAMA_CPP), cmake and a C++ compiler; minutes on two
cores, so it is a benchmark of its own, not part of `make test` (whose probe test builds a synthetic upstream in
seconds).

The llama.cpp mirror lacks the bNNNN tags: they are resolved by tests/real/extract.py into a scratch bare
repository borrowing the mirror's objects, which is what the probe is given as `--upstream-dir`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.probe import build

BUMP = ("4f066a6fb", "b10242", "b10353")  # Ollama's bump commit, the refs it moves between
# wall seconds when first measured (2026-12-06, 2 cores, no compiler cache on PATH): the run again rebuilds
# what differs between the refs twice, as the work directory flips back to the old ref and on to the new
BASELINE = {"cold": 686, "again": 697}


def _probe(ollama: Path, upstream: Path, work: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "probe",
            "--repo",
            str(ollama),
            "--base",
            f"{BUMP[0]}^",
            "--head",
            BUMP[0],
            "--upstream-dir",
            f"llama.cpp={upstream}",
            "--work-dir",
            str(work),
            "--format",
            "json",
            "--quiet",
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode == 2:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"bench-probe: the probe could not run: {last}")
    return seconds, json.loads(done.stdout)


def main() -> int:
    names = ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")
    ollama, llama = (Path(os.environ.get(n, "")) for n in names)
    if not all(os.environ.get(n) for n in names) or not (llama / "objects").is_dir():
        print(
            "bench-probe: skipped: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP must name git mirrors"
        )
        return 0
    if shutil.which("cmake") is None:
        print("bench-probe: skipped: no cmake on PATH")
        return 0
    from tests.real.extract import RefResolver
    from tests.real.review_bumps import scratch_upstream

    resolver = RefResolver(llama)
    with tempfile.TemporaryDirectory(prefix="bench-probe-") as tmp:
        root = Path(tmp)
        upstream = root / "upstream.git"
        scratch_upstream(llama, {ref: resolver.resolve(ref) for ref in BUMP[1:]}, upstream)
        rows = []
        for run in ("cold", "again"):
            seconds, report = _probe(ollama, upstream, root / "work")
            findings = [f"{f['check']}: {f['title']}" for pin in report["pins"] for f in pin["findings"]]
            rows.append((run, seconds, findings))
    cache = next((name for name in build.LAUNCHERS if shutil.which(name)), "no compiler cache")
    print(f"probe of Ollama {BUMP[0]} ({BUMP[1]} -> {BUMP[2]}), CPU preset, {os.cpu_count()} CPUs, {cache}")
    print("| run | seconds | first measured | findings |")
    print("|---|---|---|---|")
    for run, seconds, findings in rows:
        was = BASELINE[run]
        print(f"| {run} | {seconds:.1f} | {'-' if was is None else f'{was:.0f}'} | {len(findings)} |")
    # each run's findings: a difference between two runs of one build is a flake to find
    for run, _, findings in rows:
        print(f"{run}: " + ("; ".join(findings) or "none"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
