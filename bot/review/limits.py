"""New limits on request values: upstream starts rejecting values of a parameter that Ollama forwards.

A check the diff adds (`if (params.penalty_repeat <= 0.0f) throw ...`) names
the parameters it limits; the server's request parsing maps each to the JSON
field that sets it (`"repeat_penalty"` on the same line as
`params.sampling.penalty_repeat`). When Ollama's Go code sends that field, a
value Ollama accepted and forwarded before now fails the request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from bot.cache import facts
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.producers import definitions, function_above
from bot.review.source import c_unescape

CONDITION_REACH = 4  # lines above a new rejection where the condition it enforces may start (added ones,
# in one hunk or in the one above: an unchanged `} else {` may stand between them)
READ_REACH = 30  # lines above a condition where a local it tests may have been read from the request
READ_DEPTH = 3  # locals followed back from a condition to the request field they were read from
_REJECTION = re.compile(
    r"\bthrow\s+std::\w+\s*\(\s*(?:std::string\s*\()?\s*\"((?:[^\"\\]|\\.)*)\"|GGML_ABORT\s*\(\s*\"((?:[^\"\\]|\\.)*)\""
    r"|(?:->|\.)\s*error\s*\((?:[^\"\n]*\"((?:[^\"\\]|\\.)*)\")?"  # an error answer: `res->error(...)`
)
_CONDITION = re.compile(r"\bif\s*\(")
_THROWS = re.compile(r"\bthrow\b|\bGGML_ABORT\b|(?:->|\.)\s*error\s*\(")
_FIELD_READ = re.compile(
    r'\.\s*(?:at|contains)\s*\(\s*"(\w+)"\s*\)|\[\s*"(\w+)"\s*\]|json_value\s*\(\s*\w+\s*,\s*"(\w+)"'
)
CHAIN_REACH = 40  # lines above an `else if` where the chain's `if` may stand
_ELSE_IF = re.compile(r"^\s*\}\s*else\s+if\s*\(")
_BRANCH = re.compile(r"^\s*(\}\s*else\s+)?if\s*\((.*)\)\s*\{\s*$")
_LOCAL = re.compile(r"(?<![\w.>:])([A-Za-z_]\w*)\b(?!\s*(?:\(|::|<\w))")  # a name, no member, call or scope
_MEMBER = re.compile(
    r"\b\w+(?:\s*(?:\.|->)\s*\w+)*\s*(?:\.|->)\s*([A-Za-z_]\w*)\b(?!\s*\()"
)  # a chain's last member


@dataclass(frozen=True)
class Limit:
    members: tuple[str, ...]  # the parameters the new check looks at
    message: str  # what the rejection says
    path: str
    line: int  # of the rejection, at the new ref
    fields: tuple[str, ...] = ()  # the request fields the condition reads, itself or through locals


def new_limits(change: FileChange, parser: bool) -> list[Limit]:
    """Rejections the change adds, with the members their (added) condition tests, and in the request
    parsing (`parser`: the change is of a file that parses requests) the fields it reads."""
    found = (_limit(change, list(above), message, parser) for _, message, above in _rejections(change))
    return [limit for limit in found if limit]


def new_rejections(change: FileChange) -> Iterator[tuple[int, str, str]]:
    """(line, condition, message) of each rejection the change adds under a condition it adds."""
    for line, message, above in _rejections(change):
        tested = _condition(list(above))
        if tested is not None:
            yield line, tested[1], message


def may_reject(text: str) -> bool:
    """Whether a text can hold a rejection: a throw, an abort or an error answer (a prefilter)."""
    return any(word in text for word in ("throw", "ABORT", "error("))


def _rejections(change: FileChange) -> Iterator[tuple[int, str, tuple[tuple[int, str], ...]]]:
    """(line, message, the added lines above it where its condition may start) of each added rejection."""
    added = [a for span in change.significant for a in change.added_code(span)]
    for i, (line, code) in enumerate(added):
        m = _REJECTION.search(code)
        if m is not None:
            message = c_unescape(next((g for g in m.groups() if g), ""))
            above = tuple(
                (n, c) for n, c in added[max(0, i - CONDITION_REACH) : i + 1] if n >= line - CONDITION_REACH
            )
            yield line, message, above


def _limit(change: FileChange, above: list[tuple[int, str]], message: str, parser: bool) -> Limit | None:
    """The limit a rejection (the last of `above`) enforces, when a new condition guards it and tests a
    member or a field the request sets: read in the condition (through the locals it tests too, in the
    request parsing: `parser`), else in the earlier conditions of its `else if` chain."""
    tested = _condition(above)
    if tested is None:
        return None
    members, condition, at = tested
    line = above[-1][0]
    fields = _read_fields(change, line, condition) if parser else _old_fields(change, condition)
    fields = fields or _old_fields(change, "\n".join(_chain_conditions(change.new_code_lines, at)))
    if not members and not fields:
        return None
    return Limit(tuple(dict.fromkeys(members)), message, change.path, line, tuple(sorted(fields)))


def _old_fields(change: FileChange, condition: str) -> set[str]:
    """The fields the condition reads that the old code read too."""
    return {f for f in fields_in(condition) if f'"{f}"' in change.old_code}


def _chain_conditions(lines: list[str], line: int) -> list[str]:
    """The conditions of the branches above an `else if (` at `line`, up to the chain's `if (`: the branch is
    taken only where they do not hold."""
    if not _ELSE_IF.match(lines[line - 1] if 0 < line <= len(lines) else ""):
        return []
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    found = []
    for n in range(line - 1, max(0, line - CHAIN_REACH), -1):
        text = lines[n - 1]
        if len(text) - len(text.lstrip()) == indent and (m := _BRANCH.match(text)):
            found.append(m[2])
            if not m[1]:
                break
    return found


def _condition(above: list[tuple[int, str]]) -> tuple[list[str], str, int] | None:
    """The members the condition over a rejection tests, from the nearest added `if (` down to it (the last
    of `above`), the condition's text and its line; None without such a condition among them: then it is
    no new check."""
    members: list[str] = []
    for n, (at, code) in enumerate(reversed(above)):
        members = _MEMBER.findall(code) + members
        m = _CONDITION.search(code)
        if m:
            text = "\n".join(c for _, c in above[len(above) - 1 - n :])[m.start() :]
            return members, _THROWS.split(text, 1)[0], at
    return None


def _read_fields(change: FileChange, line: int, condition: str) -> set[str]:
    """The request fields a new condition at `line` tests, that the old code already read: read in the
    condition itself (`data.at("stop").size()`), or through the locals it tests, given their values from
    the request in a function the old code has (a reading in a new function, or of a field the file never
    read, is new code, such as a new route's, not a new check on what Ollama sends)."""
    direct = _old_fields(change, condition)
    _, old_functions = definitions(change.old_code)
    added = {n for span in change.significant for n, _ in change.added_code(span)}
    lines = change.new_code_lines
    new_code = {n for n in added if function_above(lines, n) not in old_functions}
    found = traced(lines, new_code, line, condition, READ_DEPTH)
    return direct or {f for f in found if f'"{f}"' in change.old_code}


def fields_in(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _FIELD_READ.finditer(text)}


def traced(
    lines: list[str],
    new_code: set[int],
    line: int,
    text: str,
    depth: int,
    reach: int = READ_REACH,
    start: int = 1,
) -> set[str]:
    """The fields the locals `text` (at `line`) names were read from, followed back to the nearest line
    above that gives each its value (`auto ids = tokenize(t...)`, `for (auto & t : data.at("f"))`), `reach`
    lines up and not above `start`, `depth` locals deep; a reading on a line of `new_code` does not count."""
    fields: set[str] = set()
    for name in dict.fromkeys(_LOCAL.findall(text)) if depth else ():
        given = re.compile(rf"(?<![\w.>])\b{re.escape(name)}\s*(?:=(?!=)|:(?!:)|\{{)(.*)")
        for n in range(line - 1, max(0, line - reach, start - 1), -1):
            m = given.search(lines[n - 1]) if n <= len(lines) else None
            if m:
                read = fields_in(m[1])
                fields |= (
                    (set() if n in new_code else read)
                    if read
                    else traced(lines, new_code, n, m[1], depth - 1, reach, start)
                )
                break
    return fields


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
        named = [*limit.fields, *(f for m in limit.members for f in sorted(fields_of(m)))]
        sent = {f: refs for f in dict.fromkeys(named) if (refs := ollama_sends(f))}
        if sent:
            drafts.append(_limit_draft(limit, sent))
    return drafts


def _limit_draft(limit: Limit, sent: dict[str, tuple[LocalRef, ...]]) -> Draft:
    """The item for a new limit on the fields Ollama sends (`sent`, with where it sends them)."""
    names = ", ".join(code_span(f) for f in sent)
    said = f" ({code_span(limit.message)})" if limit.message else ""
    tested = (
        f"what a request's {', '.join(map(code_span, limit.fields))} holds"
        if limit.fields
        else ", ".join(map(code_span, limit.members))
    )
    return Draft(
        "server",
        "high",
        f"llama-server now rejects some values of {names}, which Ollama forwards",
        f"Upstream added a check on {tested}{said}. Ollama sends "
        f"{names} from the request's options: a value it accepted and forwarded before now fails the "
        "request. Validate or clamp the value in Ollama, or document the new range.",
        limit.path,
        limit.line,
        ((limit.line, limit.line),),
        local_refs=tuple(r for refs in sent.values() for r in refs)[:10],
        cause=f"limit:{','.join(sent)}",
    )
