"""The checklist's checkboxes, and the ids of the ones a person ticked in an existing comment.

Every box carries a stable id in an HTML comment, so a box a person ticked stays ticked when the comment
is rendered again. The bot ticks only what it checked itself; the rest is the maintainer's to tick.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# the id that ends the box's line: an id-like comment inside its text (an upstream path's) is not the box's
_TICKED = re.compile(r"^\s*[-*] \[[xX]\] .*<!-- id:([\w.:-]+) -->[ \t]*\r?$", re.MULTILINE)


@dataclass
class Item:
    id: str
    text: str
    done: bool = False  # ticked by the bot from the report (rendered with `auto`, not read back)
    ticked: bool = False  # ticked by a person in an earlier version of the comment
    by_bot: bool = False  # only the bot's own check ticks it: a person's tick is neither shown nor read back

    @property
    def checked(self) -> bool:
        return self.done if self.by_bot else self.done or self.ticked

    @property
    def auto(self) -> bool:
        """Rendered with `auto` after its id, so that reading the comment back does not take it for a person's."""
        return self.by_bot or (self.done and not self.ticked)


def tick(items: Iterable[Item], ticked: Iterable[str]) -> None:
    """Mark the boxes a person ticked in the comment before."""
    ids = set(ticked)
    for item in items:
        item.ticked = item.id in ids


def ticked_ids(body: str) -> set[str]:
    """Ids of the boxes ticked in an existing comment."""
    return set(_TICKED.findall(body or ""))
