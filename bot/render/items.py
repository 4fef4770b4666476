"""The checklist's checkboxes, and the ids of the ones a person ticked in an existing comment.

Every box carries a stable id in an HTML comment, so a box a person ticked stays ticked when the comment
is rendered again. The bot ticks only what it checked itself; the rest is the maintainer's to tick.
A tick is read back only from a line in the exact shape bot/templates/_macros.md.j2 `box` writes, of an id
that is on one box line alone: the bot writes each id once, so a second line is someone else's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# a box line as `box` renders it: its state, and the id that ends the line (an id-like comment inside its
# text is not the box's); a line GitHub's editor saved ends in \r\n
_BOX = re.compile(r"^- \[([ xX])\] .+ <!-- id:([\w.:-]+)( auto)? -->\r?$", re.MULTILINE)


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


def box_id(name: str) -> str:
    """`name` as a box id: what an id may not hold (it ends an HTML comment on the box's line) as `_`."""
    return re.sub(r"[^\w.:-]", "_", name)


def ticked_ids(body: str) -> set[str]:
    """Ids of the boxes a person ticked in an existing comment: of box lines in the shape the bot renders,
    without `auto` (the bot's own ticks), each id on one box line only."""
    boxes = _BOX.findall(body or "")
    lines = Counter(box for _, box, _ in boxes)
    return {box for mark, box, auto in boxes if mark != " " and not auto and lines[box] == 1}
