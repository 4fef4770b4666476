"""An error llama-server answered with an error status that it now answers with a success status: the block
of the same condition in the same function (`if (first_result->is_error()) { res->error(...); }`) now sets
`res->status = 200`. Ollama tells a failed request by the status (`res.StatusCode >= 400`) in the functions
that call the endpoint, so the failure reads as a success and its error is lost."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.checks.server.wire import new_server_code
from bot.review.payloads import ROUTE_REACH
from bot.review.producers import function_above
from bot.review.servercode import ServerCode, Unit

if TYPE_CHECKING:
    from bot.review.run import Run

BODY_REACH = 30  # lines of a block read for how it answers
REFS_SHOWN = 6
_CONDITION = re.compile(r"^\s*(?:\}\s*else\s+)?if\s*\((.+)\)\s*\{\s*$")
_ERROR = re.compile(r"(?:->|\.)\s*error\s*\(|\bstatus\s*=\s*[45]\d\d\b")
_SUCCESS = re.compile(r"\bstatus\s*=\s*(2\d\d)\b")
_STATUS_TEST = re.compile(
    r"\bStatusCode\s*(?:>=|<=|==|!=|>|<)\s*(?:\d{3}\b|http\.Status\w+)|switch\s+\w+\.StatusCode\b"
)


@dataclass(frozen=True)
class Turned:
    """A block that answered an error and now answers a success."""

    path: str
    function: str
    condition: str
    error_line: int  # at the old ref
    error_text: str
    status_line: int  # at the new ref
    status_text: str


@check(
    "server.error-status",
    area="server",
    inputs=("server-sources", "wire-groups"),
    applies=lambda run: bool(run.server_changes),
)
def error_status(run: Run) -> list[Draft]:
    changes = [c for c in run.server_changes if c.path.endswith(".cpp")]
    if not any(_ERROR.search(c.changed_raw[0]) for c in changes):
        return []
    code = new_server_code(run)
    return status_drafts(changes, code, run.contracts.endpoints, run.local)


def status_drafts(
    changes: list[FileChange],
    code: ServerCode,
    endpoints: Mapping[str, tuple[LocalRef, ...]],
    ollama: Mapping[str, str],
) -> list[Draft]:
    """One high item per block that now answers a success where it answered an error, in code the handler
    of an endpoint Ollama calls reaches, at the lines where Ollama tests that endpoint's answer's status."""
    drafts = []
    for t in (t for c in changes for t in turned_to_success(c)):
        unit = unit_at(code, t.path, t.status_line)
        called = called_endpoints(code, unit, endpoints) if unit else {}
        branches = [r for refs in called.values() for r in _status_tests(ollama, refs)]
        if unit and branches:
            t = replace(t, function=unit.qualified)
            drafts.append(_draft(t, sorted(called), tuple(dict.fromkeys(branches))[:REFS_SHOWN]))
    return drafts


def called_endpoints(
    code: ServerCode, unit: Unit, endpoints: Mapping[str, tuple[LocalRef, ...]]
) -> dict[str, tuple[LocalRef, ...]]:
    """The endpoints Ollama calls whose route's handlers reach the function, with where Ollama calls them."""
    routes = {
        route
        for route, handlers in code.routes.items()
        if any(u is unit for u in code.reached(handlers, ROUTE_REACH))
    }
    return {label: refs for label, refs in endpoints.items() if label.split(" ", 1)[-1] in routes}


def turned_to_success(change: FileChange) -> Iterator[Turned]:
    """The blocks of one condition in one function that answered an error at the old ref and, changed, set a
    success status at the new one with no error answer left."""
    old = blocks(change.old_code_lines)
    added = {n for span in change.significant for n, _ in change.added_code(span)}
    for key, (line, body) in blocks(change.new_code_lines).items():
        was = old.get(key)
        if was is None or _ERROR.search(body) or not added & set(range(line, line + body.count("\n") + 2)):
            continue
        error, success = _first(_ERROR, was[1], was[0]), _first(_SUCCESS, body, line)
        if error is not None and success is not None:
            yield Turned(change.path, key[0] or "", key[1], *error, *success)


def blocks(lines: list[str]) -> dict[tuple[str | None, str], tuple[int, str]]:
    """Each `if (condition) {` block by (function, condition), with its first line and its body's text."""
    found: dict[tuple[str | None, str], tuple[int, str]] = {}
    for n, text in enumerate(lines, start=1):
        m = _CONDITION.match(text)
        if m:
            key = (function_above(lines, n), " ".join(m[1].split()))
            found.setdefault(key, (n, "\n".join(_body(lines, n))))
    return found


def _body(lines: list[str], line: int) -> list[str]:
    depth, body = 0, []
    for text in lines[line - 1 : line - 1 + BODY_REACH]:
        depth += text.count("{") - text.count("}")
        body.append(text)
        if depth <= 0:
            break
    return body[1:]


def _first(pattern: re.Pattern, body: str, line: int) -> tuple[int, str] | None:
    """The first line of the body (below the block's `if` at `line`) the pattern finds, and its text."""
    for n, text in enumerate(body.split("\n"), start=line + 1):
        if pattern.search(text):
            return n, text.strip()
    return None


def unit_at(code: ServerCode, path: str, line: int) -> Unit | None:
    """The innermost unit starting above the line in the file (a route's lambda inside the function that
    registers it)."""
    above = [u for u in code.units if u.path == path and u.line <= line]
    return max(above, key=lambda u: u.line, default=None)


def _status_tests(ollama: Mapping[str, str], refs: tuple[LocalRef, ...]) -> Iterator[LocalRef]:
    """The lines testing an answer's status in the Go functions making the requests at the refs."""
    for ref in refs:
        lines = (ollama.get(ref.path) or "").split("\n")
        start = next(
            (n for n in range(min(ref.line, len(lines)), 0, -1) if lines[n - 1].startswith("func ")), 0
        )
        end = next((n for n in range(ref.line, len(lines) + 1) if lines[n - 1].startswith("}")), len(lines))
        for n in range(start, end + 1) if start else ():
            if _STATUS_TEST.search(lines[n - 1]):
                yield LocalRef(ref.path, n)


def _draft(t: Turned, endpoints: list[str], branches: tuple[LocalRef, ...]) -> Draft:
    called = ", ".join(code_span(e) for e in endpoints)
    status = _SUCCESS.search(t.status_text)
    detail = (
        f"At the old ref, when {code_span(t.condition)}, {code_span(t.function)} answered with an error status "
        f"({code_span(t.error_text)}, {code_span(f'{t.path}:{t.error_line}')}). At the new ref it sets "
        f"{code_span(t.status_text)} there ({code_span(f'{t.path}:{t.status_line}')}) and answers no error. "
        f"Ollama calls {called} and tells a failure by the status, so such a failure now reads as a success and "
        "its error is lost. Read the error where it is now sent, or keep the error status."
    )
    return Draft(
        "server",
        "high",
        f"llama-server now answers {code_span(status[1] if status else '2xx')} where "
        f"{code_span(t.condition)} answered an error, in {code_span(t.function)}",
        detail,
        t.path,
        t.status_line,
        ((t.status_line, t.status_line),),
        local_refs=branches,
        cause=f"error-status:{t.function}:{t.condition}",
    )
