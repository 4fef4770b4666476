"""Hostile pull requests as real repositories, and `python -m bot check` run on them in a bounded child.

Inputs that a few kilobytes or megabytes of a pull request inflate inside the engine: a binary patch of
compressed zeros, a patch file over the cap, a CMake file whose variable doubles line after line, and a
patch of hunks that match nowhere in a long file another patch created. The tests (tests/test_hostile_inputs.py) and the
measurement (`python -m tests.hostile`) build them the same way.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from tests.fixtures import RepoBuilder

PATCH_DIR = "llama/compat"
_CHECKOUT = Path(__file__).resolve().parent.parent
_B85_LINE = 52  # the bytes git encodes on one line of a binary patch


@dataclass(frozen=True)
class Case:
    ollama: Path
    upstream: Path


def _upstream(root: Path, files: dict[str, bytes]) -> Path:
    """An upstream with tags b1 and b2 on the same files."""
    up = RepoBuilder(root / "upstream.git")
    up.commit("base", files)
    up.tag("b1")
    up.commit("bump", {"VERSION": b"2\n"})
    up.tag("b2")
    return up.path


def _ollama(root: Path, changes: dict[str, bytes]) -> Path:
    """An Ollama checkout pinned at b1 whose head commit moves the pin to b2 with `changes`."""
    repo = RepoBuilder(root / "ollama", bare=False)
    repo.commit("pin", {"LLAMA_CPP_VERSION": b"b1\n"})
    repo.commit("bump", {"LLAMA_CPP_VERSION": b"b2\n", **changes})
    return repo.path


def _zeros_deflated(size: int) -> bytes:
    """`size` zero bytes through zlib, compressed a chunk at a time."""
    chunk = bytes(1 << 20)
    deflate = zlib.compressobj(9)
    out = bytearray()
    for start in range(0, size, len(chunk)):
        out += deflate.compress(chunk[: min(len(chunk), size - start)])
    return bytes(out + deflate.flush())


def base85_lines(data: bytes) -> bytes:
    """git's binary patch lines: a length letter, then the base85 of up to 52 bytes."""
    out = bytearray()
    for start in range(0, len(data), _B85_LINE):
        piece = data[start : start + _B85_LINE]
        letter = 64 + len(piece) if len(piece) <= 26 else 70 + len(piece)
        out += bytes([letter]) + base64.b85encode(piece, pad=True) + b"\n"
    return bytes(out)


def binary_bomb(path: str, size: int, declared: int | None = None) -> bytes:
    """A patch creating `path` as `size` zero bytes (a `GIT binary patch`), its `literal` declaring
    `declared` bytes (the true size unless given)."""
    blob = hashlib.sha1(b"blob %d\0" % size)
    for start in range(0, size, 1 << 20):
        blob.update(bytes(min(1 << 20, size - start)))
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex {'0' * 40}..{blob.hexdigest()}\n"
        "GIT binary patch\n"
        f"literal {size if declared is None else declared}\n".encode()
        + base85_lines(_zeros_deflated(size))
        + b"\nliteral 0\nHcmV?d00001\n\n"
    )


def binary_case(root: Path, size: int, small_claim: bool = True) -> Case:
    """A bomb of `size` zero bytes declaring its size and, with `small_claim`, one declaring 100 bytes."""
    patches = {f"{PATCH_DIR}/0001-zeros.patch": binary_bomb("zeros.bin", size)}
    if small_claim:
        patches[f"{PATCH_DIR}/0002-small-claim.patch"] = binary_bomb("claim.bin", size, declared=100)
    return Case(_ollama(root, patches), _upstream(root, {"README.md": b"upstream\n"}))


def doubling_cmake(lines: int) -> bytes:
    """A CMakeLists.txt whose variable A doubles `lines` times from ten characters."""
    return b'set(A "0123456789")\n' + b'set(A "${A}${A}")\n' * lines


def oversized_case(root: Path, size: int) -> Case:
    """One patch of about `size` bytes, creating a file of repeated lines."""
    line = b"0123456789abcdef\n"
    patch = creating_patch("big.txt", line * (size // (len(line) + 1)))
    return Case(
        _ollama(root, {f"{PATCH_DIR}/0001-big.patch": patch}), _upstream(root, {"README.md": b"upstream\n"})
    )


def cmake_case(root: Path, lines: int) -> Case:
    patch = (
        b"diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        b"@@ -1 +1,2 @@\n upstream\n+carried\n"
    )
    changes = {"CMakeLists.txt": doubling_cmake(lines), f"{PATCH_DIR}/0001-readme.patch": patch}
    return Case(_ollama(root, changes), _upstream(root, {"README.md": b"upstream\n"}))


def long_file(lines: int) -> bytes:
    return b"".join(b"int line_%d = %d;\n" % (i, i) for i in range(lines))


def creating_patch(path: str, data: bytes) -> bytes:
    body = data.splitlines(keepends=True)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(body)} @@\n".encode()
        + b"".join(b"+" + line for line in body)
    )


