"""Placing hunks in a file: git apply's exact search and tolerant relocation (bot/patches/enumentries.py renumbers
and checks the entries they add).

Pure functions over lists of lines (bytes with their endings), so every rule
here is tested without git. An `Image` holds a file's lines with an index of
them that every hunk placed in the file shares: a hunk costs its own lines and
the places its rarest line stands, never a scan of the whole file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.patches.patchfile import Hunk, Line

MAX_FUZZ = 2
_FUNC_LINE = re.compile(rb"[A-Za-z_$]")
_WORD = re.compile(rb"\S+")
_ONE_ADDED_RUN = re.compile(r" *(\++) *")  # the kinds of a hunk's lines when its only change adds one run
_TERMINATOR = re.compile(
    rb"^(?:\}[}\]);,]+$|[\])][}\]);,]*$|default\s*:|(?:\}\s*)?else\s*(?:\{|$)|\{?\s*[A-Za-z_]\w*_(?:UNKNOWN|COUNT|MAX|END|LAST|NUM)\b)"
)


@dataclass
class Placement:
    start: int  # 0-based index in the image where the hunk's preimage begins
    offset: int  # start minus the expected index
    fuzz: int = 0  # context lines dropped at the ends
    whitespace: bool = False  # matched only when whitespace is ignored
    reindent: int = 0  # columns by which upstream's anchor lines (and so the added lines) moved
    terminator: bytes = b""  # the list terminator the added lines were re-anchored on, if they were


def norm(line: bytes) -> bytes:
    """The line with whitespace runs collapsed: equal when two lines differ only in spacing."""
    return b" ".join(line.split())


NEAR = 64  # positions either side of the expected one that the exact search tries before the file's index
FUNCTION_REACH = 3000  # lines above a place searched for the function it is in
SPLICES_KEPT = 64  # splices an index maps its positions through before it is built again, at least


class _Positions:
    """Where each key of a list stands: built once, then kept through the list's splices. A splice is logged,
    not applied (that would move every later position); positions are mapped through the log when asked
    for. Building costs the list's length n, mapping a position the log's: the index is built again once
    the log holds √n splices (SPLICES_KEPT at least)."""

    def __init__(self, keys: list[bytes]):
        self.keeps = max(SPLICES_KEPT, math.isqrt(len(keys)))
        self.built: dict[bytes, list[int]] = {}
        for i, key in enumerate(keys):
            self.built.setdefault(key, []).append(i)
        self.splices: list[tuple[int, int, int]] = []  # (start, end, new count), each at its own time
        self.added: dict[bytes, list[tuple[int, int]]] = {}  # key -> (splices before it, position then)
        self.removed = 0  # lines the logged splices took out

    def splice(self, start: int, end: int, keys: list[bytes]) -> None:
        self.splices.append((start, end, len(keys)))
        for offset, key in enumerate(keys):
            self.added.setdefault(key, []).append((len(self.splices), start + offset))
        self.removed += end - start

    def at(self, key: bytes) -> list[int]:
        """Where `key` stands now, in order."""
        built = (self._moved(p, 0) for p in self.built.get(key, ()))
        added = (self._moved(p, since) for since, p in self.added.get(key, ()))
        return sorted(p for p in (*built, *added) if p is not None)

    def _moved(self, pos: int, since: int) -> int | None:
        """Where the line at `pos` after the first `since` splices stands now; None when a later one took it out."""
        for number in range(since, len(self.splices)):
            start, end, count = self.splices[number]
            if pos >= end:
                pos += count - (end - start)
            elif pos >= start:
                return None
        return pos

    def most(self, key: bytes) -> int:
        """How many times `key` may stand now, at most."""
        return len(self.built.get(key, ())) + len(self.added.get(key, ()))

    def least(self, key: bytes) -> int:
        """How many times `key` stands now, at least."""
        return len(self.built.get(key, ())) - self.removed


class Image:
    """A file's lines as hunks are placed in them, and where each line stands (as it is and through `norm`):
    indexed once, the index kept through the hunks' splices, so that every hunk of a patch searches the
    same index and a hunk that matches nowhere costs its own lines, not a scan of the file. `splice` is the
    only change."""

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self._norms: dict[bytes, bytes] = {}
        self._normalized: list[bytes] | None = None
        self._exact: _Positions | None = None
        self._loose: _Positions | None = None

    def __len__(self) -> int:
        return len(self.lines)

    def splice(self, start: int, end: int, lines: list[bytes]) -> None:
        """Lines [start, end) replaced by `lines`."""
        self.lines[start:end] = lines
        if self._normalized is not None:
            self._normalized[start:end] = [self._norm(x) for x in lines]
        self._exact = _kept(self._exact, start, end, lines)
        if self._loose is not None and self._normalized is not None:
            self._loose = _kept(self._loose, start, end, self._normalized[start : start + len(lines)])

    def at(self, line: bytes) -> list[int]:
        """Where `line` stands, in order."""
        return self._exact_index().at(line)

    def _exact_index(self) -> _Positions:
        if self._exact is None:
            self._exact = _Positions(self.lines)
        return self._exact

    @property
    def normalized(self) -> list[bytes]:
        """Every line through `norm`."""
        if self._normalized is None:
            self._normalized = [self._norm(x) for x in self.lines]
        return self._normalized

    def _norm(self, line: bytes) -> bytes:
        found = self._norms.get(line)
        if found is None:
            found = self._norms[line] = norm(line)
        return found

    def loose_at(self, normalized: bytes) -> list[int]:
        """Where a line equal to `normalized` through `norm` stands, in order."""
        return self._loose_index().at(normalized)

    def loose_more_than(self, normalized: bytes, count: int) -> bool:
        """Whether a line equal to `normalized` through `norm` stands more than `count` times."""
        index = self._loose_index()
        if index.least(normalized) > count:
            return True
        if index.most(normalized) <= count:
            return False
        return len(index.at(normalized)) > count

    def _loose_index(self) -> _Positions:
        if self._loose is None:
            self._loose = _Positions(self.normalized)
        return self._loose

    def rarest(self, lines: list[bytes], loose: bool = False) -> tuple[int, list[int]]:
        """The one of `lines` (through `norm` when `loose`) that stands fewest times, as its index in `lines`
        and where it stands."""
        index = self._loose_index() if loose else self._exact_index()
        k = min(range(len(lines)), key=lambda i: index.most(lines[i]))
        return k, index.at(lines[k])

    def function_at(self, pos: int) -> bytes:
        """The nearest line above `pos` (within FUNCTION_REACH) that git's default funcname rule would show
        in a hunk header."""
        for i in range(min(pos, len(self.lines)) - 1, max(-1, pos - FUNCTION_REACH), -1):
            if _FUNC_LINE.match(self.lines[i]):
                return self.lines[i].rstrip()
        return b""


def _kept(index: _Positions | None, start: int, end: int, keys: list[bytes]) -> _Positions | None:
    """The index with a splice logged, or None (built again when next asked) once it holds enough."""
    if index is None or len(index.splices) >= index.keeps:
        return None
    index.splice(start, end, keys)
    return index


def indexed(image: Image | list[bytes]) -> Image:
    """The image, a plain list of lines given its own index (for one search)."""
    return image if isinstance(image, Image) else Image(image)


def _starts(candidates: list[int], k: int, last: int) -> list[int]:
    """Where a run of lines starts whose line k stands at one of `candidates`, within 0..last."""
    return [p - k for p in candidates if k <= p <= last + k]


def find_exact(image: Image | list[bytes], hunk: Hunk) -> Placement | None:
    """Where `git apply` (no fuzz, no whitespace options) would put the hunk, searching outward."""
    image = indexed(image)
    pre = hunk.before
    expected = max(0, hunk.new_start - 1 if hunk.new_start else 0)
    last = len(image) - len(pre)
    if last < 0:
        return None
    pinned = _pinned_positions(hunk, last)
    positions = pinned if pinned is not None else _outward_matches(image, pre, min(expected, last), last)
    for pos in positions:
        if image.lines[pos : pos + len(pre)] == pre:
            return Placement(pos, pos - expected)
    return None


def _outward_matches(image: Image, pre: list[bytes], start: int, last: int) -> Iterator[int]:
    """The positions git apply tries, in its order (`_outward`), that may hold `pre`: every one near
    `start`, then from the image's index those farther away where pre's rarest line is in its place."""
    yield from _outward(start, last, NEAR)
    if not pre or last - start <= NEAR and start <= NEAR:
        return
    k, at = image.rarest(pre)
    far = [p for p in _starts(at, k, last) if abs(p - start) > NEAR]
    yield from sorted(far, key=lambda p: (abs(p - start), p < start))


def _pinned_positions(hunk: Hunk, last: int) -> list[int] | None:
    """The only place a hunk anchored to the file's beginning or end may start (none when it is anchored to
    both and the file is not exactly its preimage), or None when it is anchored to neither: git apply
    never moves such a hunk."""
    match_beginning = hunk.old_start == 0 or (hunk.old_start == 1 and bool(hunk.before))
    match_end = hunk.trailing == 0 and bool(hunk.before)
    if match_beginning and match_end:
        return [0] if last == 0 else []
    if match_beginning:
        return [0]
    if match_end:
        return [last]
    return None


def _outward(start: int, last: int, reach: int) -> Iterator[int]:
    """Positions from `start` outward within 0..last up to `reach` away, the later one first at each
    distance: git apply's search order."""
    yield start
    for distance in range(1, reach + 1):
        for pos in (start + distance, start - distance):
            if 0 <= pos <= last:
                yield pos


