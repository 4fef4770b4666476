"""The libraries upstream's build makes and links, as Ollama's settings make the build: each `add_library()`
with its kind, each `target_link_libraries()` between targets, names given through a file's own literal
`set()` (`set(TARGET cpp-httplib)` then `add_library(${TARGET} STATIC ...)`) read as CMake reads them.

A program or library Ollama ships loads every shared library it links, directly or through the static ones
it takes in: such a library missing from Ollama's install leaves the shipped program unable to start."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cmakelang
from bot.review.consumers.shared import OptionSetting, truth_of
from bot.review.consumers.upstream_build import BuildWalk, Link, backend_cmake, refs_walk_key, walked

_KINDS = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE"})
EXECUTABLE = "EXECUTABLE"
MAX_VALUE = 256  # characters of a variable a file sets that name resolution keeps

LIBRARIES = facts.Extractor("library-graph", 1, __name__)


@dataclass(frozen=True)
class Target:
    """One `add_library()` or `add_executable()` Ollama's build may run."""

    name: str
    kind: str  # STATIC, SHARED, ... EXECUTABLE; "" when BUILD_SHARED_LIBS decides
    path: str
    line: int

    def shared(self, shared_by_default: bool) -> bool:
        """Whether the target is a shared library another one loads at run time (a MODULE is not linked)."""
        return self.kind == "SHARED" or (self.kind == "" and shared_by_default)


@dataclass(frozen=True)
class LibraryGraph:
    targets: dict[str, tuple[Target, ...]]  # every declaration of a name Ollama's build may reach
    links: dict[str, tuple[Link, ...]]  # what each target links by name
    aliases: dict[str, str]

    def loaded(self, roots: frozenset[str], shared_by_default: bool) -> dict[str, tuple[str, Link]]:
        """Each shared library the roots load, reached through the targets they link (a static one's links
        become its user's), with the root that loads it and the last link on the way."""
        seen = set(roots)
        queue = [(r, r) for r in sorted(roots & set(self.targets))]
        found: dict[str, tuple[str, Link]] = {}
        while queue:
            at, root = queue.pop(0)
            for link in self.links.get(at, ()):
                library = self.aliases.get(link.library, link.library)
                if library in seen or library not in self.targets:
                    continue
                seen.add(library)
                queue.append((library, root))
                if any(t.shared(shared_by_default) for t in self.targets[library]):
                    found[library] = (root, link)
        return found


def library_graph(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> LibraryGraph:
    """The targets and links of the CMake files upstream's build reaches where Ollama's option values may take
    it (upstream's defaults for what Ollama leaves unset)."""
    key = refs_walk_key(upstream, paths, options)
    return facts.remembered(LIBRARIES, key, lambda: _library_graph(upstream, paths, options))


def _library_graph(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> LibraryGraph:
    walk = walked(_LibraryWalk, upstream, paths, options, [p for p in paths if backend_cmake(p)])
    return LibraryGraph(
        {k: tuple(v) for k, v in walk.targets.items()},
        {k: tuple(v) for k, v in walk.links.items()},
        walk.aliases,
    )


def shared_by_default(options: Mapping[str, tuple[OptionSetting, ...]]) -> bool:
    """Whether some build of Ollama's sets BUILD_SHARED_LIBS on: a library declared without a kind is shared
    there."""
    return any(truth_of(s.value) for s in options.get("BUILD_SHARED_LIBS", ()))


@dataclass
class _LibraryWalk(BuildWalk):
    """The walk of `BuildWalk` that records the targets and links no option value of Ollama's keeps out, with
    the variables each file sets literally."""

    path: str = ""
    variables: dict[str, dict[str, str]] = field(default_factory=dict)  # per file
    targets: dict[str, list[Target]] = field(default_factory=dict)
    links: dict[str, list[Link]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        name = cmakelang.name(node)
        if guard is not None or name not in ("set", "add_library", "add_executable", "target_link_libraries"):
            return
        env = self.variables.setdefault(self.path, {})
        args = [a for a in cmakelang.arguments(node, env) if a]
        if name == "set":
            _remember(env, args)
        elif args and "$" not in args[0]:
            self.declared(name, args, cmakelang.line(node))

    def declared(self, command: str, args: list[str], line: int) -> None:
        target, *rest = args
        if command == "target_link_libraries":
            items = [i for i in rest if i not in cmakelang.LINK_KEYWORDS and "$" not in i]
            self.links.setdefault(target, []).extend(Link(target, i, self.path, line) for i in items)
        elif rest[:1] == ["ALIAS"] and len(rest) > 1:
            self.aliases[target] = rest[1]
        elif "IMPORTED" not in rest[:2]:
            self.targets.setdefault(target, []).append(Target(target, _kind(command, rest), self.path, line))


def _kind(command: str, rest: list[str]) -> str:
    if command == "add_executable":
        return EXECUTABLE
    return rest[0] if rest[:1] and rest[0] in _KINDS else ""


def _remember(env: dict[str, str], args: list[str]) -> None:
    """A plain `set(NAME value...)` of a file (not a cache entry, not too long, no variable left in it)."""
    if len(args) < 2 or "CACHE" in args or "PARENT_SCOPE" in args:
        return
    value = ";".join(args[1:])
    if "$" in value or len(value) > MAX_VALUE:
        env.pop(args[0], None)
    else:
        env[args[0]] = value
