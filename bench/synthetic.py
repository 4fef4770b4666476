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
            for lines in targets.values():  # and shift everything down
                lines[1:1] = [f"    moved_{k}();\n" for k in range(15)]
            changes.update({p: "".join(v) for p, v in targets.items()})
        up.commit(f"commit {c} (#{10000 + c})", changes)
    up.tag("v2")
    return up, patches


def _review_files() -> dict[str, str]:
    """Upstream files the review parses, at a realistic size."""
    options = "".join(f'option(GGML_OPT_{i} "ggml: option {i}" OFF)\n' for i in range(60))
    flags = "".join(f'    add_opt(common_arg({{"-f{i}", "--flag-{i}"}}, "N", "help for flag {i}"));\n' for i in range(150))
    decls = "".join(f"GGML_API int ggml_backend_fn_{i}(ggml_backend_t backend, int arg);\n" for i in range(80))
    archs = "".join(f"    LLM_ARCH_M{i},\n" for i in range(100))
    names = "".join(f'    {{ LLM_ARCH_M{i}, "m{i}" }},\n' for i in range(100))
    logs = "".join(f'    LOG_INF("%s: stage {i} took %d ms\\n", __func__, t);\n' for i in range(50))
    return {
        "CMakeLists.txt": "project(llama.cpp)\n" + options,
        "common/arg.cpp": "void init() {\n" + flags + "}\n",
        "ggml/include/ggml-backend.h": "#pragma once\n" + decls,
        "src/llama-arch.h": "enum llm_arch {\n" + archs + "};\n",
        "src/llama-arch.cpp": "static names = {\n" + names + "};\n",
        "tools/server/server.cpp": "void run() {\n" + logs + '    res.write("data: [DONE]\\n\\n");\n}\n',
    }


def build_review(root: Path, commits: int = 400, changed_lines: int = 65_000, files_changed: int = 400, seed: int = 11):
    """An upstream whose diff between v1 and v2 spans ~400 files and ~65,000 changed lines."""
    rng = random.Random(seed)
    up = RepoBuilder(root / "review-upstream.git")
    files = {f"src/d{d}/f{f}.cpp": _file(d, f, 60) for d in range(40) for f in range(50)}
    special = {p: text.splitlines(keepends=True) for p, text in _review_files().items()}
    up.commit("import", {p: "".join(v) for p, v in {**files, **special}.items()})
    up.tag("v1")
    pool = rng.sample(sorted(files), files_changed - len(special))
    per_commit = changed_lines // commits
    for c in range(commits):
        changes = {}
        budget = per_commit
        while budget > 0:
            path = rng.choice(pool)
            n = min(budget, rng.randint(10, 60))
            at = rng.randrange(len(files[path]) + 1)
            files[path][at:at] = [f"    added_{c}_{k}(ctx, {k});\n" for k in range(n)]
            budget -= n
            changes[path] = "".join(files[path])
        if c % 50 == 7:  # the files the detectors read change every now and then
            special["CMakeLists.txt"].append(f'option(LLAMA_NEW_{c} "llama: new option {c}" ON)\n')
            special["common/arg.cpp"][c % 100 + 1] = special["common/arg.cpp"][c % 100 + 1].replace("help", "new help")
            special["ggml/include/ggml-backend.h"][c % 60 + 1] = f"GGML_API int ggml_backend_fn_{c % 60}(ggml_backend_t b);\n"
            special["src/llama-arch.h"].insert(-1, f"    LLM_ARCH_NEW{c},\n")
            special["tools/server/server.cpp"][c % 40 + 1] = '    LOG_INF("%s: stage took %.2f s\\n", __func__, t);\n'
            changes.update({p: "".join(v) for p, v in special.items()})
        up.commit(f"review commit {c} (#{20000 + c})", changes)
    up.tag("v2")
    return up


def ollama_consumers(patches: dict[str, bytes]) -> dict[str, bytes]:
    """An Ollama tree's consumer files: flags it passes, GGML calls, CMake settings, log parsing."""
    go_flags = ", ".join(f'"--flag-{i}"' for i in range(0, 150, 3))
    calls = "".join(f"\tC.ggml_backend_fn_{i}(b, 1)\n" for i in range(0, 80, 2))
    return {
        "llm/server.go": f"package llm\n\nvar params = []string{{{go_flags}}}\n".encode(),
        "discover/gpu.go": f"package discover\n\nfunc probe() {{\n{calls}}}\n".encode(),
        "llm/status.go": b'package llm\n\nvar re = regexp.MustCompile(`stage (\\d+) took (\\d+) ms`)\n',
        "llama/server/CMakeLists.txt": "".join(f"set(GGML_OPT_{i} ON)\n" for i in range(0, 60, 4)).encode(),
        **patches,
    }
