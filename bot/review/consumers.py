"""What of upstream llama.cpp Ollama builds, includes and calls: the review's notion of "can affect Ollama".

An upstream change matters to Ollama only when it lands in something Ollama compiles (a backend some
build turns on, a directory no option Ollama leaves OFF cuts out), in a header its compat sources
include, in a name they use, or in the llama-server interface its Go code talks to (endpoints, JSON
fields, flags). This module reads that from plain texts: Ollama's presets, CMake files, Dockerfile and
workflows, its compat C/C++ sources and carried patches, its Go code; and upstream's CMake files and
headers. Everything here is a pure function over path -> text mappings (read lazily: only the files a
question needs are read).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from bot import cmakelang, syntax
from bot.model import LocalRef
from bot.review.flags import OLLAMA_CALLERS
from bot.review.source import code_text, glob_match
from bot.snapshot import MissingBlob, Snapshot

BACKEND_ROOT = "ggml/src/"
CPP_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc", ".cu", ".cuh", ".m", ".mm")
OLLAMA_CMAKE = ("CMakeLists.txt", "**/CMakeLists.txt", "cmake/*.cmake", "llama/**/*.cmake")
OLLAMA_COMMAND_LINES = (
    "Dockerfile",
    "Dockerfile.*",
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    "scripts/*",
)
OLLAMA_SERVER_CLIENTS = ("llm/*.go",)
DEFAULT_COMPAT_DIR = "llama/compat/"
PARTIAL_SETTERS = (
    "CMakePresets.json",
    ".yml",
    ".yaml",
    "Dockerfile",
)  # files setting a value for some builds only
_ON = {"ON", "TRUE", "YES", "Y", "1"}
_OFF = {"OFF", "FALSE", "NO", "N", "0", "", "IGNORE", "NOTFOUND"}
_SETTABLE = re.compile(r"(?:GGML|LLAMA)_[A-Z0-9_]+")
_DEFINE = re.compile(r"(?<![\w-])-D([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s\"'\\]*)")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)
_FLAG_IN_STRING = re.compile(r"(?:^|(?<=\s))(--?[A-Za-z][\w-]*)")
_FLAG_HINT = re.compile(r"[\"`\s]--?[A-Za-z]")
_URL_PATH = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s]*(/[^\s?#\"]*)")
_BARE_PATH = re.compile(r"^/[A-Za-z0-9_.{}%-]+(?:/[A-Za-z0-9_.{}%-]+)*$")
_REQUEST_CALL = re.compile(r"(?:Request\w*|\.(?:Get|Post|Head|PostForm|JoinPath))$")
_JSON_TAG = re.compile(r'\bjson:"([^",]*)')
_CMAKE_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\(|\)|[^\s()"]+')


@dataclass(frozen=True)
class OptionSetting:
    value: str
    ref: LocalRef


@dataclass(frozen=True)
class Consumers:
    """What of an upstream Ollama's build compiles and Ollama's code uses: the review's notion of 'can
    affect Ollama'."""

    backends: frozenset[str]  # ggml backends some Ollama build turns on, lower-case; cpu always
    options: Mapping[str, tuple[OptionSetting, ...]]  # CMake variables Ollama sets, each place it does
    off_dirs: Mapping[
        str, str
    ]  # upstream directory -> the option Ollama leaves or forces OFF that cuts it out
    headers: frozenset[str]  # upstream headers (new ref) the compat sources include, transitively
    names: Mapping[str, tuple[LocalRef, ...]]  # upstream identifiers the compat sources use
    strings: Mapping[str, tuple[LocalRef, ...]]  # string literals of the compat sources
    endpoints: Mapping[str, tuple[LocalRef, ...]]  # llama-server paths Ollama's Go code requests
    request_fields: Mapping[str, tuple[LocalRef, ...]]  # JSON fields Ollama sends to llama-server
    response_fields: Mapping[str, tuple[LocalRef, ...]]  # JSON fields Ollama decodes from llama-server
    flags: Mapping[str, tuple[LocalRef, ...]]  # llama-server command-line flags Ollama passes
    upstream_backends: frozenset[str] = frozenset()  # every ggml/src/ggml-<name>/ directory upstream has
    shared_dirs: Mapping[str, frozenset[str]] = field(
        default_factory=dict
    )  # backend dir -> backends compiling it
    dead_options: frozenset[str] = frozenset()  # upstream options read only where Ollama's build never goes
    option_homes: Mapping[str, str] = field(
        default_factory=dict
    )  # upstream option -> the CMake file declaring it
    compat_sources: tuple[str, ...] = ()  # the files `names`/`headers` were read from

    def backend_of(self, path_or_option: str) -> str | None:
        """The ggml backend a path (`ggml/src/ggml-sycl/x.cpp`, `ggml/include/ggml-sycl.h`) or a cache
        variable (`GGML_SYCL_F16`) belongs to; None for what belongs to no single backend."""
        if "/" in path_or_option or "." in path_or_option:
            parts = path_or_option.split("/")
            if path_or_option.startswith(BACKEND_ROOT) and len(parts) > 3 and parts[2].startswith("ggml-"):
                name = parts[2][5:]
                return name if name in self.upstream_backends else None
            stem = posixpath.splitext(parts[-1])[0]
            if (
                parts[:2] == ["ggml", "include"]
                and stem.startswith("ggml-")
                and stem[5:] in self.upstream_backends
            ):
                return stem[5:]
            return None
        if not path_or_option.startswith("GGML_"):
            return None
        rest = path_or_option[5:].lower()
        found = [
            b
            for b in self.upstream_backends
            if rest == b.replace("-", "_") or rest.startswith(b.replace("-", "_") + "_")
        ]
        return max(found, key=len) if found else None

    def _built_backend_dir(self, name: str) -> bool:
        users = self.shared_dirs.get(name, frozenset()) | {name}
        return bool(users & self.backends)

    def builds(self, upstream_path: str) -> bool:
        """False for a file of a backend no Ollama build turns on, or under a directory an option Ollama
        leaves OFF cuts out of the build; True otherwise."""
        backend = self.backend_of(upstream_path)
        if backend is not None and not self._built_backend_dir(backend):
            return False
        return self.off_dir(upstream_path) is None

    def off_dir(self, upstream_path: str) -> str | None:
        """The directory of `off_dirs` that holds `upstream_path`, if any."""
        for directory in self.off_dirs:
            if upstream_path == directory or upstream_path.startswith(directory + "/"):
                return directory
        return None

    def built_option(self, option: str) -> bool:
        """False for an option of a backend no build turns on, one declared under a directory Ollama's build
        cuts out, or one upstream reads only in conditions that are false for Ollama's build."""
        if option in self.options:
            return True
        backend = self.backend_of(option)
        if backend is not None and not self._built_backend_dir(backend):
            return False
        home = self.option_homes.get(option)
        if home is not None and self.off_dir(posixpath.dirname(home)) is not None:
            return False
        return option not in self.dead_options


