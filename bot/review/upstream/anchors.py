"""Upstream's anchor files, found by what they hold, never by a fixed path (a path given may only be a hint
tried first): the argument table of llama-server and its common code, the files registering HTTP routes, the
sources built into each program Ollama starts (from CMake's `add_executable` and the libraries it links), and
the architecture-name table. A file moves between releases; what it holds does not."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.review.cmake import commands
from bot.review.upstream.tree import UpstreamTree, is_cmake, is_source

SERVER = "llama-server"
ARG_ENTRY = re.compile(r"\b(?:common_arg|add_opt)\s*\(")
MIN_ARG_ENTRIES = 3  # fewer is a use of the table, not the table
ROUTE = re.compile(
    r"(?:\.|->)\s*(get|post|put|delete|patch|Get|Post|Put|Delete|Patch)\s*(\()\s*\"(/[^\"\n]*)\"\s*,\s*(?![\s\"])"
)
ARCH_ENTRY = re.compile(r"\{\s*LLM_ARCH_\w+\s*,\s*\"")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
INCLUDE_DEPTH = 3
_ADDING = ("target_sources", "target_link_libraries")
_VARIABLE = re.compile(r"\$\{(\w+)\}")
_TARGET_KEYWORDS = frozenset(
    [
        "STATIC",
        "SHARED",
        "MODULE",
        "OBJECT",
        "INTERFACE",
        "IMPORTED",
        "ALIAS",
        "EXCLUDE_FROM_ALL",
        "WIN32",
        "MACOSX_BUNDLE",
        "GLOBAL",
        "PUBLIC",
        "PRIVATE",
        "INTERFACE",
    ]
)


@dataclass(frozen=True)
class Anchor:
    """One anchor: the files found (empty when none) and how they were found, or why none was."""

    name: str
    paths: tuple[str, ...]
    why: str

    @property
    def found(self) -> bool:
        return bool(self.paths)


@dataclass(frozen=True)
class Target:
    """A target upstream's CMake defines: its CMake file and line, its listed sources, what it links."""

    name: str
    kind: str  # executable, library
    path: str
    line: int
    sources: tuple[str, ...]
    links: tuple[str, ...]

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)


@dataclass(frozen=True)
class Anchors:
    arg_table: Anchor
    routes: Anchor
    server: Anchor
    programs: Mapping[str, Anchor]  # program -> its sources, the libraries it links included
    own: Mapping[str, tuple[str, ...]]  # program -> the sources under its own directory
    arch_names: Anchor
    targets: Mapping[str, Target]

    def all(self) -> list[Anchor]:
        return [self.arg_table, self.routes, self.server, *self.programs.values(), self.arch_names]


def find_anchors(
    tree: UpstreamTree, programs: Iterable[str], hints: Mapping[str, str] | None = None
) -> Anchors:
    """Every anchor of the tree; `hints` (anchor name -> path) are tried first and kept when they hold it."""
    hints = hints or {}
    targets = cmake_targets(tree)
    names = sorted({SERVER, *programs})
    scopes = {p: program_sources(tree, targets, p) for p in names}
    routes = _most(tree, "routes", ROUTE, 1, hints.get("routes"), every=True)
    server = scopes[SERVER]
    if not server.found and routes.found:
        directory = posixpath.dirname(routes.paths[0])
        server = Anchor(
            "server sources",
            _under(tree, directory),
            f"{server.why}; taken as the sources under {directory}/, the route file's directory",
        )
    own = {p: _own_sources(tree, targets, p) for p in names}
    return Anchors(
        arg_table=_most(tree, "argument table", ARG_ENTRY, MIN_ARG_ENTRIES, hints.get("argument table")),
        routes=routes,
        server=Anchor("server sources", own[SERVER] or server.paths, server.why),
        programs=scopes,
        own=own,
        arch_names=_most(
            tree, "architecture names", ARCH_ENTRY, MIN_ARG_ENTRIES, hints.get("architecture names")
        ),
        targets=targets,
    )


def _most(
    tree: UpstreamTree, name: str, entry: re.Pattern, least: int, hint: str | None, every: bool = False
) -> Anchor:
    """The source holding the most entries (with `every`, each source holding any), the hint first."""
    if hint and len(entry.findall(tree.texts.get(hint, ""))) >= least:
        return Anchor(name, (hint,), f"the configured {hint} holds it")
    counts = {p: len(entry.findall(t)) for p, t in tree.texts.items() if is_source(p) and entry.search(t)}
    held = sorted((p for p, n in counts.items() if n >= least), key=lambda p: (-counts[p], p))
    if not held:
        return Anchor(name, (), f"no source at {tree.ref} holds {least} or more `{entry.pattern}`")
    chosen = tuple(held) if every else tuple(held[:1])
    return Anchor(name, chosen, f"found by content: {counts[held[0]]} entries in {held[0]}")


