"""Sample lines a template prints, for one of Ollama's patterns, and whether the pattern matches them.

A slot is filled with plain sample values (a device name, a number) and, one slot at a time and all at
once, with the shortest text each capture group of the pattern accepts: the values Ollama captures are
what upstream fills in (a `gfx1030` in a `%s`, a `0` in a `%d` Ollama reads as `[01]`), while the text
around them must be upstream's own. A match is known by its signature: what it captured in the groups that
can only capture fixed words (`(model|KV|compute)`), since Ollama tells those lines apart by them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from re import _constants as _op  # type: ignore[attr-defined]

from bot.review.cpieces import Piece, Slot
from bot.review.producers import Template

MIN_NEEDLE = 3
MAX_WORDS = 16  # alternatives of a fixed group enumerated
MAX_WITNESSES = 24  # capture groups' texts tried in a template's slots
MAX_SLOTS = 32  # slots of one template filled with them (the others print their plain sample)
MAX_LINE = 2000  # characters of a sample line a pattern is run on
_DEFAULTS = (
    {"s": "CUDA0", "d": "1024", "f": "1.50", "c": "x", "p": "0x7f00", "x": "1f", "": ""},
    {"s": "NVIDIA GeForce RTX 4090", "d": "24564", "f": "0.25", "c": "x", "p": "0x7f00", "x": "ff", "": ""},
)
# the plain sample values, each with the conversion it stands for (longest first: one may hold another)
PLAIN_VALUES = tuple(
    sorted(((v, f"%{k}") for k, v in _DEFAULTS[0].items() if len(v) > 1), key=lambda p: -len(p[0]))
)
_FITS = {  # what a conversion of each kind can print
    "s": re.compile(r"[^\n]*"),
    "d": re.compile(r"-?\d+"),
    "x": re.compile(r"[0-9a-fA-F]+"),
    "f": re.compile(r"-?\d+(?:\.\d+)?"),
    "c": re.compile(r"[^\n]"),
    "p": re.compile(r"0x[0-9a-f]+"),
    "": re.compile(r""),
}
_CHARS = "0a A_-.,:x1"  # tried in order for a character class's witness


@dataclass(frozen=True)
class Shape:
    """What matching needs of a pattern: the group witnesses, the fixed groups, the needles."""

    witnesses: tuple[str, ...]
    fixed_groups: tuple[int, ...]
    needles: frozenset[str] | None  # one of these (lower case) is in the literal text of whatever matches
    keys: tuple[str, ...]  # words the pattern reads a captured value after: `KEY = (value)`
    # without a needle: the runs of fixed text every match holds, in order (`[`, `/`, `]`), when they hold
    # MIN_NEEDLE characters together
    skeleton: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sample:
    line: str
    signature: tuple[str | None, ...]


@lru_cache(maxsize=512)
def shape(pattern: re.Pattern) -> Shape:
    """The pattern's shape; a construct the parser does not know leaves it without witnesses or needles."""
    from re import _parser  # type: ignore[attr-defined]

    try:
        items = _parser.parse(pattern.pattern, pattern.flags).data
    except (re.error, TypeError, ValueError, IndexError, AttributeError):
        return Shape((), (), None, ())
    groups = list(_groups(items))
    witnesses: dict[str, None] = {}
    fixed = []
    for number, content in groups:
        words = _words(content)
        if words is not None:
            fixed.append(number)
            witnesses.update(dict.fromkeys(words[:MAX_WORDS]))
        else:
            shortest = _shortest(content)
            if shortest is not None:
                witnesses[shortest] = None
    runs = _runs(items)
    needles = _needles(runs)
    skeleton = () if needles or len("".join(runs).replace(" ", "")) < MIN_NEEDLE else tuple(runs)
    return Shape(tuple(witnesses), tuple(fixed), needles, tuple(_keys(items)), skeleton)


def _groups(items) -> list[tuple[int, list]]:
    """(group number, content) of every capture group, nested ones too."""
    found = []
    for kind, value in items:
        if kind is _op.SUBPATTERN:
            if value[0] is not None:
                found.append((value[0], value[-1]))
            found += _groups(value[-1])
        elif kind is _op.BRANCH:
            for branch in value[1]:
                found += _groups(branch)
        elif kind in (_op.MAX_REPEAT, _op.MIN_REPEAT):
            found += _groups(value[2])
    return found


def _words(items) -> list[str] | None:
    """Every text `items` can match when it is a finite set of fixed words; else None."""
    texts = [""]
    for kind, value in items:
        options = _word_options(kind, value)
        if options is None:
            return None
        texts = [t + o for t in texts for o in options][: MAX_WORDS * 4]
    return texts


