"""Request fields, answers, compared values and stream frames of llama-server that Ollama relies on, when
the bump changes the server's code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import wire as wirefields
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run


def _kept(run: Run) -> list[Draft] | None:
    """The items as a review of the same texts kept them (a re-check); None when they are to be read."""
    if not run.server_changes:
        return None
    return wirefields.kept_drafts(lambda: _server_texts(run), run.contracts)


@check(
    "server.wire",
    area="server",
    inputs=("server-sources", "wire-groups"),
    applies=lambda run: bool(run.server_changes),
    kept=_kept,
)
def wire(run: Run) -> list[Draft]:
    return wirefields.wire_drafts(*_server_texts(run), run.contracts)


def _server_texts(run: Run) -> tuple[dict[str, str], dict[str, str]]:
    paths = [p for p in run.ctx.new.files() if glob_match(p, run.server_sources)]
    return wirefields.server_texts(paths, run.new_code, run.server_changes)