def indent(line: bytes) -> bytes:
    """The line's leading spaces and tabs."""
    return line[: len(line) - len(line.lstrip(b" \t"))]


def indent_shift(old_anchor: bytes, new_anchor: bytes) -> int:
    """Columns by which upstream moved a line's indentation."""
    return len(indent(new_anchor)) - len(indent(old_anchor))


def reindent(text: bytes, old_anchor: bytes, new_anchor: bytes) -> bytes:
    """An added line moved the way its anchor line moved: one level deeper or shallower."""
    old, new = indent(old_anchor), indent(new_anchor)
    if old == new or not text.strip():
        return text
    if new.startswith(old):
        return new[len(old) :] + text
    if old.startswith(new) and text.startswith(old[len(new) :]):
        return text[len(old) - len(new) :]
    return text


def realign(text: bytes, old_anchor: bytes, new_anchor: bytes) -> bytes:
    """An added line that was column-aligned with its anchor, re-spaced the way upstream re-spaced the anchor.

    Applies only to a line indented like its anchor (an entry of the same list or table) when the new
    anchor has the old one's shape (upstream re-spaced it, or it is the entry the line now follows);
    each word of the line that started at the column of the anchor's word of the same rank starts at
    that word's new column. Otherwise the line is only re-indented.
    """
    if old_anchor == new_anchor:
        return text
    if _shape(old_anchor) != _shape(new_anchor) or indent(text) != indent(old_anchor) or not text.strip():
        return reindent(text, old_anchor, new_anchor)
    return _respaced_words(text, old_anchor, new_anchor)


