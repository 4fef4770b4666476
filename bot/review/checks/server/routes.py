"""HTTP routes Ollama calls that llama-server no longer serves, or serves at another path or method."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.review import routes
from bot.review.changes import Draft
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.routes", area="server", inputs=("diff", "inventory"), applies=lambda run: bool(run.c_changes))
def route_drafts(run: Run) -> list[Draft]:
    return routes.route_drafts(
        run.c_changes,
        run.contracts.endpoints,
        lambda e: run.spelled_unchanged(
            f'"{e.split(" ", 1)[1]}"', lambda code: e in routes.registrations(code, "")
        ),
    )
