"""Raised minimum versions in the upstream CMake files Ollama's build reads, against the versions Ollama's
build declares or installs.

- `cmake_minimum_required(VERSION ...)` raised above a CMake version Ollama declares (the
  `cmake_minimum_required` of its top-level CMake file and of the one beside each presets file, a presets
  file's `cmakeMinimumRequired`) or installs (a version its Dockerfiles, workflows and scripts pin): CMake
  that old no longer configures the build;
- a `find_package(<Pkg> <version>)` floor, or the version a `message(FATAL_ERROR)` guard demands of a
  variable no preset sets (a compiler's, an SDK's), raised in a configuration Ollama builds: high when a
  version Ollama's build files name for it is below, medium when they name none.

What Ollama provides is read from its texts, never from a list of known names: an `ARG`/`ENV`/YAML key
`<NAME>VERSION` with a number, a base image `<name>:<version>`, a download `<name>-<version>`; a CMake
name matches it by one of its words (`CUDAToolkit`: cuda, toolkit), a guard whose variable matches nothing
by a word of its message (`At least ROCM/HIP V6.4 is required`: rocm).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.build import presets
from bot.markup import code_span
from bot.model import LocalRef
from bot.repos.snapshot import Snapshot
from bot.review.changes import Draft
from bot.review.mlxbuild import Command, Comparison, Head, OllamaBuild, Upstream, comparisons, flat, skipped

MAX_PROVIDED = 200  # versions read from Ollama's build files
MAX_LINE = 4000  # characters of a line searched for a version
CMAKE = "cmake"
_ASSIGNED = re.compile(
    r"\b([A-Za-z][\w-]*?)[-_]?version[\"']?\s*[:=]\s*[\"']?v?(\d+(?:\.\d+)+)", re.IGNORECASE
)
_IMAGE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*([\w./-]+):v?(\d+(?:\.\d+)+)", re.IGNORECASE)
_DOWNLOAD = re.compile(r"/([A-Za-z][A-Za-z0-9]*)-v?(\d+(?:\.\d+)+)[-.]")
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)")
_MESSAGE_WORD = re.compile(r"[A-Za-z]{3,}")
_FLOOR_OPS = {"LESS", "LESS_EQUAL", "VERSION_LESS", "VERSION_LESS_EQUAL"}  # the guard stops below
_CEILING_OPS = {"GREATER", "GREATER_EQUAL", "VERSION_GREATER", "VERSION_GREATER_EQUAL"}  # ... when NOT


def key(version: str) -> tuple[int, ...] | None:
    """A version as numbers that compare as versions do (trailing zeros dropped); None when no number."""
    match = _VERSION.fullmatch(version.strip().strip("\"'"))
    if not match:
        return None
    numbers = [int(n) for n in match[1].split(".")[:8]]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def _below(a: str, b: str) -> bool:
    ka, kb = key(a), key(b)
    return ka is not None and kb is not None and ka < kb


# -- what Ollama's build provides ---------------------------------------------------------------------


@dataclass(frozen=True)
class Provided:
    """A version of something Ollama's build declares or installs."""

    subject: str  # what it is a version of: lowercase, no digits ("cmake", "cuda")
    version: str
    where: LocalRef
    how: str  # the words that say so


def _subject(name: str) -> str:
    return re.sub(r"[\d_\-]", "", posixpath.basename(name)).lower()


def words(name: str) -> set[str]:
    """The words of a CMake package or variable name a version of Ollama's can be named by: `CUDAToolkit`
    -> cuda, toolkit, cudatoolkit; `CMAKE_CXX_COMPILER_VERSION` -> cxx."""
    split = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]+|[a-z]+", name)]
    kept = [w for w in split if w not in ("version", "compiler")]
    if len(kept) > 1 and kept[0] == CMAKE:
        kept = kept[1:]
    return set(kept) | {"".join(kept)}


