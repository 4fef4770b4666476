"""Synthetic upstreams shaped like llama.cpp, so that `make bench`'s figures move when the real ones do.

llama.cpp at b10242 has 3,310 files (105 MB): a median C-family file of 4.6 KB, 117 over 50 KB and a few of
1 MB (ggml-vulkan.cpp, ggml-opencl.cpp, vendored single headers), 95 CMake files up to six directories
deep, and 19 `.gguf` vocabularies of 1-4 MB. A real bump (b10091 -> b10242) changes 418 files and 74,000
lines over 151 commits, most of them in those large backend files. Ollama's patches touch files of
17-261 KB (laguna.cpp, llama-model-loader.cpp, clip.cpp): the patch stage's targets are as long as clip.cpp.
"""

from __future__ import annotations

import random
from pathlib import Path

from tests.demo import SERVER_GO_STARTING
from tests.fixtures import RepoBuilder
from tests.gitutil import make_patch

DIRS, FILES_PER_DIR, TARGET_LINES = 100, 50, 5_000  # the patched files are as long as clip.cpp
HUNKS = (9, 8, 8)
STALE = 6  # hunks whose context upstream edits, so that they need regeneration
BACKENDS = (
    "cpu",
    "cuda",
    "vulkan",
    "metal",
    "opencl",
    "sycl",
    "cann",
    "hip",
    "musa",
    "webgpu",
    "blas",
    "rpc",
)
LARGE = {  # the large C++ files a bump keeps changing, and their length in lines (~40 bytes each)
    "ggml/src/ggml-vulkan/ggml-vulkan.cpp": 24_000,
    "ggml/src/ggml-opencl/ggml-opencl.cpp": 26_000,
    "ggml/src/ggml-cuda/ggml-cuda.cu": 12_000,
    "src/llama-model.cpp": 18_000,
    "tools/server/server-context.cpp": 8_000,
}
VENDORED = {"vendor/miniaudio/miniaudio.h": 90_000, "vendor/cpp-httplib/httplib.cpp": 12_000}  # never changed
GGUF = 8  # vocabulary binaries of 1-2 MB under models/; the bump regenerates one


def _file(d: int, f: int, n: int = 30) -> list[str]:
    return [f"d{d}_f{f}_line_{i}();\n" for i in range(n)]


def _cpp(name: str, lines: int, first: int | None = None) -> list[str]:
    """C++ the way a ggml backend reads: functions, comments, asserts and string literals; a whole file, or
    (from op `first` on) functions to insert into one."""
    out = (
        []
        if first is not None
        else [f"// {name}: generated for the benchmark\n", '#include "ggml-impl.h"\n', "\n"]
    )
    i = first or 0
    while len(out) < lines:
        out += [
            f"// op {i}: dispatch to the device\n",
            f"static void {name}_op_{i}(ggml_backend_context * ctx, const ggml_tensor * src0, ggml_tensor * dst) {{\n",
            f"    const int64_t ne{i} = src0->ne[0];\n",
            f'    GGML_ASSERT(ne{i} > 0 && "op {i} needs rows");\n',
            f'    {name}_dispatch(ctx, dst, "op_{i}", ne{i});\n',
            "}\n",
            "\n",
        ]
        i += 1
    return out[:lines]


def _cmake_tree() -> dict[str, str]:
    """About 95 CMake files, up to six directories deep, with options, sources and packages."""
    files = {
        "CMakeLists.txt": "project(llama.cpp)\n"
        + "".join(f'option(LLAMA_FEATURE_{i} "llama: feature {i}" OFF)\n' for i in range(20)),
        "ggml/CMakeLists.txt": "".join(f'option(GGML_{b.upper()} "ggml: use {b}" OFF)\n' for b in BACKENDS),
        **{
            f"ggml/cmake/{n}.cmake": f"function({n})\nendfunction()\n"
            for n in ("common", "GitVars", "ggml-config")
        },
    }
    for b in BACKENDS:
        base = f"ggml/src/ggml-{b}"
        files[f"{base}/CMakeLists.txt"] = (
            f"find_package({b.upper()}Toolkit)\n"
            f'option(GGML_{b.upper()}_F16 "ggml: {b} half precision" OFF)\n'
            f"ggml_add_backend_library(ggml-{b} ggml-{b}.cpp)\n"
            f"if (GGML_{b.upper()}_F16)\n    target_compile_definitions(ggml-{b} PRIVATE GGML_{b.upper()}_F16)\nendif()\n"
        )
        for arch in ("x86", "arm", "riscv", "loongarch", "s390"):
            files[f"{base}/arch/{arch}/kernels/tuned/CMakeLists.txt"] = (
                f"target_sources(ggml-{b} PRIVATE {arch}-quants.c {arch}-repack.cpp)\n"
            )
    for t in (
        "server",
        "main",
        "quantize",
        "perplexity",
        "bench",
        "mtmd",
        "rpc",
        "imatrix",
        "tts",
        "cvector",
    ):
        files[f"tools/{t}/CMakeLists.txt"] = (
            f"add_executable(llama-{t} {t}.cpp)\ntarget_link_libraries(llama-{t} common)\n"
        )
    return files


