"""Small phrases several texts share."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 patch`, `2 patches`: the count with its noun."""
    return f"{count} {word if count == 1 else many or word + 's'}"