def _pinned(path: str, text: str) -> list[Provided]:
    """Versions a Dockerfile, workflow or script sets, bases an image on or downloads."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line[:MAX_LINE]
        for pattern in (_ASSIGNED, _IMAGE, _DOWNLOAD):
            for m in pattern.finditer(line):
                if _subject(m[1]):
                    found.append(Provided(_subject(m[1]), m[2], LocalRef(path, number), m[0].strip()))
    return found


def _declared_cmake(snapshot: Snapshot, texts: Mapping[str, str]) -> list[Provided]:
    """The CMake versions Ollama's top-level CMake files and presets files declare they need."""
    preset_files = presets.preset_files(snapshot)
    tops = ["CMakeLists.txt", *(posixpath.join(posixpath.dirname(p), "CMakeLists.txt") for p in preset_files)]
    found = []
    for path in dict.fromkeys(tops):
        required = _cmake_required({path: flat(texts[path])}, [path]) if path in texts else None
        if required:
            version, _, line = required
            how = f"cmake_minimum_required(VERSION {version})"
            found.append(Provided(CMAKE, version, LocalRef(path, line), how))
    for path in preset_files:
        declared = presets.cmake_minimum(snapshot, path)
        if declared:
            version, line = declared
            found.append(Provided(CMAKE, version, LocalRef(path, line), f"cmakeMinimumRequired {version}"))
    return found


def provided(snapshot: Snapshot, ollama: OllamaBuild) -> list[Provided]:
    """Every version Ollama's build files declare or pin, once per file, version and subject."""
    found = _declared_cmake(snapshot, ollama.texts)
    for path, text in sorted(ollama.texts.items()):
        if not path.endswith((".txt", ".cmake", ".json")):
            found += _pinned(path, text)
    unique = {(p.subject, p.version, p.where.path): p for p in reversed(found)}
    return list(reversed(unique.values()))[:MAX_PROVIDED]


# -- upstream's minimum CMake -------------------------------------------------------------------------


def _cmake_required(files: Mapping[str, list[Command]], read: Iterable[str]) -> tuple[str, str, int] | None:
    """The highest `cmake_minimum_required` of the files read: (version, path, line)."""
    best: tuple[str, str, int] | None = None
    for path in sorted(read):
        for c in files.get(path, []):
            if c.name != "cmake_minimum_required" or "VERSION" not in c.args[:-1]:
                continue
            version = c.args[c.args.index("VERSION") + 1].split("...")[0]
            if key(version) and (best is None or _below(best[0], version)):
                best = (version, path, c.line)
    return best


def _cmake_raised(up: Upstream) -> tuple[str, str, int, str | None] | None:
    """(new minimum, path, line, old minimum) when the files Ollama's build reads raised their minimum."""
    new = _cmake_required(up.new, up.built)
    old = _cmake_required(up.old, up.old_built)
    was = old[0] if old else None
    if new is None or (was is not None and not _below(was, new[0])):
        return None
    return (*new, was)


def cmake_drafts(up: Upstream, have: list[Provided]) -> list[Draft]:
    """A high draft when the files Ollama's build reads now need a CMake above one Ollama declares or
    installs."""
    raised = _cmake_raised(up)
    if raised is None:
        return []
    below = [p for p in have if p.subject == CMAKE and _below(p.version, raised[0])]
    return [_cmake_draft(*raised, below)] if below else []


def _cmake_draft(version: str, path: str, line: int, was: str | None, below: list[Provided]) -> Draft:
    listed = ", ".join(_named(p, was) for p in below)
    return Draft(
        "build",
        "high",
        f"Upstream now needs CMake {version} (was {was or 'none'}), above the CMake "
        f"{', '.join(dict.fromkeys(p.version for p in below))} Ollama's build declares or installs",
        f"{code_span(f'cmake_minimum_required(VERSION {version})')} ({code_span(f'{path}:{line}')}) raised upstream's minimum from "
        f"{was or 'none'}. Ollama's build names an older CMake: {listed}. Configuring the build with that CMake "
        f"fails at upstream's `cmake_minimum_required`: raise them to {version} or later.",
        path,
        line,
        local_refs=tuple(dict.fromkeys(p.where for p in below)),
    )


