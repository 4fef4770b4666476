"""Which patches Ollama's build applies to each pinned upstream, read from its CMake files.

The build fetches each upstream with `ExternalProject_Add` or `FetchContent_Declare`, its `GIT_TAG` read
from the pin's version file, and patches it with `PATCH_COMMAND`: `git apply` of listed files, or a
`cmake -DPATCH_DIR=<dir> -P apply-patch.cmake` walk over a directory. The files are parsed with
tree-sitter's CMake grammar and evaluated just enough to follow `set`, `file(READ)`, `string(STRIP)`,
`include` and `add_subdirectory` (both branches of every `if`, the last `set` wins); CMake never runs,
so the service can read the pull request through the REST API. A value that would grow past
cmakelang.VALUE_CHARS is left unknown, and where that happened is kept (`overlong_values`).
"""

from __future__ import annotations

import posixpath
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cmakelang
from bot.model import LocalRef
from bot.repos.snapshot import NotedSnapshot, Snapshot, gives

_VERSION = "\x00version:"  # the value of a variable read from a version file: the marker, then the file
_ROOT = "/"  # CMAKE_SOURCE_DIR of the repository's top-level project; paths below it are repository paths
_FETCH_COMMANDS = {"externalproject_add", "fetchcontent_declare"}
_FETCH_KEYWORDS = {
    "GIT_REPOSITORY",
    "GIT_TAG",
    "GIT_SHALLOW",
    "GIT_PROGRESS",
    "GIT_SUBMODULES",
    "SOURCE_DIR",
    "BINARY_DIR",
    "URL",
    "URL_HASH",
    "PATCH_COMMAND",
    "UPDATE_COMMAND",
    "CONFIGURE_COMMAND",
    "BUILD_COMMAND",
    "INSTALL_COMMAND",
    "TEST_COMMAND",
    "CMAKE_ARGS",
    "CMAKE_CACHE_ARGS",
    "DEPENDS",
    "PREFIX",
    "UPDATE_DISCONNECTED",
    "EXCLUDE_FROM_ALL",
    "DOWNLOAD_COMMAND",
    "DOWNLOAD_DIR",
    "LOG_DOWNLOAD",
    "BUILD_BYPRODUCTS",
    "SOURCE_SUBDIR",
    "OVERRIDE_FIND_PACKAGE",
    "BUILD_ALWAYS",
    "STEP_TARGETS",
    "LIST_SEPARATOR",
    "TIMEOUT",
}


@dataclass(frozen=True)
class BuildPatches:
    """The patches one fetch of an upstream applies, in the build's order, and where that was read."""

    version_file: str
    patches: tuple[str, ...]
    cmake_file: str
    line: int
    how: str  # "git apply", or "apply-patch.cmake over <dir>"

    @property
    def origin(self) -> str:
        return f"from {self.cmake_file}:{self.line}, PATCH_COMMAND {self.how}"


@dataclass(frozen=True)
class FetchSource:
    """Where the build fetches the ref a version file names from."""

    version_file: str
    repository: str
    cmake_file: str
    line: int
    command: str = ""  # externalproject_add | fetchcontent_declare
    name: str = ""  # the project name it declares


@dataclass(frozen=True)
class PatchStack:
    """A pin's patches in apply order, and how they were found (empty when none were)."""

    paths: tuple[str, ...]
    origin: str


def directory_order(snapshot: Snapshot, directory: str) -> list[str]:
    """apply-patch.cmake's order: every *.patch below the directory, sorted by file name."""
    paths = [p for p in snapshot.files(directory) if p.endswith(".patch")]
    return sorted(paths, key=lambda p: (posixpath.basename(p), p))


def glob_matches(pattern: str, path: str) -> bool:
    """A shell glob over repository paths where `*` stays within one directory."""
    parts, names = pattern.strip("/").split("/"), path.split("/")
    return len(parts) == len(names) and all(fnmatchcase(n, p) for n, p in zip(names, parts))


def is_glob(entry: str) -> bool:
    """Whether a configured patches entry is a glob (else it names a directory)."""
    return any(c in entry for c in "*?[")