def consumer_model(
    ollama: Mapping[str, str], upstream: Mapping[str, str], patches: Iterable[tuple[str, object]] = ()
) -> Consumers:
    """The consumer model of one Ollama tree (path -> comment-free text) against one upstream ref (path ->
    text); `patches` are (path, bot.patchfile.PatchFile) of the carried patches."""
    patch_list = list(patches)
    ollama_paths = list(ollama)
    upstream_paths = list(upstream)
    options, preset_backends = ollama_options(ollama, ollama_paths)
    upstream_backends = frozenset(
        p.split("/")[2][5:]
        for p in upstream_paths
        if p.startswith(BACKEND_ROOT + "ggml-") and p.count("/") >= 3
    )
    backends = {"cpu"}
    for name, settings in options.items():
        backend = name[5:].lower() if name.startswith("GGML_") else ""
        turned_on = backend in preset_backends or any(
            _truth(s.value) is True and not s.ref.path.endswith("CMakePresets.json") for s in settings
        )
        if backend in upstream_backends and turned_on:
            backends.add(backend)
    build = upstream_build(upstream, upstream_paths, options)
    shared = shared_backend_dirs(upstream, upstream_backends, frozenset(backends))
    sources = compat_source_texts(ollama, ollama_paths, patch_list)
    uses = compat_uses(sources)
    return Consumers(
        backends=frozenset(backends),
        options=options,
        off_dirs=build.off_dirs,
        headers=included_headers(sources, ollama, ollama_paths, upstream, upstream_paths),
        names=uses.names,
        strings=uses.strings,
        endpoints=(server := server_interface(ollama, ollama_paths)).endpoints,
        request_fields=server.request_fields,
        response_fields=server.response_fields,
        flags=go_flags(ollama, ollama_paths),
        upstream_backends=upstream_backends,
        shared_dirs=shared,
        dead_options=build.dead_options - set(options),
        option_homes=build.option_homes,
        compat_sources=tuple(sorted({path for path, _, _ in sources})),
    )


class SnapshotTexts(Mapping[str, str]):
    """A snapshot's files as comment-free texts, read on first use; a file a partial clone lacks is absent
    (KeyError), so the model simply does without it."""

    def __init__(self, snapshot: Snapshot):
        self._snapshot = snapshot
        self._texts: dict[str, str] = {}
        self._paths: list[str] | None = None

    def __iter__(self) -> Iterator[str]:
        if self._paths is None:
            self._paths = self._snapshot.files("")
        return iter(self._paths)

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __getitem__(self, path: str) -> str:
        if path not in self._texts:
            try:
                data = self._snapshot.read(path)
            except MissingBlob:
                data = None
            if data is None:
                raise KeyError(path)
            self._texts[path] = code_text(data.decode("utf-8", "replace"), path)
        return self._texts[path]


# ---------------------------------------------------------------- shared helpers


def _text(files: Mapping[str, str], path: str) -> str | None:
    try:
        return files[path]
    except (KeyError, LookupError):
        return None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _truth(value: str) -> bool | None:
    upper = value.strip().strip('"').upper()
    if upper in _ON:
        return True
    if upper in _OFF or upper.endswith("-NOTFOUND"):
        return False
    return None


Refs = dict[str, dict[LocalRef, None]]  # name -> its places, in order, each once


def _add(found: Refs, key: str, ref: LocalRef) -> None:
    found.setdefault(key, {})[ref] = None


def _frozen(found: Refs) -> dict[str, tuple[LocalRef, ...]]:
    return {k: tuple(v) for k, v in sorted(found.items())}


def _node_text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


# ---------------------------------------------------------------- Ollama's build settings


def ollama_options(
    ollama: Mapping[str, str], paths: list[str]
) -> tuple[dict[str, tuple[OptionSetting, ...]], set[str]]:
    """Every CMake variable Ollama sets (presets, its CMake files, `-D` on command lines) with each place,
    and the backends a visible preset turns on (through `inherits`)."""
    found: dict[str, list[OptionSetting]] = {}
    preset_backends: set[str] = set()
    for path in paths:
        if posixpath.basename(path) == "CMakePresets.json":
            text = _text(ollama, path)
            if text is not None:
                preset_backends |= _preset_settings(path, text, found)
        elif glob_match(path, OLLAMA_CMAKE):
            text = _text(ollama, path)
            if text is not None:
                _cmake_settings(path, text, found)
        elif glob_match(path, OLLAMA_COMMAND_LINES):
            text = _text(ollama, path)
            if text is not None and "-D" in text:
                for m in _DEFINE.finditer(text):
                    found.setdefault(m[1], []).append(
                        OptionSetting(m[2].strip("\"'"), LocalRef(path, _line_of(text, m.start())))
                    )
    return {k: tuple(v) for k, v in sorted(found.items())}, preset_backends


