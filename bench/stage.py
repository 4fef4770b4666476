"""One measured stage in a fresh process, so that max RSS is that stage's own."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from bot.cache import facts
from bot.cache.facts import FactStore
from bot.config import parse_config
from bot.engine import analyse
from bot.repos.snapshot import MemorySnapshot
from bot.repos.upstream import Upstream


def patches(root: Path) -> dict:
    files = {
        str(p.relative_to(root / "patches")): p.read_bytes() for p in (root / "patches").rglob("*.patch")
    }
    base = MemorySnapshot({"LLAMA_CPP_VERSION": b"v1\n", **files})
    head = MemorySnapshot({"LLAMA_CPP_VERSION": b"v2\n", **files})
    upstream = Upstream.open_dir(str(root / "upstream.git"), "https://github.com/ggml-org/llama.cpp")
    started = time.perf_counter()
    report = analyse(
        parse_config(None), base, head, lambda pin, refs: upstream, ["LLAMA_CPP_VERSION"], review=False
    )
    seconds = time.perf_counter() - started
    (pin,) = report.pins
    statuses: dict[str, int] = {}
    for p in pin.patches:
        for h in p.hunks:
            statuses[h.status] = statuses.get(h.status, 0) + 1
    return {
        "seconds": seconds,
        "patches": len(pin.patches),
        "hunks": sum(len(p.hunks) for p in pin.patches),
        "statuses": statuses,
    }


def review(root: Path, facts_dir: Path | None = None) -> dict:
    from bench.synthetic import ollama_consumers
    from bot.patches.patchfile import parse
    from bot.repos.history import History
    from bot.repos.snapshot import GitSnapshot
    from bot.review import ReviewContext
    from bot.review import review as run_review

    files = {
        str(p.relative_to(root / "patches")): p.read_bytes() for p in (root / "patches").rglob("*.patch")
    }
    upstream = Upstream.open_dir(str(root / "review-upstream.git"), "https://github.com/ggml-org/llama.cpp")
    old, new = upstream.commit("v1", "v1"), upstream.commit("v2", "v2")
    pin = parse_config(None).pins[0]
    store = FactStore(facts_dir) if facts_dir else None
    started = time.perf_counter()
    ctx = ReviewContext(
        pin,
        GitSnapshot(upstream.repo, old),
        GitSnapshot(upstream.repo, new),
        History(upstream, old, new),
        MemorySnapshot(ollama_consumers(files)),
        [(p, parse(d)) for p, d in sorted(files.items())],
        {},
    )
    with facts.using(store):
        findings = run_review(ctx)
    seconds = time.perf_counter() - started
    by_severity: dict[str, int] = {}
    for f in findings:
        by_severity[f.severity] = by_severity.get(f.severity, 0) + 1
    hits = store.hits if store else 0
    return {"seconds": seconds, "findings": by_severity, "facts_hits": hits}


STAGES = {"patches": patches, "review": review}

if __name__ == "__main__":
    result = STAGES[sys.argv[1]](*(Path(a) for a in sys.argv[2:]))
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))
