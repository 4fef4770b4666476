"""A check llama-server makes before it serves a request, which answers what Ollama reads from an endpoint
(`503 {"error": {"message": "Loading model"}}` until the model is loaded), that now lets the endpoint's
requests through first: `if (req.path == "/health") { return true; }` added above it. Ollama tells the state
of the server from that answer; the endpoint now answers as if the check had passed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.consumers.contracts.model import OutputPattern

if TYPE_CHECKING:
    from bot.review.run import Run

PASS_REACH = 4  # lines of an added `if` block read for its early `return true;`
ANSWER_REACH = 30  # lines below it read for the answer it passes over
REFS_SHOWN = 6
_PATH = re.compile(r'"(/[\w./-]*)"')
_PASSES = re.compile(r"^\s*return\s+true\s*;")
_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
_ERROR_STATUS = re.compile(r"\bstatus\s*=\s*[45]\d\d\b")


@dataclass(frozen=True)
class Bypass:
    endpoint: str  # `GET /health`
    line: int  # the added condition's
    answer: int  # the line of the error status passed over
    read: OutputPattern  # what Ollama reads of that answer


@check("server.passed-through", area="server", inputs=("diff", "inventory"))
def passed_through(run: Run) -> list[Draft]:
    endpoints = run.contracts.endpoints
    read = [p for p in run.contracts.output_patterns if any(_endpoint_of(s) in endpoints for s in p.sources)]
    if not read:
        return []
    return [
        _draft(c.path, bypass, endpoints[bypass.endpoint])
        for c in run.c_changes
        if c.new_path and run.parses_requests(c.path)
        for bypass in bypasses(c, endpoints, read)
    ]


def _endpoint_of(source: str) -> str:
    """The endpoint of a pattern's source (`GET /health response` -> `GET /health`)."""
    return " ".join(source.split()[:2])


def bypasses(
    change: FileChange, endpoints: Mapping[str, object], read: Sequence[OutputPattern]
) -> list[Bypass]:
    """The added early passes for an endpoint Ollama calls above an error answer holding text Ollama reads
    from that endpoint."""
    lines = change.new_code_lines
    found = []
    for span in change.significant:
        for line, code in change.added_code(span):
            if "if" not in code or not _passes(lines, line):
                continue
            for endpoint in _named_endpoints(code, endpoints):
                found += _passed_over(lines, line, endpoint, read)
    return found


def _named_endpoints(code: str, endpoints: Mapping[str, object]) -> list[str]:
    paths = set(_PATH.findall(code.split("{", 1)[0]))
    return [e for e in endpoints if e.split(" ", 1)[-1] in paths]


def _passes(lines: list[str], line: int) -> bool:
    """Whether the block the `if` at `line` opens returns true at once."""
    for text in lines[line - 1 : line + PASS_REACH]:
        if _PASSES.search(text.split("{", 1)[-1]) or _PASSES.search(text):
            return True
        if text.strip().startswith("}"):
            return False
    return False


def _passed_over(lines: list[str], line: int, endpoint: str, read: Sequence[OutputPattern]) -> list[Bypass]:
    """The error answer below the pass whose text one of the patterns Ollama reads from the endpoint holds."""
    below = lines[line : line + ANSWER_REACH]
    status = next((n for n, text in enumerate(below, start=line + 1) if _ERROR_STATUS.search(text)), None)
    if status is None:
        return []
    texts = [t.lower() for text in below for t in _STRING.findall(text)]
    return [
        Bypass(endpoint, line, status, p)
        for p in read
        if any(_endpoint_of(s) == endpoint for s in p.sources) and _said(p, texts)
    ][:1]


def _said(pattern: OutputPattern, texts: list[str]) -> bool:
    """Whether one of the answer's strings is, or holds, what the pattern compares (case aside)."""
    value = pattern.value.lower()
    if pattern.kind.startswith("equals"):
        return value in texts
    return pattern.kind in ("substring", "prefix", "suffix") and any(value in t for t in texts)


def _draft(path: str, bypass: Bypass, calls: Sequence[LocalRef]) -> Draft:
    endpoint, told = code_span(bypass.endpoint), code_span(bypass.read.value)
    refs = tuple(dict.fromkeys([*(bypass.read.used_at or (bypass.read.ref,)), *calls]))[:REFS_SHOWN]
    return Draft(
        "server",
        "high",
        f"llama-server now lets {endpoint} through before the check that answers {told}, which Ollama reads",
        f"Upstream added a condition that passes requests to {endpoint} ({code_span(f'{path}:{bypass.line}')}) "
        f"above the error answer at {code_span(f'{path}:{bypass.answer}')}. Ollama reads {told} from "
        f"{endpoint}'s answer to tell that state ({code_span(f'{refs[0].path}:{refs[0].line}')}); the endpoint "
        "now answers as if the check had passed, so Ollama never sees that state.",
        path,
        bypass.line,
        ((bypass.line, bypass.line),),
        local_refs=refs,
        cause=f"passed-through:{bypass.endpoint}",
    )
