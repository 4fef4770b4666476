"""What a C/C++ string expression or stream statement writes, as pieces: literal text and slots.

`"a: %s" PRIu64 NAME` is the text `a: `, a conversion slot, the `u` a `PRIu64` puts after a `%` and width,
and the string a `#define` gives NAME (a slot when the file does not define it); `os << "a" << x` is the
text `a` and a slot for `x`; a `__func__` argument is the name of the function it is in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.review.source import c_unescape

FUNCTION_NAMES = ("__func__", "__FUNCTION__")
_SPEC = re.compile(r"%(%|[-+ #0']*(\*|\d+)?(?:\.(\*|\d+))?(?:hh|h|ll|l|j|z|t|L|q)?([diouxXeEfFgGaAcspn]))")
_KIND = {
    **dict.fromkeys("diou", "d"),
    **dict.fromkeys("xX", "x"),
    **dict.fromkeys("eEfFgGaA", "f"),
    "c": "c",
    "s": "s",
    "p": "p",
    "n": "",
}
# One piece of a string expression: a literal, a raw literal, a `PRI*` conversion macro, another macro.
_PIECE = re.compile(
    r'\s*(?:"((?:\\.|[^"\\\n])*)"|R"([^()\\\s"]{0,16})\((.*?)\)\2"|(PRI([diouxX])\w*)|([A-Z][A-Z0-9_]{2,})\b)',
    re.DOTALL,
)


@dataclass(frozen=True)
class Slot:
    """A value a template prints but the code does not spell: a conversion or an expression."""

    kind: str  # printf kind: d (integer), x (hex), f (float), c, s (string or any expression), p, "" (%n)
    expr: str = ""  # the argument's code, when known


Piece = str | Slot


def string_pieces(expr: str, defines: Mapping[str, str]) -> list[Piece] | None:
    """Adjacent string pieces at the start of `expr` (literals, `PRIu64`, macros), when they are the whole
    expression and hold a literal; else None."""
    pos, pieces, literal = 0, [], False
    for m in _PIECE.finditer(expr):
        if m.start() != pos:
            break
        pos = m.end()
        if m[1] is not None or m[3] is not None:
            pieces.append(c_unescape(m[1]) if m[1] is not None else m[3])
            literal = True
        elif m[4] is not None:
            pieces.append(f"ll{m[5]}")  # the `%` and width are in the literal before it
        else:
            pieces.append(defines.get(m[6], Slot("s", m[6])))
    return list(joined(pieces)) if literal and not expr[pos:].strip() else None


def statement_end(code: str, at: int) -> int:
    """The offset of the `;` that ends the statement going on at `at` (strings and brackets skipped)."""
    depth = 0
    for m in _TOKEN.finditer(code, at):
        t = m[0]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth < 0:
                return m.start()
        elif t == ";" and depth == 0:
            return m.start()
    return len(code)


_TOKEN = re.compile(
    r"""R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[()\[\]{};]""", re.DOTALL
)
_CHAR = re.compile(r"'((?:\\.|[^'\\\n])+)'")
_ENDL = re.compile(r"(?:std::)?endl")


def operands(text: str, operator: str, func: Callable[[], str]) -> list[Piece]:
    """The pieces one statement writes: `a << "b" << c` (or `+= "b" + c`), literals as text."""
    pieces: list[Piece] = []
    for operand in _split_top(text, "<<" if operator == "<<" else "+"):
        operand = operand.strip()
        value = _literal_text(operand)
        if value is not None:
            pieces.append(value)
        elif _ENDL.fullmatch(operand):
            pieces.append("\n")
        elif operand:
            pieces.append(func() if operand in FUNCTION_NAMES else Slot("s", operand))
    return pieces


def _literal_text(operand: str) -> str | None:
    m = _CHAR.fullmatch(operand)
    if m:
        return c_unescape(m[1])
    pieces = re.fullmatch(r'(?:\s*"(?:\\.|[^"\\\n])*")+\s*', operand)
    if pieces is None:
        return None
    return "".join(c_unescape(body) for body in re.findall(r'"((?:\\.|[^"\\\n])*)"', operand))


def _split_top(text: str, operator: str) -> list[str]:
    """`text` split on `operator` outside brackets and strings."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(
        r"""R"([^()\\\s"]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|<<|[+()\[\]{}]""",
        text,
        re.DOTALL,
    ):
        t = m[0]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == operator and depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def conversions(pieces: list[Piece], args: list[str], func: Callable[[], str]) -> tuple[Piece, ...]:
    """A format's pieces with each conversion a slot holding its argument (`__func__`: the function's name),
    adjacent text joined."""
    out: list[Piece] = []
    remaining = iter(args)
    for piece in pieces:
        if isinstance(piece, Slot):
            out.append(piece)
            continue
        at = 0
        for m in _SPEC.finditer(piece):
            out.append(piece[at : m.start()])
            at = m.end()
            if m[1] == "%":
                out.append("%")
                continue
            for width in (m[2], m[3]):
                if width == "*":
                    next(remaining, "")
            arg = next(remaining, "").strip()
            out.append(func() if arg in FUNCTION_NAMES else Slot(_KIND[m[4]], arg))
        out.append(piece[at:])
    return joined(out)


def joined(pieces: list[Piece]) -> tuple[Piece, ...]:
    joined: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str) and joined and isinstance(joined[-1], str):
            joined[-1] += piece
        elif piece != "":
            joined.append(piece)
    return tuple(joined)
