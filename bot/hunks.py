"""Placing hunks in a file: git apply's exact search and tolerant relocation (bot/enumentries.py renumbers
and checks the entries they add).

Pure functions over lists of lines (bytes with their endings), so every rule
here is tested without git.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.patchfile import Hunk, Line

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


def find_exact(image: list[bytes], hunk: Hunk) -> Placement | None:
    """Where `git apply` (no fuzz, no whitespace options) would put the hunk, searching outward."""
    pre = hunk.before
    expected = max(0, hunk.new_start - 1 if hunk.new_start else 0)
    last = len(image) - len(pre)
    if last < 0:
        return None
    pinned = _pinned_positions(hunk, last)
    positions = pinned if pinned is not None else _outward(min(expected, last), last, len(image))
    for pos in positions:
        if image[pos : pos + len(pre)] == pre:
            return Placement(pos, pos - expected)
    return None


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
    """Positions from `start` outward within 0..last, the later one first at each distance: git apply's
    search order."""
    yield start
    for distance in range(1, reach + 1):
        for pos in (start + distance, start - distance):
            if 0 <= pos <= last:
                yield pos


def function_at(image: list[bytes], pos: int) -> bytes:
    """The nearest line above `pos` that git's default funcname rule would show in a hunk header."""
    for i in range(min(pos, len(image)) - 1, max(-1, pos - 3000), -1):
        if _FUNC_LINE.match(image[i]):
            return image[i].rstrip()
    return b""


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


def relocate(image: list[bytes], hunk: Hunk) -> tuple[Placement, list[bytes]] | None:
    """Find the hunk ignoring whitespace, dropping up to two context lines at each end.

    A hunk that appends entries before a list's terminator is anchored on the terminator: any of its
    leading context may go, so that its entries land after upstream's last entry (which must look like
    the entry they followed), and a place that keeps the terminator right after them comes first.
    Then it prefers the least fuzz, then a place inside the function the hunk header names, then the
    place nearest the expected one. Returns the placement and the lines that replace
    image[start:start+len], with upstream's version of every context line and added lines re-indented
    (and re-aligned) like their anchor.
    """
    expected = max(0, hunk.new_start - 1)
    terminator = _appended_at(hunk)
    best = _best_window(image, hunk, terminator, expected)
    if best is None:
        return None
    return _placed(image, hunk, *best, expected, terminator)


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
    image: list[bytes], hunk: Hunk, terminator: int | None, expected: int
) -> tuple[int, _Window] | None:
    """The place and window that cost least: keeping the terminator, then fuzz, then being inside the
    function the hunk header names, then distance from the expected place; the first found on a tie."""
    section = norm(hunk.section)
    index = _line_index(image)
    best: tuple[tuple[bool, int, bool, int], int, _Window] | None = None
    for window in _windows(hunk, terminator):
        for pos in _matches(image, index, window.pre):
            if _lost_its_entry(image, hunk, window, pos):
                continue
            in_function = not section or section in norm(function_at(image, pos))
            cost = (
                not window.keeps,
                window.lead + window.trail,
                not in_function,
                abs(pos - expected - window.lead),
            )
            if best is None or cost < best[0]:
                best = (cost, pos, window)
    return None if best is None else best[1:]


def _line_index(image: list[bytes]) -> dict[bytes, list[int]]:
    """Each line of the image through `norm`, with its places."""
    index: dict[bytes, list[int]] = {}
    for i, line in enumerate(image):
        index.setdefault(norm(line), []).append(i)
    return index


def _matches(image: list[bytes], index: dict[bytes, list[int]], pre: list[bytes]) -> list[int]:
    """Where the normalized preimage `pre` lines up in the image; `index` lists each normalized line's places."""
    return [pos for pos in index.get(pre[0], ()) if [norm(x) for x in image[pos : pos + len(pre)]] == pre]


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


def copies_of(normalized: list[bytes], lines: list[bytes]) -> list[int]:
    """Where `lines` appear, ignoring whitespace, in an image whose lines went through `norm`; nowhere for
    lines too few to tell a place (fewer than three with a word in them: one or two recur by chance)."""
    wanted = [norm(line) for line in lines]
    if sum(1 for line in wanted if re.search(rb"\w", line)) < 3:
        return []
    n = len(wanted)
    return [
        i
        for i in range(len(normalized) - n + 1)
        if normalized[i] == wanted[0] and normalized[i : i + n] == wanted
    ]


def best_candidate(image: list[bytes], hunk: Hunk) -> tuple[int, int] | None:
    """The position where most of the hunk's preimage lines line up (ignoring whitespace), and how many."""
    pre = [norm(t) for t in hunk.before]
    votes: dict[int, int] = {}
    positions = _line_index(image)
    for offset, line in enumerate(pre):
        if not line or len(positions.get(line, ())) > 50:
            continue  # blank lines and braces line up everywhere: no evidence
        for i in positions.get(line, ()):
            votes[i - offset] = votes.get(i - offset, 0) + 1
    if not votes:
        return None
    expected = hunk.new_start - 1
    pos, count = max(votes.items(), key=lambda kv: (kv[1], -abs(kv[0] - expected)))
    return max(0, pos), count