def _glob_order(snapshot: Snapshot, pattern: str) -> list[str]:
    """The files a glob matches, by file name: the order a configured glob puts its patches in."""
    matched = [p for p in snapshot.files(pattern.split("*")[0].rsplit("/", 1)[0]) if glob_matches(pattern, p)]
    return sorted(matched, key=lambda p: (posixpath.basename(p), p))


def configured_order(snapshot: Snapshot, entries: Iterable[str]) -> list[str]:
    """The patches the configuration names: each directory walked, each glob's matches by file name."""
    found: list[str] = []
    for entry in entries:
        paths = _glob_order(snapshot, entry) if is_glob(entry) else directory_order(snapshot, entry)
        found += [p for p in paths if p not in found]
    return found


def patch_stack(snapshot: Snapshot, version_file: str, configured: Iterable[str]) -> PatchStack:
    """The build's patches for the upstream pinned by `version_file` when the CMake files apply any; else the
    configured directories and globs."""
    for fetch in build_patches(snapshot):
        if fetch.version_file == version_file and fetch.patches:
            return PatchStack(fetch.patches, fetch.origin)
    entries = list(configured)
    paths = configured_order(snapshot, entries)
    return PatchStack(tuple(paths), f"from the configured {', '.join(entries)}" if paths else "")


def patches_for(snapshot: Snapshot, version_file: str) -> list[str]:
    """Every patch the build applies to the upstream pinned by `version_file`."""
    return [
        p for fetch in build_patches(snapshot) if fetch.version_file == version_file for p in fetch.patches
    ]


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def build_patches(snapshot: Snapshot) -> list[BuildPatches]:
    """Every fetch in the repository's CMake files whose GIT_TAG comes from a version file and that patches."""
    return _interpreted(snapshot).found


def overlong_values(snapshot: Snapshot) -> list[LocalRef]:
    """The commands of the repository's CMake files whose variables' values would pass
    cmakelang.VALUE_CHARS: their values were left unknown."""
    return list(_interpreted(snapshot).overlong)


def fetch_sources(snapshot: Snapshot, version_file: str) -> list[FetchSource]:
    """The repositories the build fetches the ref of `version_file` from (GIT_REPOSITORY of its fetches)."""
    return [s for s in _interpreted(snapshot).sources if s.version_file == version_file]


@dataclass(frozen=True)
class BuildReading:
    """What the interpretation of a repository's CMake files found."""

    found: list[BuildPatches]
    sources: list[FetchSource]
    overlong: list[LocalRef]


# The reading depends on the snapshot's answers alone (its listing, the files read): kept with them, a
# re-check reads the CMake files again but interprets none. A pull request's base and head often differ only
# in a file the build reads (a version file), so a few readings are kept per listing.
READING = facts.Extractor("build-patches", 1, __name__)
KEPT_READINGS = 4


def _interpreted(snapshot: Snapshot) -> BuildReading:
    try:
        return _CACHE[snapshot]
    except (KeyError, TypeError):
        pass
    reading = _remembered(snapshot)
    try:
        _CACHE[snapshot] = reading
    except TypeError:
        pass
    return reading


def _remembered(snapshot: Snapshot) -> BuildReading:
    """The reading of a snapshot that answers as one read before, from the facts store; else read now."""
    key = (facts.text_id("\n".join(snapshot.files())),)
    kept: list[tuple[dict, BuildReading]] = []

    def pick(readings: list[tuple[dict, BuildReading]]) -> BuildReading | None:
        kept[:] = readings
        return next((reading for answers, reading in readings if gives(snapshot, answers)), None)

    found, reading = facts.get(READING, key, pick)
    if found:
        return reading
    noted = NotedSnapshot(snapshot)
    interpreter = _Interpreter(noted)
    interpreter.run()
    reading = BuildReading(interpreter.found, interpreter.sources, interpreter.overlong)
    facts.put(READING, key, [(noted.answers, reading), *kept[: KEPT_READINGS - 1]])
    return reading


def is_cmake_file(path: str) -> bool:
    return posixpath.basename(path) == "CMakeLists.txt" or path.endswith(".cmake")


