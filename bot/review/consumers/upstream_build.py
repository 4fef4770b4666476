"""Upstream's build as Ollama's settings make it: the directories an option Ollama leaves OFF cuts out,
and the options read only there.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from tree_sitter import Node

from bot.cache import facts
from bot.lang import cmakelang, syntax
from bot.lang.syntax import node_text
from bot.review.consumers.conditions import condition, condition_tokens, guard
from bot.review.consumers.shared import (
    BACKEND_ROOT,
    PARTIAL_SETTERS,
    SETTABLE,
    OptionSetting,
    remembered_reading,
    text_of,
    truth_of,
)

_FUNCTION_DEFINITIONS = syntax.pattern("cmake", "(function_def) @f")
_IF_CONDITIONS = syntax.pattern("cmake", "(if_condition) @i")


@dataclass(frozen=True)
class Lookup:
    """A `find_package()` of upstream's build, as Ollama's settings make it."""

    package: str
    path: str
    line: int
    required: bool
    guard: str | None  # None when Ollama's build may run it; else the option that keeps it out ("" for none)


def package_lookups(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, list[Lookup]]:
    """Every `find_package()` of the CMake files upstream's build reaches from the top, with whether Ollama's
    build runs it and whether it is REQUIRED."""
    return remembered_reading(
        LOOKUPS,
        refs_walk_key(upstream, paths, options),
        upstream,
        lambda texts: _package_lookups(texts, paths, options),
    )


def _package_lookups(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, list[Lookup]]:
    return walked(_PackageWalk, upstream, paths, options).lookups


# The walks of upstream's CMake files depend on the texts they read, the listing and Ollama's options alone:
# kept with the ids of the texts read, a re-check of the same refs walks none of them again (a walk of both
# refs' CMake texts is kept under their id too: `refs_walk_key`).
UPSTREAM_BUILD = facts.Extractor("upstream-build", 1, __name__)
UNBUILT = facts.Extractor("unbuilt-commands", 1, __name__)
LOOKUPS = facts.Extractor("package-lookups", 1, __name__)
LINKS = facts.Extractor("linked-libraries", 2, __name__)


def walk_key(paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]) -> tuple[str, str]:
    return facts.text_id("\n".join(paths)), facts.text_id(repr(sorted(options.items())))


def refs_walk_key(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> tuple[str, ...]:
    """The key of a walk of one ref's CMake texts (path -> text, all read) that the other ref's are walked
    with too: their id tells the two apart."""
    return (facts.texts_id(upstream), *walk_key(paths, options))


def unbuilt_commands(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, list[tuple[int, int]]]:
    """Per CMake file upstream's build reaches from the top, the commands (first and last line) in branches
    Ollama's option values never take: what they look for, run or name, Ollama's build never meets."""
    return remembered_reading(
        UNBUILT,
        walk_key(paths, options),
        upstream,
        lambda texts: _unbuilt_commands(texts, paths, options),
    )


def _unbuilt_commands(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, list[tuple[int, int]]]:
    return walked(_UnbuiltWalk, upstream, paths, options).unbuilt


W = TypeVar("W", bound="BuildWalk")


def walked(
    walk_of: Callable[[dict[str, bool]], W],
    upstream: Mapping[str, str],
    paths: list[str],
    options: Mapping[str, tuple[OptionSetting, ...]],
    also: list[str] | None = None,
    holding: tuple[bytes, ...] = (),
) -> W:
    """A walk of upstream's CMake files the build reads from the top, with Ollama's option values, one file
    after another (its `path` the file walked), and then of the files `also` names that it does not reach;
    with `holding`, only the files whose text holds one of its texts are walked (every file gives the options'
    defaults)."""
    trees = _cmake_tree(upstream, paths)
    for path in also or ():
        if path not in trees and (text := text_of(upstream, path)) is not None:
            trees[path] = cmakelang.parse(text)
    _, defaults = _declared_options(trees)
    walk = walk_of(_option_values(defaults, options))
    for path, root in trees.items():
        if not holding or any(h in (root.text or b"") for h in holding):
            walk.path = path
            walk.walk(root, posixpath.dirname(path), None)
    return walk


@dataclass(frozen=True)
class UpstreamBuild:
    off_dirs: dict[str, str]
    dead_options: frozenset[str]
    option_homes: dict[str, str]


def _cmake_tree(upstream: Mapping[str, str], paths: list[str]) -> dict[str, Node]:
    """Upstream's CMake files the build reads: the top one and every `add_subdirectory` it reaches."""
    order = ["CMakeLists.txt"]
    unreached = set(paths) - set(order)
    trees: dict[str, Node] = {}
    for path in order:
        text = text_of(upstream, path)
        if text is None:
            continue
        trees[path] = cmakelang.parse(text)
        base = posixpath.dirname(path)
        for command in cmakelang.commands(trees[path]):
            target = _subdirectory(command, base)
            if target in unreached:
                unreached.remove(target)
                order.append(target)
    return trees