def _ggml_tree(rng: random.Random) -> dict[str, list[str]]:
    """The small files: backend sources and headers in a deep tree, median ~4.5 KB."""
    files = {}
    for d in range(DIRS // 4):
        backend = BACKENDS[d % len(BACKENDS)]
        for f in range(FILES_PER_DIR + 70):
            files[f"ggml/src/ggml-{backend}/part{d}/sub{f % 5}/f{f}.cpp"] = _file(d, f, rng.randint(60, 180))
    return files


def build(root: Path, commits: int = 400, changed_lines: int = 60_000, seed: int = 7):
    """Returns (upstream path, {patch path: bytes}) with tags v1 (old) and v2 (new)."""
    rng = random.Random(seed)
    up = RepoBuilder(root / "upstream.git")
    files = {f"src/d{d}/f{f}.c": _file(d, f) for d in range(DIRS) for f in range(FILES_PER_DIR)}
    targets = {f"src/target{t}.cpp": _cpp(f"target{t}", TARGET_LINES) for t in range(3)}
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
    stale = [(f"src/target{t}.cpp", insert_at[f"src/target{t}.cpp"][k]) for t in range(3) for k in (1, 4)][
        :STALE
    ]
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
            for path, point in stale:  # upstream rewrites a context line two above the insertion point
                targets[path][point - 2] = f"    upstream_rewrote_{point}();\n"
            for lines in targets.values():  # and shift everything down
                lines[1:1] = [f"    moved_{k}();\n" for k in range(15)]
            changes.update({p: "".join(v) for p, v in targets.items()})
        up.commit(f"commit {c} (#{10000 + c})", changes)
    up.tag("v2")
    return up, patches


def _review_files() -> dict[str, str]:
    """Upstream files the review parses, at a realistic size."""
    options = "".join(f'option(GGML_OPT_{i} "ggml: option {i}" OFF)\n' for i in range(60))
    flags = "".join(
        f'    add_opt(common_arg({{"-f{i}", "--flag-{i}"}}, "N", "help for flag {i}"));\n' for i in range(150)
    )
    decls = "".join(
        f"GGML_API int ggml_backend_fn_{i}(ggml_backend_t backend, int arg);\n" for i in range(80)
    )
    archs = "".join(f"    LLM_ARCH_M{i},\n" for i in range(100))
    names = "".join(f'    {{ LLM_ARCH_M{i}, "m{i}" }},\n' for i in range(100))
    logs = "".join(f'    LOG_INF("%s: stage {i} took %d ms\\n", __func__, t);\n' for i in range(50))
    return {
        "ggml/src/CMakeLists.txt": "project(ggml)\n" + options,
        "common/arg.cpp": "void init() {\n" + flags + "}\n",
        "ggml/include/ggml-backend.h": "#pragma once\n" + decls,
        "src/llama-arch.h": "enum llm_arch {\n" + archs + "};\n",
        "src/llama-arch.cpp": "static names = {\n" + names + "};\n",
        "tools/server/server.cpp": "void run() {\n" + logs + '    res.write("data: [DONE]\\n\\n");\n}\n',
    }


def build_review(
    root: Path, commits: int = 150, changed_lines: int = 65_000, files_changed: int = 400, seed: int = 11
):
    """An upstream shaped like llama.cpp whose diff between v1 and v2 spans ~400 files and ~65,000 changed
    lines, a third of them in the large backend files, with CMake files changing along the way."""
    rng = random.Random(seed)
    up = RepoBuilder(root / "review-upstream.git")
    files = _ggml_tree(rng)
    large = {p: _cpp(p.rsplit("/", 1)[-1].split(".")[0].replace("-", "_"), n) for p, n in LARGE.items()}
    vendored = {p: "".join(_cpp("vendored", n)) for p, n in VENDORED.items()}
    cmake = {p: text.splitlines(keepends=True) for p, text in _cmake_tree().items()}
    special = {p: text.splitlines(keepends=True) for p, text in _review_files().items()}
    gguf = {
        f"models/ggml-vocab-{i}.gguf": b"GGUF" + rng.randbytes(rng.randint(1 << 20, 2 << 20))
        for i in range(GGUF)
    }
    up.commit(
        "import",
        {
            **{p: "".join(v) for p, v in {**files, **large, **cmake, **special}.items()},
            **vendored,
            **gguf,
        },
    )
    up.tag("v1")
    pool = rng.sample(sorted(files), files_changed - len(special) - len(large) - 20)
    cmake_pool = sorted(cmake)[:20]
    per_commit = changed_lines * 2 // 3 // commits
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
        if c % 5 == 2:  # the large backend files take a third of the changed lines, in every fifth commit
            for path in rng.sample(sorted(large), 2):
                at = rng.randrange(len(large[path]) + 1)
                n = changed_lines // 3 // (commits // 5) // 2
                at -= at % 7  # between two functions
                large[path][at:at] = _cpp(f"added_{c}", n, first=(c + 1) * 100_000)
                changes[path] = "".join(large[path])
        if c == commits // 3:
            vocab = random.Random(seed + 1).randbytes(
                len(gguf["models/ggml-vocab-0.gguf"])
            )  # rng's draws stay
            changes["models/ggml-vocab-0.gguf"] = b"GGUF" + vocab
        if c % 15 == 4:  # a CMake file changes: an option, a source, a package
            path = cmake_pool[c % len(cmake_pool)]
            cmake[path].append(f'option(GGML_NEW_{c} "ggml: new option {c}" ON)\n')
            changes[path] = "".join(cmake[path])
        if c % 20 == 7:  # the files the detectors read change every now and then
            special["ggml/src/CMakeLists.txt"].append(f'option(LLAMA_NEW_{c} "llama: new option {c}" ON)\n')
            special["common/arg.cpp"][c % 100 + 1] = special["common/arg.cpp"][c % 100 + 1].replace(
                "help", "new help"
            )
            special["ggml/include/ggml-backend.h"][c % 60 + 1] = (
                f"GGML_API int ggml_backend_fn_{c % 60}(ggml_backend_t b);\n"
            )
            special["src/llama-arch.h"].insert(-1, f"    LLM_ARCH_NEW{c},\n")
            special["tools/server/server.cpp"][c % 40 + 1] = (
                '    LOG_INF("%s: stage took %.2f s\\n", __func__, t);\n'
            )
            changes.update({p: "".join(v) for p, v in special.items()})
        up.commit(f"review commit {c} (#{20000 + c})", changes)
    up.tag("v2")
    return up


def ollama_consumers(patches: dict[str, bytes]) -> dict[str, bytes]:
    """An Ollama tree's consumer files: flags it passes, GGML calls, CMake settings, log parsing."""
    go_flags = ", ".join(f'"--flag-{i}"' for i in range(0, 150, 3))
    calls = "".join(f"\tC.ggml_backend_fn_{i}(b, 1)\n" for i in range(0, 80, 2))
    return {
        "llm/server.go": SERVER_GO_STARTING.replace("FLAGS", go_flags).encode(),
        "discover/gpu.go": f"package discover\n\nfunc probe() {{\n{calls}}}\n".encode(),
        "llm/status.go": b"package llm\n\nvar re = regexp.MustCompile(`stage (\\d+) took (\\d+) ms`)\n",
        "llama/server/CMakeLists.txt": (
            "".join(f"set(GGML_OPT_{i} ON)\n" for i in range(0, 60, 4))
            + "install(TARGETS llama-server RUNTIME DESTINATION lib/ollama)\n"
        ).encode(),
        **patches,
    }