def _respaced_words(text: bytes, old_anchor: bytes, new_anchor: bytes) -> bytes:
    """The line indented like the new anchor, each word that started at the column of the old anchor's
    word of the same rank moved to that word's new column; the other gaps kept as they are."""
    words = list(_WORD.finditer(text))
    old_cols = [m.start() for m in _WORD.finditer(old_anchor)]
    new_cols = [m.start() for m in _WORD.finditer(new_anchor)]
    out = indent(new_anchor) + words[0].group()
    for rank, word in enumerate(words[1:], 1):
        if rank < len(old_cols) and word.start() == old_cols[rank]:
            out += b" " * max(1, new_cols[rank] - len(out))
        else:
            out += text[words[rank - 1].end() : word.start()]
        out += word.group()
    return out + text[words[-1].end() :]


def is_terminator(line: bytes) -> bool:
    """Whether the line ends a list, by its shape: closing brackets of a table, enum or call (`};`, `},`,
    `]`, `)`; not a lone `}`, which ends a block of statements), a `default:` label, a final `else`, or an
    entry named as a sentinel (`..._UNKNOWN`, `..._COUNT`, `..._MAX`, ...)."""
    return _TERMINATOR.match(norm(line)) is not None


def _shape(line: bytes) -> bytes:
    """The line with every word replaced by one letter: entries of one list have the same shape."""
    return re.sub(rb"\w+", b"w", norm(line))


