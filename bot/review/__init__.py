"""Upstream review: what in the new upstream can silently break Ollama, and where in Ollama.

This module is the only one that touches git: it takes the upstream diff
once, reads only the blobs a detector asks for, hands plain text to the
detectors (one module per concern, pure functions) and turns their drafts
into findings with a link to the new ref, the upstream commits that
introduced each one and the Ollama lines that consume it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property, partial

import pygit2

from bot.config import Pin
from bot.history import History
from bot.model import SEVERITY_ORDER, Commit, Finding
from bot.patchfile import PatchFile
from bot.review import (
    api,
    archs,
    cmake,
    compat,
    consumers,
    flags,
    generators,
    grouping,
    limits,
    logformats,
    symbols,
)
from bot.review.changes import AREAS, Draft, FileChange, Span, hunk_lines
from bot.review.patchcontext import patch_context_drafts
from bot.review.rules import load_rules, ollama_uses, rule_drafts
from bot.review.source import C_SOURCES, code_text, extension, glob_match
from bot.snapshot import GitSnapshot, Snapshot, blob_cache

MAX_RANGES = 5  # line ranges of one draft looked up for its commits


@dataclass
class ReviewContext:
    pin: Pin
    old: GitSnapshot
    new: GitSnapshot
    history: History
    ollama: Snapshot
    patches: list[tuple[str, PatchFile]]
    rules: dict
    # (patch path, hunk header line) of the hunks the patch section already explains
    explained: frozenset[tuple[str, int]] = frozenset()
    consumers: tuple[api.ConsumerCode, ...] = ()  # code that compiles against this upstream's headers


def review(ctx: ReviewContext) -> list[Finding]:
    """All findings for one pin, merged (identical findings once) and sorted high -> medium -> info."""
    rules = load_rules(ctx.rules)
    changes, skipped = upstream_changes(ctx.old.repo, ctx.old.tree, ctx.new.tree)
    for path, side in skipped:
        ctx.history.upstream.note_unreadable(path, str((ctx.old if side == "old" else ctx.new).commit.id))
    if not changes:
        return _unreadable(ctx)
    run = _Run(ctx, changes)
    # llama.cpp's rules and detectors say nothing true about another upstream
    if ctx.pin.review != "llama.cpp":
        drafts = run.consumer_breaks() + (
            []
            if ctx.pin.review == "none"
            else [
                *([*run.options(cmake.MLX_OPTIONS), *run.dependencies()] if ctx.pin.review == "mlx" else []),
                *patch_context_drafts(ctx.patches, run.by_old_path, ctx.explained),
            ]
        )
        # one item per broken declaration, each with its call sites, whichever commit changed several
        return merge([_Attribution(ctx).finding(d) for d in drafts] + _unreadable(ctx))
    drafts = [
        *rule_drafts(rules, changes, run.local, run.consumers.builds),
        *run.build(),
        *run.ggml_api(),
        *run.server_flags(),
        *run.log_lines(),
        *run.architectures(),
        *run.compat_sources(),
        *run.request_limits(),
        *patch_context_drafts(ctx.patches, run.by_old_path, ctx.explained),
    ]
    attribution = _Attribution(ctx)
    findings = [attribution.finding(d) for d in grouping.by_cause(drafts)]  # notes what it could not read
    return merge(grouping.by_commit(merge(findings)) + _unreadable(ctx))


def _unreadable(ctx: ReviewContext) -> list[Finding]:
    """One info finding naming the upstream files a partial clone lacks: the review had to skip them."""
    upstream = ctx.history.upstream
    if not upstream.unreadable:
        return []
    labels = {
        str(ctx.old.commit.id): f"the old ref (`{str(ctx.old.commit.id)[:12]}`)",
        str(ctx.new.commit.id): f"the new ref (`{str(ctx.new.commit.id)[:12]}`)",
    }
    listed = "\n".join(
        f"- `{path}` at {labels.get(sha, f'commit `{sha[:12]}`')}"
        for path, sha in sorted(upstream.unreadable.items())
    )
    why = f" and could not be fetched: {upstream.fetch_problem}" if upstream.fetch_problem else ""
    count = len(upstream.unreadable)
    return [
        Finding(
            "patch-context",
            "info",
            f"{count} upstream file{'s' if count != 1 else ''} could not be read "
            "(missing from the upstream clone)",
            f"The files below are missing from {upstream.source}{why}: the review skipped them, and the "
            f"upstream commits credited with their lines may be incomplete.\n\n{listed}",
            min(upstream.unreadable),
            None,
        )
    ]


def upstream_changes(
    repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree
) -> tuple[list[FileChange], list[tuple[str, str]]]:
    """The text files that differ between two trees, with their hunks (blobs are read later, on demand), and
    the (path, "old" or "new") whose object a partial clone lacks, left out."""
    diff = old.diff_to_tree(new, context_lines=0)
    odb = repo.odb

    def lacks(f: pygit2.DiffFile) -> bool:
        return f.mode not in (0, pygit2.GIT_FILEMODE_COMMIT) and not odb.exists(f.id)

    if any(lacks(f) for d in diff.deltas for f in (d.old_file, d.new_file)):
        diff.find_similar(
            flags=pygit2.enums.DiffFind.FIND_RENAMES | pygit2.enums.DiffFind.FIND_EXACT_MATCH_ONLY
        )
    else:  # comparing contents reads every added and deleted blob
        diff.find_similar()
    changes = []
    skipped = []
    for index, delta in enumerate(diff.deltas):
        missing = [
            (f.path, side) for f, side in ((delta.old_file, "old"), (delta.new_file, "new")) if lacks(f)
        ]
        if missing:
            skipped += missing
            continue
        patch = diff[index]
        if patch is None:
            continue
        delta = patch.delta
        if delta.is_binary:
            continue
        added, deleted = delta.status == pygit2.GIT_DELTA_ADDED, delta.status == pygit2.GIT_DELTA_DELETED
        hunks = patch.hunks
        spans = [Span(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in hunks]
        if not spans:
            continue  # a mode change or an exact rename: no content changed
        changes.append(
            FileChange(
                None if added else delta.old_file.path,
                None if deleted else delta.new_file.path,
                spans,
                _loader(repo, delta.old_file.id),
                _loader(repo, delta.new_file.id),
                hunk_lines(hunks),
            )
        )
    return changes, skipped


def _loader(repo: pygit2.Repository, oid: pygit2.Oid) -> Callable[[], bytes | None]:
    blobs = blob_cache(repo)  # the patch stage and the attribution read some of the same blobs
    return lambda: blobs.read(oid)


class LocalFiles(Mapping[str, str]):
    """The Ollama tree as comment-free texts, read on first use."""

    def __init__(self, snapshot: Snapshot):
        self._snapshot = snapshot
        self._texts: dict[str, str] = {}

    @cached_property
    def _paths(self) -> list[str]:
        return self._snapshot.files("")

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __getitem__(self, path: str) -> str:
        if path not in self._texts:
            data = self._snapshot.read(path)
            if data is None:
                raise KeyError(path)
            self._texts[path] = code_text(data.decode("utf-8", "replace"), path)
        return self._texts[path]


class _Run:
    """One review: routes the changed files to the detectors that care about them."""

    def __init__(self, ctx: ReviewContext, changes: list[FileChange]):
        self.ctx = ctx
        self.changes = changes
        self.local = LocalFiles(ctx.ollama)
        self.by_path = {c.path: c for c in changes}
        self.by_old_path = {c.old_path: c for c in changes if c.old_path}
        self.c_changes = [c for c in changes if extension(c.path) in C_SOURCES]
        self._runs: dict[str, bool] = {}

    @cached_property
    def consumers(self) -> consumers.Consumers:
        """What of the new ref Ollama builds, includes and calls: asked by every detector."""
        return consumers.consumer_model(self.local, consumers.SnapshotTexts(self.ctx.new), self.ctx.patches)

    def consumer_breaks(self) -> list[Draft]:
        """Declarations the bump changed in its headers that a consumer's code, at its own pin, still
        uses the old way."""
        headers = [c for c in self.changes if extension(c.path) in compat.HEADERS and c.significant]
        if not self.ctx.consumers or not headers:
            return []
        old = {c.old_path: c.old_text.encode() for c in headers if c.old_path}
        new = {c.new_path: c.new_text.encode() for c in headers if c.new_path}
        changes = api.api_changes(old, new)
        producer = self.ctx.pin.name
        return [
            d
            for code in self.ctx.consumers
            for d in api.consumer_drafts(producer, changes, code, self.where_now)
        ]

    def where_now(self, path: str, line: int) -> int | None:
        change = self.by_old_path.get(path)
        return change.new_line(line) if change else line

    def _significant(self, globs) -> list[FileChange]:
        return [
            c
            for c in self.changes
            if (glob_match(c.path, globs) or glob_match(c.old_path or "", globs)) and c.significant
        ]

    @cached_property
    def cmake_texts(self) -> tuple[dict[str, str], dict[str, str]]:
        """Every CMake file at the old and the new ref, comment-free (unchanged ones read once)."""
        old_texts, new_texts = {}, {}
        for path in self.ctx.new.files():
            if glob_match(path, cmake.CMAKE_FILES) and path not in self.by_path:
                if self.ctx.new.missing(path):
                    self.ctx.history.upstream.note_unreadable(path, str(self.ctx.new.commit.id))
                    continue
                old_texts[path] = new_texts[path] = code_text(
                    (self.ctx.new.read(path) or b"").decode("utf-8", "replace"), path
                )
        for c in self.changes:
            if c.old_path and glob_match(c.old_path, cmake.CMAKE_FILES):
                old_texts[c.old_path] = c.old_code
            if c.new_path and glob_match(c.new_path, cmake.CMAKE_FILES):
                new_texts[c.new_path] = c.new_code
        return old_texts, new_texts

    def build(self) -> list[Draft]:
        """CMake options, dependencies and generators, parsed in every CMake file at both refs."""
        if not self._significant(cmake.CMAKE_FILES):
            return []
        old_texts, new_texts = self.cmake_texts
        old_steps = [s for p, t in old_texts.items() for s in generators.steps(t, p)]
        new_steps = [s for p, t in new_texts.items() for s in generators.steps(t, p)]
        sources = {k: v for p, t in new_texts.items() for k, v in generators.target_sources(t, p).items()}
        changed = _SignificantPaths(self.by_path)
        model = self.consumers
        options = self.options(
            cmake.LLAMA_OPTIONS, lambda o: model.builds(o.path) and model.built_option(o.name)
        )
        steps = [
            *self.dependencies(),
            *generators.generator_drafts(old_steps, new_steps, sources, changed),
        ]  # looked for or run by CMake files that Ollama's build may never read
        return options + [
            d if _read_by_build(d.path, new_texts, model) else replace(d, severity="info") for d in steps
        ]

    def dependencies(self) -> list[Draft]:
        """Packages and tools upstream's CMake files look for that they did not before."""
        if not self._significant(cmake.CMAKE_FILES):
            return []
        old_texts, new_texts = self.cmake_texts
        old_deps = {k: v for p, t in old_texts.items() for k, v in cmake.packages_and_tools(t, p).items()}
        new_deps = {k: v for p, t in new_texts.items() for k, v in cmake.packages_and_tools(t, p).items()}
        return cmake.dependency_drafts(old_deps, new_deps)

    def options(
        self, names: cmake.OptionNames, built: Callable[[cmake.Option], bool] = lambda o: True
    ) -> list[Draft]:
        """Added, removed, renamed and re-defaulted cache options of those names, against Ollama's settings."""
        if not self._significant(cmake.CMAKE_FILES):
            return []
        old_texts, new_texts = self.cmake_texts
        return cmake.option_drafts(
            [o for p, t in old_texts.items() for o in cmake.options(t, p, names.pattern)],
            [o for p, t in new_texts.items() for o in cmake.options(t, p, names.pattern)],
            cmake.ollama_mentions(self.local, names),
            self.where_now,
            built,
            names.anchor,
        )

    def ggml_api(self) -> list[Draft]:
        headers = self._significant(symbols.HEADERS)
        if not headers:
            return []
        old = {
            n: d
            for c in headers
            if c.old_path
            for n, d in symbols.declarations(c.old_code, c.old_path).items()
        }
        new = {
            n: d
            for c in headers
            if c.new_path
            for n, d in symbols.declarations(c.new_code, c.new_path).items()
        }
        return symbols.symbol_drafts(old, new, symbols.ollama_uses(self.local), self.where_now)

    def server_flags(self) -> list[Draft]:
        change = self.by_old_path.get(flags.ARG_TABLE)
        if change is None or not change.significant:
            return []
        return flags.flag_drafts(
            flags.flag_table(change.old_code),
            flags.flag_table(change.new_code),
            self.consumers.flags,
            change.new_line,
            change.path,
        )

    def log_lines(self) -> list[Draft]:
        """Format strings that printed a line Ollama matches and have no matching successor."""
        return logformats.log_line_drafts(self.c_changes, self.local, self.ollama_runs)

    def request_limits(self) -> list[Draft]:
        """New checks that reject values of a request field Ollama sends."""
        found = [
            limit
            for c in self.c_changes
            if c.new_path
            and glob_match(c.path, limits.LIMITED_SOURCES)
            and ("throw" in c.changed_raw[0] or "ABORT" in c.changed_raw[0])
            for limit in limits.new_limits(c)
        ]
        if not found:
            return []
        parsers = {}
        for path in self.ctx.new.files("tools/server"):
            if glob_match(path, limits.REQUEST_PARSERS):
                change = self.by_path.get(path)
                if change is None and self.ctx.new.missing(path):
                    self.ctx.history.upstream.note_unreadable(path, str(self.ctx.new.commit.id))
                    continue
                parsers[path] = (
                    change.new_code
                    if change
                    else code_text((self.ctx.new.read(path) or b"").decode("utf-8", "replace"), path)
                )
        return limits.limit_drafts(
            found,
            partial(limits.request_fields, parsers),
            lambda field: ollama_uses(self.local, ("llm/**/*.go",), field, whole=True),
        )

    def ollama_runs(self, path: str) -> bool:
        """Whether code at `path` can write to the output of a program Ollama runs: everything but a
        `tools/<dir>/` that builds only programs (no library) none of whose names Ollama's Go code mentions."""
        parts = path.split("/")
        if parts[0] != "tools" or len(parts) < 3:
            return True
        if parts[1] not in self._runs:
            self._runs[parts[1]] = self._runs_tool(parts[1])
        return self._runs[parts[1]]

    def _runs_tool(self, tool: str) -> bool:
        cmake_file = f"tools/{tool}/CMakeLists.txt"
        text = (self.ctx.new.read(cmake_file) or b"").decode("utf-8", "replace")
        if not text or re.search(r"\badd_library\s*\(", text):
            return True
        programs = set(re.findall(r"\bllama-[\w-]+", text))
        return any(
            program in self.local[p]
            for p in self.local
            if glob_match(p, logformats.OLLAMA_PARSERS)
            for program in programs
        )

    def architectures(self) -> list[Draft]:
        change = self.by_old_path.get(archs.ARCH_FILE) or self.by_path.get(archs.ARCH_FILE)
        if change is None or not change.significant:
            return []
        return archs.arch_drafts(
            archs.architectures(change.old_code),
            archs.architectures(change.new_code),
            archs.patch_architectures(self.ctx.patches),
            change.new_line,
            change.path,
            lambda arch: archs.renamed_model_names(
                arch,
                {p: self.local[p] for p in self.local if glob_match(p, compat.COMPAT_SOURCES)},
                archs.patch_added_lines(self.ctx.patches),
                change.new_code,
            ),
        )

    def compat_sources(self) -> list[Draft]:
        """Upstream declarations Ollama's compat code uses (in the headers it includes) that the diff removes,
        re-kinds or changes, and enum values it names or produces that upstream stops handling."""
        uses = self.consumers.names
        if not self.c_changes or not uses:
            return []
        word = re.compile(r"\b[A-Za-z_]\w{2,}")
        changed = [
            c
            for c in self.c_changes
            if c.old_path
            and self.consumers.builds(c.path)
            and set(word.findall("\n".join(c.removed_raw))) & uses.keys()
        ]
        drafts = []
        for change in changed:
            if change.old_path in self.consumers.headers:
                drafts += compat.compat_drafts(
                    uses,
                    change,
                    partial(self._declared_elsewhere, skip=change),
                    called=self._called_everywhere,
                )
        strings_of = compat.value_strings(
            c.old_code for c in self.c_changes if c.path.endswith(compat.HEADERS)
        )
        for change in self.c_changes:
            if change.old_path and self.consumers.builds(change.path):
                drafts += compat.value_drafts(change, uses, self.consumers.strings, strings_of)
        return drafts

    def _called_everywhere(self, name: str) -> bool:
        """Whether every Ollama line that reaches `name` as a member (`x.name`, `x->name`) calls it: a bare
        `name` in a function body is a local or another class's member, which a field of an upstream struct
        turned function does not touch."""
        member = re.compile(rf"(?:\.|->)\s*{re.escape(name)}\b(\s*\()?")
        found = []
        for ref in self.consumers.names.get(name, ()):
            text = self.local.get(ref.path) or ""
            line = text.split("\n")[ref.line - 1] if ref.line <= text.count("\n") + 1 else ""
            found += [m[1] is not None for m in member.finditer(line)]
        return bool(found) and all(found)

    def _declared_elsewhere(self, name: str, skip: FileChange) -> set[str]:
        kinds: set[str] = set()
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        for c in self.c_changes:
            if c is skip or not c.new_path or not any(pattern.search(line) for line in c.added_raw):
                continue
            added = {n for s in c.spans for n in s.new_lines}
            kinds |= {
                kind for line, kind, n in compat.declarations(c.new_code_lines) if n == name and line in added
            }
        return kinds