def _preset_value(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, dict):
        return _preset_value(value.get("value", ""))
    return str(value)


def _preset_settings(path: str, text: str, found: dict[str, list[OptionSetting]]) -> set[str]:
    """Record a presets file's cache variables; return the GGML_<X> names set ON in a visible preset."""
    try:
        presets = json.loads(text).get("configurePresets", [])
    except (ValueError, AttributeError):
        return set()
    by_name = {p.get("name"): p for p in presets if isinstance(p, dict)}
    at = 0
    for preset in by_name.values():
        name_at = text.find(f'"{preset.get("name")}"', at)
        at = max(at, name_at)
        for var, value in (preset.get("cacheVariables") or {}).items():
            var_at = text.find(f'"{var}"', max(name_at, 0))
            line = _line_of(text, var_at) if var_at >= 0 else 1
            found.setdefault(var, []).append(OptionSetting(_preset_value(value), LocalRef(path, line)))

    def effective(preset: dict, seen: frozenset = frozenset()) -> dict[str, str]:
        parents = preset.get("inherits") or []
        values: dict[str, str] = {}
        for parent in reversed([parents] if isinstance(parents, str) else parents):
            if parent in by_name and parent not in seen:
                values.update(effective(by_name[parent], seen | {parent}))
        values.update({k: _preset_value(v) for k, v in (preset.get("cacheVariables") or {}).items()})
        return values

    on: set[str] = set()
    for preset in by_name.values():
        if preset.get("hidden"):
            continue
        for var, value in effective(preset).items():
            if var.startswith("GGML_") and _truth(value) is True:
                on.add(var[5:].lower())
    return on


def _cmake_settings(path: str, text: str, found: dict[str, list[OptionSetting]]) -> None:
    """`set(NAME VALUE ...)` of GGML_*/LLAMA_* names or cache entries, and calls of the file's own functions
    that forward their arguments to such a `set(${name} ${value} CACHE ...)`."""
    root = cmakelang.parse(text)
    forwarders: dict[str, tuple[int, int]] = {}
    for definition in syntax.captures("cmake", "(function_def) @f", root).get("f", []):
        header = cmakelang.arguments(definition.children[0])
        params = [p.lower() for p in header[1:]]
        for command in cmakelang.commands(definition):
            args = cmakelang.arguments(command)
            if cmakelang.name(command) == "set" and "CACHE" in args and len(args) >= 3:
                name_var, value_var = (re.fullmatch(r"\$\{(\w+)\}", a) for a in args[:2])
                if (
                    name_var
                    and value_var
                    and name_var[1].lower() in params
                    and value_var[1].lower() in params
                ):
                    forwarders[header[0].lower()] = (
                        params.index(name_var[1].lower()),
                        params.index(value_var[1].lower()),
                    )
    for command in cmakelang.commands(root):
        name = cmakelang.name(command)
        if name != "set" and name not in forwarders:
            continue
        args = cmakelang.arguments(command)
        line = command.start_point[0] + 1
        if name == "set" and len(args) >= 2 and (_SETTABLE.fullmatch(args[0]) or "CACHE" in args):
            values = args[1 : args.index("CACHE")] if "CACHE" in args else args[1:]
            if "PARENT_SCOPE" in values or "${" in args[0]:
                continue
            found.setdefault(args[0], []).append(OptionSetting(";".join(values), LocalRef(path, line)))
        elif name in forwarders and len(args) > max(forwarders[name]):
            at_name, at_value = forwarders[name]
            found.setdefault(args[at_name], []).append(OptionSetting(args[at_value], LocalRef(path, line)))


# ---------------------------------------------------------------- upstream's build


@dataclass(frozen=True)
class UpstreamBuild:
    off_dirs: dict[str, str]
    dead_options: frozenset[str]
    option_homes: dict[str, str]


def _condition(tokens: list[str], value: Mapping[str, bool]) -> bool | None:
    """CMake's `if()` condition over three values: True, False, or None (depends on what is not known)."""
    at = 0

    def peek() -> str | None:
        return tokens[at] if at < len(tokens) else None

    def take() -> str:
        nonlocal at
        at += 1
        return tokens[at - 1]

    def either() -> bool | None:
        result = both()
        while peek() == "OR":
            take()
            right = both()
            result = (
                True if True in (result, right) else (False if result is False and right is False else None)
            )
        return result

    def both() -> bool | None:
        result = negation()
        while peek() == "AND":
            take()
            right = negation()
            result = False if False in (result, right) else (True if result and right else None)
        return result

    def negation() -> bool | None:
        if peek() == "NOT":
            take()
            inner = negation()
            return None if inner is None else not inner
        return primary()

    def primary() -> bool | None:
        token = peek()
        if token is None:
            return None
        if token == "(":
            take()
            result = either()
            if peek() == ")":
                take()
            return result
        if token in ("DEFINED", "EXISTS", "TARGET", "COMMAND", "POLICY", "IS_DIRECTORY", "IS_ABSOLUTE"):
            take()
            if peek() is not None:
                take()
            return None
        take()
        nxt = peek()
        if nxt is not None and nxt not in ("AND", "OR", ")"):  # a binary test: STREQUAL, MATCHES, ...
            take()
            if peek() is not None and peek() not in ("AND", "OR", ")"):
                take()
            return None
        if token.startswith('"') or "${" in token:
            return None
        if token in value:
            return value[token]
        return _truth(token) if token.upper() in _ON | {"OFF", "FALSE", "NO", "0"} else None

    return either()


