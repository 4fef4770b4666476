"""The bounds of a request schema's field as numbers: whether a value passes them, and whether new bounds take
less than old ones. A bound written as a name (`INT32_MAX`, `std::numeric_limits<T>::max()`) reads as an
infinity; one that cannot be read (`params_base.n_parallel`) holds whatever the value."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.review.serverjson import SchemaField

_SUFFIX = re.compile(r"(?<=\d)[fFlLuU]+$")
# a name that is the type's extreme, alone (in an expression, `n > 0 ? n : INT32_MAX`, it is not the bound)
_HIGHEST = re.compile(r"\w*_MAX|[\w:<>\s]*::max\(\)")
_LOWEST = re.compile(r"\w*_MIN|[\w:<>\s]*::lowest\(\)")


def number(text: str) -> float | None:
    """A bound or value as a number: a literal (with a C suffix), `*_MAX`/`max()` as +inf, `*_MIN`/`lowest()`
    as -inf; None for what cannot be read."""
    text = _SUFFIX.sub("", text.strip())
    try:
        return float(text)
    except ValueError:
        pass
    if _HIGHEST.fullmatch(text):
        return math.inf
    if _LOWEST.fullmatch(text):
        return -math.inf
    return None


def within(bounds: tuple[str, str] | None, value: str) -> bool:
    """Whether a value is inside the bounds (a bound that cannot be read holds)."""
    v = number(value)
    if bounds is None or v is None:
        return True
    low, high = number(bounds[0]), number(bounds[1])
    return (low is None or v >= low) and (high is None or v <= high)


def failing(
    values: list[tuple[str, str]], before: SchemaField | None, field: SchemaField
) -> list[tuple[str, str]]:
    """The values (with what is said of them) the new bounds stop and the old ref let through as they were."""
    was = before.bounds if before is not None else None
    return [(v, said) for v, said in values if not within(field.bounds, v) and within(was, v)]


def runtime_bound(before: SchemaField | None, field: SchemaField) -> str | None:
    """A rejecting bound of the new ref that only the running server knows (`params_base.n_ctx`), where the
    old ref bounded that side by a number or not at all: as written; None when there is none."""
    if field.bounds is None or not field.rejects:
        return None
    for side, written in enumerate(field.bounds):
        was = _rejecting_side(before, side)
        if number(written) is None and (was is None or number(was) is not None):
            return written
    return None


def _rejecting_side(before: SchemaField | None, side: int) -> str | None:
    """One side (0: lowest, 1: highest) of the old ref's bounds, when they reject a request."""
    if before is None or before.bounds is None or not before.rejects:
        return None
    return before.bounds[side]


def narrower(before: SchemaField | None, field: SchemaField) -> bool:
    """Whether the new bounds reject values the old ref took (a value of the kind, not a known one): a
    rejecting bound above the old lowest value, or below the old highest one."""
    if field.bounds is None or not field.rejects:
        return False
    rejected = before is not None and before.bounds is not None and before.rejects
    old_low, old_high = (
        _interval(before.bounds) if rejected and before and before.bounds else (-math.inf, math.inf)
    )
    low, high = _interval(field.bounds)
    return _above(low, old_low) or _above(old_high, high)


def _interval(bounds: tuple[str, str]) -> tuple[float | None, float | None]:
    return number(bounds[0]), number(bounds[1])


def _above(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and a > b