def _added_directory(command: str, args: list[str]) -> str | None:
    """The directory an `add_subdirectory()` names literally; None for a computed one or another command."""
    if command != "add_subdirectory" or not args or "${" in args[0]:
        return None
    return args[0]


def _subdirectory(command: Node, base: str) -> str | None:
    """The CMakeLists.txt an `add_subdirectory()` of a literal directory reads (in a file of `base`)."""
    name = cmakelang.name(command)
    if name != "add_subdirectory":
        return None
    directory = _added_directory(name, cmakelang.arguments(command))
    if directory is None:
        return None
    return posixpath.normpath(posixpath.join(base, directory, "CMakeLists.txt"))


def _declared_options(trees: Mapping[str, Node]) -> tuple[dict[str, str], dict[str, bool]]:
    """(the file declaring each settable option, the literal default of each `option()`)."""
    homes: dict[str, str] = {}
    defaults: dict[str, bool] = {}
    for path, root in trees.items():
        for command in cmakelang.commands(root):
            name = cmakelang.name(command)
            if name not in ("option", "set"):
                continue
            args = cmakelang.arguments(command)
            if not _declares(name, args):
                continue
            homes.setdefault(args[0], path)
            default = _literal_default(name, args)
            if default is not None:
                defaults.setdefault(args[0], default)
    return homes, defaults


def _declares(name: str, args: list[str]) -> bool:
    """Whether the command declares a settable option: `option()`, or `set(... CACHE ...)`."""
    if not args or not SETTABLE.fullmatch(args[0]):
        return False
    return name == "option" or (name == "set" and "CACHE" in args)


def _literal_default(name: str, args: list[str]) -> bool | None:
    """An `option()`'s default when it is written as a truth value (none given is OFF); None otherwise."""
    if name != "option":
        return None
    given = args[2] if len(args) > 2 else ""
    if "${" in given:
        return None
    return truth_of(given) if len(args) > 2 else False


def _option_values(
    defaults: Mapping[str, bool], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, bool]:
    """Each option's value in every build Ollama makes; an option builds set differently has none."""
    value = dict(defaults)
    for name, settings in options.items():
        truth = _common_truth(settings, defaults.get(name))
        if truth is None:  # builds set it differently: no condition on it is false for all of them
            value.pop(name, None)
        else:
            value[name] = truth
    return value


def _common_truth(settings: tuple[OptionSetting, ...], default: bool | None) -> bool | None:
    """The truth value every build gives an option (the default in builds no setting reaches); None when
    builds differ or one is not a truth value."""
    truths = {truth_of(s.value) for s in settings}
    if all(s.ref.path.endswith(PARTIAL_SETTERS) for s in settings):  # other builds take the default
        truths.add(default)
    return truths.pop() if len(truths) == 1 else None


