"""The upstream diff between the two refs as plain data: per file, its hunks and (lazily) both texts.

A hunk counts only when its code differs; comments and whitespace
are not code, so comment-only, whitespace-only and reformat-only changes
are invisible to every detector.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import pygit2

from bot.cache import facts
from bot.cache.facts import text_id
from bot.model import LocalRef
from bot.review.source import code_text, may_hold_comments, region_code, same_code, squash

T = TypeVar("T")
# What the review reads out of one upstream text, or a pair: kept in the facts store by blob id
CODE = facts.Extractor("code-text", 1, __name__)
SIGNIFICANT = facts.Extractor("significant-hunks", 1, __name__)

AREAS = ("build", "discovery", "server", "streaming", "models", "patch-context")


@dataclass(frozen=True)
class Span:
    """One hunk with git's numbering: a count of 0 means 'after line start' on that side."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int

    @property
    def old_lines(self) -> range:
        return range(self.old_start, self.old_start + self.old_count)

    @property
    def new_lines(self) -> range:
        return range(self.new_start, self.new_start + self.new_count)


@dataclass(frozen=True)
class Draft:
    """What a detector found, before the edge adds the link and the upstream commits."""

    area: str
    severity: str
    title: str
    detail: str
    path: str  # upstream path (at the new ref; the old path when the file is gone)
    line: int | None  # 1-based at the new ref; None when the file is gone
    blame: tuple[tuple[int, int], ...] = ()  # new-ref line ranges whose commits introduced it (default: line)
    removed: tuple[str, str] | None = None  # (old path, text) that disappeared: the commits that dropped it
    local_refs: tuple[LocalRef, ...] = ()
    cause: str | None = None  # drafts with the same cause are one upstream change: one item
    check: str = ""  # the id of the check that raised it (bot.review.checks)


def _decode(data: bytes | None) -> str:
    return data.decode("utf-8", "replace") if data else ""


def hunk_lines(hunks: list[pygit2.DiffHunk]) -> tuple[dict[int, str], dict[int, str]]:
    """(old line -> text) of the removed and (new line -> text) of the added lines, as the file's text
    split on newlines gives them (the diff holds them already: no blob read or split for them)."""
    removed: dict[int, str] = {}
    added: dict[int, str] = {}
    for hunk in hunks:
        for line in hunk.lines:
            if line.origin == "-":
                removed[line.old_lineno] = _line_text(line.raw_content)
            elif line.origin == "+":
                added[line.new_lineno] = _line_text(line.raw_content)
    return removed, added


def _line_text(raw: bytes) -> str:
    return (raw[:-1] if raw.endswith(b"\n") else raw).decode("utf-8", "replace")


