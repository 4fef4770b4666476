"""Findings from drafts: a link to the line at the new ref, and the upstream commits that introduced each;
identical findings merged."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import pygit2

from bot.markup import code_span
from bot.model import SEVERITY_ORDER, Commit, Finding
from bot.review.changes import AREAS, Draft

if TYPE_CHECKING:
    from bot.review import ReviewContext

MAX_RANGES = 5  # line ranges of one draft looked up for its commits
T = TypeVar("T")


class Attribution:
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
        """The first of: the commits that changed its lines, those that dropped its removed text, those
        that touched its file."""
        found = self._blamed(d) or self._dropping(d) or self._touching(d)
        return list(found.values())

    def _blamed(self, d: Draft) -> dict[str, Commit]:
        """The commits that changed the draft's new-ref lines, by sha."""
        found: dict[str, Commit] = {}
        for start, end in _new_ref_ranges(d)[:MAX_RANGES]:
            for c in self.history.commits_for_lines(d.path, start, end):
                found.setdefault(c.sha, c)
        return found

    def _dropping(self, d: Draft) -> dict[str, Commit]:
        return {c.sha: c for c in self.dropped(*d.removed)} if d.removed else {}

    def _touching(self, d: Draft) -> dict[str, Commit]:
        path = d.removed[0] if d.removed else d.path
        return {str(c.id): self.history.upstream.describe(c) for c in self.history.touching(path)}

    def finding(self, d: Draft) -> Finding:
        if d.line:
            url = f"{self.web_url}/blob/{self.new_sha}/{d.path}#L{d.line}"
            link = f"Where: [{code_span(f'{d.path}:{d.line}')}]({url}) at {code_span(self.new_sha[:12])}"
        else:
            url = f"{self.web_url}/blob/{self.old_sha}/{d.path}"
            link = f"Where: [{code_span(d.path)}]({url}) (gone at {code_span(self.new_sha[:12])}; shown at the old ref)"
        return Finding(
            d.area,
            d.severity,
            d.title,
            f"{d.detail}\n\n{link}",
            d.path,
            d.line,
            self.commits(d),
            list(d.local_refs),
            d.check,
        )


def _new_ref_ranges(d: Draft) -> tuple[tuple[int, int], ...]:
    """The draft's line ranges at the new ref: its own line when it names no ranges and removed nothing
    (a removal's line is only where the text was)."""
    return d.blame or (((d.line, d.line),) if d.line and not d.removed else ())


def merge(findings) -> list[Finding]:
    """Identical findings (same area, title and upstream path) once, with their references united."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        if f.key in merged:
            _unite(merged[f.key], f)
        else:
            merged[f.key] = f
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


def _unite(kept: Finding, same: Finding) -> None:
    """Folds an identical finding into the one kept: the graver severity of the two, the references of both."""
    kept.severity = min(kept.severity, same.severity, key=SEVERITY_ORDER.__getitem__)
    kept.local_refs += _missing(same.local_refs, kept.local_refs)
    kept.upstream_commits += _missing(same.upstream_commits, kept.upstream_commits)


def _missing(items: list[T], kept: list[T]) -> list[T]:
    """The items `kept` lacks, in their order."""
    return [item for item in items if item not in kept]