def upstream_build(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> UpstreamBuild:
    """Walk upstream's CMake files from the top (through every `add_subdirectory`), find each directory an
    `if(...)` Ollama's settings make false keeps out of the build, each directory whose sources a `-P`
    script handles only when an option Ollama leaves OFF is on, and the options read only in such places."""
    return remembered_reading(
        UPSTREAM_BUILD,
        walk_key(paths, options),
        upstream,
        lambda texts: _upstream_build(texts, paths, options),
    )


def _upstream_build(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> UpstreamBuild:
    trees = _cmake_tree(upstream, paths)
    homes, defaults = _declared_options(trees)
    value = _option_values(defaults, options)
    build = BuildWalk(value)
    for path, root in trees.items():
        build.walk(root, posixpath.dirname(path), None)
    off_dirs = _switched_off(build.added)
    for path, root in trees.items():
        directory = posixpath.dirname(path)
        option = _script_guard(root, directory, upstream, value)
        if option is not None and directory:
            off_dirs.setdefault(directory, option)
    return UpstreamBuild(
        dict(sorted(_outermost(off_dirs).items())), frozenset(build.dead - build.live), homes
    )


def _switched_off(added: Mapping[str, list[str | None]]) -> dict[str, str]:
    """Each directory every add_subdirectory of which an option switches off, with the first such option."""
    return {
        d: guards[0]
        for d, guards in added.items()
        if guards and isinstance(guards[0], str) and None not in guards
    }


def _outermost(off_dirs: Mapping[str, str]) -> dict[str, str]:
    """The off directories not below another one: a directory below an off directory is off with it."""
    return {d: o for d, o in off_dirs.items() if not any(d.startswith(p + "/") for p in off_dirs if p != d)}


def _read_arguments(command: str, args: list[str]) -> list[str]:
    """The arguments whose option names a command reads: printing reads none, declaring an option reads
    only its default."""
    if command == "message":
        return []
    if command in ("option", "cmake_dependent_option") or (command == "set" and "CACHE" in args):
        return args[1:]
    return args


def _branch_guard(
    tokens: list[str], truth: bool | None, earlier_true: bool, value: Mapping[str, bool]
) -> str | None:
    """What switches a branch off for Ollama's build: "" when an earlier branch is surely taken, the option
    that makes its condition false (else ""), or None when the branch may be taken."""
    if earlier_true:
        return ""
    if truth is False:
        return guard(tokens, value) or ""
    return None


@dataclass
class BuildWalk:
    """Walks upstream's CMake files with Ollama's option values: records each add_subdirectory with the
    option that switches it off for Ollama (None when nothing does) and every option name read where the
    build goes (`live`) or only where it never goes (`dead`)."""

    value: Mapping[str, bool]
    path: str = ""  # the file being walked
    added: dict[str, list[str | None]] = field(default_factory=dict)
    live: set[str] = field(default_factory=set)
    dead: set[str] = field(default_factory=set)

    def walk(self, node: Node, base: str, guard: str | None) -> None:
        for child in node.children:
            if child.type == "if_condition":
                self.branches(child, base, guard)
            elif child.type == "normal_command":
                self.command(child, base, guard)
            elif child.child_count:
                self.walk(child, base, guard)

    def reads(self, names: Iterable[str], dead: bool) -> None:
        """Record option names the build reads: `dead` where the code reading them never runs for Ollama."""
        (self.dead if dead else self.live).update(names)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        args = cmakelang.arguments(node)
        command = cmakelang.name(node)
        read = _read_arguments(command, args)
        self.reads((a for arg in read for a in SETTABLE.findall(arg)), dead=guard is not None)
        directory = _added_directory(command, args)
        if directory is not None:
            self.added.setdefault(posixpath.normpath(posixpath.join(base, directory)), []).append(guard)

    def branches(self, node: Node, base: str, guard: str | None) -> None:
        """One if/elseif/else block: a branch is dead when its condition is false for Ollama's build (its
        guard is the option that makes it so, "" when none does) or an earlier branch is surely taken."""
        current = guard
        earlier_true = False
        for part in node.children:
            if part.type in ("if_command", "elseif_command", "else_command"):
                current, truth = self.condition(part, guard, earlier_true)
                earlier_true = earlier_true or truth is True
            elif part.type == "body":
                self.walk(part, base, current)

    def condition(self, part: Node, guard: str | None, earlier_true: bool) -> tuple[str | None, bool | None]:
        """One if/elseif/else command of a block: records the option names its condition reads (dead when
        the branch is); the guard of the body after it, and the condition's truth for Ollama's build."""
        tokens = condition_tokens(part)
        truth = None if part.type == "else_command" else condition(tokens, self.value)
        current = guard if guard is not None else _branch_guard(tokens, truth, earlier_true, self.value)
        self.reads((t for t in tokens if SETTABLE.fullmatch(t)), dead=current is not None)
        return current, truth


@dataclass
class _PackageWalk(BuildWalk):
    """The walk of `BuildWalk` that records only the `find_package()` calls, each with its guard."""

    path: str = ""  # the file being walked
    lookups: dict[str, list[Lookup]] = field(default_factory=dict)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        if cmakelang.name(node) != "find_package":
            return
        args = cmakelang.arguments(node)
        if args:
            lookup = Lookup(args[0], self.path, cmakelang.line(node), "REQUIRED" in args, guard)
            self.lookups.setdefault(args[0], []).append(lookup)


@dataclass
class _UnbuiltWalk(BuildWalk):
    """The walk of `BuildWalk` that records the lines of every command (and nested condition) under a
    guard."""

    path: str = ""  # the file being walked
    unbuilt: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        if guard is not None:
            self.unbuilt.setdefault(self.path, []).append((cmakelang.line(node), node.end_point[0] + 1))

    def condition(self, part: Node, guard: str | None, earlier_true: bool) -> tuple[str | None, bool | None]:
        """As `BuildWalk.condition`, recording the lines of a nested block's condition under a guard."""
        self.command(part, "", guard)
        return super().condition(part, guard, earlier_true)


@dataclass(frozen=True)
class Link:
    """A library a `target_link_libraries()` Ollama's build may run links to a target."""

    target: str
    library: str
    path: str
    line: int


def linked_libraries(
    upstream: Mapping[str, str],
    paths: list[str],
    options: Mapping[str, tuple[OptionSetting, ...]],
    targets: frozenset[str],
) -> list[Link]:
    """The libraries linked by name (not through a variable) to these targets by the CMake files upstream's
    build reaches, where Ollama's option values may take the build (upstream's defaults for what Ollama
    leaves unset)."""
    key = (*refs_walk_key(upstream, paths, options), facts.text_id("\n".join(sorted(targets))))
    return remembered_reading(
        LINKS, key, upstream, lambda texts: _linked_libraries(texts, paths, options, targets)
    )


def _linked_libraries(
    upstream: Mapping[str, str],
    paths: list[str],
    options: Mapping[str, tuple[OptionSetting, ...]],
    targets: frozenset[str],
) -> list[Link]:
    backends = [p for p in paths if backend_cmake(p)]
    named = tuple(t.encode() for t in sorted(targets))
    links = walked(_LinkWalk, upstream, paths, options, backends, named).links
    return [k for k in links if k.target in targets]


# a backend's CMake file: upstream adds it through a function, by a name no walk computes
_BACKEND_CMAKE = re.compile(re.escape(BACKEND_ROOT) + r"ggml-[\w-]+/CMakeLists\.txt")


def backend_cmake(path: str) -> bool:
    """Whether the path is a backend's own CMake file (`ggml/src/ggml-cuda/CMakeLists.txt`)."""
    return _BACKEND_CMAKE.fullmatch(path) is not None


@dataclass
class _LinkWalk(BuildWalk):
    """The walk of `BuildWalk` that records the libraries of `target_link_libraries()` calls no option
    value of Ollama's keeps out."""

    path: str = ""
    links: list[Link] = field(default_factory=list)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        if guard is not None or cmakelang.name(node) != "target_link_libraries":
            return
        target, *items = cmakelang.arguments(node) or [""]
        if "$" in target:
            return
        line = cmakelang.line(node)
        for item in items:
            if item not in cmakelang.LINK_KEYWORDS and "$" not in item:
                self.links.append(Link(target, item, self.path, line))


@dataclass(frozen=True)
class Stop:
    """A `message(FATAL_ERROR ...)` a build Ollama makes reaches: each `if()` around it is surely taken."""

    path: str
    line: int
    message: str
    conditions: tuple[str, ...]  # the conditions of the branches around it, outermost first
    builds: tuple[str, ...] = ()  # the builds of Ollama's that reach it; none said: every build


STOPPING = frozenset(["FATAL_ERROR", "SEND_ERROR"])
MAX_ITEMS = 64  # items of a `foreach()` list walked one by one (a longer list's body is not judged)


def configure_stops(
    upstream: Mapping[str, str],
    paths: list[str],
    options: Mapping[str, tuple[OptionSetting, ...]],
    builds: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Stop]:
    """The errors that end the configure step of a build Ollama makes: reached from the top through branches
    whose conditions its values surely decide (a condition on what is not known, or a function's body, is not
    judged). `builds` gives each build's own variables (a preset's, by name): each is walked with them, its
    backend's CMake file too when it turns the backend on, each `foreach()` over a list it gives item by item,
    each package upstream looks for taken as found; without them, one walk with the values every build shares."""
    trees = _cmake_tree(upstream, paths)
    _, defaults = _declared_options(trees)
    if not builds:
        return _stops(trees, _option_values(defaults, options), None)
    shared = _option_values(
        defaults,
        {k: v for k, v in options.items() if not any(s.ref.path.endswith(PARTIAL_SETTERS) for s in v)},
    )
    return _stops_per_build(upstream, paths, trees, shared, builds)


def _stops_per_build(
    upstream: Mapping[str, str],
    paths: list[str],
    trees: Mapping[str, Node],
    shared: dict[str, bool],
    builds: Mapping[str, Mapping[str, str]],
) -> list[Stop]:
    """The errors each build reaches, walked with its own variables, each with the builds reaching it."""
    found = dict(shared)  # the packages every build surely looks for, taken as found
    _stops(trees, found, {})
    stopping = {p: t for p, t in trees.items() if _may_stop(t)}  # a build's walk records nothing elsewhere
    reached: dict[Stop, list[str]] = {}
    for strings, names in _alike(builds, upstream, paths).items():
        variables = dict(strings)
        value = {**found, **{k: t for k, v in variables.items() if (t := truth_of(v)) is not None}}
        files = {**stopping, **_backend_trees(upstream, paths, value, trees)}
        for stop in _stops(files, value, variables):
            reached.setdefault(stop, []).extend(names)
    return [replace(stop, builds=tuple(names)) for stop, names in reached.items()]


def _alike(
    builds: Mapping[str, Mapping[str, str]], upstream: Mapping[str, str], paths: list[str]
) -> dict[frozenset[tuple[str, str]], list[str]]:
    """The builds grouped by the variables they give that upstream's CMake files name at all: builds that
    differ only in what upstream never reads (a destination directory of Ollama's) are walked once."""
    texts = [text for p in paths if (text := text_of(upstream, p)) is not None]
    named: dict[str, bool] = {}
    groups: dict[frozenset[tuple[str, str]], list[str]] = {}
    for name, strings in builds.items():
        for variable in strings:
            if variable not in named:
                named[variable] = any(variable in text for text in texts)
        key = frozenset((k, v) for k, v in strings.items() if named[k])
        groups.setdefault(key, []).append(name)
    return groups


def _may_stop(root: Node) -> bool:
    text = root.text or b""
    return any(word.encode() in text for word in STOPPING)


def _stops(trees: Mapping[str, Node], value: dict[str, bool], strings: dict[str, str] | None) -> list[Stop]:
    walk = _StopWalk(value, strings=strings)
    for path, root in trees.items():
        walk.path = path
        walk.walk(root, posixpath.dirname(path), None)
    return walk.stops


def _backend_trees(
    upstream: Mapping[str, str], paths: list[str], value: Mapping[str, bool], trees: Mapping[str, Node]
) -> dict[str, Node]:
    """The CMake files of the backends a build turns on (`ggml/src/ggml-cuda/` for GGML_CUDA ON) that the
    walk from the top does not reach (upstream adds them through a function)."""
    found = {}
    for path in paths:
        if path in trees or not backend_cmake(path):
            continue  # a file the walk from the top reaches is walked (when it may stop) with the others
        option = posixpath.basename(posixpath.dirname(path)).upper().replace("-", "_")
        if value.get(option) and (text := text_of(upstream, path)) is not None:
            found[path] = cmakelang.parse(text)
    return found


@dataclass
class _StopWalk(BuildWalk):
    """The walk of `BuildWalk` that records the errors of branches a build of Ollama's surely takes (every
    build, or one whose variables `strings` gives)."""

    path: str = ""
    stops: list[Stop] = field(default_factory=list)
    # the conditions of the surely taken branches around the walk, outermost first
    around: tuple[str, ...] = ()
    strings: dict[str, str] | None = None

    def walk(self, node: Node, base: str, guard: str | None) -> None:
        if node.type in ("function_def", "macro_def"):
            return
        if node.type == "foreach_loop" and self.strings is not None:
            self.loop(node, base, guard)
        else:
            super().walk(node, base, guard)

    def command(self, node: Node, base: str, guard: str | None) -> None:
        args = cmakelang.arguments(node)
        name = cmakelang.name(node)
        if name == "message" and args and args[0] in STOPPING:
            self.stops.append(Stop(self.path, cmakelang.line(node), " ".join(args[1:]), self.around))
        elif name == "find_package" and args and self.strings is not None:
            assert isinstance(self.value, dict)
            self.value[f"{args[0]}_FOUND"] = True  # a builder of this build has what it looks for

    def loop(self, node: Node, base: str, guard: str | None) -> None:
        """A `foreach()` over a list the build gives: its body walked once per item, the item named among
        the conditions around; a list not known is not walked."""
        head = next((c for c in node.children if c.type == "foreach_command"), None)
        body = next((c for c in node.children if c.type == "body"), None)
        assert self.strings is not None
        if head is None or body is None:
            return
        items = _loop_items(cmakelang.arguments(head, self.strings), self.strings)
        if items is None:
            return
        variable, outer = items[0], self.around
        head_text = " ".join(syntax.node_text(head).split())
        for item in items[1:]:
            self.strings[variable] = item
            self.around = (*outer, f"{head_text[:200]}: {variable} = {item}")
            self.walk(body, base, guard)
        self.around = outer
        self.strings.pop(variable, None)

    def branches(self, node: Node, base: str, guard: str | None) -> None:
        """Only a branch surely taken is walked: an `if`/`elseif` whose condition is true after conditions
        all false, an `else` after conditions all false."""
        earlier_false = True
        earlier: list[str] = []  # the conditions before, each false when the branch is taken
        taken: tuple[str, ...] | None = None
        for part in node.children:
            if part.type in ("if_command", "elseif_command", "else_command"):
                tokens = condition_tokens(part)
                if part.type == "else_command":
                    truth: bool | None = earlier_false
                    label = f"NOT ({' OR '.join(earlier)})"
                else:
                    truth, label = condition(tokens, self.value, self.strings), " ".join(tokens)
                taken = (*self.around, label) if earlier_false and truth is True else None
                earlier_false = earlier_false and truth is False
                earlier.append(label)
            elif part.type == "body" and taken is not None:
                outer, self.around = self.around, taken
                self.walk(part, base, guard)
                self.around = outer


def _loop_items(args: list[str], strings: Mapping[str, str]) -> list[str] | None:
    """[loop variable, item, ...] of a `foreach()` whose items the build's variables give: `IN LISTS` of
    lists it gives, `IN ITEMS` or plain items with every variable known; None otherwise."""
    if len(args) < 2 or args[1] == "RANGE" or any("${" in a for a in args):
        return None
    variable, rest = args[0], args[1:]
    items = _listed_items(rest[2:], strings) if rest[:2] == ["IN", "LISTS"] else _given_items(rest)
    return [variable, *items] if items is not None and len(items) <= MAX_ITEMS else None


def _listed_items(lists: list[str], strings: Mapping[str, str]) -> list[str] | None:
    """The items of the lists named, when the build gives each of them."""
    if not all(name in strings for name in lists):
        return None
    return [item for name in lists for item in strings[name].split(";") if item]


def _given_items(rest: list[str]) -> list[str]:
    return rest[2:] if rest[:2] == ["IN", "ITEMS"] else rest


def _script_guard(
    root: Node, directory: str, upstream: Mapping[str, str], value: Mapping[str, bool]
) -> str | None:
    """The option Ollama leaves OFF that a `cmake -P <script>` run on this directory's sources passes as
    `-D<V>=${OPTION}` to a script that touches those sources (the variable given
    `${CMAKE_CURRENT_SOURCE_DIR}`, directly or through its own functions) only under `if(<V>)`."""
    if b"-P" not in (root.text or b""):
        return None
    env = {"CMAKE_SOURCE_DIR": "", "PROJECT_SOURCE_DIR": "", "CMAKE_CURRENT_SOURCE_DIR": directory}
    for command in cmakelang.commands(root):
        option = _script_run_guard(command, env, upstream, value)
        if option is not None:
            return option
    return None


def _script_run_guard(
    command: Node, env: Mapping[str, str], upstream: Mapping[str, str], value: Mapping[str, bool]
) -> str | None:
    """`_script_guard` for one command: the option it passes OFF to the `-P` script it runs, when that
    script touches the sources it is given only under a condition on that option."""
    raw = cmakelang.arguments(command)
    if "-P" not in raw or raw.index("-P") + 1 >= len(raw):
        return None
    source_vars, off = _script_inputs(raw, value)
    script = cmakelang.arguments(command, env)[raw.index("-P") + 1].lstrip("/")
    text = text_of(upstream, posixpath.normpath(script)) if off and source_vars else None
    if text is None:
        return None
    script_root = cmakelang.parse(text)
    return _guarding_option(script_root, _touching(script_root, source_vars), off)


def _script_inputs(raw: list[str], value: Mapping[str, bool]) -> tuple[list[str], dict[str, str]]:
    """The `-D` variables a `-P` run gives the sources' directory, and those it gives an option Ollama
    leaves OFF (variable -> option)."""
    source_vars = [m[1] for a in raw if (m := re.fullmatch(r"-D(\w+)=\$\{CMAKE_CURRENT_SOURCE_DIR\}", a))]
    passed = {m[1]: m[2] for a in raw if (m := re.fullmatch(r"-D(\w+)=\$\{(\w+)\}", a))}
    return source_vars, {var: opt for var, opt in passed.items() if value.get(opt) is False}


def _touching(script_root: Node, source_vars: list[str]) -> list[re.Pattern[str]]:
    """Patterns of what in a script touches the sources: the variables holding their directory, and calls
    of the script's functions that use one (or call such a function defined before them)."""
    touching = [re.compile(r"\$\{" + v + r"\}") for v in source_vars]
    for definition in syntax.captures(_FUNCTION_DEFINITIONS, script_root).get("f", []):
        if any(t.search(node_text(definition)) for t in touching):
            header = cmakelang.arguments(definition.children[0])
            if header:
                touching.append(re.compile(r"(?i)(?<![\w-])" + re.escape(header[0]) + r"\s*\("))
    return touching


def _guarding_option(
    script_root: Node, touching: list[re.Pattern[str]], off: Mapping[str, str]
) -> str | None:
    """The option (of `off`: passed variable -> option Ollama leaves OFF) whose variable being false makes
    false an `if()` whose body touches the sources."""
    for block in syntax.captures(_IF_CONDITIONS, script_root).get("i", []):
        if _body_touches(block, touching):
            option = _falsifying_option(condition_tokens(block.children[0]), off)
            if option is not None:
                return option
    return None


def _body_touches(block: Node, touching: list[re.Pattern[str]]) -> bool:
    """Whether the body of an `if()` block touches the sources."""
    body = next(iter(cmakelang.children(block, "body")), None)
    return body is not None and any(t.search(node_text(body)) for t in touching)


def _falsifying_option(tokens: list[str], off: Mapping[str, str]) -> str | None:
    """The first option of `off` whose variable being false makes the condition false."""
    return next(
        (option for var, option in off.items() if var in tokens and condition(tokens, {var: False}) is False),
        None,
    )


def shared_backend_dirs(
    upstream: Mapping[str, str], backends: frozenset[str], built: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Backend directory -> the built backends whose CMakeLists.txt compiles its files too (ggml-hip builds
    ggml-cuda's kernels)."""
    users: dict[str, set[str]] = {}
    for backend in sorted(built & backends):
        text = text_of(upstream, f"{BACKEND_ROOT}ggml-{backend}/CMakeLists.txt") or ""
        for other in set(re.findall(r"\.\./ggml-([\w-]+)/", text)) & (backends - {backend}):
            users.setdefault(other, set()).add(backend)
    return {k: frozenset(v) for k, v in users.items()}