def stray_hunks(path: str, hunks: int, lines: int) -> bytes:
    """A patch of `hunks` hunks spread over a `lines`-line file whose context matches nowhere in it."""
    out = [
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n".encode()
    ]
    step = max(7, lines // hunks)
    for n in range(hunks):
        at = 1 + n * step
        out.append(b"@@ -%d,6 +%d,7 @@ void f%d()\n" % (at, at + n, n))
        out += [b" nowhere_%d_%d();\n" % (n, k) for k in range(3)]
        out.append(b"+added_%d();\n" % n)
        out += [b" nowhere_%d_%d();\n" % (n, k) for k in range(3, 6)]
    return b"".join(out)


def hunks_case(root: Path, lines: int, hunks: int) -> Case:
    """Patch 1 creates a `lines`-line file, patch 2 edits it with `hunks` hunks that match nowhere."""
    patches = {
        f"{PATCH_DIR}/0001-create.patch": creating_patch("long.c", long_file(lines)),
        f"{PATCH_DIR}/0002-stray.patch": stray_hunks("long.c", hunks, lines),
    }
    return Case(_ollama(root, patches), _upstream(root, {"README.md": b"upstream\n"}))


# A small process that holds the bot to the limits and measures it: the bot's peak RSS is its own, not the
# test process's (a child's ru_maxrss counts what it held before its exec, and a fork holds the parent).
_MEASURE = """
import os, resource, subprocess, sys
space, cpu, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
resource.setrlimit(resource.RLIMIT_AS, (space, space))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
child = subprocess.Popen([sys.executable, *sys.argv[4:]])
_, status, usage = os.wait4(child.pid, 0)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


@dataclass(frozen=True)
class Run:
    returncode: int  # negative: the signal that stopped it (SIGXCPU past the CPU seconds)
    stdout: str
    stderr: str
    peak_rss: int  # bytes
    seconds: float


def check_bounded(case: Case, address_space: int, cpu_seconds: int, source: Path | None = None) -> Run:
    """`python -m bot check --format json` on the case in a process held to an address space and CPU
    seconds (the kernel stops it past either), with its peak RSS and wall time; the bot of the checkout at
    `source` when given."""
    env = {**os.environ, "PYTHONPATH": str(source or _CHECKOUT)}
    bot = ["-m", "bot", "check", "--repo", str(case.ollama), "--base", "HEAD~1"]
    bot += ["--upstream-dir", f"llama.cpp={case.upstream}", "--format", "json"]
    with tempfile.TemporaryDirectory() as tmp:
        report, out, err = (Path(tmp) / name for name in ("report", "stdout", "stderr"))
        limits = [str(address_space), str(cpu_seconds), str(report)]
        started = time.monotonic()
        with out.open("wb") as stdout, err.open("wb") as stderr:
            subprocess.run(
                [sys.executable, "-c", _MEASURE, *limits, *bot],
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=case.ollama.parent,
                check=True,
            )
        seconds = time.monotonic() - started
        returncode, peak = map(int, report.read_text().split())
        text = [path.read_bytes().decode(errors="replace") for path in (out, err)]
        return Run(returncode, *text, peak * 1024, seconds)


MEASURED_SPACE = 12 << 30  # what a measured run may take: an old checkout's CMake doubling takes gigabytes


def _measure(name: str, case: Case, source: Path | None) -> None:
    run = check_bounded(case, MEASURED_SPACE, 3600, source)
    print(f"{name}: exit {run.returncode}, peak RSS {run.peak_rss / 2**20:.0f} MiB, {run.seconds:.1f} s")


def main() -> None:
    """The attacks at full size, each measured once with the bot of the checkout argv[1] names (else this
    one), so that an older checkout is measured the same way."""
    source = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bomb = binary_case(root / "binary", 1 << 30, small_claim=False)
        _measure("binary patch of 1 GiB zeros (1.3 MiB)", bomb, source)
        _measure("a 30 MiB patch", oversized_case(root / "oversized", 30 << 20), source)
        _measure("CMake doubling, 28 lines", cmake_case(root / "cmake", 28), source)
        _measure("40,000-line file, 400 stray hunks", hunks_case(root / "hunks", 40_000, 400), source)


if __name__ == "__main__":
    main()
