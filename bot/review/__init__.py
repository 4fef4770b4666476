"""Upstream review: what in the new upstream can silently break Ollama, and where in Ollama.

These modules are the review's only contact with git: this one takes the upstream
diff once; `run` reads only the blobs a detector asks for and hands plain text to
the detectors (one module per concern, pure functions); `attribution` turns their
drafts into findings with a link to the new ref, the upstream commits that
introduced each one and the Ollama lines that consume it. Imports bot.build and the
layers below it: never bot.ollama or the engine, which call it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

import pygit2

from bot.cache import facts
from bot.config import Pin
from bot.model import BuildChange, Finding
from bot.patches.patchfile import PatchFile
from bot.repos.history import History
from bot.repos.snapshot import BlobCache, GitSnapshot, Snapshot, blob_cache
from bot.review import api, buildreach, cmake, grouping
from bot.review.attribution import Attribution, merge
from bot.review.beside import Handover, forked
from bot.review.changes import Draft, FileChange, Span, hunk_lines
from bot.review.checks import Plan, plan, profile_checks
from bot.review.ruleset import load_rules
from bot.review.run import Run
from bot.review.source import glob_match
from bot.review.textbudget import TextBudget


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


MAX_BUILD_COMMITS = 2  # commits named beside each changed build file


@dataclass
class PinReview:
    """What one pin's review found: its findings, and the upstream build files the bump changes that
    Ollama's build uses."""

    findings: list[Finding]
    build_changes: list[BuildChange]


def review(ctx: ReviewContext) -> list[Finding]:
    """All findings for one pin, merged (identical findings once) and sorted high -> medium -> info."""
    return review_pin(ctx).findings


def review_pin(ctx: ReviewContext) -> PinReview:
    """The pin's findings (as `review`), and the changed build files with the commits that changed them."""
    rules = load_rules(ctx.rules)
    changes, skipped = upstream_changes(ctx.old.repo, ctx.old.tree, ctx.new.tree)
    for path, side in skipped:
        ctx.history.upstream.note_unreadable(path, str((ctx.old if side == "old" else ctx.new).commit.id))
    if not changes:
        return PinReview([], [])
    run = Run(ctx, changes, rules)
    drafts = _profile_drafts(ctx, run)
    build = _build_changes(ctx.history, run.build_files())
    attribution = Attribution(ctx)
    if any(glob_match(d.path, cmake.CMAKE_FILES) for d in drafts):
        drafts = [d for d in drafts if buildreach.reached_by_build(d, run.unbuilt_commands)]
    drafts = consumer_linked(grouping.by_cause(drafts))
    findings = [attribution.finding(d) for d in drafts]  # notes what it could not read
    return PinReview(merge(grouping.by_commit(merge(findings))), build)


def consumer_linked(drafts: list[Draft]) -> list[Draft]:
    """The drafts with their references into the code Ollama ships (Go test files only show how it reads
    a thing); an info draft with none goes, as nothing ties it to what Ollama does."""
    linked = []
    for d in drafts:
        refs = tuple(r for r in d.local_refs if not r.path.endswith("_test.go"))
        if refs or d.severity != "info":
            linked.append(replace(d, local_refs=refs) if refs != d.local_refs else d)
    return linked


def _build_changes(history: History, paths: list[str]) -> list[BuildChange]:
    """Each changed build file with the newest commits between the refs that changed it."""
    describe = history.upstream.describe
    return [
        BuildChange(path, tuple(describe(c) for c in history.touching(path)[:MAX_BUILD_COMMITS]))
        for path in paths
    ]


def _profile_drafts(ctx: ReviewContext, run: Run) -> list[Draft]:
    """Every check of the pin's review profile that has something to read, its items in the profile's order,
    run where the plan says (`checks.plan`): the heavy ones in a forked copy beside the others when a CPU is
    free, once what their inputs need of Ollama's tree is read here (the copy may not ask the service for a
    file); the inventory's groups they read are read here after the fork and handed to the copy."""
    checks = [c for c in profile_checks(ctx.pin.review) if c.applies(run)]
    where = plan(checks, run)
    if where.fork:
        where.prepare(run)
    handover = Handover()
    compute = partial(_beside_drafts, run, where, handover.received)
    with forked(compute, ctx.history.upstream.unreadable, where.fork, handover) as copy:
        if copy.forked and any(map(where.waits, where.beside)):
            handover.hand(where.handed(run))  # the copy meanwhile runs the checks that need none of it
        found = where.kept | _here_drafts(run, where, wire=not copy.forked and where.wire_beside)
        found |= copy.result()
    return [d for c in checks for d in found.get(c.id, ())]


