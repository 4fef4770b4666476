"""Placing hunks in a file: git apply's exact search, tolerant relocation, renumbering, collision checks.

Pure functions over lists of lines (bytes with their endings), so every rule
here is tested without git.
"""

from __future__ import annotations

import re
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
    match_beginning = hunk.old_start == 0 or (hunk.old_start == 1 and bool(pre))
    match_end = hunk.trailing == 0 and bool(pre)
    n = len(pre)
    last = len(image) - n
    if last < 0:
        return None

    def fits(pos: int) -> bool:
        return image[pos : pos + n] == pre

    if match_beginning and match_end:
        return Placement(0, -expected) if len(image) == n and fits(0) else None
    if match_beginning:
        return Placement(0, -expected) if fits(0) else None
    if match_end:
        return Placement(last, last - expected) if fits(last) else None
    start = min(expected, last)
    for distance in range(len(image) + 1):
        for pos in (start + distance, start - distance) if distance else (start,):
            if 0 <= pos <= last and fits(pos):
                return Placement(pos, pos - expected)
    return None


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
    section = norm(hunk.section)
    index: dict[bytes, list[int]] = {}
    for i, line in enumerate(image):
        index.setdefault(norm(line), []).append(i)
    terminator = _appended_at(hunk)
    first_added = next(j for j, line in enumerate(hunk.lines) if line.kind != " ") if hunk.lines else 0
    best: tuple | None = None
    for lead in range((hunk.leading if terminator is not None else min(MAX_FUZZ, hunk.leading)) + 1):
        for trail in range(min(MAX_FUZZ, hunk.trailing) + 1):
            lines = hunk.lines[lead : len(hunk.lines) - trail]
            pre = [norm(line.text) for line in lines if line.kind != "+"]
            if not any(pre):
                continue
            keeps = terminator is not None and trail < len(hunk.lines) - terminator
            if lead > MAX_FUZZ and not keeps:
                continue
            for pos in index.get(pre[0], ()):
                if [norm(x) for x in image[pos : pos + len(pre)]] != pre:
                    continue
                if (
                    lead == first_added
                    and lead
                    and (pos == 0 or _shape(image[pos - 1]) != _shape(hunk.lines[lead - 1].text))
                ):
                    continue  # no context above any more: only after an entry like the one it followed
                in_function = not section or section in norm(function_at(image, pos))
                cost = (not keeps, lead + trail, not in_function, abs(pos - expected - lead))
                if best is None or cost < best[0]:
                    best = (cost, pos, lines, lead, trail)
    if best is None:
        return None
    _, pos, lines, lead, trail = best
    region = image[pos:]
    replacement: list[bytes] = []
    anchors: list[tuple[bytes, bytes]] = []  # (patch's context text, upstream's line) per preimage line
    k = 0
    for line in lines:
        if line.kind != "+":
            anchors.append((line.text, region[k]))
            k += 1
    reanchored = lead == first_added and lead > 0
    neighbours = (hunk.lines[lead - 1].text, image[pos - 1]) if reanchored else None
    k = 0
    exact = True
    for j, line in enumerate(lines):
        if line.kind == "+":
            old_anchor, new_anchor = neighbours or _anchor_for(lines, j, anchors)
            replacement.append(realign(line.text, old_anchor, new_anchor))
            continue
        if region[k] != line.text:
            exact = False
        if line.kind == " ":
            replacement.append(region[k])
        k += 1
    shift = next((len(_indent(b)) - len(_indent(a)) for a, b in anchors if _indent(a) != _indent(b)), 0)
    placement = Placement(
        pos,
        pos - expected,
        lead + trail,
        not exact,
        shift,
        norm(hunk.lines[terminator].text) if reanchored and terminator is not None else b"",
    )
    return placement, replacement


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
        value = _ENUM_VALUE.match(image[i])
        if not value or not _in_enum(image, i):
            continue
        block = _block(image, i)
        upstream = {_int(m[2]): m[1] for j in block if j not in added and (m := _ENUM_VALUE.match(image[j]))}
        old = _int(value[2])
        if upstream.get(old, value[1]) == value[1]:
            continue  # a free value, or upstream's own entry of that name (a duplicate, not a move)
        ours = {_int(m[2]) for j in block if j in added and (m := _ENUM_VALUE.match(image[j]))}
        new = old
        while new in upstream or new in ours:
            new += 1
        start, end = value.span(2)
        image[i] = image[i][:start] + _literal(value[2], new) + image[i][end:]
        taken = tuple((v, upstream[v].decode()) for v in sorted(upstream) if old <= v < new)
        moves.append(Renumbered(i, value[1].decode(), old, new, taken))
    return image, moves


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