def _word_options(kind, value) -> list[str] | None:
    """The texts one parsed item can match, when they are a few fixed words."""
    if kind is _op.LITERAL:
        return [chr(value)]
    if kind is _op.IN and all(k is _op.LITERAL for k, _ in value):
        return [chr(v) for _, v in value]
    if kind is _op.SUBPATTERN:
        return _words(value[-1])
    if kind is not _op.BRANCH:
        return None
    options: list[str] = []
    for branch in value[1]:
        words = _words(branch)
        if words is None:
            return None
        options += words
    return options


def _shortest(items) -> str | None:
    """A shortest text `items` matches (None for a construct it cannot tell)."""
    out = []
    for kind, value in items:
        piece = _shortest_of(kind, value)
        if piece is None:
            return None
        out.append(piece)
    return "".join(out)


def _shortest_of(kind, value) -> str | None:
    if kind in _ONE_CHARACTER:
        return _ONE_CHARACTER[kind](value)
    if kind in (_op.MAX_REPEAT, _op.MIN_REPEAT):
        inner = _shortest(value[2])
        return None if inner is None else inner * value[0]
    if kind is _op.SUBPATTERN:
        return _shortest(value[-1])
    if kind is _op.BRANCH:
        return _shortest(value[1][0])
    return "" if kind is _op.AT else None


_ONE_CHARACTER = {
    _op.LITERAL: chr,
    _op.NOT_LITERAL: lambda value: "a" if value != ord("a") else "b",
    _op.ANY: lambda value: "a",
    _op.IN: lambda value: next((c for c in _CHARS if _in_class(value, c)), None),
}


_CATEGORIES = {
    _op.CATEGORY_DIGIT: str.isdigit,
    _op.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
    _op.CATEGORY_SPACE: str.isspace,
    _op.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    _op.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    _op.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
}


def _in_class(items, char: str) -> bool:
    """Whether `char` is in the character class `items`."""
    negate = bool(items) and items[0][0] is _op.NEGATE
    found = False
    for kind, value in items[1:] if negate else items:
        if kind is _op.LITERAL:
            found = found or char == chr(value)
        elif kind is _op.RANGE:
            found = found or value[0] <= ord(char) <= value[1]
        elif kind is _op.CATEGORY:
            found = found or _CATEGORIES.get(value, lambda c: False)(char)
    return found != negate


def _runs(items) -> list[str]:
    """The runs of fixed text outside capture groups, in order."""
    runs, run = [], ""
    for kind, value in items:
        if kind is _op.LITERAL:
            run += chr(value)
            continue
        runs.append(run)
        run = ""
    return [r for r in [*runs, run] if r]


def _needles(runs: list[str]) -> frozenset[str] | None:
    """The longest run every match holds (lower case); None without one long enough."""
    usable = [r.lower() for r in runs if len(r.strip()) >= MIN_NEEDLE]
    return frozenset({max(usable, key=len)}) if usable else None


def _keys(items) -> list[str]:
    """The words a pattern reads a captured value after (`KEY\\s*=\\s*(value)`, `KEY:\\s+(value)`)."""
    keys = []
    for at, (kind, value) in enumerate(items):
        if kind is _op.SUBPATTERN and value[0] is not None:
            key = _key_before(items[:at])
            if key:
                keys.append(key)
    return keys


def _key_before(items) -> str | None:
    """The word before a `=` or `:` that ends `items` (blanks around it allowed)."""
    at = _skip_blanks(items, len(items))
    if not at or items[at - 1] not in _SEPARATORS:
        return None
    at = _skip_blanks(items, at - 1)
    word = ""
    while at and _word_character(items[at - 1]):
        word = chr(items[at - 1][1]) + word
        at -= 1
    word = word.strip()
    return word if len(word) >= MIN_NEEDLE and word[0].isalpha() else None


_SEPARATORS = ((_op.LITERAL, ord("=")), (_op.LITERAL, ord(":")))


def _skip_blanks(items, at: int) -> int:
    while at and _blank(items[at - 1]):
        at -= 1
    return at


def _word_character(item) -> bool:
    kind, value = item
    return kind is _op.LITERAL and (chr(value).isalnum() or chr(value) in "_ ")