def _appended_at(hunk: Hunk) -> int | None:
    """Index in hunk.lines of the terminator a hunk appends before: its only change is one run of added
    lines, directly followed by a context line that ends a list."""
    added = _ONE_ADDED_RUN.fullmatch("".join(line.kind for line in hunk.lines))
    if added is None:
        return None
    after = added.end(1)
    return after if after < len(hunk.lines) and is_terminator(hunk.lines[after].text) else None


@dataclass(frozen=True)
class _Window:
    """The hunk's lines with `lead` context lines dropped at the top and `trail` at the bottom."""

    lead: int
    trail: int
    lines: list[Line]
    pre: list[bytes]  # the preimage lines of `lines`, through `norm`
    keeps: bool  # the list terminator the hunk appends before is still in the window


def relocate(image: Image | list[bytes], hunk: Hunk) -> tuple[Placement, list[bytes]] | None:
    """Find the hunk ignoring whitespace, dropping up to two context lines at each end.

    A hunk that appends entries before a list's terminator is anchored on the terminator: any of its
    leading context may go, so that its entries land after upstream's last entry (which must look like
    the entry they followed), and a place that keeps the terminator right after them comes first.
    Then it prefers the least fuzz, then a place inside the function the hunk header names, then the
    place nearest the expected one. Returns the placement and the lines that replace
    image[start:start+len], with upstream's version of every context line and added lines re-indented
    (and re-aligned) like their anchor.
    """
    image = indexed(image)
    expected = max(0, hunk.new_start - 1)
    terminator = _appended_at(hunk)
    best = _best_window(image, hunk, terminator, expected)
    if best is None:
        return None
    return _placed(image.lines, hunk, *best, expected, terminator)


def _placed(
    image: list[bytes], hunk: Hunk, pos: int, window: _Window, expected: int, terminator: int | None
) -> tuple[Placement, list[bytes]]:
    """The placement of the window at `pos` and its lines over upstream's, for `relocate`."""
    preimage = [line.text for line in window.lines if line.kind != "+"]
    anchors = list(zip(preimage, image[pos : pos + len(preimage)]))  # (patch's context, upstream's line)
    reanchored = window.lead == hunk.leading and window.lead > 0
    neighbours = (hunk.lines[window.lead - 1].text, image[pos - 1]) if reanchored else None
    placement = Placement(
        pos,
        pos - expected,
        window.lead + window.trail,
        any(old != new for old, new in anchors),
        next((indent_shift(old, new) for old, new in anchors if indent(old) != indent(new)), 0),
        norm(hunk.lines[terminator].text) if reanchored and terminator is not None else b"",
    )
    return placement, _replacement(window.lines, anchors, neighbours)


def _windows(hunk: Hunk, terminator: int | None) -> Iterator[_Window]:
    """Every fuzz relocation tries, least dropped at the top first: up to MAX_FUZZ context lines at each
    end, and any number at the top while the terminator the hunk appends before stays in."""
    leads = hunk.leading if terminator is not None else min(MAX_FUZZ, hunk.leading)
    for lead in range(leads + 1):
        for trail in range(min(MAX_FUZZ, hunk.trailing) + 1):
            keeps = terminator is not None and trail < len(hunk.lines) - terminator
            if lead > MAX_FUZZ and not keeps:
                continue
            lines = hunk.lines[lead : len(hunk.lines) - trail]
            pre = [norm(line.text) for line in lines if line.kind != "+"]
            if any(pre):
                yield _Window(lead, trail, lines, pre, keeps)