def _here_drafts(run: Run, where: Plan, wire: bool) -> dict[str, list[Draft]]:
    """The checks of this process, by id; the Go program let go after its last reader (the wire groups read
    first when `wire`: the checks beside the others run here later)."""
    found = {}
    for index, c in enumerate(where.here):
        found[c.id] = c.drafts(run)
        if index == where.settle_after:
            run.settle_inventory(wire=wire)
    return found


def _beside_drafts(run: Run, where: Plan, received: Callable[[], object]) -> dict[str, list[Draft]]:
    """The checks that may run in a forked copy, by id: those that need nothing the review's process hands
    the copy first, then (`received`: the inventory's groups, None when they run in that process) the
    others; what they read of the inventory is kept for a re-check."""
    found = {c.id: c.drafts(run) for c in where.beside if not where.waits(c)}
    waiting = [c for c in where.beside if where.waits(c)]
    groups = received() if waiting else None
    if isinstance(groups, dict):
        run.take_inventory_groups(groups)
    found |= {c.id: c.drafts(run) for c in waiting}
    run.settle_inventory(wire=False)
    return found


# A diff whose hunk lines pass this many characters (a long jump) is not stored: loaded back whole, it would
# hold what the text budget keeps out of memory.
STORED_DIFF_BYTES = 8 << 20
DIFF = facts.Extractor("upstream-diff", 3, __name__)
LINE_NUMBERS = f"line numbers as {array('L').itemsize}-byte words"  # how a stored diff keeps them


def upstream_changes(
    repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree
) -> tuple[list[FileChange], list[tuple[str, str]]]:
    """The text files that differ between two trees, with their hunks (blobs are read later, on demand), and
    the (path, "old" or "new") whose object a partial clone lacks, left out. A diff the facts store holds
    serves while the clone holds every blob it names."""
    key = (str(old.id), str(new.id), LINE_NUMBERS)
    found, stored = facts.get(DIFF, key)
    if found and not any(_lacks_id(repo.odb, mode, oid) for d in stored for mode, oid in d[3]):
        budget = TextBudget()
        return [_stored_change(repo, budget, d) for d in stored], []
    changes, skipped, deltas = _diffed(repo, old, new)
    if not skipped and deltas is not None:
        facts.put(DIFF, key, deltas)
    return changes, skipped


def _diffed(
    repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree
) -> tuple[list[FileChange], list[tuple[str, str]], list[tuple] | None]:
    """`upstream_changes` computed, with every changed file's delta as plain data (`_stored_change`), or
    None past STORED_DIFF_BYTES."""
    diff = old.diff_to_tree(new, context_lines=0)
    lacks = partial(_lacks, repo.odb)
    _find_renames(diff, lacks)
    changes = []
    skipped = []
    deltas: list[tuple] | None = []  # None once past STORED_DIFF_BYTES: a long jump's diff is not stored
    stored_bytes = 0
    budget = TextBudget()  # the texts all these changes hold at once
    for index, delta in enumerate(diff.deltas):
        missing = [
            (f.path, side) for f, side in ((delta.old_file, "old"), (delta.new_file, "new")) if lacks(f)
        ]
        if missing:
            skipped += missing
            continue
        found = _file_change(repo, diff[index], budget)
        if found is not None:
            change, plain = found
            changes.append(change)
            if deltas is not None:
                stored_bytes += sum(len(text) for _, text in plain[4:])
                if stored_bytes <= STORED_DIFF_BYTES:
                    deltas.append(plain)
                else:
                    deltas = None
    return changes, skipped, deltas


def _lacks_id(odb: pygit2.Odb, mode: int, oid: str) -> bool:
    return mode not in (0, pygit2.GIT_FILEMODE_COMMIT) and not odb.exists(oid)


def _stored_change(repo: pygit2.Repository, budget: TextBudget, plain: tuple) -> FileChange:
    """A FileChange from its delta as the facts store keeps it."""
    old_path, new_path, spans, sides, removed, added = plain
    (_, old_id), (_, new_id) = sides
    oids = (pygit2.Oid(hex=old_id), pygit2.Oid(hex=new_id))
    hunks = ((_line_numbers(removed[0]), removed[1]), (_line_numbers(added[0]), added[1]))
    return _charged_change(repo, budget, (old_path, new_path), [Span(*s) for s in spans], oids, hunks)


def _line_numbers(stored: bytes) -> array:
    numbers = array("L")
    numbers.frombytes(stored)
    return numbers


def _lacks(odb: pygit2.Odb, f: pygit2.DiffFile) -> bool:
    """Whether a side of a delta is a blob the (partial) clone does not hold."""
    return f.mode not in (0, pygit2.GIT_FILEMODE_COMMIT) and not odb.exists(f.id)