def _named(p: Provided, old: str | None) -> str:
    stale = f", already below the old {old}" if old and _below(p.version, old) else ""
    return f"{p.version} ({code_span(p.how)}, {code_span(f'{p.where.path}:{p.where.line}')}{stale})"


# -- raised version floors ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Floor:
    """The least version a package or variable must have where upstream asks for it."""

    name: str
    version: str  # "" for a package looked for without one
    path: str
    line: int
    heads: tuple[Head, ...]  # the conditions it is asked under
    shown: str
    stops: bool  # configuring stops below it (REQUIRED, a fatal guard); else the feature goes without
    versioned: bool = True  # a version (a package's, a VERSION_ comparison, a *VERSION* variable)
    # the words of a fatal guard's message (`At least ROCM/HIP V6.4 is required`: rocm, hip, ...): what it
    # names the demanded thing by, when Ollama's build knows it by none of the variable's words
    said: frozenset[str] = frozenset()


def _package_floor(path: str, c: Command) -> Floor | None:
    if c.name != "find_package" or not c.args:
        return None
    version = c.args[1].split("...")[0] if len(c.args) > 1 and key(c.args[1].split("...")[0]) else ""
    return Floor(c.args[0], version, path, c.line, c.heads, c.shown, "REQUIRED" in c.args)


def _is_floor(comparison: Comparison) -> bool:
    """Whether a fatal guard's comparison stops below a value: `X VERSION_LESS 3`, `NOT X GREATER_EQUAL 3`."""
    known = comparison.op in _FLOOR_OPS | _CEILING_OPS
    return known and (comparison.op in _FLOOR_OPS) != comparison.negated


def _guard_floors(path: str, c: Command, preset_set: Mapping[str, object]) -> list[Floor]:
    """The versions a `message(FATAL_ERROR)` demands of variables no preset sets."""
    if c.name != "message" or c.args[:1] != ("FATAL_ERROR",) or not c.heads:
        return []
    head = c.heads[-1]
    compared = comparisons(head)
    variables = [comparison.variable for comparison in compared]
    found = []
    for comparison in compared:
        band = variables.count(comparison.variable) > 1  # a range it refuses, not a floor
        if _is_floor(comparison) and not band and comparison.variable not in preset_set:
            versioned = comparison.op.startswith("VERSION_") or "VERSION" in comparison.variable.upper()
            shown = f"if({' '.join(head.args)}) message(FATAL_ERROR …)"
            found.append(
                Floor(
                    comparison.variable,
                    comparison.value,
                    path,
                    head.line,
                    c.heads[:-1],
                    shown,
                    True,
                    versioned,
                    _said(c),
                )
            )
    return found


def _said(message: Command) -> frozenset[str]:
    """The words of a message (lower case)."""
    return frozenset(w.lower() for w in _MESSAGE_WORD.findall(" ".join(message.args[1:])))


def floors(up: Upstream, side: str, ollama: OllamaBuild) -> dict[str, Floor]:
    """The highest floor per name in the files Ollama's build reads; at the new ref only those in a
    configuration it builds (no condition needs an option off for Ollama)."""
    files, read = (up.old, up.old_built) if side == "old" else (up.new, up.built)
    found: dict[str, Floor] = {}
    for path in sorted(read):
        for c in files.get(path, []):
            for floor in _floors_of(path, c, ollama):
                if side == "old" or not skipped(floor.heads, up.off):
                    found[floor.name] = _higher(found.get(floor.name), floor)
    return found


def _higher(held: Floor | None, floor: Floor) -> Floor:
    return floor if held is None or _below(held.version or "0", floor.version or "0") else held


