"""`make bench-real`: `python -m bot check` on Ollama's real llama.cpp bumps, set beside `git diff` of the refs.

The llama.cpp mirror (LLAMA_BOT_REAL_LLAMA_CPP) lacks most bNNNN tags, so it is served as a local upstream
the way GitHub serves one: a scratch bare repository borrowing its objects (objects/info/alternates), with the
tags resolved by tests/real/extract.py and uploadpack.allowFilter and allowAnySHA1InWant set. For each bump:
the cold run (an empty data dir: the mirror is created from that upstream), the warm run, and `git diff`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUMPS = (
    ("c82ebbd5b", "b10091", "b10242"),
    ("4f066a6fb", "b10242", "b10353"),
    ("1fd1ccf7a", "b10069", "b10091"),
)
WARM_RUNS = 3


def _timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one run of `command`; a run that could not check (exit 2) stops."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"bench-real: {' '.join(command)} exited {os.waitstatus_to_exitcode(status)}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def main() -> int:
    ollama, llama = (
        Path(os.environ.get(n, "")) for n in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_LLAMA_CPP")
    )
    if not (
        os.environ.get("LLAMA_BOT_REAL_OLLAMA")
        and os.environ.get("LLAMA_BOT_REAL_LLAMA_CPP")
        and (ollama / "objects").is_dir()
        and (llama / "objects").is_dir()
    ):
        print(
            "bench-real: skipped: LLAMA_BOT_REAL_OLLAMA and LLAMA_BOT_REAL_LLAMA_CPP must name fetched git "
            "mirrors of ollama/ollama and llama.cpp"
        )
        return 0
    from tests.real.extract import RefResolver
    from tests.real.review_bumps import scratch_upstream

    resolver = RefResolver(llama)
    for commit, old, new in BUMPS:
        with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
            root = Path(tmp)
            served = root / "src" / "ggml-org" / "llama.cpp"
            repo = scratch_upstream(llama, {t: resolver.resolve(t) for t in (old, new)}, served)
            repo.config["uploadpack.allowFilter"] = True
            repo.config["uploadpack.allowAnySHA1InWant"] = True
            env = {
                **os.environ,
                "LLAMA_BOT_DATA_DIR": str(root / "data"),
                "LLAMA_BOT_URL_INSTEADOF": f"{root}/src/=https://github.com/",
            }
            check = [
                sys.executable,
                "-m",
                "bot",
                "check",
                "--repo",
                str(ollama),
                "--base",
                f"{commit}~1",
                "--head",
                commit,
                "--format",
                "json",
                "--quiet",
            ]
            cold = _timed(check, env)
            warm = [_timed(check, env) for _ in range(WARM_RUNS)]
            diff = [_timed(["git", "--git-dir", str(served), "diff", old, new]) for _ in range(WARM_RUNS)]
            check_s, diff_s = statistics.median(w[0] for w in warm), statistics.median(d[0] for d in diff)
            print(f"{old} -> {new} (Ollama {commit}):")
            print(f"  cold check: {cold[0]:.1f} s, {cold[1]:.0f} MB peak RSS  (aim < 15 s, < 300 MB)")
            print(
                f"  warm check: {check_s:.2f} s, {max(w[1] for w in warm):.0f} MB;  git diff: {diff_s:.2f} s, "
                f"{max(d[1] for d in diff):.0f} MB;  ratio {check_s / diff_s:.1f}x  (aim <= 3x)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
