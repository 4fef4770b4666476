"""One review's inputs, which its checks (bot/review/checks/) read: the changed files, upstream's texts at
both refs, the anchors a profile finds by content, Ollama's build model and contract inventory. Each is read
on first use, once per review; the checks hold their own logic."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, TypeVar

from bot.build import presets
from bot.model import LocalRef
from bot.repos import buildpatches
from bot.review import (
    buildreach,
    cmake,
    consumers,
    generators,
    hookparams,
    logformats,
    mlxbuild,
)
from bot.review.changes import Draft, FileChange
from bot.review.checks import profile_data
from bot.review.consumers.contracts import Contracts, contracts_of
from bot.review.consumers.upstream_build import unbuilt_commands
from bot.review.ruleset import Rule
from bot.review.source import C_SOURCES, code_text, extension, glob_match, globs
from bot.review.upstream.anchors import ROUTE

if TYPE_CHECKING:
    from bot.review import ReviewContext

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class Run:
    """One review's inputs, read on first use."""

    def __init__(self, ctx: ReviewContext, changes: list[FileChange], rules: list[Rule] | None = None):
        self.ctx = ctx
        self.changes = changes
        self.rules = rules or []  # the shipped rules and the repository's, loaded
        self.local = consumers.SnapshotTexts(ctx.ollama)
        self.by_path = {c.path: c for c in changes}
        self.by_old_path = {c.old_path: c for c in changes if c.old_path}
        self.c_changes = [c for c in changes if extension(c.path) in C_SOURCES]
        self._tools: dict[str, tuple[bool, frozenset[str]]] = {}

    @cached_property
    def consumers(self) -> consumers.Consumers:
        """What of the new ref Ollama builds, includes and calls: asked by most checks."""
        return consumers.remembered_model(
            self.local, consumers.SnapshotTexts(self.ctx.new), self.ctx.patches, self.ctx.pin.patches
        )

    @cached_property
    def contracts(self) -> Contracts:
        """What Ollama's code relies on of upstream (read on first use, once per review)."""
        return contracts_of(self.local)

    def settle_inventory(self, wire: bool = True) -> None:
        """When this review read the inventory: its groups kept, its Go program let go (the wire check's
        groups read first unless `wire` is False: the check runs in a process of its own)."""
        if "contracts" in self.__dict__:
            self.contracts.settle(wire)

    def read_go_texts(self) -> None:
        """Ollama's Go program read in this process (the only one that may ask the service for a file), for a
        forked copy that reads it: the wire check's documented values and Go names."""
        for path in self.local:
            if path == "go.mod" or (path.endswith(".go") and not path.endswith("_test.go")):
                self.local.get(path)

    def inventory_groups(self, names: tuple[str, ...]) -> dict[str, object]:
        """The inventory's groups of these names, read here (a forked copy is handed them)."""
        return {name: getattr(self.contracts, name) for name in names}

    def take_inventory_groups(self, groups: Mapping[str, object]) -> None:
        """Groups read by the review's process, taken as this copy's own."""
        self.contracts.take(groups)

    @cached_property
    def server_changes(self) -> list[FileChange]:
        """The changed llama-server sources; none when no change reaches their code (a space inside a
        string, such as a frame's, counts)."""
        server = [c for c in self.changes if glob_match(c.path, self.server_sources)]
        return server if any(c.old_code != c.new_code for c in server) else []

    def where_now(self, path: str, line: int) -> int | None:
        change = self.by_old_path.get(path)
        return change.new_line(line) if change else line

    def significant_changes(self, globs) -> list[FileChange]:
        return [
            c
            for c in self.changes
            if (glob_match(c.path, globs) or glob_match(c.old_path or "", globs)) and c.significant
        ]

    @cached_property
    def cmake_texts(self) -> tuple[dict[str, str], dict[str, str]]:
        """Every CMake file at the old and the new ref, comment-free (unchanged ones read once)."""
        unchanged = self._unchanged_cmake_code()
        old_changed, new_changed = _changed_cmake_code(self.changes)
        return unchanged | old_changed, unchanged | new_changed

    def _unchanged_cmake_code(self) -> dict[str, str]:
        """The CMake files the bump leaves alone, comment-free at the new ref: their code at both refs."""
        texts = {}
        for path in self.ctx.new.files():
            if glob_match(path, cmake.CMAKE_FILES) and path not in self.by_path:
                text = self.new_code(path)
                if text is not None:
                    texts[path] = text
        return texts

    def new_code(self, path: str) -> str | None:
        """An upstream file at the new ref, comment-free (from its change when it changed); None, noted as
        unreadable, when the clone lacks it."""
        change = self.by_path.get(path)
        if change is not None:
            return change.new_code
        if self.ctx.new.missing(path):
            self.ctx.history.upstream.note_unreadable(path, str(self.ctx.new.commit.id))
            return None
        return code_text((self.ctx.new.read(path) or b"").decode("utf-8", "replace"), path)

    def code_at_both(self, path: str) -> tuple[str | None, str | None]:
        """An upstream file's comment-free code at the old and at the new ref (an unchanged one read once)."""
        change = self.by_path.get(path) or self.by_old_path.get(path)
        if change is None:
            code = self.new_code(path)
            return code, code
        return (change.old_code if change.old_path else None), (change.new_code if change.new_path else None)

    @cached_property
    def cmake_changed(self) -> bool:
        """Whether the bump changes a CMake file beyond comments."""
        return bool(self.significant_changes(cmake.CMAKE_FILES))

    @cached_property
    def option_names(self) -> cmake.OptionNames:
        """The upstream's cache option names, as its review profile gives them."""
        return cmake.OptionNames(re.compile(profile_data(self.ctx.pin.review)["option_names"]))

    @cached_property
    def ollama_settings(self) -> dict[str, list[LocalRef]]:
        """Every CMake variable Ollama's build sets or passes, with where: the profile's option names where
        its CMake files set them, and every variable its presets, CMake files and command lines set
        (the consumer model's), whatever its name."""
        found = cmake.ollama_mentions(self.local, self.option_names)
        for name, settings in self.consumers.options.items():
            refs = found.setdefault(name, [])
            refs += [s.ref for s in settings if s.ref not in refs]
        return found

    def weighed_by_build(self, d: Draft) -> Draft:
        """The draft, as information only when Ollama's build never reads its CMake file (CMake files that
        Ollama's build may never read look for packages and run generators)."""
        return d if self.build_reads()(d.path) else replace(d, severity="info")

    @cached_property
    def unbuilt_commands(self) -> dict[str, list[tuple[int, int]]]:
        """Per upstream CMake file, the commands in branches Ollama's build never takes."""
        _, new_texts = self.cmake_texts
        return unbuilt_commands(new_texts, list(new_texts), self.consumers.options)

    def build_files(self) -> list[str]:
        """The upstream CMake files Ollama's build reads, and the code of the tools they run, that the bump
        changes beyond comments: what makes a build worth running."""
        _, new_texts = self.cmake_texts
        return buildreach.changed_build_files(
            [c.path for c in self.significant_changes(cmake.CMAKE_FILES)],
            gathered(new_texts, generators.steps),
            merged(new_texts, generators.target_sources),
            SignificantPaths(self.by_path),
            self.build_reads(),
        )

    def build_reads(self) -> Callable[[str], bool]:
        """Whether Ollama's build reads an upstream CMake file, as the pin's review profile tells; a pin
        whose build is not reviewed reads them all."""
        profile = self.ctx.pin.review
        if profile == "llama.cpp":
            texts, model = self.cmake_texts[1], self.consumers
            return lambda path: buildreach.read_by_build(path, texts, model.builds)
        if profile in ("mlx", "mlx-c"):
            _, upstream = self.mlx_reading
            return lambda path: path in upstream.built or path in upstream.old_built
        return lambda path: True

    @cached_property
    def pin_build_dirs(self) -> tuple[str, ...]:
        """The directories of Ollama's build where an option of the pin would be set: where its CMake files
        fetch the pin, as the build model reads them."""
        fetches = buildpatches.fetch_sources(self.ctx.ollama, self.ctx.pin.version_file)
        return cmake.build_dirs([(f.cmake_file, f.line) for f in fetches], self.local)

    @cached_property
    def mlx_reading(self) -> tuple[mlxbuild.OllamaBuild, mlxbuild.Upstream]:
        """Ollama's build of the pin, read from its tree at the head, and upstream's CMake at both refs."""
        old_texts, new_texts = self.cmake_texts
        build_files = [p for p in self.local if glob_match(p, cmake.OLLAMA_SETTERS)]
        ollama = mlxbuild.ollama_build(
            self.ctx.ollama, self.local, presets.project_word(self.ctx.pin), build_files
        )
        return ollama, mlxbuild.Upstream.of(old_texts, new_texts, ollama)

    @cached_property
    def arg_table(self) -> FileChange | None:
        """The change of upstream's argument table (None when the bump leaves it alone)."""
        return self.anchored("arg_table")

    @cached_property
    def arg_table_path(self) -> str:
        """Where upstream's argument table is."""
        return self.anchor_path("arg_table")

    def anchor_path(self, anchor: str) -> str:
        """Where the file a content anchor finds is: its change's (old) path, else the profile's hint; "" for
        a profile without one."""
        found = profile_data(self.ctx.pin.review).get(anchor)
        change = self.anchored(anchor)
        return (change.old_path or change.path) if change is not None else found["hint"] if found else ""

    def anchored(self, anchor: str) -> FileChange | None:
        """The changed file the profile's content anchor finds: its hint, when the hint's old text matches
        the anchor's entry pattern, else the changed C/C++ file whose old text matches it most often; None
        when no changed file does (the bump leaves that file alone) or the profile has no such anchor."""
        found = profile_data(self.ctx.pin.review).get(anchor)
        if found is None:
            return None
        entry = re.compile(found["entry"])
        hinted = self.by_old_path.get(found["hint"])
        if hinted is not None and entry.search(hinted.old_text):
            return hinted
        holding = [(len(entry.findall(c.old_text)), c) for c in self.c_changes if c.old_path]
        count, change = max(holding, key=lambda h: h[0], default=(0, None))
        return change if count else None

    def spelled_unchanged(self, needle: str, holds: Callable[[str], bool]) -> bool:
        """Whether a C/C++ file the bump leaves alone spells `needle` where `holds` says so of its comment-free
        code (asked of a name gone from the changed files: only the files whose text holds the needle are
        decoded)."""
        new, raw = self.ctx.new, needle.encode()
        for path in new.files():
            if extension(path) not in C_SOURCES or path in self.by_path or new.missing(path):
                continue
            data = new.read(path) or b""
            if raw in data and holds(code_text(data.decode("utf-8", "replace"), path)):
                return True
        return False

    @cached_property
    def printing(self) -> logformats.Program:
        """What the log-line checks ask of this review: which programs code writes to, Ollama's patterns
        (the inventory's), the built files that print a line."""
        patterns = cache(lambda: logformats.printed_patterns(self.contracts.output_patterns))
        return logformats.Program(self.writes_to, patterns, self._built_sources)

    def _built_sources(self, needles: Collection[bytes]) -> Iterator[tuple[str, bytes | None]]:
        """The C/C++ files at the new ref that Ollama builds into a program it runs and that hold one of
        the (lower-case) needles; None for a file the clone lacks. A search, like `git grep`: only the files
        that hold a needle are read."""
        new = self.ctx.new
        for path in new.files():
            if (
                extension(path) not in C_SOURCES
                or not self.consumers.builds(path)
                or not self.printing.runs(path)
            ):
                continue
            entry = new.entry(path)
            if entry is None or not new.repo.odb.exists(entry.id):
                yield path, None
            elif any(n in (data := new.blobs.odb.read(entry.id)[1]).lower() for n in needles):
                yield path, data

    def request_parsers(self) -> dict[str, str]:
        """The server sources that read a request's fields, comment-free at the new ref."""
        parsers = {}
        for path in self.ctx.new.files():
            if self.parses_requests(path):
                code = self.new_code(path)
                if code is not None:
                    parsers[path] = code
        return parsers

    @cached_property
    def server_sources(self) -> tuple[str, ...]:
        """llama-server's sources, as globs: the profile's when they hold a file at the new ref (a hint), else
        the directory of the C++ files that register the most HTTP routes there (found by content); none
        when no file does."""
        hinted = self.profile_globs("server_sources")
        if not hinted or any(glob_match(p, hinted) for p in self.ctx.new.files()):
            return hinted
        directory = self._routes_directory()
        return globs(f"{directory}/**/*.{{cpp,h,hpp}}") if directory is not None else ()

    @cached_property
    def server_lost(self) -> bool:
        """Whether the old ref had llama-server's sources where the profile says and the new ref has none
        there nor any source registering an HTTP route: the checks that read them have nothing to read."""
        hinted = self.profile_globs("server_sources")
        return (
            bool(hinted)
            and not self.server_sources
            and any(glob_match(p, hinted) for p in self.ctx.old.files())
        )

    def _routes_directory(self) -> str | None:
        """The directory of the C++ file at the new ref holding the most route registrations."""
        new, counts = self.ctx.new, dict[str, int]()
        for path in new.files():
            if path.endswith(".cpp") and not new.missing(path):
                data = new.read(path) or b""
                if b'"/' in data:
                    counts[path] = len(ROUTE.findall(data.decode("utf-8", "replace")))
        most = max(counts, key=lambda p: (counts[p], p), default=None)
        return posixpath.dirname(most) if most is not None and counts[most] else None

    def parses_requests(self, path: str) -> bool:
        """Whether a file is one of llama-server's C++ sources (where requests are parsed)."""
        return path.endswith(".cpp") and glob_match(path, self.server_sources)

    def profile_globs(self, key: str) -> tuple[str, ...]:
        return globs(*profile_data(self.ctx.pin.review).get(key, ()))

    def writes_to(self, path: str) -> frozenset[str] | None:
        """The programs code at `path` can write to the output of: those a `tools/<dir>/` that builds only
        programs (no library) builds; None (any) for other code."""
        tool = self._tool(path)
        return None if tool is None or tool[0] else tool[1]

    def named_programs(self, path: str) -> frozenset[str] | None:
        """The programs the build file of code under `tools/<dir>/` names (its own, and those it builds a
        library for by name); None for code outside `tools/`, which any program may hold."""
        tool = self._tool(path)
        return None if tool is None else tool[1]

    def _tool(self, path: str) -> tuple[bool, frozenset[str]] | None:
        """For code under `tools/<dir>/`: whether the directory builds a library, and the `llama-*` names
        its build file spells."""
        parts = path.split("/")
        programs = profile_data(self.ctx.pin.review).get("programs_dir")
        if parts[0] != programs or len(parts) < 3:
            return None
        if parts[1] not in self._tools:
            text = (self.ctx.new.read(f"{programs}/{parts[1]}/CMakeLists.txt") or b"").decode(
                "utf-8", "replace"
            )
            library = not text or re.search(r"\badd_library\s*\(", text) is not None
            self._tools[parts[1]] = (library, frozenset(re.findall(r"\bllama-[\w-]+", text)))
        return self._tools[parts[1]]

    @property
    def compat_used(self) -> bool:
        """Whether C/C++ changed and Ollama's compatibility code uses upstream names."""
        return bool(self.c_changes and self.consumers.names)

    @cached_property
    def hook_names(self) -> list[hookparams.HookName]:
        """The names the carried patches' code spells bare in the upstream functions it edits."""
        return hookparams.hook_names(self.ctx.patches)

    def built_c_changes(self) -> list[FileChange]:
        """The changed C and C++ files that were there before and that Ollama's build compiles."""
        return [c for c in self.c_changes if c.old_path and self.consumers.builds(c.path)]