def _floors_of(path: str, c: Command, ollama: OllamaBuild) -> list[Floor]:
    package = _package_floor(path, c)
    return [package] if package else _guard_floors(path, c, ollama.preset_values)


def _raised(new: Floor, old: Floor | None) -> bool:
    if not new.version or not new.versioned:
        return False
    if old is None:  # a package new upstream is the dependency rule's; a new fatal guard is a floor
        return not new.shown.startswith("find_package")
    return not old.version or _below(old.version, new.version)


def floor_drafts(up: Upstream, ollama: OllamaBuild, have: list[Provided]) -> list[Draft]:
    """A draft per raised floor in a configuration Ollama builds: high when a version Ollama's build names
    for it is below, medium when it names none, nothing when every one it names meets it."""
    before = floors(up, "old", ollama)
    drafts = []
    for name, floor in sorted(floors(up, "new", ollama).items()):
        if _raised(floor, before.get(name)):
            old = before[name].version or None if name in before else None
            drafts += _weighed_floor(floor, old, [p for p in have if p.subject != CMAKE])
    return drafts


def _weighed_floor(floor: Floor, old: str | None, have: list[Provided]) -> list[Draft]:
    matching = [p for p in have if p.subject in words(floor.name)] or [
        p for p in have if p.subject in floor.said
    ]
    below = [p for p in matching if _below(p.version, floor.version)]
    if below:
        return [_floor_draft(floor, old, below)]
    return [] if matching else [_unknown_floor_draft(floor, old)]


def _configuration(floor: Floor) -> str:
    if not floor.heads:
        return "every configuration"
    return "the configuration " + " and ".join(
        f"`if({' '.join(h.args)})` (line {h.line})" for h in floor.heads
    )


def _breaks(floor: Floor) -> str:
    return "configuring stops" if floor.stops else f"the build goes on without {floor.name}"


def _floor_draft(floor: Floor, old: str | None, below: list[Provided]) -> Draft:
    versions = ", ".join(dict.fromkeys(p.version for p in below))
    listed = ", ".join(
        f"{p.version} ({code_span(p.how)}, {code_span(f'{p.where.path}:{p.where.line}')})" for p in below
    )
    return Draft(
        "build",
        "high",
        f"Upstream now needs {floor.name} {floor.version} (was {old or 'any'}); Ollama's build provides {versions}",
        f"{code_span(floor.shown)} ({code_span(f'{floor.path}:{floor.line}')}), in {_configuration(floor)}, which Ollama builds, "
        f"raised the floor of {floor.name} from {old or 'none'} to {floor.version}. Ollama's build names an "
        f"older one: {listed}. Below the floor {_breaks(floor)}: raise them to {floor.version} or later.",
        floor.path,
        floor.line,
        local_refs=tuple(dict.fromkeys(p.where for p in below)),
    )


def _unknown_floor_draft(floor: Floor, old: str | None) -> Draft:
    return Draft(
        "build",
        "medium",
        f"Upstream now needs {floor.name} {floor.version} (was {old or 'any'}) where Ollama builds it",
        f"{code_span(floor.shown)} ({code_span(f'{floor.path}:{floor.line}')}), in {_configuration(floor)}, which Ollama builds, "
        f"raised the floor of {floor.name} from {old or 'none'} to {floor.version}. Ollama's build files name "
        f"no version of it: the environment that builds Ollama must provide {floor.name} {floor.version} or "
        f"later, or {_breaks(floor)}.",
        floor.path,
        floor.line,
    )


def version_drafts(up: Upstream, ollama: OllamaBuild, snapshot: Snapshot) -> list[Draft]:
    """Raised minimum CMake and version floors against what Ollama's build declares or installs."""
    have = provided(snapshot, ollama)
    return [*cmake_drafts(up, have), *floor_drafts(up, ollama, have)]
