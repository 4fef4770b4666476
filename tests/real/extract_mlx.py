"""Extract Ollama's real MLX bumps into small fixtures under tests/data/mlx-real/.

Runs only where the mirrors are: LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_MLX and LLAMA_BOT_REAL_MLX_C name git
directories of ollama/ollama, ml-explore/mlx and ml-explore/mlx-c. For each case it keeps:

    <case>/case.toml        provenance: the Ollama commits, the MLX refs, the mlx-c pin
    <case>/mlx/old/, new/   the MLX headers and CMake files the bump changed, at each ref, gzip-compressed
    <case>/mlx-c/           mlx-c at its pin: the files that spell a name those headers declare (the only
                            files the cross-pin check parses) and the files the carried patches touch
    <case>/ollama/base/     Ollama's files the check reads at the base: the version files, the CMake files
                            that fetch, patch, configure and install MLX and mlx-c, the presets, the
                            Dockerfile, the carried patches, the Go files that generate or compile the
                            bindings of the vendored mlx-c headers, and the vendored copies of the kept
                            mlx-c headers
    <case>/ollama/head/     those the bump commit changed (`head_deletes` in case.toml: those it deleted)

    python -m tests.real.extract_mlx     # (re)write tests/data/mlx-real/
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bot.review.api import api_changes

OUT = Path(__file__).resolve().parent.parent / "data" / "mlx-real"
OLLAMA_URL = "https://github.com/ollama/ollama"
# Ollama commit of each case and the MLX files kept: one MLX bump whose MLX broke the pinned mlx-c (the
# maintainers carried a regenerated mlx-c patch and updated the vendored headers and the Go bindings), one
# that broke nothing, one whose libmlx links a new shared library (libjaccl) the payload had to carry, one
# that gated the NAX kernels and libjaccl on a deployment target a Metal preset was below and made the CUDA
# JIT need headers installed beside the library. The last two keep MLX's CMake files only.
HEADERS_AND_CMAKE = ("*.h", "*CMakeLists.txt", "*.cmake")
CMAKE_ONLY = ("*CMakeLists.txt", "*.cmake")
CMAKE_FILES = ("*CMakeLists.txt", "*.cmake")  # kept whole at both refs when a case keeps only CMake files:
# the build is read from the top-level file down, through the files the bump left alone
CASES = {
    "mlx-breaks-mlx-c": ("0bb09259203ff8f6d361faae1d40c4f83d2a99f7", HEADERS_AND_CMAKE),
    "mlx-quiet": ("e92b7855f", HEADERS_AND_CMAKE),
    "mlx-new-library": ("534342e7e2ecb809546a4433d7cbc752fa916341", CMAKE_ONLY),
    "mlx-deployment-target": ("570679c9e0d7af7d3314e81de61c95450d8d04b9", CMAKE_ONLY),
}
OLLAMA_FILES = (
    "MLX_VERSION",
    "MLX_C_VERSION",
    "CMakeLists.txt",
    "CMakePresets.json",
    "Dockerfile",
    ".dockerignore",
    "cmake/local.cmake",
    "cmake/vendor-mlx-c-headers.cmake",
    "cmake/mlx/CMakeLists.txt",
    "cmake/mlx/CMakePresets.json",
    "x/mlxrunner/mlx/CMakeLists.txt",
    "x/imagegen/mlx/CMakeLists.txt",
)
BINDINGS_MARK = (
    b"include/mlx/c"  # a Go file that generates or compiles the bindings names the vendored copies
)
VENDORED = "x/mlxrunner/mlx/include/mlx/c"
WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def show(repo: str, ref: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "-C", repo, "show", f"{ref}:{path}"], check=False, capture_output=True)
    return done.stdout if done.returncode == 0 else None


def write(root: Path, path: str, data: bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def ollama_files(ollama: str, commit: str) -> dict[str, bytes]:
    listed = git(ollama, "ls-tree", "-r", "--name-only", commit).decode().split()
    paths = [p for p in listed if p in OLLAMA_FILES or p.startswith("mlx/compat/")]
    found = {p: data for p in paths if (data := show(ollama, commit, p)) is not None}
    for path in listed:
        if (
            path.startswith("x/")
            and path.endswith(".go")
            and BINDINGS_MARK in (data := show(ollama, commit, path) or b"")
        ):
            found[path] = data
    # a package's smallest C header: what makes its directory a cgo package
    for directory in sorted({p.rsplit("/", 1)[0] for p in found if p.endswith(".go")}):
        headers = [p for p in listed if p.rsplit("/", 1)[0] == directory and p.endswith(".h")]
        sized = sorted((len(show(ollama, commit, h) or b""), h) for h in headers)
        if sized:
            found[sized[0][1]] = show(ollama, commit, sized[0][1]) or b""
    return found


def patched_paths(patches: list[bytes]) -> set[str]:
    return {m.decode() for p in patches for m in re.findall(rb"^\+\+\+ b/(\S+)", p, re.MULTILINE)}


def extract(case: str, commit: str, kept: tuple[str, ...], ollama: str, mlx: str, mlx_c: str) -> None:
    out = OUT / case
    shutil.rmtree(out, ignore_errors=True)
    parent = git(ollama, "rev-parse", f"{commit}^").decode().strip()
    commit = git(ollama, "rev-parse", commit).decode().strip()
    old = show(ollama, parent, "MLX_VERSION").decode().strip()
    new = show(ollama, commit, "MLX_VERSION").decode().strip()
    pin = show(ollama, commit, "MLX_C_VERSION").decode().strip()
    changed = git(mlx, "diff", "--name-only", old, new, "--", *kept).decode().split()
    if kept == CMAKE_ONLY:
        for ref in (old, new):
            listed = git(mlx, "ls-tree", "-r", "--name-only", ref).decode().split()
            changed += [p for p in listed if p.endswith(("CMakeLists.txt", ".cmake")) and p not in changed]
    headers: dict[str, dict[str, bytes]] = {"old": {}, "new": {}}
    for side, ref in (("old", old), ("new", new)):
        for path in changed:
            data = show(mlx, ref, path)
            if data is not None:
                write(out / "mlx" / side, path + ".gz", gzip.compress(data, mtime=0))
                if path.endswith(".h"):
                    headers[side][path] = data
    names = {c.before[0].name.encode() for c in api_changes(headers["old"], headers["new"])}
    base, head = ollama_files(ollama, parent), ollama_files(ollama, commit)
    patches = [data for p, data in head.items() if p.startswith("mlx/compat/")]
    touched = patched_paths(patches)
    kept = set()
    for path in git(mlx_c, "ls-tree", "-r", "--name-only", pin, "mlx/c").decode().split():
        data = show(mlx_c, pin, path) or b""
        if path in touched or names & set(WORD.findall(data)):
            write(out / "mlx-c", path, data)
            kept.add(path)
    vendored = {p.rsplit("/", 1)[1] for p in kept if p.startswith("mlx/c/") and p.endswith(".h")}
    vendored.add("mlx.h")  # the umbrella header: the copies' directory is there even when no header is kept
    for files, at in ((base, parent), (head, commit)):
        for name in sorted(vendored):
            data = show(ollama, at, f"{VENDORED}/{name}")
            if data is not None:
                files[f"{VENDORED}/{name}"] = data
    for path, data in base.items():
        write(out / "ollama" / "base", path, data)
    for path, data in head.items():
        if base.get(path) != data:
            write(out / "ollama" / "head", path, data)
    deleted = sorted(set(base) - set(head))
    (out / "case.toml").write_text(
        f"# Extracted by tests/real/extract_mlx.py from {OLLAMA_URL}/commit/{commit}\n"
        f"# (its parent {parent[:12]} is the base), https://github.com/ml-explore/mlx and\n"
        "# https://github.com/ml-explore/mlx-c; MIT licensed, see tests/data/mlx-real/NOTICE.\n"
        f'ollama_commit = "{commit}"\nollama_base = "{parent}"\n'
        f'mlx_old = "{old}"\nmlx_new = "{new}"\nmlx_c = "{pin}"\n'
        f"head_deletes = {deleted!r}\n".replace("'", '"')
    )
    print(f"{case}: {len(changed)} MLX files, {len(kept)} mlx-c files", file=sys.stderr)


def main() -> int:
    mirrors = [
        os.environ.get(v) for v in ("LLAMA_BOT_REAL_OLLAMA", "LLAMA_BOT_REAL_MLX", "LLAMA_BOT_REAL_MLX_C")
    ]
    if not all(mirrors):
        print(
            "set LLAMA_BOT_REAL_OLLAMA, LLAMA_BOT_REAL_MLX and LLAMA_BOT_REAL_MLX_C to the fetched mirrors",
            file=sys.stderr,
        )
        return 2
    ollama, mlx, mlx_c = mirrors
    for case, (commit, kept) in CASES.items():
        extract(case, commit, kept, ollama, mlx, mlx_c)
    notice = [
        (
            "Where these files come from\n===========================\n\n"
            "Each directory is one real MLX bump of Ollama, extracted by tests/real/extract_mlx.py (commit ids in\n"
            "<case>/case.toml): <case>/mlx/ from https://github.com/ml-explore/mlx, <case>/mlx-c/ from\n"
            "https://github.com/ml-explore/mlx-c, <case>/ollama/ from https://github.com/ollama/ollama, each under\n"
            "its license below.\n"
        )
    ]
    for name, repo in (("MLX", mlx), ("mlx-c", mlx_c), ("Ollama", ollama)):
        text = show(repo, "HEAD", "LICENSE").decode()
        notice.append(f"\n{name}'s LICENSE\n{'-' * (len(name) + 10)}\n\n{text}")
    (OUT / "NOTICE").write_text("".join(notice))
    return 0


if __name__ == "__main__":
    sys.exit(main())