def _blank(item) -> bool:
    """Whether a parsed item only matches blanks (`\\s*`, `\\s+`, a space)."""
    kind, value = item
    if kind in (_op.MAX_REPEAT, _op.MIN_REPEAT):
        return all(_blank(i) for i in value[2])
    if kind is _op.IN:
        return value == [(_op.CATEGORY, _op.CATEGORY_SPACE)]
    return item == (_op.LITERAL, ord(" "))


def may_print(template: Template, pattern: re.Pattern) -> bool:
    """A fast 'no': False when the template's own text lacks the needle every match needs."""
    needles = shape(pattern).needles
    return needles is None or any(n in template.literal for n in needles)


def samples(template: Template, pattern: re.Pattern) -> list[Sample]:
    """The sample lines of `template` that `pattern` matches, one per signature."""
    if template.kind == "entry" or not may_print(template, pattern):
        return []
    found: dict[tuple[str | None, ...], Sample] = {}
    fixed = shape(pattern).fixed_groups
    for line in _rendered(template.pieces, shape(pattern).witnesses):
        m = pattern.search(line)
        if m is not None:
            signature = tuple(m.group(g) for g in fixed)
            found.setdefault(signature, Sample(line, signature))
    return list(found.values())


@lru_cache(maxsize=8192)
def _rendered(pieces: tuple[Piece, ...], witnesses: tuple[str, ...]) -> tuple[str, ...]:
    """The lines the pieces print with the plain sample values, then with each witness in each slot it
    fits (and in all of them at once)."""
    lines: dict[str, None] = {}
    for fill in _fills(pieces, witnesses):
        text = "".join(fill[i] if i in fill else str(p) for i, p in enumerate(pieces))
        lines.update(dict.fromkeys(line[:MAX_LINE] for line in text.split("\n") if line.strip()))
    return tuple(lines)


def _fills(pieces: tuple[Piece, ...], witnesses: tuple[str, ...]) -> list[dict[int, str]]:
    """Values for the slots (by piece index): the plain samples, then each witness in each slot it fits and
    in all of those at once."""
    slots = [i for i, p in enumerate(pieces) if isinstance(p, Slot)]
    fills: list[dict[int, str]] = [{i: d[_slot(pieces[i]).kind] for i in slots} for d in _DEFAULTS]
    for witness in witnesses[:MAX_WITNESSES]:
        fitting = [i for i in slots[:MAX_SLOTS] if _FITS[_slot(pieces[i]).kind].fullmatch(witness)]
        fills += [{**fills[0], i: witness} for i in fitting]
        if len(fitting) > 1:
            fills.append({**fills[0], **dict.fromkeys(fitting, witness)})
    return fills


def _slot(piece: Piece) -> Slot:
    assert isinstance(piece, Slot)
    return piece


def plain_lines(template: Template) -> tuple[str, ...]:
    """The lines the template prints with the plain sample values alone."""
    slots = {i: _DEFAULTS[0][_slot(p).kind] for i, p in enumerate(template.pieces) if isinstance(p, Slot)}
    text = "".join(slots[i] if i in slots else str(p) for i, p in enumerate(template.pieces))
    return tuple(line[:MAX_LINE] for line in text.split("\n") if line.strip())


def captured_arguments(template: Template, pattern: re.Pattern) -> tuple[tuple[str, ...], ...] | None:
    """Per capture group of the pattern, the argument code of the slots its capture spans (`idx` in
    `ggml_vulkan: %zu = ...`), for the first sample line the pattern matches; None when none matches."""
    for fill in _fills(template.pieces, shape(pattern).witnesses):
        text, spans = "", []
        for i, piece in enumerate(template.pieces):
            printed = fill[i] if i in fill else str(piece)
            if isinstance(piece, Slot):
                spans.append((len(text), len(text) + len(printed), " ".join(piece.expr.split())))
            text += printed
        start = 0
        for line in text.split("\n"):
            m = pattern.search(line[:MAX_LINE])
            if m is not None:
                return tuple(_spanned(spans, start, m, g) for g in range(1, pattern.groups + 1))
            start += len(line) + 1
    return None


def _spanned(spans: list[tuple[int, int, str]], start: int, m: re.Match, group: int) -> tuple[str, ...]:
    """The code of the slots a group's capture overlaps (none for a group that did not take part)."""
    if m.start(group) < 0:
        return ()
    low, high = start + m.start(group), start + m.end(group)
    return tuple(code for a, b, code in spans if a < high and b > low)


def rendered_lines(template: Template, pattern: re.Pattern) -> tuple[str, ...]:
    """Every sample line of the template, filled as for `pattern`."""
    return _rendered(template.pieces, shape(pattern).witnesses)