def _guard(tokens: list[str], value: Mapping[str, bool]) -> str | None:
    """The option whose value makes a false condition false: a conjunct `X` with X OFF or `NOT X` with X ON."""
    depth = 0
    conjuncts: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        depth += token == "("
        depth -= token == ")"
        if token == "AND" and depth == 0:
            conjuncts.append(current)
            current = []
        else:
            current.append(token)
    conjuncts.append(current)
    for conjunct in conjuncts:
        if _condition(conjunct, value) is False:
            names = [t for t in conjunct if t in value]
            if names:
                return names[0]
    return None


def _cmake_tree(upstream: Mapping[str, str], paths: list[str]) -> dict[str, Node]:
    """Upstream's CMake files the build reads: the top one and every `add_subdirectory` it reaches."""
    known = set(paths)
    trees: dict[str, Node] = {}
    order = ["CMakeLists.txt"]
    for path in order:
        text = _text(upstream, path)
        if text is None:
            continue
        trees[path] = cmakelang.parse(text)
        base = posixpath.dirname(path)
        for command in cmakelang.commands(trees[path]):
            args = cmakelang.arguments(command)
            if cmakelang.name(command) == "add_subdirectory" and args and "${" not in args[0]:
                target = posixpath.normpath(posixpath.join(base, args[0], "CMakeLists.txt"))
                if target in known and target not in order:
                    order.append(target)
    return trees


def _declared_options(trees: Mapping[str, Node]) -> tuple[dict[str, str], dict[str, bool]]:
    """(the file declaring each settable option, the literal default of each `option()`)."""
    homes: dict[str, str] = {}
    defaults: dict[str, bool] = {}
    for path, root in trees.items():
        for command in cmakelang.commands(root):
            args = cmakelang.arguments(command)
            name = cmakelang.name(command)
            if not args or not _SETTABLE.fullmatch(args[0]):
                continue
            if name == "option":
                homes.setdefault(args[0], path)
                default = _truth(args[2]) if len(args) > 2 else False
                if default is not None and "${" not in (args[2] if len(args) > 2 else ""):
                    defaults.setdefault(args[0], default)
            elif name == "set" and "CACHE" in args:
                homes.setdefault(args[0], path)
    return homes, defaults


def _option_values(
    defaults: Mapping[str, bool], options: Mapping[str, tuple[OptionSetting, ...]]
) -> dict[str, bool]:
    """Each option's value in every build Ollama makes; an option builds set differently has none."""
    value = dict(defaults)
    for name, settings in options.items():
        truths = {_truth(s.value) for s in settings}
        if all(s.ref.path.endswith(PARTIAL_SETTERS) for s in settings):  # other builds take the default
            truths.add(defaults.get(name))
        if len(truths) == 1 and None not in truths:
            value[name] = truths.pop() is True
        else:  # one build sets it one way, another the other way: no condition on it is false for all
            value.pop(name, None)
    return value


def upstream_build(
    upstream: Mapping[str, str], paths: list[str], options: Mapping[str, tuple[OptionSetting, ...]]
) -> UpstreamBuild:
    """Walk upstream's CMake files from the top (through every `add_subdirectory`), find each directory an
    `if(...)` Ollama's settings make false keeps out of the build, each directory whose sources a `-P`
    script handles only when an option Ollama leaves OFF is on, and the options read only in such places."""
    trees = _cmake_tree(upstream, paths)
    homes, defaults = _declared_options(trees)
    value = _option_values(defaults, options)
    build = _BuildWalk(value)
    for path, root in trees.items():
        build.walk(root, posixpath.dirname(path), None)
    off_dirs = {
        d: guards[0]
        for d, guards in build.added.items()
        if guards and all(g is not None for g in guards) and isinstance(guards[0], str)
    }
    for path, root in trees.items():
        directory = posixpath.dirname(path)
        option = _script_guard(root, directory, upstream, value)
        if option is not None and directory:
            off_dirs.setdefault(directory, option)
    # a directory below an off directory is off with it
    off_dirs = {
        d: o for d, o in off_dirs.items() if not any(d.startswith(p + "/") for p in off_dirs if p != d)
    }
    return UpstreamBuild(dict(sorted(off_dirs.items())), frozenset(build.dead - build.live), homes)


