"""Regular expressions' needles: literal strings one of which every match contains.

`needle in text` runs at memory speed where a regular expression with a wide
alternation crawls, so a detector first asks whether a file can match at all.
"""

from __future__ import annotations

import re
from functools import lru_cache
from re import _constants as _op  # type: ignore[attr-defined]

MIN_NEEDLE = 3


def _needles(items) -> set[str] | None:
    """Lower-case strings one of which every match of this parsed sequence contains, or None."""
    options: list[set[str]] = []
    run = ""
    for kind, value in items:
        if kind is _op.LITERAL:
            run += chr(value).lower()
            continue
        if run:
            options.append({run})
            run = ""
        found = _node_needles(kind, value)
        if found:
            options.append(found)
    if run:
        options.append({run})
    return _best_needles(options)


def _node_needles(kind, value) -> set[str] | None:
    """The needles of one parsed node that is not a literal: a group's, a branch's (every alternative must
    have some), a repeat's that must match at least once; None for any other node."""
    if kind is _op.SUBPATTERN:
        return _needles(value[-1])
    if kind is _op.BRANCH:
        alternatives = [_needles(branch) for branch in value[1]]
        return set().union(*alternatives) if all(alternatives) else None  # type: ignore[arg-type]
    if kind in (_op.MAX_REPEAT, _op.MIN_REPEAT) and value[0] >= 1:
        return _needles(value[2])
    return None


def _best_needles(options: list[set[str]]) -> set[str] | None:
    """The set whose shortest needle is longest (fewest needles on a tie), among those of MIN_NEEDLE+."""
    options = [o for o in options if min(map(len, o)) >= MIN_NEEDLE]
    return max(options, key=lambda o: (min(map(len, o)), -len(o)), default=None)


@lru_cache(maxsize=256)
def needles(pattern: re.Pattern) -> frozenset[str] | None:
    """Literal strings (lower case) one of which every match of `pattern` contains; None when unknown."""
    from re import _parser  # type: ignore[attr-defined]

    try:
        found = _needles(_parser.parse(pattern.pattern, pattern.flags).data)
    except (re.error, TypeError, ValueError, IndexError, AttributeError):  # unknown construct: use the regex
        return None
    return frozenset(found) if found else None


def may_match(pattern: re.Pattern, text: str, lowered: str) -> bool:
    """A fast, never-wrong 'no': False only when `pattern` cannot match `text` (`lowered` = text.lower())."""
    found = needles(pattern)
    if found is not None:
        return any(n in lowered for n in found)
    return pattern.search(text) is not None