class _SignificantPaths(Container[str]):
    """The upstream paths whose code changed, asked one path at a time: telling needs both texts."""

    def __init__(self, by_path: Mapping[str, FileChange]):
        self._by_path = by_path

    def __contains__(self, path: object) -> bool:
        change = self._by_path.get(path) if isinstance(path, str) else None
        return change is not None and bool(change.significant)


def _read_by_build(path: str, cmake_texts: Mapping[str, str], model: consumers.Consumers) -> bool:
    """Whether Ollama's build reads a CMake file: a CMakeLists.txt where it builds, a script where a built
    CMake file names it (`include()`, `cmake -P`): a script only an excluded directory runs never runs."""
    name = posixpath.basename(path)
    if name == "CMakeLists.txt":
        return model.builds(path)
    naming = re.compile(rf"(?<![\w.-]){re.escape(name)}\b")
    users = [p for p, text in cmake_texts.items() if p != path and name in text and naming.search(text)]
    return any(model.builds(p) for p in users) if users else model.builds(path)


class _Attribution:
    """The upstream commits between the refs that introduced a draft: those that changed its lines at
    the new ref; for something that disappeared, those after which its text occurs fewer times; else
    every commit between the refs that touched the file."""

    def __init__(self, ctx: ReviewContext):
        self.history = ctx.history
        self.web_url = ctx.history.upstream.web_url
        self.old_sha = str(ctx.old.commit.id)
        self.new_sha = str(ctx.new.commit.id)
        self._blobs: dict[pygit2.Oid, bytes] = {}

    def _count(self, commit: pygit2.Commit | None, path: str, needle: bytes) -> int | None:
        """How often `needle` occurs in `path` at `commit`; None when a partial clone lacks that copy."""
        if commit is None:
            return 0
        try:
            oid = commit.tree[path].id
        except KeyError:
            return 0
        if oid not in self._blobs:
            data = self.history.read(commit, path)
            if data is None:
                return None
            self._blobs[oid] = data
        return self._blobs[oid].count(needle)

    def _fewer_after(self, commit: pygit2.Commit, path: str, needle: bytes) -> bool:
        before = self._count(commit.parents[0] if commit.parents else None, path, needle)
        after = self._count(commit, path, needle)
        return before is not None and after is not None and before > after

    def dropped(self, path: str, text: str) -> list[Commit]:
        """Commits touching `path` after which `text` (a line or just a name) occurs fewer times."""
        needle = text.strip().encode()
        return [
            self.history.upstream.describe(c)
            for c in self.history.touching(path)
            if needle and self._fewer_after(c, path, needle)
        ]

    def commits(self, d: Draft) -> list[Commit]:
        ranges = d.blame or (((d.line, d.line),) if d.line and not d.removed else ())
        found: dict[str, Commit] = {}
        for start, end in ranges[:MAX_RANGES]:
            for c in self.history.commits_for_lines(d.path, start, end):
                found.setdefault(c.sha, c)
        if not found and d.removed:
            found = {c.sha: c for c in self.dropped(*d.removed)}
        if not found:
            path = d.removed[0] if d.removed else d.path
            found = {str(c.id): self.history.upstream.describe(c) for c in self.history.touching(path)}
        return list(found.values())

    def finding(self, d: Draft) -> Finding:
        if d.line:
            url = f"{self.web_url}/blob/{self.new_sha}/{d.path}#L{d.line}"
            link = f"Where: [`{d.path}:{d.line}`]({url}) at `{self.new_sha[:12]}`"
        else:
            url = f"{self.web_url}/blob/{self.old_sha}/{d.path}"
            link = f"Where: [`{d.path}`]({url}) (gone at `{self.new_sha[:12]}`; shown at the old ref)"
        return Finding(
            d.area,
            d.severity,
            d.title,
            f"{d.detail}\n\n{link}",
            d.path,
            d.line,
            self.commits(d),
            list(d.local_refs),
        )


def merge(findings) -> list[Finding]:
    """Identical findings (same area, title and upstream path) once, with their references united."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        if f.key not in merged:
            merged[f.key] = f
            continue
        m = merged[f.key]
        if SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[m.severity]:
            m.severity = f.severity
        m.local_refs += [r for r in f.local_refs if r not in m.local_refs]
        m.upstream_commits += [c for c in f.upstream_commits if c not in m.upstream_commits]
    return sorted(
        merged.values(),
        key=lambda f: (
            SEVERITY_ORDER[f.severity],
            AREAS.index(f.area),
            f.upstream_path,
            f.upstream_line or 0,
            f.title,
        ),
    )


__all__ = ["ReviewContext", "review"]