def _own_run_env(path: str) -> dict[str, str]:
    """The variables a CMake file run on its own starts with: a CMakeLists.txt's directory is its source
    directory, any other file runs from the repository's root."""
    source_dir = _ROOT + posixpath.dirname(path) if path.endswith("CMakeLists.txt") else _ROOT
    return {
        "CMAKE_SOURCE_DIR": source_dir,
        "CMAKE_CURRENT_SOURCE_DIR": source_dir,
        "GIT_EXECUTABLE": "git",
        "CMAKE_COMMAND": "cmake",
    }


class _Interpreter:
    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.visited: set[str] = set()
        self.found: list[BuildPatches] = []
        self.sources: list[FetchSource] = []
        self.overlong: list[LocalRef] = []  # commands whose variables' values passed cmakelang.VALUE_CHARS

    def run(self) -> list[BuildPatches]:
        """The top-level project first, then every CMake file it did not reach (a nested project like
        llama/server, a helper script), each on its own."""
        cmake_files = [p for p in self.snapshot.files() if is_cmake_file(p)]
        order = sorted(cmake_files, key=lambda p: (p != "CMakeLists.txt", p.count("/"), p))
        for path in order:
            if path not in self.visited:
                self._file(path, _own_run_env(path))
        unique: dict[tuple, BuildPatches] = {}
        for fetch in self.found:
            unique.setdefault((fetch.version_file, fetch.patches), fetch)
        self.found = list(unique.values())
        return self.found

    def _file(self, path: str, env: dict[str, str]) -> None:
        self.visited.add(path)
        data = self.snapshot.read(path)
        if data is None:
            return
        outer = env.get("CMAKE_CURRENT_LIST_DIR")
        env["CMAKE_CURRENT_LIST_DIR"] = _ROOT + posixpath.dirname(path)
        for node in cmakelang.commands(cmakelang.parse(data)):
            self._command(path, node, env)
        if outer is not None:
            env["CMAKE_CURRENT_LIST_DIR"] = outer

    def _command(self, path: str, node: Node, env: dict[str, str]) -> None:
        """One command, by its name (`_COMMANDS`): the few that set variables or lead to other files."""
        step = _COMMANDS.get(cmakelang.name(node))
        if step is None:
            return
        args, overlong = cmakelang.expanded(node, env)
        if overlong:
            self.overlong.append(LocalRef(path, cmakelang.line(node)))
        step(self, path, node, args, env)

    def _set(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        if not args:
            return
        values = []
        for arg in args[1:]:
            if arg in ("CACHE", "PARENT_SCOPE"):
                break
            values.append(arg)
        env[args[0]] = ";".join(values)

    def _file_read(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        """`file(READ <file> <var>)`: the variable holds the version file's marker, for GIT_TAG to name."""
        if len(args) < 3 or args[0] != "READ":
            return
        file = _repo_path(args[1], env)
        env[args[2]] = _VERSION + file if file and self.snapshot.read(file) is not None else ""

    def _string_strip(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        if len(args) >= 3 and args[0] == "STRIP":
            env[args[2]] = args[1].strip()

    def _include(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        if not args:
            return
        target = _repo_path(args[0], env, relative_to=env.get("CMAKE_CURRENT_LIST_DIR", _ROOT))
        if target and target not in self.visited and self.snapshot.read(target) is not None:
            self._file(target, env)

    def _add_subdirectory(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        """The subdirectory's CMakeLists.txt, with its own CMAKE_CURRENT_SOURCE_DIR and a copy of `env`."""
        if not args:
            return
        directory = _repo_path(args[0], env, relative_to=env.get("CMAKE_CURRENT_SOURCE_DIR", _ROOT))
        target = posixpath.join(directory, "CMakeLists.txt") if directory else "CMakeLists.txt"
        if directory is not None and target not in self.visited:
            self._file(target, {**env, "CMAKE_CURRENT_SOURCE_DIR": _ROOT + (directory or "")})

    def _fetch(self, path: str, node: Node, args: list[str], env: dict[str, str]) -> None:
        keywords = _keyword_values(args[1:])
        tag = "".join(keywords.get("GIT_TAG", []))
        if tag.startswith(_VERSION) and keywords.get("GIT_REPOSITORY"):
            line = _keyword_line(node, "GIT_REPOSITORY")
            self.sources.append(
                FetchSource(
                    tag[len(_VERSION) :],
                    keywords["GIT_REPOSITORY"][0],
                    path,
                    line,
                    cmakelang.name(node),
                    args[0] if args else "",
                )
            )
        if not tag.startswith(_VERSION) or "PATCH_COMMAND" not in keywords:
            return
        patches, how = _patch_command(keywords["PATCH_COMMAND"], env, self.snapshot)
        line = _keyword_line(node, "PATCH_COMMAND")
        self.found.append(BuildPatches(tag[len(_VERSION) :], tuple(patches), path, line, how))


_COMMANDS: dict[str, Callable[[_Interpreter, str, Node, list[str], dict[str, str]], None]] = {
    "set": _Interpreter._set,
    "file": _Interpreter._file_read,
    "string": _Interpreter._string_strip,
    "include": _Interpreter._include,
    "add_subdirectory": _Interpreter._add_subdirectory,
    **{name: _Interpreter._fetch for name in _FETCH_COMMANDS},
}


def _repo_path(value: str, env: dict[str, str], relative_to: str | None = None) -> str | None:
    """A path in the repository ('' for its root), or None when it lies outside or is not known."""
    if "${" in value or "$ENV{" in value:
        return None
    if not value.startswith("/"):
        if relative_to is None:
            return None
        value = posixpath.join(relative_to, value)
    if not value.startswith(_ROOT):
        return None
    path = posixpath.normpath(value).lstrip("/")
    return "" if path == "." else path


def _keyword_values(args: list[str]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    current = None
    for arg in args:
        if arg in _FETCH_KEYWORDS:
            current = arg
            values[current] = []
        elif current is not None:
            values[current].append(arg)
    return values


def _keyword_line(node: Node, keyword: str) -> int:
    for child in cmakelang.leaves(node):
        if child.text == keyword.encode():
            return child.start_point[0] + 1
    return node.start_point[0] + 1


def _segments(words: list[str]) -> list[list[str]]:
    """The commands of a PATCH_COMMAND: the words between `COMMAND` and `&&`."""
    segments: list[list[str]] = [[]]
    for word in words:
        if word in ("COMMAND", "&&"):
            segments.append([])
        else:
            segments[-1].append(word)
    return segments


_GIT = frozenset({"git", "git.exe"})  # the program names of git


def _git_apply(segment: list[str], env: dict[str, str]) -> list[str] | None:
    """The files a `git apply` command lists (None when the command is not one)."""
    if "apply" not in segment or not _GIT & {posixpath.basename(w).lower() for w in segment}:
        return None
    # an option (`-p1`, `--whitespace=nowarn`) is no absolute path: _repo_path leaves it out
    return [p for w in segment[segment.index("apply") + 1 :] if (p := _repo_path(w, env))]


def _script_walk(segment: list[str], env: dict[str, str], snapshot: Snapshot) -> tuple[list[str], str]:
    """The files a `cmake -DPATCH_DIR=<dir> -P <script>` command walks, and how (nothing without a
    directory in the repository)."""
    defines = {
        w[2:].split("=", 1)[0]: w[2:].split("=", 1)[1] for w in segment if w.startswith("-D") and "=" in w
    }
    directory = _repo_path(defines.get("PATCH_DIR", ""), env)
    if not directory:
        return [], ""
    script = posixpath.basename(segment[segment.index("-P") + 1]) if segment[-1] != "-P" else "-P"
    return directory_order(snapshot, directory), f"{script} over {directory}/"


def _patch_command(words: list[str], env: dict[str, str], snapshot: Snapshot) -> tuple[list[str], str]:
    """The patch files a PATCH_COMMAND applies, in order, and how: each `COMMAND` segment in turn."""
    patches: list[str] = []
    hows: list[str] = []
    for segment in _segments(words):
        listed = _git_apply(segment, env)
        if listed is not None:
            patches += listed
            hows += ["git apply"] if listed else []
        elif "-P" in segment:
            walked, how = _script_walk(segment, env, snapshot)
            patches += walked
            hows += [how] if how else []
    return list(dict.fromkeys(patches)), ", ".join(dict.fromkeys(hows))
