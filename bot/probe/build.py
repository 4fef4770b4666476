"""llama-server (and the other programs Ollama runs) built as Ollama's CMake builds it for the CPU preset, from local sources only: the Ollama
tree and the upstream tree are written out of their git objects into one directory per pin (a file whose
bytes did not change keeps its time, so the second ref and later runs rebuild only what changed), and the
FetchContent that would download the upstream is pointed at the written tree, where Ollama's CMake applies
its carried patches as it does for a source override."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2

TARGET = "llama-server"
PRESET = "cpu"
# what the probe changes in the preset: one CPU variant instead of all (the same code, built once), no tests
OVERRIDES = {"GGML_CPU_ALL_VARIANTS": "OFF", "GGML_NATIVE": "OFF", "LLAMA_BUILD_TESTS": "OFF"}
LAUNCHERS = ("ccache", "sccache")  # compiler caches, the first on PATH used
_DECLARE = re.compile(r"FetchContent_Declare\s*\(\s*(\w+)", re.IGNORECASE)


class BuildFailed(Exception):
    """The build did not produce llama-server: what failed, with the end of its output."""


@dataclass(frozen=True)
class Project:
    """Ollama's CMake project that fetches a pin's upstream: its directory and FetchContent name."""

    directory: Path
    content: str  # FetchContent name, e.g. llama_cpp


def write_tree(repo: pygit2.Repository, commit: pygit2.Commit, dest: Path) -> list[str]:
    """`commit`'s files under `dest`, only those whose bytes differ rewritten, files it lacks removed; the
    paths left out: blobs a partial clone does not have, and names that would leave `dest` or write a `.git`."""
    wanted: set[str] = set()
    missing: list[str] = []

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            name = entry.name or ""
            if name in ("", ".", "..", ".git") or "/" in name or "\\" in name:
                missing.append(f"{prefix}{name}")  # a name git itself refuses: never written
                continue
            path = f"{prefix}{name}"
            if entry.filemode == pygit2.enums.FileMode.TREE:
                _make_directory(dest / path)
                walk(repo[entry.id].peel(pygit2.Tree), f"{path}/")
            elif entry.filemode != pygit2.enums.FileMode.COMMIT:
                try:
                    data = repo[entry.id].peel(pygit2.Blob).data
                except KeyError:
                    missing.append(path)
                    continue
                wanted.add(path)
                _write(dest / path, data, entry.filemode)

    walk(commit.tree, "")
    for path in sorted(dest.rglob("*"), reverse=True):
        relative = path.relative_to(dest).as_posix()
        if path.is_file() and relative not in wanted:
            path.unlink()
    return missing


def _make_directory(path: Path) -> None:
    """`path` a real directory: a symlink or file an earlier tree left there goes first, so nothing is
    written through a link to outside the work directory."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)


def _write(path: Path, data: bytes, mode: int) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)  # a directory an earlier tree had where this one has a file
    if mode == pygit2.enums.FileMode.LINK:
        if path.is_symlink() and os.readlink(path) == data.decode():
            return
        path.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(data.decode(), path)
        return
    if not (path.is_file() and not path.is_symlink() and path.read_bytes() == data):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        path.write_bytes(data)
    path.chmod(0o755 if mode == pygit2.enums.FileMode.BLOB_EXECUTABLE else 0o644)


def find_project(ollama: Path, version_file: str) -> Project:
    """The CMake project of Ollama's tree that reads the pin's version file and fetches its upstream."""
    for lists in sorted(ollama.rglob("CMakeLists.txt")):
        text = lists.read_text(errors="replace")
        declared = _DECLARE.search(text)
        if version_file in text and declared:
            return Project(lists.parent, declared[1])
    raise BuildFailed(f"no CMakeLists.txt of Ollama's tree reads {version_file} and declares a FetchContent")


def preset_variables(project: Path, name: str = PRESET) -> dict[str, str]:
    """The cache variables of a configure preset of the project's CMakePresets.json, inherited ones first."""
    presets_file = project / "CMakePresets.json"
    if not presets_file.is_file():
        return {}
    presets = {p["name"]: p for p in json.loads(presets_file.read_text()).get("configurePresets", [])}

    def variables(preset_name: str, depth: int = 0) -> dict[str, str]:
        preset = presets.get(preset_name)
        if preset is None or depth > 10:
            return {}
        inherited: dict[str, str] = {}
        parents = preset.get("inherits", [])
        for parent in [parents] if isinstance(parents, str) else parents:
            inherited.update(variables(parent, depth + 1))
        own = {
            k: v if isinstance(v, str) else str(v.get("value", ""))
            for k, v in preset.get("cacheVariables", {}).items()
        }
        return {**inherited, **own}

    return variables(name)


def build(
    project: Project, source: Path, build_dir: Path, timeout: float, jobs: int, others: tuple[str, ...] = ()
) -> dict[str, Path]:
    """Configure and build llama-server, then each of `others` (the other programs Ollama runs); each built
    program's path. BuildFailed names the step and the output's end when llama-server does not build; another
    program that does not build is left out (its runs' comparison says so)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OLLAMA_", "LLAMA_", "GGML_"))}
    _step("configure", configure_command(project, source, build_dir), env, timeout)
    built = {TARGET: _target(build_dir, TARGET, env, timeout, jobs)}
    for program in others:
        try:
            built[program] = _target(build_dir, program, env, timeout, jobs)
        except BuildFailed:
            continue
    return built


def configure_command(project: Project, source: Path, build_dir: Path) -> list[str]:
    """CMake's configure of Ollama's project with the preset's variables, the upstream tree as the source
    override, never a download; with a compiler cache on PATH as the compilers' launcher, so that the other
    ref's objects, built before, are not compiled again when the work directory flips between the two."""
    variables = {**preset_variables(project.directory), **OVERRIDES}
    variables[f"FETCHCONTENT_SOURCE_DIR_{project.content.upper()}"] = str(source)
    variables["FETCHCONTENT_FULLY_DISCONNECTED"] = "ON"
    launcher = next((found for name in LAUNCHERS if (found := shutil.which(name))), None)
    if launcher is not None:
        variables["CMAKE_C_COMPILER_LAUNCHER"] = variables["CMAKE_CXX_COMPILER_LAUNCHER"] = launcher
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(project.directory), "-B", str(build_dir), *generator]
    return configure + [f"-D{k}={v}" for k, v in sorted(variables.items())]


def _target(build_dir: Path, target: str, env: dict[str, str], timeout: float, jobs: int) -> Path:
    _step("build", ["cmake", "--build", str(build_dir), "--target", target, "-j", str(jobs)], env, timeout)
    found = [p for p in build_dir.rglob(target) if p.is_file() and os.access(p, os.X_OK)]
    if not found:
        raise BuildFailed(f"the build ended without a {target} executable under {build_dir}")
    return found[0]


def _step(name: str, command: list[str], env: dict[str, str], timeout: float) -> None:
    try:
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, errors="replace", env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"the {name} step took longer than {timeout:.0f} s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
        raise BuildFailed(f"the {name} step failed (exit {done.returncode}):\n{tail}")
