"""A large synthetic bump: 5,000 files, 400 commits, ~60,000 changed lines, 3 patches with 25 hunks."""

from __future__ import annotations

import random
from pathlib import Path

from bot.fixtures import RepoBuilder
from tests.gitutil import make_patch

DIRS, FILES_PER_DIR, TARGET_LINES = 100, 50, 600
HUNKS = (9, 8, 8)
STALE = 6  # hunks whose context upstream edits, so that they need regeneration


def _file(d: int, f: int, n: int = 30) -> list[str]:
    return [f"d{d}_f{f}_line_{i}();\n" for i in range(n)]


def _target(t: int) -> list[str]:
    return [f"void target{t}_fn_{i // 20}() {{\n" if i % 20 == 0 else f"    t{t}_call_{i}();\n"
            for i in range(TARGET_LINES)]


def build(root: Path, commits: int = 400, changed_lines: int = 60_000, seed: int = 7):
    """Returns (upstream path, {patch path: bytes}) with tags v1 (old) and v2 (new)."""
    rng = random.Random(seed)
    up = RepoBuilder(root / "upstream.git")
    files = {f"src/d{d}/f{f}.c": _file(d, f) for d in range(DIRS) for f in range(FILES_PER_DIR)}
    targets = {f"src/target{t}.cpp": _target(t) for t in range(3)}
    up.commit("import", {p: "".join(v) for p, v in {**files, **targets}.items()})
    up.tag("v1")
    patches, insert_at = {}, {}
    for t, count in enumerate(HUNKS):
        path = f"src/target{t}.cpp"
        old = targets[path]
        points = [25 + i * (TARGET_LINES - 50) // count for i in range(count)]
        insert_at[path] = points
        new = list(old)
        for p in reversed(points):
            new.insert(p, f"    ollama_hook_{t}_{p}();\n")
        patches[f"llama/compat/000{t + 1}-target{t}.patch"] = make_patch("".join(old), "".join(new), path)
    stale = [(f"src/target{t}.cpp", insert_at[f"src/target{t}.cpp"][k]) for t in range(3) for k in (1, 4)][:STALE]
    per_commit = changed_lines // commits
    paths = list(files)
    for c in range(commits):
        changes = {}
        budget = per_commit
        while budget > 0:
            path = rng.choice(paths)
            lines = files[path]
            n = min(budget, rng.randint(10, 40))
            at = rng.randrange(len(lines) + 1)
            lines[at:at] = [f"added_{c}_{k}();\n" for k in range(n)]
            budget -= n
            changes[path] = "".join(lines)
        if c == commits // 2:
            for path, point in stale:  # edit a context line two above the insertion point
                targets[path][point - 2] = targets[path][point - 2].replace("();", "(true);")
            for path in targets:  # and shift everything down
                targets[path][1:1] = [f"    moved_{k}();\n" for k in range(15)]
            changes.update({p: "".join(v) for p, v in targets.items()})
        up.commit(f"commit {c} (#{10000 + c})", changes)
    up.tag("v2")
    return up, patches
