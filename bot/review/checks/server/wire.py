"""Request fields, answers, compared values and stream frames of llama-server that Ollama relies on, when
the bump changes the server's code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check(
    "server.wire",
    area="server",
    inputs=("server-sources", "wire-groups"),
    applies=lambda run: bool(run.server_changes),
    kept=lambda run: run.kept_wire(),
)
def wire(run: Run) -> list[Draft]:
    return run.wire()
