"""New checks upstream's request parsing makes that reject values of a field Ollama sends (a throw, or an error
answer): in a server source, only of the endpoints Ollama calls whose handlers reach the check, cited at the
fields Ollama sends them and where it calls them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache, partial
from typing import TYPE_CHECKING

from bot.model import LocalRef
from bot.review import limits
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.checks.server.error_status import called_endpoints, unit_at
from bot.review.checks.server.wire import new_server_code
from bot.review.consumers.contracts.model import WireField
from bot.review.consumers.gofields import condition_above, with_field_lines, writing
from bot.review.payloads import ROUTE_REACH
from bot.review.servercode import ServerCode
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.request-limits", area="server", inputs=("diff", "wire-groups", "server-sources"))
def request_limits(run: Run) -> list[Draft]:
    limited = run.profile_globs("request_limit_sources")
    found = [
        limit
        for c in run.c_changes
        if _may_limit(c, limited)
        for limit in limits.new_limits(c, run.parses_requests(c.path))
    ]
    if not found:
        return []
    fields = limits.fields_of(run.request_parsers())
    code = cache(lambda: new_server_code(run))
    drafts = []
    for limit in found:
        called = _called(run, code, limit) if run.parses_requests(limit.path) else None
        if called is None or called:  # no endpoint Ollama calls reaches it: another endpoint's check
            drafts += limits.limit_drafts([limit], fields, partial(_sent_at, run, called=called))
    return [with_field_lines(d, run.local, writing) for d in drafts]


def _called(
    run: Run, code: Callable[[], ServerCode], limit: limits.Limit
) -> dict[str, tuple[LocalRef, ...]] | None:
    """The endpoints Ollama calls whose handlers reach the function of a limit in a server source, with where
    it calls them; None where no route's handlers reach a function of the server's there (the limit is then
    cited at every field of its name Ollama sends)."""
    server = code()
    unit = unit_at(server, limit.path, limit.line)
    if unit is None or not any(
        any(u is unit for u in server.reached(handlers, ROUTE_REACH)) for handlers in server.routes.values()
    ):
        return None
    return called_endpoints(server, unit, run.contracts.endpoints)


def _sent_at(run: Run, field: str, called: Mapping[str, tuple[LocalRef, ...]] | None) -> tuple[LocalRef, ...]:
    """Where Ollama's code puts a JSON field of that name, at any depth, into a request to an upstream
    program (the inventory's request fields; to the `called` endpoints alone, then with where it calls them),
    and for one it sends only sometimes the `if` it sends it under: a rejection of the field's absence meets
    Ollama where that condition does not hold."""
    fields = _named(run.contracts.request_fields, field, called)
    sent = (r for f in fields for r in (f.ref, *(condition_above(run.local, f.ref) if f.optional else ())))
    calls = (r for f in fields if called for r in called[f.endpoint])
    return tuple(dict.fromkeys((*sent, *calls)))


def _named(fields: Iterable[WireField], name: str, endpoints: Mapping[str, object] | None) -> list[WireField]:
    """The request fields of that name, at any depth, sent to the `endpoints` (to any: None)."""
    return [
        f
        for f in fields
        if f.direction == "request" and f.path.rsplit(".", 1)[-1].removesuffix("[]") == name
        if endpoints is None or f.endpoint in endpoints
    ]


def _may_limit(c: FileChange, limited: tuple[str, ...]) -> bool:
    """Whether a change can add a check that rejects a request's value: a limited source's new text that
    throws, aborts or answers an error near a changed line."""
    return bool(c.new_path and glob_match(c.path, limited) and limits.may_reject(c.changed_raw[0]))