@dataclass
class _BuildWalk:
    """Walks upstream's CMake files with Ollama's option values: records each add_subdirectory with the
    option that switches it off for Ollama (None when nothing does) and every option name read where the
    build goes (`live`) or only where it never goes (`dead`)."""

    value: Mapping[str, bool]
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

    def command(self, node: Node, base: str, guard: str | None) -> None:
        args = cmakelang.arguments(node)
        command = cmakelang.name(node)
        read = args
        if command == "message":
            read = []  # printing an option reads nothing
        elif command in ("option", "cmake_dependent_option") or (command == "set" and "CACHE" in args):
            read = args[1:]  # declaring one reads only its default
        (self.dead if guard is not None else self.live).update(
            a for arg in read for a in _SETTABLE.findall(arg)
        )
        if command == "add_subdirectory" and read and "${" not in read[0]:
            self.added.setdefault(posixpath.normpath(posixpath.join(base, read[0])), []).append(guard)

    def branches(self, node: Node, base: str, guard: str | None) -> None:
        """One if/elseif/else block: a branch is dead when its condition is false for Ollama's build (its
        guard is the option that makes it so, "" when none does) or an earlier branch is surely taken."""
        current = guard
        earlier_true = False
        for part in node.children:
            if part.type in ("if_command", "elseif_command", "else_command"):
                text = " ".join(_node_text(c) for c in part.children if c.type == "argument_list")
                tokens = _CMAKE_TOKEN.findall(text)
                truth = None if part.type == "else_command" else _condition(tokens, self.value)
                if earlier_true:
                    branch: str | None = ""
                elif truth is False:
                    branch = _guard(tokens, self.value) or ""
                else:
                    branch = None
                (self.dead if guard is not None or truth is False or earlier_true else self.live).update(
                    t for t in tokens if _SETTABLE.fullmatch(t)
                )
                current = guard if guard is not None else branch
                earlier_true = earlier_true or truth is True
            elif part.type == "body":
                self.walk(part, base, current)


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
        raw = cmakelang.arguments(command)
        if "-P" not in raw or raw.index("-P") + 1 >= len(raw):
            continue
        source_vars = [m[1] for a in raw if (m := re.fullmatch(r"-D(\w+)=\$\{CMAKE_CURRENT_SOURCE_DIR\}", a))]
        passed = {m[1]: m[2] for a in raw if (m := re.fullmatch(r"-D(\w+)=\$\{(\w+)\}", a))}
        off = {var: opt for var, opt in passed.items() if value.get(opt) is False}
        script = cmakelang.arguments(command, env)[raw.index("-P") + 1].lstrip("/")
        text = _text(upstream, posixpath.normpath(script)) if off and source_vars else None
        if text is None:
            continue
        script_root = cmakelang.parse(text)
        touching = [re.compile(r"\$\{" + v + r"\}") for v in source_vars]
        for definition in syntax.captures("cmake", "(function_def) @f", script_root).get("f", []):
            if any(t.search(_node_text(definition)) for t in touching):
                header = cmakelang.arguments(definition.children[0])
                if header:
                    touching.append(re.compile(r"(?i)(?<![\w-])" + re.escape(header[0]) + r"\s*\("))
        for block in syntax.captures("cmake", "(if_condition) @i", script_root).get("i", []):
            first = block.children[0]
            tokens = _CMAKE_TOKEN.findall(
                " ".join(_node_text(c) for c in first.children if c.type == "argument_list")
            )
            body = next((c for c in block.children if c.type == "body"), None)
            if body is None or not any(t.search(_node_text(body)) for t in touching):
                continue
            for var, option in off.items():
                if var in tokens and _condition(tokens, {var: False}) is False:
                    return option
    return None


