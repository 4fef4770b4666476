"""Declarations the bump changes in its headers that the code of another pin, at its own pin, still uses
the old way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import api, compat
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.source import extension

if TYPE_CHECKING:
    from bot.review.run import Run


@check("api.consumers", area="build", inputs=("diff", "consumer-pins"))
def consumer_breaks(run: Run) -> list[Draft]:
    headers = [c for c in run.changes if extension(c.path) in compat.HEADERS and c.significant]
    if not run.ctx.consumers or not headers:
        return []
    changes = api.api_changes(*_header_texts(headers))
    producer = run.ctx.pin.name
    return [
        d for code in run.ctx.consumers for d in api.consumer_drafts(producer, changes, code, run.where_now)
    ]


def _header_texts(headers: list[FileChange]) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The changed headers' texts at the old and at the new ref, by path."""
    old = {c.old_path: c.old_text.encode() for c in headers if c.old_path}
    new = {c.new_path: c.new_text.encode() for c in headers if c.new_path}
    return old, new
