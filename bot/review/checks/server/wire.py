"""Request fields, answers, compared values and stream frames of llama-server that Ollama relies on, when
the bump changes the server's code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.review import wire as wirefields
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.servercode import ServerCode
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run


def _kept(run: Run) -> list[Draft] | None:
    """The items as a review of the same texts kept them (a re-check); None when they are to be read."""
    if not run.server_changes:
        return None
    return wirefields.kept_drafts(lambda: server_texts_of(run), run.contracts)


@check(
    "server.wire",
    area="server",
    inputs=("server-sources", "wire-groups"),
    applies=lambda run: bool(run.server_changes) or run.server_lost,
    kept=_kept,
)
def wire(run: Run) -> list[Draft]:
    if run.server_lost:
        return [_not_checked(run)]
    return wirefields.wire_drafts(*server_texts_of(run), run.contracts)


REFS_SHOWN = 3  # Ollama lines named by the item saying the wire was not checked


def _not_checked(run: Run) -> Draft:
    """One item saying the wire was not checked, and why (never silence), at the Ollama lines that send
    llama-server a request."""
    sent = tuple(dict.fromkeys(f.ref for f in run.contracts.request_fields if f.direction == "request"))
    hinted = run.profile_globs("server_sources")
    gone = next(p for p in run.ctx.old.files() if glob_match(p, hinted))
    ref = str(run.ctx.new.commit.id)[:12]
    return Draft(
        "server",
        "info",
        "llama-server's requests, answers and stream frames not checked: its sources were not found",
        f"At the old ref llama-server's sources were at {', '.join(code_span(g) for g in hinted)}; at "
        f"{code_span(ref)} no file is there and no C++ source registers an HTTP route, so the request fields, "
        "answers and frames Ollama relies on were not compared. Check where the server went, and set "
        "`server_sources` in the review profile.",
        gone,
        None,
        local_refs=sent[:REFS_SHOWN],
        cause="anchor:server sources",
    )


def new_server_code(run: Run) -> ServerCode:
    """llama-server's sources at the new ref, read as the wire check reads them (once for both)."""
    return wirefields.server_code(server_texts_of(run)[1])


def server_texts_of(run: Run) -> tuple[dict[str, str], dict[str, str]]:
    paths = [p for p in run.ctx.new.files() if glob_match(p, run.server_sources)]
    return wirefields.server_texts(paths, run.new_code, run.server_changes)