def _changed_cmake_code(changes: list[FileChange]) -> tuple[dict[str, str], dict[str, str]]:
    """The changed CMake files' comment-free code at the old and at the new ref, by their path there."""
    old = {
        c.old_path: c.old_code for c in changes if c.old_path and glob_match(c.old_path, cmake.CMAKE_FILES)
    }
    new = {
        c.new_path: c.new_code for c in changes if c.new_path and glob_match(c.new_path, cmake.CMAKE_FILES)
    }
    return old, new


def merged(texts: Mapping[str, str], read: Callable[[str, str], Mapping[K, V]]) -> dict[K, V]:
    """What `read(text, path)` finds in each file, as one table (a later file's entry wins)."""
    return {k: v for path, text in texts.items() for k, v in read(text, path).items()}


def gathered(texts: Mapping[str, str], read: Callable[[str, str], Iterable[T]]) -> list[T]:
    """What `read(text, path)` finds in each file, one file after another."""
    return [found for path, text in texts.items() for found in read(text, path)]


class SignificantPaths(Container[str]):
    """The upstream paths whose code changed, asked one path at a time: telling needs both texts."""

    def __init__(self, by_path: Mapping[str, FileChange]):
        self._by_path = by_path

    def __contains__(self, path: object) -> bool:
        change = self._by_path.get(path) if isinstance(path, str) else None
        return change is not None and bool(change.significant)