def shared_backend_dirs(
    upstream: Mapping[str, str], backends: frozenset[str], built: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Backend directory -> the built backends whose CMakeLists.txt compiles its files too (ggml-hip builds
    ggml-cuda's kernels)."""
    users: dict[str, set[str]] = {}
    for backend in sorted(built & backends):
        text = _text(upstream, f"{BACKEND_ROOT}ggml-{backend}/CMakeLists.txt") or ""
        for other in set(re.findall(r"\.\./ggml-([\w-]+)/", text)):
            if other in backends and other != backend:
                users.setdefault(other, set()).add(backend)
    return {k: frozenset(v) for k, v in users.items()}


# ---------------------------------------------------------------- compat sources


def compat_source_texts(
    ollama: Mapping[str, str], paths: list[str], patches: list[tuple[str, object]]
) -> list[tuple[str, str, str]]:
    """(path, text, side) of every C/C++ text Ollama adds to the upstream build: the files in and below the
    patches' directory (side "ollama"), and per file a patch adds or edits, the lines its hunks add (side
    "patch", path `<patch>:<upstream path>`, each line where it stands in the patch file, the rest blank)."""
    dirs = sorted({posixpath.dirname(p) + "/" for p, _ in patches}) or [DEFAULT_COMPAT_DIR]
    roots = [d for d in dirs if not any(d != o and d.startswith(o) for o in dirs)]
    out = [
        (p, t, "ollama")
        for p in paths
        if p.endswith(CPP_SOURCES) and any(p.startswith(r) for r in roots)
        if (t := _text(ollama, p)) is not None
    ]
    for patch_path, patch in patches:
        for fp in getattr(patch, "files", []):
            path = fp.new_path or ""
            if not path.endswith(CPP_SOURCES):
                continue
            lines: dict[int, str] = {}
            for hunk in fp.hunks:
                for offset, line in enumerate(hunk.lines):
                    if line.kind == "+":
                        lines[hunk.header_line + offset] = line.text.decode("utf-8", "replace").rstrip("\r\n")
            if lines:
                text = "\n".join(lines.get(n, "") for n in range(max(lines) + 1))
                out.append((f"{patch_path}:{path}", code_text(text, path), "patch"))
    return out


@dataclass(frozen=True)
class CompatUses:
    names: dict[str, tuple[LocalRef, ...]]
    strings: dict[str, tuple[LocalRef, ...]]


_USES_QUERY = """
(field_expression field: (field_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (qualified_identifier) @qualified_call)
(qualified_identifier) @qualified
(type_identifier) @type
(identifier) @bare
(string_content) @string
(preproc_defined (identifier) @macro)
(preproc_ifdef name: (identifier) @macro)
"""
_OWN_QUERY = """
(function_definition declarator: (function_declarator declarator: (_) @function))
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @function)))
(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @function)))
(declaration declarator: (function_declarator declarator: (_) @function))
(struct_specifier name: (type_identifier) @type body: (_))
(class_specifier name: (type_identifier) @type body: (_))
(enum_specifier name: (type_identifier) @type body: (_))
(enumerator name: (identifier) @local)
(type_definition declarator: (type_identifier) @type)
(alias_declaration name: (type_identifier) @type)
(namespace_definition name: (namespace_identifier) @namespace)
(preproc_def name: (identifier) @macro_def)
(preproc_function_def name: (identifier) @macro_def)
(parameter_declaration declarator: (_) @local)
(optional_parameter_declaration declarator: (_) @local)
(init_declarator declarator: (_) @local)
(declaration declarator: (identifier) @local)
(for_range_loop declarator: (_) @local)
(structured_binding_declarator (identifier) @local)
(lambda_capture_specifier (identifier) @local)
(field_declaration declarator: (_) @field)
(template_parameter_list (type_parameter_declaration (type_identifier) @type))
"""


def _declared(node: Node | None) -> str | None:
    """The name a declarator declares, through pointers, references, arrays and initialisers."""
    while node is not None and node.type not in ("identifier", "field_identifier", "type_identifier"):
        if node.type == "qualified_identifier":
            node = node.child_by_field_name("name")
            continue
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (c for c in node.named_children if c.type.endswith(("identifier", "declarator"))), None
            )
        node = inner
    return _node_text(node) if node is not None else None


def compat_uses(sources: list[tuple[str, str, str]]) -> CompatUses:
    """Upstream identifiers the compat sources use (member accesses, calls, qualified names, types, macros,
    enum values) and their string literals; their own functions, types, locals and parameters are no uses."""
    own: set[str] = set()
    locals_: set[str] = set()
    strong: Refs = {}
    bare: Refs = {}
    strings: Refs = {}
    for path, text, _side in sources:
        root = syntax.root("cpp", text)
        for kind, nodes in syntax.captures("cpp", _OWN_QUERY, root).items():
            for node in nodes:
                name = _declared(node) if kind in ("local", "field", "function") else _node_text(node)
                if not name:
                    continue
                name = name.rsplit("::", 1)[-1]
                (locals_ if kind in ("local", "field") else own).add(name)
        ref_path = path.split(":", 1)[0]  # a patch's lines are shown where they stand in the patch
        for kind, nodes in syntax.captures("cpp", _USES_QUERY, root).items():
            for node in nodes:
                ref = LocalRef(ref_path, node.start_point[0] + 1)
                if kind == "string":
                    _add(strings, _node_text(node), ref)
                    continue
                name = _node_text(node)
                if kind == "bare":
                    parent = node.parent
                    if parent is not None and parent.type in ("qualified_identifier",):
                        continue
                    _add(bare, name, ref)
                elif kind in ("qualified", "qualified_call"):
                    if node.parent is not None and node.parent.type == "qualified_identifier":
                        continue
                    compact = "".join(name.split())
                    _add(strong, compact, ref)
                    _add(strong, compact.rsplit("::", 1)[-1], ref)
                else:
                    _add(strong, name, ref)
    names: Refs = {}
    for name, refs in strong.items():
        last = name.rsplit("::", 1)[-1]
        head = name.split("::", 1)[0]
        if last in own or (head in own and "::" in name) or not re.fullmatch(r"[A-Za-z_][\w:<>,]*", name):
            continue
        names[name] = refs
    for name, refs in bare.items():
        if name in names:
            names[name].update(refs)
        elif name not in own and name not in locals_:
            names[name] = refs
    return CompatUses(_frozen(names), _frozen(strings))


def included_headers(
    sources: list[tuple[str, str, str]],
    ollama: Mapping[str, str],
    ollama_paths: list[str],
    upstream: Mapping[str, str],
    upstream_paths: list[str],
) -> frozenset[str]:
    """Upstream headers the compat sources include, transitively: `#include "x.h"` resolved in the
    includer's directory, else among upstream files named x.h (the one in the includer's directory first,
    then the shortest path), else among Ollama's compat files of that name."""
    by_name: dict[str, list[str]] = {}
    for path in upstream_paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    ollama_by_name: dict[str, list[str]] = {}
    for path, _text_, side in sources:
        if side == "ollama":
            ollama_by_name.setdefault(posixpath.basename(path), []).append(path)
    upstream_set = set(upstream_paths)
    ollama_set = set(ollama_paths)
    found: set[str] = set()
    queue: list[tuple[str, str, str]] = []  # (includer dir, include text, tree "upstream" | "ollama")
    for path, text, side in sources:
        includer = path.split(":", 1)[-1]
        tree = "ollama" if side == "ollama" else "upstream"  # a patch's lines land in upstream's tree
        for m in _INCLUDE.finditer(text):
            queue.append((posixpath.dirname(includer), m[1], tree))
    seen_ollama: set[str] = {p for p, _, s in sources if s == "ollama"}
    while queue:
        base, name, tree = queue.pop()
        local = posixpath.normpath(posixpath.join(base, name))
        target: str | None = None
        target_tree = tree
        if tree == "upstream" and local in upstream_set:
            target, target_tree = local, "upstream"
        elif tree == "ollama" and local in ollama_set:
            target, target_tree = local, "ollama"
        else:
            candidates = [
                p for p in by_name.get(posixpath.basename(name), ()) if p.endswith("/" + name) or p == name
            ]
            if candidates:
                target = min(candidates, key=lambda p: (posixpath.dirname(p) != base, p.count("/"), p))
                target_tree = "upstream"
            elif posixpath.basename(name) in ollama_by_name:
                target, target_tree = ollama_by_name[posixpath.basename(name)][0], "ollama"
        if target is None or target in found or target in seen_ollama:
            continue
        if target_tree == "upstream":
            found.add(target)
            included = _text(upstream, target)
        else:
            seen_ollama.add(target)
            included = _text(ollama, target)
        for m in _INCLUDE.finditer(included or ""):
            queue.append((posixpath.dirname(target), m[1], target_tree))
    return frozenset(found)


# ---------------------------------------------------------------- Ollama's Go code and llama-server


_GO_STRINGS = """
(interpreted_string_literal) @s
(raw_string_literal) @s
"""


def _go_string(node: Node) -> str:
    text = _node_text(node)
    if node.type == "raw_string_literal":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text[1:-1]


def go_flags(ollama: Mapping[str, str], paths: list[str]) -> dict[str, tuple[LocalRef, ...]]:
    """Flags (`--xxx`, `-x`) in the string literals of Ollama's Go code that starts and probes llama-server."""
    found: Refs = {}
    for path in sorted(p for p in paths if glob_match(p, OLLAMA_CALLERS) and not p.endswith("_test.go")):
        text = _text(ollama, path)
        if not text or not _FLAG_HINT.search(text):
            continue
        root = syntax.root("go", text)
        for node in sorted(syntax.captures("go", _GO_STRINGS, root).get("s", []), key=lambda n: n.start_byte):
            body = _node_text(node)[1:-1]
            for m in _FLAG_IN_STRING.finditer(body):
                _add(found, m[1].split("=", 1)[0], LocalRef(path, node.start_point[0] + 1))
    return _frozen(found)


@dataclass(frozen=True)
class ServerInterface:
    endpoints: dict[str, tuple[LocalRef, ...]]
    request_fields: dict[str, tuple[LocalRef, ...]]
    response_fields: dict[str, tuple[LocalRef, ...]]


_GO_INTERFACE = """
(type_spec name: (type_identifier) type: (struct_type)) @spec
(call_expression) @call
(function_declaration) @function
(method_declaration) @function
(func_literal) @function
"""


def _struct_fields(struct: Node, path: str) -> tuple[list[tuple[str, LocalRef]], set[str]]:
    """The JSON names of a struct's tagged fields (nested anonymous structs included) and the named types
    its fields hold."""
    fields: list[tuple[str, LocalRef]] = []
    types: set[str] = set()
    stack = [struct]
    while stack:
        node = stack.pop()
        if node.type == "field_declaration":
            tag = node.child_by_field_name("tag")
            m = _JSON_TAG.search(_node_text(tag)) if tag is not None else None
            names = [_node_text(n) for n in node.children_by_field_name("name")]
            key = m[1] if m and m[1] else (names[0] if names and not m else None)
            if key and key != "-":
                fields.append((key, LocalRef(path, node.start_point[0] + 1)))
        if node.type == "type_identifier":
            types.add(_node_text(node))
        stack.extend(node.children)
    return fields, types


def server_interface(ollama: Mapping[str, str], paths: list[str]) -> ServerInterface:
    """The llama-server endpoints Ollama's Go code requests, and the JSON fields of what it encodes for and
    decodes from them (a struct marshalled is a request, one unmarshalled into a response; a tagged struct
    whose use is not clear counts as both)."""
    endpoints: Refs = {}
    structs: dict[str, tuple[list[tuple[str, LocalRef]], set[str]]] = {}
    sent: set[str] = set()
    received: set[str] = set()
    request: Refs = {}
    response: Refs = {}
    files = []
    for path in sorted(
        p for p in paths if glob_match(p, OLLAMA_SERVER_CLIENTS) and not p.endswith("_test.go")
    ):
        text = _text(ollama, path)
        if not text or ("://" not in text and "json" not in text):
            continue
        root = syntax.root("go", text)
        captured = syntax.captures("go", _GO_INTERFACE, root)
        found_here = False
        for node in captured.get("call", []):
            callee = _node_text(node.child_by_field_name("function"))
            for literal in syntax.captures(
                "go", _GO_STRINGS, node.child_by_field_name("arguments") or node
            ).get("s", []):
                value = _go_string(literal)
                m = _URL_PATH.match(value)
                if m is None and _BARE_PATH.match(value) and _REQUEST_CALL.search(callee):
                    m = _BARE_PATH.match(value)
                    endpoint = value
                elif m is not None:
                    endpoint = m[1]
                else:
                    continue
                endpoint = re.sub(r"%[a-z]", "{}", endpoint.rstrip("/")) or "/"
                _add(endpoints, endpoint, LocalRef(path, literal.start_point[0] + 1))
                found_here = True
        if found_here:
            files.append((path, root, captured))
    for path, _root, captured in files:
        for spec in captured.get("spec", []):
            struct = spec.child_by_field_name("type")
            if struct is not None and "json:" in _node_text(
                struct
            ):  # a struct without tags is no wire format
                structs[_node_text(spec.child_by_field_name("name"))] = _struct_fields(struct, path)
    for path, _root, captured in files:
        for function in captured.get("function", []):
            _json_uses(function, path, sent, received, request, response)

    def closure(names: set[str]) -> set[str]:
        out, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name in out or name not in structs:
                continue
            out.add(name)
            todo += structs[name][1]
        return out

    sent_all, received_all = closure(sent), closure(received)
    unsure = set(structs) - sent_all - received_all
    for name in sent_all | unsure:
        for key, ref in structs[name][0]:
            _add(request, key, ref)
    for name in received_all | unsure:
        for key, ref in structs[name][0]:
            _add(response, key, ref)
    return ServerInterface(_frozen(endpoints), _frozen(request), _frozen(response))


def _local_types(function: Node) -> dict[str, Node]:
    """The type each variable and parameter of a Go function is declared with, or the composite literal a
    `:=` gives it."""
    types: dict[str, Node] = {}
    for declarations in syntax.captures("go", "(var_spec) @d (parameter_declaration) @d", function).values():
        for node in declarations:
            declared = node.child_by_field_name("type")
            for name in node.children_by_field_name("name"):
                if declared is not None:
                    types[_node_text(name)] = declared
    for node in syntax.captures("go", "(short_var_declaration) @s", function).get("s", []):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            continue
        for name, value in zip(left.named_children, right.named_children):
            if value.type == "unary_expression":
                value = value.child_by_field_name("operand") or value
            if value.type == "composite_literal":
                types[_node_text(name)] = value.child_by_field_name("type") or value
    return types


_SENDS = {"Marshal": 0, "MarshalIndent": 0, "Encode": 0}  # method -> the argument that is sent
_RECEIVES = {"Unmarshal": 1, "Decode": 0}  # method -> the argument that is filled


def _json_value(call: Node) -> tuple[Node, bool] | None:
    """(the value a json call sends or fills, whether it sends) for Marshal/Encode/Unmarshal/Decode."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "selector_expression":
        return None
    method = _node_text(callee.child_by_field_name("field"))
    args = call.child_by_field_name("arguments")
    values = list(args.named_children) if args is not None else []
    at = _SENDS.get(method, _RECEIVES.get(method))
    if at is None or len(values) <= at:
        return None
    target = values[at]
    if target.type == "unary_expression":
        target = target.child_by_field_name("operand") or target
    return target, method in _SENDS


def _map_literal_keys(target: Node, path: str, fields: Refs) -> None:
    body = target.child_by_field_name("body")
    if body is None:
        return
    query = "(keyed_element . (literal_element (interpreted_string_literal) @k))"
    for literal in syntax.captures("go", query, body).get("k", []):
        _add(fields, _go_string(literal), LocalRef(path, literal.start_point[0] + 1))


def _json_uses(
    function: Node,
    path: str,
    sent: set[str],
    received: set[str],
    request: Refs,
    response: Refs,
) -> None:
    """Classify the values one function hands to json.Marshal/Encode (sent) and Unmarshal/Decode
    (received): named struct types by name, anonymous structs and map literals field by field."""
    types = _local_types(function)
    for call in syntax.captures("go", "(call_expression) @c", function).get("c", []):
        found = _json_value(call)
        if found is None:
            continue
        target, sends = found
        into, fields = (sent, request) if sends else (received, response)
        kind: Node | None
        if target.type == "composite_literal":
            kind = target.child_by_field_name("type")
            if kind is not None and kind.type == "map_type":
                _map_literal_keys(target, path, fields)
                continue
        else:
            kind = types.get(_node_text(target)) if target.type == "identifier" else None
        if kind is None:
            continue
        if kind.type == "struct_type":
            keys, named = _struct_fields(kind, path)
            for key, ref in keys:
                _add(fields, key, ref)
            into.update(named)
        else:
            into.update(
                _node_text(n) for n in syntax.captures("go", "(type_identifier) @t", kind).get("t", [])
            )
            if kind.type == "type_identifier":
                into.add(_node_text(kind))


# ---------------------------------------------------------------- explanation


def explain(c: Consumers) -> str:
    """The model as text for a person: what is built and why, from where; what the compat code and the Go
    code rely on."""

    def where(refs: Iterable[LocalRef], limit: int = 3) -> str:
        refs = list(refs)
        shown = ", ".join(f"{r.path}:{r.line}" for r in refs[:limit])
        return shown + (f" (+{len(refs) - limit} more)" if len(refs) > limit else "")

    lines = ["Backends built:"]
    for backend in sorted(c.backends):
        settings = c.options.get(f"GGML_{backend.upper()}", ())
        on = [s.ref for s in settings if _truth(s.value) is True]
        lines.append(
            f"  {backend}: " + (f"GGML_{backend.upper()}=ON at {where(on)}" if on else "always built")
        )
    not_built = sorted(
        b for b in c.upstream_backends - c.backends if not c.shared_dirs.get(b, frozenset()) & c.backends
    )
    lines.append("Backends not built (no Ollama build turns them on): " + (", ".join(not_built) or "none"))
    shared = {d: sorted(u) for d, u in c.shared_dirs.items() if d not in c.backends}
    for directory, users in sorted(shared.items()):
        lines.append(f"  ggml/src/ggml-{directory}/ is compiled by {', '.join(users)} too")
    lines.append("Upstream directories cut out of Ollama's build:")
    for directory, option in c.off_dirs.items():
        settings = c.options.get(option, ())
        how = (
            f"Ollama sets it {settings[0].value} at {where([s.ref for s in settings])}"
            if settings
            else "upstream's default is OFF and Ollama does not set it"
        )
        lines.append(f"  {directory}/ (needs {option}: {how})")
    if not c.off_dirs:
        lines.append("  none")
    lines.append(f"Cache variables Ollama sets: {len(c.options)}")
    for name, settings in c.options.items():
        if _SETTABLE.fullmatch(name):
            values = ", ".join(dict.fromkeys(s.value for s in settings))
            lines.append(f"  {name}={values} ({where([s.ref for s in settings], 2)})")
    lines.append(f"Compat sources read: {', '.join(c.compat_sources) or 'none'}")
    lines.append(
        f"Upstream headers they include ({len(c.headers)}): " + (", ".join(sorted(c.headers)) or "none")
    )
    lines.append(
        f"Upstream names they use ({len(c.names)}): "
        + ", ".join(sorted(c.names)[:60])
        + (" ..." if len(c.names) > 60 else "")
    )
    lines.append(f"String literals they hold: {len(c.strings)}")
    lines.append(
        "llama-server endpoints Ollama requests: "
        + (", ".join(f"{e} ({where(r, 1)})" for e, r in c.endpoints.items()) or "none")
    )
    lines.append("JSON fields Ollama sends: " + (", ".join(c.request_fields) or "none"))
    lines.append("JSON fields Ollama reads: " + (", ".join(c.response_fields) or "none"))
    lines.append("llama-server flags Ollama passes: " + (", ".join(c.flags) or "none"))
    return "\n".join(lines) + "\n"
