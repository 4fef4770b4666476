"""Where Ollama's Go code uses a field of a struct it exchanges with an upstream program: the lines that read
it (`resp.Content`) or give it a value (`NPredict: n` in a literal, `req.NPredict = n`), in the functions that
name the struct (or a struct holding it) when some do, else anywhere in its file.

An item about a field cites the field's declaration; what breaks is where the value is read or made."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from itertools import islice

from bot.model import LocalRef
from bot.review.changes import Draft

LINES_SHOWN = 3  # the lines using a field an item adds after its declaration
# a struct field with a JSON tag, or one of an anonymous struct type (its tag after the closing brace)
_DECLARED = re.compile(r"\s*([A-Za-z_]\w*)\s+(?:[^\n]*`json:|(?:\[\]|\*)?struct\s*\{\s*$)")
_TYPE = re.compile(r"type\s+(\w+)\s+struct\b")
_FLAG = re.compile(r"\s*([A-Za-z_]\w*)\s+bool\s+`json:")  # a boolean struct field: what marks a frame


def reading(name: str) -> re.Pattern:
    """A selector that reads the field (a method of the same name is not it)."""
    return re.compile(rf"\.{re.escape(name)}\b(?!\s*\()")


def writing(name: str) -> re.Pattern:
    """A composite literal's key or an assignment that gives the field a value."""
    return re.compile(rf"(?:^|[{{,\s]){re.escape(name)}\s*:(?!=)|\.{re.escape(name)}\s*=(?!=)")


def with_field_lines(draft: Draft, ollama: Mapping[str, str], use: Callable[[str], re.Pattern]) -> Draft:
    """The item with, after each struct field it cites, the lines of that file that use the field so: those
    in the branches Ollama takes on a boolean field the item also cites (the frame it is about: `stop`)
    first."""
    flags = _flags(draft.local_refs, ollama)
    found = [found for ref in draft.local_refs for found in _field_lines(ref, ollama, use, flags)]
    if not found:
        return draft
    return replace(draft, local_refs=tuple(dict.fromkeys([*draft.local_refs, *found])))


def field_lines(ref: LocalRef, ollama: Mapping[str, str], use: Callable[[str], re.Pattern]) -> list[LocalRef]:
    """The first lines using the struct field declared at `ref` so."""
    return _field_lines(ref, ollama, use, {})


def _flags(refs: tuple[LocalRef, ...], ollama: Mapping[str, str]) -> dict[str, set[str]]:
    """Per file, the boolean struct fields the refs cite."""
    found: dict[str, set[str]] = {}
    for ref in refs:
        lines = (ollama.get(ref.path) or "").split("\n")
        if 0 < ref.line <= len(lines) and (m := _FLAG.match(lines[ref.line - 1])):
            found.setdefault(ref.path, set()).add(m[1])
    return found


def _field_lines(
    ref: LocalRef, ollama: Mapping[str, str], use: Callable[[str], re.Pattern], flags: dict[str, set[str]]
) -> list[LocalRef]:
    """The first lines using the field declared at `ref`, in the functions naming its struct when some do,
    in the branches taken on one of the `flags` when some are."""
    lines = (ollama.get(ref.path) or "").split("\n")
    m = _DECLARED.match(lines[ref.line - 1]) if 0 < ref.line <= len(lines) else None
    if m is None:
        return []
    hits = _preferred(
        _lines_matching(lines, use(m[1]), ref.line), _users(lines, _declaring_types(lines, ref.line))
    )
    hits = _preferred(hits, _taken_on(lines, flags.get(ref.path, set()) - {m[1]}))
    return [LocalRef(ref.path, n) for n in islice(hits, LINES_SHOWN)]


def _preferred(hits: list[int], lines: set[int]) -> list[int]:
    """The hits among the lines, when some are; else all of them."""
    return [n for n in hits if n in lines] or hits


def _taken_on(lines: list[str], flags: set[str]) -> set[int]:
    """The lines of the blocks of `if` statements that hold when one of the flags is true (`if r.Stop {`)."""
    if not flags:
        return set()
    test = re.compile(
        rf"^\s*(?:\}}\s*else\s+)?if\b[^{{!]*\.(?:{'|'.join(map(re.escape, sorted(flags)))})\b(?!\s*\()[^{{]*\{{\s*$"
    )
    found: set[int] = set()
    for n, text in enumerate(lines, start=1):
        if test.match(text):
            indent = len(text) - len(text.lstrip())
            end = next(
                (
                    k
                    for k in range(n, len(lines))
                    if lines[k].strip().startswith("}") and len(lines[k]) - len(lines[k].lstrip()) <= indent
                ),
                len(lines),
            )
            found.update(range(n + 1, end + 1))
    return found


def _lines_matching(lines: list[str], pattern: re.Pattern, but: int) -> list[int]:
    return [n for n, line in enumerate(lines, start=1) if n != but and pattern.search(line)]


def _declaring_types(lines: list[str], line: int) -> set[str]:
    """The struct type whose declaration holds the line, and the struct types that hold a field of it."""
    above = next((m for n in range(line - 1, -1, -1) if (m := _TYPE.match(lines[n]))), None)
    if above is None:
        return set()
    named = re.compile(rf"\b{above[1]}\b")
    holders, current = {above[1]}, ""
    for text in lines:
        current = m[1] if (m := _TYPE.match(text)) else "" if text.startswith("}") else current
        if current and current != above[1] and named.search(text):
            holders.add(current)
    return holders


def _users(lines: list[str], types: set[str]) -> set[int]:
    """The lines of the functions that name one of the types."""
    if not types:
        return set()
    named = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(types)))})\b")
    found: set[int] = set()
    start, names = 0, False
    for n, text in enumerate(lines, start=1):
        if text.startswith("func "):
            start, names = n, False
        names = names or bool(start and named.search(text))
        if start and text.startswith("}"):
            found.update(range(start, n + 1) if names else ())
            start = 0
    return found


def only_skips(ollama: Mapping[str, str], ref: LocalRef) -> bool:
    """Whether the Go `if` at the line does nothing but `continue` when it holds: what it tests for is
    skipped, and a line that never comes changes nothing."""
    lines = (ollama.get(ref.path) or "").split("\n")
    body = [line.strip() for line in lines[ref.line : ref.line + 2]]
    return (
        0 < ref.line <= len(lines)
        and lines[ref.line - 1].rstrip().endswith("{")
        and body == ["continue", "}"]
    )


_IF_OPENS = re.compile(r"^\s*if\b.*\{\s*$")


def condition_above(ollama: Mapping[str, str], ref: LocalRef) -> tuple[LocalRef, ...]:
    """The line above a Go line, when it opens the `if` block the line stands in: the condition under which
    Ollama does what the line does (sends a field only sometimes)."""
    lines = (ollama.get(ref.path) or "").split("\n")
    above = lines[ref.line - 2] if 1 < ref.line <= len(lines) else ""
    return (LocalRef(ref.path, ref.line - 1),) if _IF_OPENS.match(above) else ()
