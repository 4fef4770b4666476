"""New checks upstream's request parsing makes that reject values of a field Ollama sends."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.model import LocalRef
from bot.review import limits
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.consumers.gofields import with_field_lines, writing
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run


@check("server.request-limits", area="server", inputs=("diff", "inventory"))
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
    drafts = limits.limit_drafts(found, limits.fields_of(run.request_parsers()), lambda f: _sent_at(run, f))
    return [with_field_lines(d, run.local, writing) for d in drafts]


def _sent_at(run: Run, field: str) -> tuple[LocalRef, ...]:
    """Where Ollama's code puts a JSON field of that name, at any depth, into a request to an upstream
    program (the inventory's request fields), and for one it sends only sometimes the `if` it sends it
    under: a rejection of the field's absence meets Ollama where that condition does not hold."""
    return tuple(
        dict.fromkeys(
            ref
            for f in run.contracts.request_fields
            if f.direction == "request" and f.path.rsplit(".", 1)[-1].removesuffix("[]") == field
            for ref in (f.ref, *(_condition_above(run.local, f.ref) if f.optional else ()))
        )
    )


_IF_OPENS = re.compile(r"^\s*if\b.*\{\s*$")


def _condition_above(ollama: Mapping[str, str], ref: LocalRef) -> tuple[LocalRef, ...]:
    """The line above, when it opens the `if` block the line stands in."""
    lines = (ollama.get(ref.path) or "").split("\n")
    above = lines[ref.line - 2] if 1 < ref.line <= len(lines) else ""
    return (LocalRef(ref.path, ref.line - 1),) if _IF_OPENS.match(above) else ()


def _may_limit(c: FileChange, limited: tuple[str, ...]) -> bool:
    """Whether a change can add a check that rejects a request's value: a limited source's new text that
    throws or aborts near a changed line."""
    return bool(
        c.new_path
        and glob_match(c.path, limited)
        and ("throw" in c.changed_raw[0] or "ABORT" in c.changed_raw[0])
    )
