"""Placing hunks in a file: git apply's exact search, tolerant relocation, renumbering, collision checks.

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
_ENUM_VALUE = re.compile(
    rb"^\s*([A-Za-z_]\w*)\s*=\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*,?\s*(?://.*|/\*.*)?$"
)
_WORD = re.compile(rb"\S+")
_TERMINATOR = re.compile(
    rb"^(?:\}[}\]);,]+$|[\])][}\]);,]*$|default\s*:|(?:\}\s*)?else\s*(?:\{|$)|\{?\s*[A-Za-z_]\w*_(?:UNKNOWN|COUNT|MAX|END|LAST|NUM)\b)"
)
_ENTRY_KEY = re.compile(rb'^\s*\{?\s*("(?:[^"\\]|\\.)*"|[A-Z][A-Z0-9_]{2,})\s*[,:=}]')


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


def _indent(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(b" \t"))]


def indent_shift(old_anchor: bytes, new_anchor: bytes) -> int:
    """Columns by which upstream moved a line's indentation."""
    return len(_indent(new_anchor)) - len(_indent(old_anchor))


def reindent(text: bytes, old_anchor: bytes, new_anchor: bytes) -> bytes:
    """An added line moved the way its anchor line moved: one level deeper or shallower."""
    old, new = _indent(old_anchor), _indent(new_anchor)
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
    if _shape(old_anchor) != _shape(new_anchor) or _indent(text) != _indent(old_anchor) or not text.strip():
        return reindent(text, old_anchor, new_anchor)
    words = list(_WORD.finditer(text))
    old_cols = [m.start() for m in _WORD.finditer(old_anchor)]
    new_cols = [m.start() for m in _WORD.finditer(new_anchor)]
    out = _indent(new_anchor) + words[0].group()
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
    changed = [j for j, line in enumerate(hunk.lines) if line.kind != " "]
    if (
        not changed
        or any(hunk.lines[j].kind != "+" for j in changed)
        or changed[-1] - changed[0] + 1 != len(changed)
    ):
        return None
    after = changed[-1] + 1
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
        next((indent_shift(old, new) for old, new in anchors if _indent(old) != _indent(new)), 0),
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
    index: dict[bytes, list[int]] = {}
    for i, line in enumerate(image):
        index.setdefault(norm(line), []).append(i)
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
    positions: dict[bytes, list[int]] = {}
    for i, line in enumerate(image):
        positions.setdefault(norm(line), []).append(i)
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


@dataclass(frozen=True)
class Renumbered:
    """An enum entry the patch adds, moved off a value upstream now uses."""

    line: int  # 0-based index in the image
    name: str
    old: int
    new: int
    taken: tuple[tuple[int, str], ...]  # upstream's entries from `old` on that made it move that far

    @property
    def note(self) -> str:
        return f"renumbered from {self.old} to {self.new}: upstream now uses {_listed([str(v) for v, _ in self.taken])}"

    @property
    def clash(self) -> str:
        """What upstream's entries do to this one, by name."""
        return (
            f"{self.name} = {self.old} takes the value upstream now gives {self.taken[0][1]}"
            f" and would move to {self.new}"
        )


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def renumber(image: list[bytes], added: set[int]) -> tuple[list[bytes], list[Renumbered]]:
    """The image with each added explicit enum value that upstream now uses in the same enum moved to the
    next value nobody uses there (upstream's entries, or the patch's other entries), and the moves."""
    image = list(image)
    moves = []
    for i in sorted(added):
        moved = _moved_entry(image, i, added)
        if moved:
            image[i], move = moved
            moves.append(move)
    return image, moves


def _moved_entry(image: list[bytes], i: int, added: set[int]) -> tuple[bytes, Renumbered] | None:
    """Line i with its enum value moved to the next free one, and the move; None for a line that is no
    enum entry with an explicit value, a free value, or upstream's own entry of that name (a duplicate,
    not a move). Entries moved earlier in `image` count with their new values."""
    value = _ENUM_VALUE.match(image[i])
    if not value or not _in_enum(image, i):
        return None
    block = _block(image, i)
    upstream = _enum_values(image, [j for j in block if j not in added])
    old = _int(value[2])
    if upstream.get(old, value[1]) == value[1]:
        return None
    ours = _enum_values(image, [j for j in block if j in added])
    new = _next_free(old, upstream.keys() | ours.keys())
    start, end = value.span(2)
    taken = tuple((v, upstream[v].decode()) for v in sorted(upstream) if old <= v < new)
    line = image[i][:start] + _literal(value[2], new) + image[i][end:]
    return line, Renumbered(i, value[1].decode(), old, new, taken)


def _next_free(value: int, used: set[int]) -> int:
    """The first value from `value` on that nobody uses."""
    while value in used:
        value += 1
    return value


def _enum_values(image: list[bytes], lines: list[int]) -> dict[int, bytes]:
    """The explicit values of the enum entries on `lines`, each with its entry's name (the last one wins)."""
    return {_int(m[2]): m[1] for j in lines if (m := _ENUM_VALUE.match(image[j]))}


def _in_enum(image: list[bytes], i: int) -> bool:
    """Whether line i is in an enum's body: the line that opens its block (or the one above that, for a
    brace on its own line) says `enum`."""
    depth = len(_indent(image[i]))
    j = next((j for j in range(i - 1, -1, -1) if image[j].strip() and len(_indent(image[j])) < depth), None)
    return j is not None and any(re.search(rb"\benum\b", image[k]) for k in (j, j - 1) if k >= 0)


def _literal(written: bytes, value: int) -> bytes:
    """`value` written the way `written` is: hexadecimal with its case and width, else decimal."""
    if written.lower().startswith(b"0x"):
        digits = f"{value:0{len(written) - 2}x}"
        return written[:2] + (digits.upper() if written[2:].isupper() else digits).encode()
    return str(value).encode()


def mentions_value(line: bytes, value: int) -> bool:
    """Whether the line writes the number `value` on its own (not inside a name or another number)."""
    return re.search(rb"(?<![\w.])" + str(value).encode() + rb"(?![\w.])", line) is not None


def collisions(image: list[bytes], added: set[int]) -> list[str]:
    """Entries a patch adds whose key upstream's neighbours already have: a duplicate enum entry or table key."""
    problems = []
    for i in sorted(added):
        key = _ENTRY_KEY.match(image[i])
        if not key:
            continue
        for j in _block(image, i):
            if j not in added and (m := _ENTRY_KEY.match(image[j])) and m[1] == key[1]:
                problems.append(f"{key[1].decode()} (line {i + 1}) is already there at line {j + 1}")
    return problems


def _int(text: bytes) -> int:
    return int(text, 0) if not re.fullmatch(rb"-?0\d+", text) else int(text, 10)


def _block(image: list[bytes], i: int, reach: int = 400) -> list[int]:
    """Lines around i at the same or deeper indentation: the enum, list or table it sits in."""
    depth = len(_indent(image[i]))
    found = []
    for step in (-1, 1):
        j = i + step
        while 0 <= j < len(image) and abs(j - i) <= reach:
            text = image[j]
            if text.strip() and len(_indent(text)) < depth:
                break
            found.append(j)
            j += step
    return found