def _find_renames(diff: pygit2.Diff, lacks: Callable[[pygit2.DiffFile], bool]) -> None:
    """Pairs deletions with additions as renames: by exact content only when a blob is missing, since
    comparing contents reads every added and deleted blob."""
    if any(lacks(f) for d in diff.deltas for f in (d.old_file, d.new_file)):
        diff.find_similar(
            flags=pygit2.enums.DiffFind.FIND_RENAMES | pygit2.enums.DiffFind.FIND_EXACT_MATCH_ONLY
        )
    else:
        diff.find_similar()


def _file_change(
    repo: pygit2.Repository, patch: pygit2.Patch | None, budget: TextBudget
) -> tuple[FileChange, tuple] | None:
    """One text file's change with its hunks, and its delta as plain data; None for a binary file, or a mode
    change or exact rename (no content changed)."""
    if patch is None:
        return None
    delta = patch.delta
    if delta.is_binary:
        return None
    hunks = patch.hunks
    spans = [Span(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in hunks]
    if not spans:
        return None
    added, deleted = delta.status == pygit2.GIT_DELTA_ADDED, delta.status == pygit2.GIT_DELTA_DELETED
    old_path = None if added else delta.old_file.path
    new_path = None if deleted else delta.new_file.path
    lines = _compact(hunk_lines(hunks))
    ids = (str(delta.old_file.id), str(delta.new_file.id))
    change = _charged_change(
        repo, budget, (old_path, new_path), spans, (delta.old_file.id, delta.new_file.id), lines
    )
    sides = ((int(delta.old_file.mode), ids[0]), (int(delta.new_file.mode), ids[1]))
    plain = (
        old_path,
        new_path,
        [(s.old_start, s.old_count, s.new_start, s.new_count) for s in spans],
        sides,
        *((numbers.tobytes(), text) for numbers, text in lines),  # a few objects per file: quick to load back
    )
    return change, plain


_Compact = tuple[tuple[array, str], tuple[array, str]]


def _compact(lines: tuple[dict[int, str], dict[int, str]]) -> _Compact:
    """The removed and the added lines each as their numbers and one text (a line of code in a dict costs
    several times its size)."""
    removed, added = ((array("L", side), "\n".join(side.values())) for side in lines)
    return removed, added


def _charged_change(
    repo: pygit2.Repository,
    budget: TextBudget,
    paths: tuple[str | None, str | None],
    spans: list[Span],
    oids: tuple[pygit2.Oid, pygit2.Oid],
    lines: _Compact,
) -> FileChange:
    """A FileChange whose texts and hunk lines are charged to the review's text budget."""
    texts = _ChargedTexts(blob_cache(repo), budget, oids[0], oids[1], lines)
    texts.change = FileChange(
        paths[0],
        paths[1],
        spans,
        texts.old,
        texts.new,
        texts.hunk_lines,
        (str(oids[0]), str(oids[1])),
        texts.raw_lines,
    )
    return texts.change


class _ChargedTexts:
    """One change's two blobs, read through the repository's cache (the patch stage and the attribution
    read some of the same), and its hunks' lines (`_compact`); each load is charged to the review's text
    budget."""

    def __init__(
        self,
        blobs: BlobCache,
        budget: TextBudget,
        old: pygit2.Oid,
        new: pygit2.Oid,
        lines: _Compact,
    ):
        self.blobs, self.budget, self.ids = blobs, budget, (old, new)
        self.change: FileChange | None = None
        self._hunks = lines

    def hunk_lines(self) -> tuple[dict[int, str], dict[int, str]]:
        """(old line -> removed text, new line -> added text), as `changes.hunk_lines` gave them."""
        removed, added = (
            {} if not numbers else dict(zip(numbers, text.split("\n"))) for numbers, text in self._hunks
        )
        self._charge(sum(len(text) for _, text in self._hunks))
        return removed, added

    def raw_lines(self) -> tuple[list[str], list[str]]:
        """The removed and the added lines in the diff's order, without their numbers."""
        removed, added = ([] if not numbers else text.split("\n") for numbers, text in self._hunks)
        self._charge(sum(len(text) for _, text in self._hunks))
        return removed, added

    def old(self) -> bytes:
        return self._read(self.ids[0])

    def new(self) -> bytes:
        return self._read(self.ids[1])

    def _read(self, oid: pygit2.Oid) -> bytes:
        data = self.blobs.read(oid)
        self._charge(len(data))
        return data

    def _charge(self, size: int) -> None:
        if self.change is not None:
            self.budget.charge(self.change, size)


__all__ = ["PinReview", "ReviewContext", "review", "review_pin"]