class FileChange:
    """One changed file. Texts are read only when a detector asks for them."""

    def __init__(
        self,
        old_path: str | None,
        new_path: str | None,
        spans: list[Span],
        load_old: Callable[[], bytes | None],
        load_new: Callable[[], bytes | None],
        load_hunk_lines: Callable[[], tuple[dict[int, str], dict[int, str]]],
        blob_ids: tuple[str, str] | None = None,
        load_raw: Callable[[], tuple[list[str], list[str]]] | None = None,
    ):
        self.old_path = old_path
        self.new_path = new_path
        self.spans = spans
        self._load_old = load_old
        self._load_new = load_new
        self._regions: dict[str, dict[Span, list[tuple[int, str]]]] = {}
        self._span_texts: dict[Span, tuple[str, str]] = {}
        # (old line -> removed text, new line -> added text) as the diff gave them: the hunks alone need
        # neither whole text, which most files are never read for (loaded on first use, and again after
        # `release`)
        self._load_hunk_lines = load_hunk_lines
        self._hunk_lines: tuple[dict[int, str], dict[int, str]] | None = None
        self._sides: dict[str, list[list[tuple[int, str]]]] = {}
        # (old, new) git blob ids: the facts store's key for what is read out of the texts (None: the texts')
        self._blob_ids = blob_ids
        # the removed and the added lines as written, in order, where the loader has them without the hunks'
        # lines by number (else read from those)
        self._load_raw = load_raw

    def release(self) -> None:
        """Drop the texts, the hunks' lines and all that was derived from them; kept are the spans and the
        facts already read (`significant`). Whatever is asked again is loaded again."""
        for name in _DERIVED:
            self.__dict__.pop(name, None)
        self._hunk_lines = None
        self._sides, self._regions, self._span_texts = {}, {}, {}

    @classmethod
    def from_texts(
        cls, path: str, old: str | None, new: str | None, new_path: str | None = None
    ) -> FileChange:
        """A change computed from two texts (tests, and files that exist only in memory)."""
        new_path = None if new is None else (new_path or path)
        # Both buffers must stay referenced while the patch's lines are read: libgit2 points into them.
        old_data, new_data = (old or "").encode(), (new or "").encode()
        patch = pygit2.Patch.create_from(old_data, new_data, context_lines=0)
        hunks = patch.hunks
        spans = [Span(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in hunks]
        lines = hunk_lines(hunks)
        return cls(
            None if old is None else path,
            new_path,
            spans,
            lambda: None if old is None else old.encode(),
            lambda: None if new is None else new.encode(),
            lambda: lines,
        )

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @cached_property
    def old_text(self) -> str:
        return _decode(self._load_old()) if self.old_path else ""

    @cached_property
    def new_text(self) -> str:
        return _decode(self._load_new()) if self.new_path else ""

    @cached_property
    def old_lines(self) -> list[str]:
        return self.old_text.split("\n")

    @cached_property
    def new_lines(self) -> list[str]:
        return self.new_text.split("\n")

    @cached_property
    def old_code(self) -> str:
        return self._remembered(CODE, "-", lambda: code_text(self.old_text, self.old_path or ""))

    @cached_property
    def new_code(self) -> str:
        return self._remembered(CODE, "+", lambda: code_text(self.new_text, self.new_path or ""))

    def fact_key(self, side: str) -> tuple[str, ...]:
        """What the facts of one side ("-", "+" or "-+" for both) of the change are keyed by."""
        key: tuple[str, ...] = ()
        if "-" in side:
            key += (self._blob_ids[0] if self._blob_ids else text_id(self.old_text), self.old_path or "")
        if "+" in side:
            key += (self._blob_ids[1] if self._blob_ids else text_id(self.new_text), self.new_path or "")
        return key

    def _remembered(self, extractor: facts.Extractor, side: str, compute: Callable[[], T]) -> T:
        return facts.remembered(extractor, self.fact_key(side), compute)

    @cached_property
    def old_code_lines(self) -> list[str]:
        return self.old_code.split("\n")

    @cached_property
    def new_code_lines(self) -> list[str]:
        return self.new_code.split("\n")

    def removed_line(self, n: int) -> str:
        """Old line `n` as written, when a hunk removes it (from the diff) or otherwise (from the text)."""
        if n in self._lines[0]:
            return self._lines[0][n]
        return self.old_lines[n - 1]

    def added_line(self, n: int) -> str:
        """New line `n` as written, when a hunk adds it (from the diff) or otherwise (from the text)."""
        if n in self._lines[1]:
            return self._lines[1][n]
        return self.new_lines[n - 1]

    @property
    def _lines(self) -> tuple[dict[int, str], dict[int, str]]:
        if self._hunk_lines is None:
            self._hunk_lines = self._load_hunk_lines()
        return self._hunk_lines

    def _side_lines(self, side: str) -> list[list[tuple[int, str]]]:
        """(line, text as written) of each hunk's removed ("-") or added ("+") lines."""
        if side not in self._sides:
            lines = self._lines[0 if side == "-" else 1]
            self._sides[side] = [
                [(n, lines[n]) for n in (s.old_lines if side == "-" else s.new_lines) if n in lines]
                for s in self.spans
            ]
        return self._sides[side]

    def _code_regions(self, side: str) -> dict[Span, list[tuple[int, str]]]:
        """(line, comment-free code) of every hunk's lines on one side, computed for all hunks at once."""
        if side not in self._regions:
            path = self.old_path if side == "-" else self.new_path
            regions = self._side_lines(side)
            numbers = [[n for n, _ in region] for region in regions]
            code = region_code([[t for _, t in region] for region in regions], path or "")
            self._regions[side] = {s: list(zip(ns, c)) for s, ns, c in zip(self.spans, numbers, code)}
        return self._regions[side]

    def removed_code(self, span: Span) -> list[tuple[int, str]]:
        """(old line, code) of the lines a hunk removes, stripped of comments from the hunks alone."""
        return self._code_regions("-")[span]

    def added_code(self, span: Span) -> list[tuple[int, str]]:
        return self._code_regions("+")[span]

    def span_code(self, span: Span) -> tuple[str, str]:
        """A hunk's removed and added code as one text, and in lower case: for prefilters."""
        if span not in self._span_texts:
            text = "\n".join(t for _, t in self.removed_code(span) + self.added_code(span))
            self._span_texts[span] = (text, text.lower())
        return self._span_texts[span]

    @cached_property
    def removed_raw(self) -> list[str]:
        """Every removed line as written, comments included: a cheap first look before any parsing."""
        if self._load_raw is not None:
            return self._load_raw()[0]
        return [t for region in self._side_lines("-") for _, t in region]

    @cached_property
    def added_raw(self) -> list[str]:
        if self._load_raw is not None:
            return self._load_raw()[1]
        return [t for region in self._side_lines("+") for _, t in region]

    @cached_property
    def changed_raw(self) -> tuple[str, str]:
        """All removed and added lines as one text, and that text in lower case: for prefilters."""
        text = "\n".join(self.removed_raw + self.added_raw)
        return text, text.lower()

    @cached_property
    def significant(self) -> list[Span]:
        """The hunks that change code, not just comments or whitespace."""
        indexes = self._remembered(SIGNIFICANT, "-+", self._significant_indexes)
        return [self.spans[i] for i in indexes]

    def _significant_indexes(self) -> list[int]:
        found = [
            i
            for i, (s, removed, added) in enumerate(
                zip(self.spans, self._side_lines("-"), self._side_lines("+"))
            )
            if self._changes_code(s, [t for _, t in removed], [t for _, t in added])
        ]
        if len(found) > 1 and same_code(
            self.old_text, self.old_path or "", self.new_text, self.new_path or ""
        ):
            return []  # code reflowed across hunks
        return found

    def _changes_code(self, span: Span, gone: list[str], came: list[str]) -> bool:
        """Whether a hunk's removed and added lines differ in more than whitespace and, where a comment may be
        involved, in their code."""
        if squash("".join(gone)) == squash("".join(came)):
            return False  # whitespace only
        if not self._may_hold_comments(gone, came):
            return True  # no comment can be involved: a real change
        removed = "".join(t for _, t in self.removed_code(span))
        return squash(removed) != squash("".join(t for _, t in self.added_code(span)))

    def _may_hold_comments(self, gone: list[str], came: list[str]) -> bool:
        return may_hold_comments(gone, self.old_path or "") or may_hold_comments(came, self.new_path or "")

    def where(self, span: Span) -> int | None:
        """The new-ref line to point at for a hunk (for a pure removal: the line above it)."""
        if not self.new_path:
            return None
        return max(span.new_start, 1)

    def new_line(self, old_line: int) -> int | None:
        """Where an old-ref line is at the new ref (inside a changed hunk: that hunk's position)."""
        if not self.new_path:
            return None
        delta = 0
        for span in self.spans:
            if span.old_count and span.old_start <= old_line < span.old_start + span.old_count:
                return self.where(span)
            if (
                span.old_start + max(span.old_count, 1) - 1 < old_line
            ):  # entirely above (an insertion: after start)
                delta += span.new_count - span.old_count
            else:
                break
        return max(old_line + delta, 1)


# What `release` drops: the texts and what is derived from them or from the hunks' lines
_DERIVED = (
    "removed_raw",
    "added_raw",
    "changed_raw",
    "old_text",
    "new_text",
    "old_lines",
    "new_lines",
    "old_code",
    "new_code",
    "old_code_lines",
    "new_code_lines",
)
