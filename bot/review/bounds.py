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


def number(text: str) -> float | None:
    """A bound or value as a number: a literal (with a C suffix), `*_MAX`/`max()` as +inf, `*_MIN`/`lowest()`
    as -inf; None for what cannot be read."""
    text = _SUFFIX.sub("", text.strip())
    try:
        return float(text)
    except ValueError:
        pass
    if re.search(r"_MAX\b|::max\(\)", text):
        return math.inf
    if re.search(r"_MIN\b|::lowest\(\)", text):
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
