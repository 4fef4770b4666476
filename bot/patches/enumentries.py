"""The entries a patch adds to an enum, list or table, over upstream's: explicit enum values upstream took,
renumbered to free ones, and keys upstream's neighbours already have. Pure functions over lists of lines."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.patches.hunks import indent

_ENUM_VALUE = re.compile(
    rb"^\s*([A-Za-z_]\w*)\s*=\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*,?\s*(?://.*|/\*.*)?$"
)
_ENTRY_KEY = re.compile(rb'^\s*\{?\s*("(?:[^"\\]|\\.)*"|[A-Z][A-Z0-9_]{2,})\s*[,:=}]')


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
    depth = len(indent(image[i]))
    j = next((j for j in range(i - 1, -1, -1) if _outside(image[j], depth)), None)
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
        key = _entry_key(image[i])
        if key is None:
            continue
        for j in _block(image, i):
            if j not in added and _entry_key(image[j]) == key:
                problems.append(f"{key.decode()} (line {i + 1}) is already there at line {j + 1}")
    return problems


def _entry_key(line: bytes) -> bytes | None:
    """The key a line gives its entry of an enum, list or table (a name or a string); None for another line."""
    key = _ENTRY_KEY.match(line)
    return key[1] if key else None


def _int(text: bytes) -> int:
    return int(text, 0) if not re.fullmatch(rb"-?0\d+", text) else int(text, 10)


def _block(image: list[bytes], i: int, reach: int = 400) -> list[int]:
    """Lines around i at the same or deeper indentation: the enum, list or table it sits in."""
    depth = len(indent(image[i]))
    found = []
    for step in (-1, 1):
        j = i + step
        while 0 <= j < len(image) and abs(j - i) <= reach:
            if _outside(image[j], depth):
                break
            found.append(j)
            j += step
    return found


def _outside(line: bytes, depth: int) -> bool:
    """Whether the line lies outside a block whose lines are indented `depth` deep: it has text, indented less."""
    return bool(line.strip()) and len(indent(line)) < depth
