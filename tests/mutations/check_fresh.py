"""Check tests/mutations/fresh.toml against the real trees: every search text occurs `count` times in
llama.cpp at b10488 (applied in order, as the suite does), and every cited Ollama line at cd37044093f1 holds
one of its consumer texts.

    python tests/mutations/check_fresh.py [--upstream /tmp/up.git] [--ollama /work/.mirror/ollama+ollama/repo]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

UPSTREAM_REF = "9d77fa17254e1dee4b9e92504c91611a60b1359f"  # b10488
OLLAMA_REF = "cd37044093f1023091975ed9f342dc0ae6283472"
AREAS = ("build", "discovery", "server", "streaming", "models")
TABLE = Path(__file__).resolve().parent / "fresh.toml"


def show(git_dir: str, ref: str, path: str, cache: dict[str, str]) -> str:
    if path not in cache:
        out = subprocess.run(
            ["git", "-C", git_dir, "show", f"{ref}:{path}"], capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise SystemExit(f"cannot read {ref[:12]}:{path} in {git_dir}: {out.stderr.strip()}")
        cache[path] = out.stdout
    return cache[path]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", default="/tmp/up.git")
    ap.add_argument("--ollama", default="/work/.mirror/ollama+ollama/repo")
    ap.add_argument("--table", default=str(TABLE))
    args = ap.parse_args()

    entries = tomllib.loads(Path(args.table).read_text())["mutation"]
    up_cache: dict[str, str] = {}
    ol_cache: dict[str, str] = {}
    problems: list[str] = []
    ids: set[str] = set()
    n_break = n_harmless = 0

    for m in entries:
        ident = m.get("id", "?")
        if not ident.startswith("fresh-"):
            problems.append(f"{ident}: id does not start with 'fresh-'")
        if ident in ids:
            problems.append(f"{ident}: duplicate id")
        ids.add(ident)
        if m.get("area") not in AREAS:
            problems.append(f"{ident}: bad area {m.get('area')!r}")

        # search counts, edits applied in order like tests/mutations/table.py's Mutation.apply
        texts: dict[str, str] = {}
        for e in m.get("edit", []):
            path, search, replace = e["path"], e["search"], e["replace"]
            want = e.get("count", 1)
            text = texts[path] if path in texts else show(args.upstream, UPSTREAM_REF, path, up_cache)
            got = text.count(search)
            if not search or search == replace:
                problems.append(f"{ident}: {path}: empty search or search == replace")
            if got != want:
                problems.append(f"{ident}: {path}: search occurs {got} times, not {want}")
            texts[path] = text.replace(search, replace)

        if m.get("breaking"):
            n_break += 1
            for key in ("breaks", "names", "consumers", "consumer_text"):
                if not m.get(key):
                    problems.append(f"{ident}: breaking case without {key}")
            wanted = m.get("consumer_text", ())
            wanted = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            for cited in m.get("consumers", ()):
                path, _, line = cited.rpartition(":")
                lines = show(args.ollama, OLLAMA_REF, path, ol_cache).split("\n")
                n = int(line)
                text = lines[n - 1] if 0 < n <= len(lines) else ""
                if not any(t in text for t in wanted):
                    problems.append(f"{ident}: {cited} holds none of {wanted!r} (reads {text.strip()!r})")
        else:
            n_harmless += 1
            if not (m.get("why") or "harmless" in m.get("what", "").lower()):
                problems.append(f"{ident}: harmless case without a why")

    for p in problems:
        print("FAIL", p)
    print(f"{len(entries)} cases: {n_break} breaking, {n_harmless} harmless; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
