"""Ollama's Dockerfiles as build stages: which repository files each stage's build context copy brings in,
and what it runs.

A stage sees only what it (or the stage it starts `FROM`) copies from the build context; a CMake file the
stage copies and runs may name files it never copied. Only the few instructions that matter here are read
(`FROM`, `COPY`, `ADD`, `RUN`), line continuations joined; `.dockerignore` takes its patterns out of every
copy. The files are hostile input: their size, their stages and their instructions are bounded.
"""

from __future__ import annotations

import json
import posixpath
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from bot.repos.snapshot import Snapshot

MAX_BYTES = 1 << 20  # a Dockerfile larger than this is not read
MAX_STAGES = 200
MAX_INSTRUCTIONS = 5000
_OPTION = re.compile(r"--[\w-]+(=\S*)?")


@dataclass
class Stage:
    """One `FROM` of a Dockerfile: its name, the stage it starts from, what it copies and runs."""

    dockerfile: str
    line: int
    name: str
    parent: str  # the image or stage it starts `FROM`
    copies: list[str] = field(default_factory=list)  # build-context sources, as written
    runs: list[str] = field(default_factory=list)  # each RUN's command text


def is_dockerfile(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile")


def dockerfiles(snapshot: Snapshot) -> list[str]:
    return sorted(p for p in snapshot.files() if is_dockerfile(p))


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each instruction: continuation lines joined, comments dropped."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#") or (not pending and not line):
            continue
        if not pending:
            start = number
        pending.append(line.removesuffix("\\"))
        if not line.endswith("\\"):
            yield start, " ".join(pending)
            pending = []


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, instruction in upper case, its arguments with their whitespace collapsed), at most
    MAX_INSTRUCTIONS of them."""
    found: list[tuple[int, str, str]] = []
    for start, line in _logical_lines(text):
        words = line.split(None, 1)
        if words:
            found.append((start, words[0].upper(), " ".join(words[1].split()) if len(words) > 1 else ""))
        if len(found) >= MAX_INSTRUCTIONS:
            break
    return found


def _sources(arguments: str) -> list[str] | None:
    """The build-context sources of a COPY/ADD (the last word is the destination); None for a copy from
    another stage or image (`--from=`)."""
    if re.search(r"(?:^|\s)--from=", arguments):
        return None
    rest = _OPTION.sub(" ", arguments).strip()
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            return []
        words = [w for w in words if isinstance(w, str)]
    else:
        words = rest.split()
    return words[:-1]


def _from(arguments: str) -> tuple[str, str]:
    """(image or stage, stage name) of a FROM; the name is "" when it has none."""
    words = _OPTION.sub(" ", arguments).split()
    if not words:
        return "", ""
    name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else ""
    return words[0], name


def stages(path: str, text: str) -> list[Stage]:
    """The Dockerfile's stages in order, each with its copies from the build context and its RUN commands."""
    found: list[Stage] = []
    for line, instruction, arguments in _instructions(text):
        if instruction == "FROM":
            if len(found) >= MAX_STAGES:
                break
            parent, name = _from(arguments)
            found.append(Stage(path, line, name or str(len(found)), parent))
        elif not found:
            continue
        elif instruction in ("COPY", "ADD"):
            sources = _sources(arguments)
            found[-1].copies += sources or []
        elif instruction == "RUN":
            found[-1].runs.append(arguments)
    return found


_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def read_stages(snapshot: Snapshot) -> list[Stage]:
    """Every stage of every Dockerfile of the tree (a file past MAX_BYTES is left out), read once per
    snapshot."""
    try:
        return _READ[snapshot]
    except (KeyError, TypeError):
        pass
    found: list[Stage] = []
    for path in dockerfiles(snapshot):
        data = snapshot.read(path) or b""
        if len(data) <= MAX_BYTES:
            found += stages(path, data.decode("utf-8", "replace"))
    try:
        _READ[snapshot] = found
    except TypeError:  # a snapshot that takes no weak reference is read again
        pass
    return found


@dataclass(frozen=True)
class Context:
    """What a build context leaves out: the `.dockerignore` patterns beside a Dockerfile's context root."""

    ignored: tuple[tuple[bool, str], ...] = ()  # (negated, pattern), in file order

    def excludes(self, path: str) -> bool:
        """Whether `.dockerignore` keeps `path` (or a directory above it) out of the context."""
        out = False
        parts = path.split("/")
        prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        for negated, pattern in self.ignored:
            if any(fnmatchcase(p, pattern) for p in prefixes):
                out = not negated
        return out


def context(snapshot: Snapshot) -> Context:
    data = snapshot.read(".dockerignore") or b""
    patterns = []
    for raw in data[:MAX_BYTES].decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            negated = line.startswith("!")
            patterns.append((negated, posixpath.normpath(line.lstrip("!").strip("/"))))
    return Context(tuple(patterns))


def _covers(source: str, path: str) -> bool:
    """Whether a COPY source (a file, a directory or a glob, relative to the context root) brings `path`."""
    source = posixpath.normpath(source.strip("/") or ".")
    if source == ".":
        return True
    if path == source or path.startswith(source + "/"):
        return True
    parts = source.split("/")
    return fnmatchcase("/".join(path.split("/")[: len(parts)]), source)


def lineage(stage: Stage, by_name: dict[str, Stage]) -> list[Stage]:
    """The stage and the stages it starts from, nearest first (a cycle ends the walk)."""
    chain: list[Stage] = []
    current: Stage | None = stage
    while current is not None and current not in chain:
        chain.append(current)
        current = by_name.get(current.parent)
    return chain


def copied(path: str, chain: list[Stage], ctx: Context) -> bool:
    """Whether the stage (with those it starts from) has `path` from the build context."""
    if ctx.excludes(path):
        return False
    return any(_covers(source, path) for s in chain for source in s.copies)


def runs(chain: list[Stage], word: str) -> bool:
    """Whether a RUN of the stage (or of those it starts from) runs the program `word`."""
    pattern = re.compile(rf"(?<![\w./-]){re.escape(word)}(?![\w-])")
    return any(pattern.search(command) for s in chain for command in s.runs)