def cmake_targets(tree: UpstreamTree) -> dict[str, Target]:
    """Every target upstream's CMake files define with `add_executable`/`add_library`, with the sources
    `target_sources` adds and the libraries `target_link_libraries` links (each file's plain `set`s
    expanded)."""
    defined: dict[str, Target] = {}
    extra: dict[str, tuple[list[str], list[str]]] = {}
    for path in sorted(p for p in tree.texts if is_cmake(p) and not p.endswith(".json")):
        _file_targets(path, tree.texts[path], defined, extra)
    return {
        name: Target(
            t.name,
            t.kind,
            t.path,
            t.line,
            t.sources + tuple(extra.get(name, ([], []))[0]),
            t.links + tuple(extra.get(name, ([], []))[1]),
        )
        for name, t in defined.items()
    }


def _file_targets(
    path: str, text: str, defined: dict[str, Target], extra: dict[str, tuple[list[str], list[str]]]
) -> None:
    directory = posixpath.dirname(path)
    env: dict[str, str] = {}
    for c in commands(text):
        args = _expanded(c.args, env)
        if c.name == "set" and len(args) == 2:
            env[args[0]] = args[1]
        elif c.name in ("add_executable", "add_library") and args and args[0] not in defined:
            kind = "executable" if c.name == "add_executable" else "library"
            defined[args[0]] = Target(args[0], kind, path, c.line, _files(directory, args[1:]), ())
        elif c.name in _ADDING and args:
            _add_to(extra.setdefault(args[0], ([], [])), c.name, directory, args[1:])


def _expanded(args: tuple[str, ...], env: Mapping[str, str]) -> list[str]:
    """The arguments with the file's plain `set` variables spelled out (`${TARGET}`)."""
    return [_VARIABLE.sub(lambda m: env.get(m[1], m[0]), a) for a in args]


def _add_to(extra: tuple[list[str], list[str]], command: str, directory: str, args: list[str]) -> None:
    """What `target_sources` adds to a target's sources, or `target_link_libraries` to what it links."""
    if command == "target_sources":
        extra[0].extend(_files(directory, args))
    else:
        extra[1].extend(a for a in args if a not in _TARGET_KEYWORDS)


def _files(directory: str, args: list[str]) -> tuple[str, ...]:
    return tuple(
        posixpath.normpath(posixpath.join(directory, a))
        for a in args
        if a not in _TARGET_KEYWORDS and "$" not in a and is_source(a)
    )


def linked(targets: Mapping[str, Target], name: str) -> list[Target]:
    """The target and every target of the tree it links, transitively, in the order reached."""
    order: list[Target] = []
    stack = [name]
    while stack:
        target = targets.get(stack.pop())
        if target is not None and target not in order:
            order.append(target)
            stack.extend(reversed(target.links))
    return order


def program_sources(tree: UpstreamTree, targets: Mapping[str, Target], program: str) -> Anchor:
    """A program's sources: those of its target and of every library of the tree it links, each the sources
    under the directory of the CMake file defining it (the listed ones only for a target at the top)."""
    reached = linked(targets, program)
    if not reached or reached[0].kind != "executable":
        return Anchor(program, (), f"no CMake file at {tree.ref} has add_executable({program} ...)")
    paths: dict[str, None] = {}
    for target in reached:
        found = _under(tree, target.directory) if target.directory else target.sources
        paths.update(dict.fromkeys(p for p in found if p in tree.texts))
    paths.update(dict.fromkeys(included_headers(tree, list(paths))))
    first = reached[0]
    return Anchor(
        program,
        tuple(paths),
        f"add_executable({program}) at {first.path}:{first.line}, linking {len(reached) - 1} libraries of the tree",
    )


def included_headers(tree: UpstreamTree, paths: list[str]) -> list[str]:
    """The headers of the tree that sources `#include "name"` (by file name, a few levels deep): a public
    header outside a target's directory (`ggml/include/ggml.h`) holds macros its sources print through."""
    by_name: dict[str, list[str]] = {}
    for path in tree.texts:
        if is_source(path):
            by_name.setdefault(posixpath.basename(path), []).append(path)
    seen = set(paths)
    found: list[str] = []
    todo = paths
    for _ in range(INCLUDE_DEPTH):
        names = {posixpath.basename(n) for p in todo for n in _INCLUDE.findall(tree.texts.get(p, ""))}
        todo = [h for n in sorted(names) for h in by_name.get(n, ()) if h not in seen]
        seen.update(todo)
        found += todo
    return found


def _own_sources(tree: UpstreamTree, targets: Mapping[str, Target], program: str) -> tuple[str, ...]:
    """The sources under the program's own directory: where its `main` and its handlers are."""
    target = targets.get(program)
    if target is None or not target.directory:
        return target.sources if target else ()
    return _under(tree, target.directory)


def _under(tree: UpstreamTree, directory: str) -> tuple[str, ...]:
    prefix = directory.rstrip("/") + "/"
    return tuple(sorted(p for p in tree.texts if p.startswith(prefix) and is_source(p)))
