"""HTTP routes Ollama calls that llama-server stops serving: registrations (`ctx_http.post("/x", handler)`,
`svr->Get("/x", ...)`) read from the changed sources at both refs, against the endpoints the inventory says
Ollama requests. A route whose handler now serves another path or method is told as renamed, with that
evidence."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange

_ROUTE = re.compile(
    r"""(?:\.|->)\s*(get|post|put|delete|patch)\s*\(\s*"(/[^"\n]*)"\s*,\s*([^;]{1,200}?)\)\s*;""",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Registration:
    endpoint: str  # METHOD /path
    handler: str  # the registration's handler expression, spaces squeezed
    path: str
    line: int


def registrations(code: str, path: str) -> dict[str, Registration]:
    """The routes a source registers, by endpoint (the first registration of each)."""
    found: dict[str, Registration] = {}
    for m in _ROUTE.finditer(code):
        endpoint = f"{m[1].upper()} {m[2]}"
        line = code.count("\n", 0, m.start()) + 1
        found.setdefault(endpoint, Registration(endpoint, " ".join(m[3].split()), path, line))
    return found


def route_drafts(
    changes: Iterable[FileChange],
    endpoints: Mapping[str, tuple[LocalRef, ...]],
    registered_elsewhere: Callable[[str], bool],
) -> list[Draft]:
    """An item for each endpoint Ollama calls that a changed source registered at the old ref and no source
    registers at the new one (`registered_elsewhere` asks the files the bump leaves alone)."""
    old: dict[str, Registration] = {}
    new: dict[str, Registration] = {}
    for c in changes:
        if '"/' in (c.old_code or "") + (c.new_code or ""):
            old |= (
                {e: r for e, r in registrations(c.old_code, c.old_path).items() if e not in old}
                if c.old_path
                else {}
            )
            new |= (
                {e: r for e, r in registrations(c.new_code, c.new_path).items() if e not in new}
                if c.new_path
                else {}
            )
    return [
        _gone(
            old[endpoint],
            refs,
            [r for e, r in new.items() if r.handler == old[endpoint].handler and e not in old],
        )
        for endpoint, refs in endpoints.items()
        if endpoint in old and endpoint not in new and not registered_elsewhere(endpoint)
    ]


def _gone(before: Registration, refs: tuple[LocalRef, ...], now: list[Registration]) -> Draft:
    served = code_span(before.endpoint)
    if now:
        title = f"llama-server serves {served} as {code_span(now[0].endpoint)} now; Ollama calls {served}"
        evidence = (
            f"; its handler, {code_span(before.handler)}, is registered as {code_span(now[0].endpoint)} "
            f"({now[0].path}:{now[0].line})"
        )
    else:
        title = f"llama-server no longer serves {served}, which Ollama calls"
        evidence = ": no source of the new ref registers it"
    where = ", ".join(f"{r.path}:{r.line}" for r in refs)
    return Draft(
        "server",
        "high",
        title,
        f"At the old ref {before.path}:{before.line} registered {served}{evidence}. Ollama requests it ({where}): "
        "that request now gets an error (404) instead of an answer.",
        now[0].path if now else before.path,
        now[0].line if now else None,
        removed=None if now else (before.path, f'"{before.endpoint.split(" ", 1)[1]}"'),
        local_refs=refs,
        cause=f"route:{before.endpoint}",
    )
