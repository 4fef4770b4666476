"""New limits on request values: upstream starts rejecting values of a parameter that Ollama forwards.

A check the diff adds (`if (params.penalty_repeat <= 0.0f) throw ...`) names
the parameters it limits; the server's request parsing maps each to the JSON
field that sets it (`"repeat_penalty"` on the same line as
`params.sampling.penalty_repeat`). When Ollama's Go code sends that field, a
value Ollama accepted and forwarded before now fails the request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from bot.cache import facts
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.source import globs

LIMITED_SOURCES = globs("common/**", "src/**", "tools/server/**")
REQUEST_PARSERS = globs(
    "tools/server/**/*.cpp",
)
CONDITION_REACH = 4  # lines above a new rejection where the condition it enforces may start
_REJECTION = re.compile(
    r"\bthrow\s+std::\w+\s*\(\s*(?:std::string\s*\()?\s*\"([^\"]*)\"|GGML_ABORT\s*\(\s*\"([^\"]*)\""
)
_CONDITION = re.compile(r"\bif\s*\(")
_MEMBER = re.compile(
    r"\b\w+(?:\s*(?:\.|->)\s*\w+)*\s*(?:\.|->)\s*([A-Za-z_]\w*)\b(?!\s*\()"
)  # a chain's last member


@dataclass(frozen=True)
class Limit:
    members: tuple[str, ...]  # the parameters the new check looks at
    message: str  # what the rejection says
    path: str
    line: int  # of the rejection, at the new ref


def new_limits(change: FileChange) -> list[Limit]:
    """Rejections the change adds, with the members their (added) condition tests."""
    found = []
    for span in change.significant:
        added = change.added_code(span)
        for i, (line, code) in enumerate(added):
            m = _REJECTION.search(code)
            if m is None:
                continue
            members = _tested_members(added[max(0, i - CONDITION_REACH) : i + 1])
            if members:
                found.append(Limit(tuple(dict.fromkeys(members)), m[1] or m[2] or "", change.path, line))
    return found


def _tested_members(above: list[tuple[int, str]]) -> list[str] | None:
    """The members the condition over a rejection tests, from the nearest added `if (` down to it (the last
    of `above`); None without such a condition among them: then it is no new check."""
    members: list[str] = []
    for _, code in reversed(above):
        members = _MEMBER.findall(code) + members
        if _CONDITION.search(code):
            return members
    return None


FIELDS = facts.Extractor("request-fields", 1, __name__)


def fields_of(parsers: Mapping[str, str]) -> Callable[[str], set[str]]:
    """`request_fields` of the parsers for a member, kept by the parsers' texts."""
    texts = facts.texts_id(parsers)
    return lambda member: facts.remembered(FIELDS, (texts, member), lambda: request_fields(parsers, member))


def request_fields(parsers: Mapping[str, str], member: str) -> set[str]:
    """The JSON fields the server's request parsing sets `member` from: `x.member = json_value(data, "f",
    ...)`, `json_value(data, "f", defaults.member)` or `field_num("f", params.member)`."""
    m = re.escape(member)
    binding = re.compile(
        rf"[.>]\s*{m}\s*=\s*json_value\s*\(\s*\w+\s*,\s*\"(\w+)\""
        rf"|json_value\s*\(\s*\w+\s*,\s*\"(\w+)\"\s*,[^;\n]*?[.>]\s*{m}\b(?!\s*\()"
        rf"|f(?<!\wf)ield_\w+\s*\(\s*\"(\w+)\"\s*,[^;\n]*?[.>]\s*{m}\b(?!\s*\()"
    )  # `f(?<!\wf)` is `\bf`: spelt so that every branch begins with a character, which the scan skips to
    return {
        next(g for g in found.groups() if g)
        for text in parsers.values()
        if member in text
        for found in binding.finditer(text)
    }


def limit_drafts(
    limits: Iterable[Limit],
    fields_of: Callable[[str], set[str]],
    ollama_sends: Callable[[str], tuple[LocalRef, ...]],
) -> list[Draft]:
    """One high item per new limit on a field Ollama sends; the rest say nothing (Ollama cannot send them)."""
    drafts = []
    for limit in limits:
        sent = {f: refs for m in limit.members for f in sorted(fields_of(m)) if (refs := ollama_sends(f))}
        if sent:
            drafts.append(_limit_draft(limit, sent))
    return drafts


def _limit_draft(limit: Limit, sent: dict[str, tuple[LocalRef, ...]]) -> Draft:
    """The item for a new limit on the fields Ollama sends (`sent`, with where it sends them)."""
    names = ", ".join(code_span(f) for f in sent)
    said = f' ("{limit.message}")' if limit.message else ""
    return Draft(
        "server",
        "high",
        f"llama-server now rejects some values of {names}, which Ollama forwards",
        f"Upstream added a check on {', '.join(f'{code_span(m)}' for m in limit.members)}{said}. Ollama sends "
        f"{names} from the request's options: a value it accepted and forwarded before now fails the "
        "request. Validate or clamp the value in Ollama, or document the new range.",
        limit.path,
        limit.line,
        ((limit.line, limit.line),),
        local_refs=tuple(r for refs in sent.values() for r in refs)[:10],
        cause=f"limit:{','.join(sent)}",
    )
