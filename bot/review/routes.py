"""HTTP routes Ollama calls that llama-server stops serving: registrations (`ctx_http.post("/x", handler)`,
`svr->Get("/x", ...)`) read from the changed sources at both refs, against the endpoints the inventory says
Ollama requests. A route whose handler now serves another path or method is told as renamed, with that
evidence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.upstream.producers import Route, routes


def registrations(code: str, path: str) -> dict[str, Route]:
    """The routes a source registers, by endpoint (the first registration of each)."""
    found: dict[str, Route] = {}
    for route in routes(path, code):
        found.setdefault(route.endpoint, route)
    return found


def route_drafts(
    changes: Iterable[FileChange],
    endpoints: Mapping[str, tuple[LocalRef, ...]],
    registered_elsewhere: Callable[[str], bool],
) -> list[Draft]:
    """An item for each endpoint Ollama calls that a changed source registered at the old ref and no source
    registers at the new one (`registered_elsewhere` asks the files the bump leaves alone)."""
    changed = list(changes)
    old, new = _registered(changed, "old"), _registered(changed, "new")
    gone = [e for e in endpoints if e in old and e not in new and not registered_elsewhere(e)]
    return [
        _gone(
            old[e], endpoints[e], [r for n, r in new.items() if r.handler == old[e].handler and n not in old]
        )
        for e in gone
    ]


def _registered(changes: list[FileChange], side: str) -> dict[str, Route]:
    """The routes the changed sources register at one ref ("old" or "new"), the first of each."""
    found: dict[str, Route] = {}
    for c in changes:
        path = c.old_path if side == "old" else c.new_path
        if not path or '"/' not in (c.old_text if side == "old" else c.new_text):
            continue  # no path spelled: no comment to read out first
        code = c.old_code if side == "old" else c.new_code
        if '"/' in code:
            for endpoint, registration in registrations(code, path).items():
                found.setdefault(endpoint, registration)
    return found


def _gone(before: Route, refs: tuple[LocalRef, ...], now: list[Route]) -> Draft:
    served = code_span(before.endpoint)
    if now:
        title = f"llama-server serves {served} as {code_span(now[0].endpoint)} now; Ollama calls {served}"
        evidence = (
            f"; its handler, {code_span(before.handler)}, is registered as {code_span(now[0].endpoint)} "
            f"({code_span(f'{now[0].place}')})"
        )
    else:
        title = f"llama-server no longer serves {served}, which Ollama calls"
        evidence = ": no source of the new ref registers it"
    where = ", ".join(code_span(f"{r.path}:{r.line}") for r in refs)
    return Draft(
        "server",
        "high",
        title,
        f"At the old ref {code_span(f'{before.place}')} registered {served}{evidence}. Ollama requests it ({where}): "
        "that request now gets an error (404) instead of an answer.",
        now[0].place.path if now else before.place.path,
        now[0].place.line if now else None,
        removed=None if now else (before.place.path, f'"{before.path}"'),
        local_refs=refs,
        cause=f"route:{before.endpoint}",
    )