def _best_window(
    image: Image, hunk: Hunk, terminator: int | None, expected: int
) -> tuple[int, _Window] | None:
    """The place and window that cost least: keeping the terminator, then fuzz, then being inside the
    function the hunk header names, then distance from the expected place; the first found on a tie."""
    section = norm(hunk.section)
    best: tuple[tuple[bool, int, bool, int], int, _Window] | None = None
    for window in _windows(hunk, terminator):
        for pos in _matches(image, window.pre):
            if _lost_its_entry(image.lines, hunk, window, pos):
                continue
            in_function = not section or section in norm(image.function_at(pos))
            cost = (
                not window.keeps,
                window.lead + window.trail,
                not in_function,
                abs(pos - expected - window.lead),
            )
            if best is None or cost < best[0]:
                best = (cost, pos, window)
    return None if best is None else best[1:]


def _matches(image: Image, pre: list[bytes]) -> list[int]:
    """Where the normalized preimage `pre` lines up in the image, in order."""
    return _runs(image, pre, len(image) - len(pre))


def _runs(image: Image, wanted: list[bytes], last: int) -> list[int]:
    """Where the lines `wanted` (through `norm`) stand one after the other in the image, starting at most
    at `last`, in order: looked up by their rarest line."""
    k, at = image.rarest(wanted, loose=True)
    normalized, n = image.normalized, len(wanted)
    return [p for p in _starts(at, k, last) if normalized[p : p + n] == wanted]


def _lost_its_entry(image: list[bytes], hunk: Hunk, window: _Window, pos: int) -> bool:
    """Whether a window with no context left above its added lines would put them after a line unlike the
    entry they followed: without context, only that likeness says the place is right."""
    lead = window.lead
    if lead != hunk.leading or lead == 0:
        return False
    return pos == 0 or _shape(image[pos - 1]) != _shape(hunk.lines[lead - 1].text)


def _replacement(
    lines: list[Line], anchors: list[tuple[bytes, bytes]], neighbours: tuple[bytes, bytes] | None
) -> list[bytes]:
    """The window's postimage over upstream: upstream's text for context lines, added lines re-aligned on
    `neighbours` (the entry they now follow) or else on their nearest anchor."""
    out: list[bytes] = []
    k = 0
    for j, line in enumerate(lines):
        if line.kind == "+":
            old_anchor, new_anchor = neighbours or _anchor_for(lines, j, anchors)
            out.append(realign(line.text, old_anchor, new_anchor))
            continue
        if line.kind == " ":
            out.append(anchors[k][1])
        k += 1
    return out


def _anchor_for(lines: list[Line], j: int, anchors: list[tuple[bytes, bytes]]) -> tuple[bytes, bytes]:
    """The nearest context or removed line above added line j (else below): its old and new text."""
    before = sum(1 for line in lines[:j] if line.kind != "+")
    if before:
        return anchors[before - 1]
    return anchors[0] if anchors else (b"", b"")


def copies_of(image: Image, lines: list[bytes]) -> list[int]:
    """Where `lines` appear, ignoring whitespace, in the image; nowhere for lines too few to tell a place
    (fewer than three with a word in them: one or two recur by chance)."""
    wanted = [norm(line) for line in lines]
    if sum(1 for line in wanted if re.search(rb"\w", line)) < 3:
        return []
    return _runs(image, wanted, len(image) - len(wanted))


def best_candidate(image: Image | list[bytes], hunk: Hunk) -> tuple[int, int] | None:
    """The position where most of the hunk's preimage lines line up (ignoring whitespace), and how many."""
    image = indexed(image)
    pre = [norm(t) for t in hunk.before]
    votes: dict[int, int] = {}
    for offset, line in enumerate(pre):
        if not line or image.loose_more_than(line, 50):
            continue  # blank lines and braces line up everywhere: no evidence
        for i in image.loose_at(line):
            votes[i - offset] = votes.get(i - offset, 0) + 1
    if not votes:
        return None
    expected = hunk.new_start - 1
    pos, count = max(votes.items(), key=lambda kv: (kv[1], -abs(kv[0] - expected)))
    return max(0, pos), count
