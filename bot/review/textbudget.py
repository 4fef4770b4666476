"""How much of the changed files' texts a review holds at once, in bytes.

A long jump changes thousands of upstream files, and the detectors, one concern after another, read the
texts of many of them. Each change keeps what it derived from its texts (the text, its lines, its
comment-free code) while newer reads leave room in the budget; past it, the changes read longest ago let
go of theirs, and read them again should a detector ask. Memory then follows the budget, not the jump.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

# Bytes of text (blobs read, hunks' lines loaded) whose derived values a review keeps at once: each byte is
# held about five times over (decoded, split into lines, comment-free, ...). On the real b9452 -> b10304 jump
# 8 MB took the check's peak RSS from 569 to 348 MB for 1.5 s more; 2 MB saves 36 MB more for 1 s more.
TEXT_BUDGET_BYTES = 8 << 20


class Releasable(Protocol):
    def release(self) -> None:
        """Drop what was derived from the texts; it is derived again when asked."""


class TextBudget:
    """The holders of texts, least recently read first, with the bytes each read."""

    def __init__(self, budget: int | None = None):
        self.budget = TEXT_BUDGET_BYTES if budget is None else budget
        self._held: OrderedDict[int, tuple[Releasable, int]] = OrderedDict()
        self._size = 0

    def charge(self, holder: Releasable, size: int) -> None:
        """`holder` has just read `size` bytes of text: it becomes the most recent, and the least recent
        others release theirs until the budget holds (a holder alone over it keeps its own)."""
        key = id(holder)
        _, before = self._held.pop(key, (holder, 0))
        self._held[key] = (holder, before + size)
        self._size += size
        while self._size > self.budget and len(self._held) > 1:
            _, (oldest, held) = self._held.popitem(last=False)
            self._size -= held
            oldest.release()
