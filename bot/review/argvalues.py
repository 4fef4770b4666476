"""The values llama-server's flags accept by name, at both refs, against the constants Ollama passes.

A flag's handler in upstream's argument table knows its named values through the constants it compares the
value with, or through the helpers and name tables it calls (`is_autoy(value)`, a `{"draft-mtp", TYPE}` table
behind `..._from_names(...)`); a handler that stores any text (`--chat-template`) knows the names its help
lists from upstream's tables. A constant Ollama passes that the old handler knew and the new one no longer
names is a start that fails (or a setting that silently changes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.cppreach import Index, Reach, calls, names, reach
from bot.review.flags import Flag

_TAKES_TEXT = re.compile(r"\(\s*[\w:]+\s*&\s*\w+\s*,\s*const\s+std::string\s*&")


@dataclass(frozen=True)
class Passed:
    """A flag or environment variable Ollama starts llama-server with, and the named values it passes."""

    kind: str  # flag, env
    name: str
    values: tuple[str, ...]
    refs: tuple[LocalRef, ...]
    always: bool


def constants(values: Sequence[str]) -> list[str]:
    """The constant values of an inventory entry (JSON-quoted there), non-empty ones."""
    found = []
    for value in values:
        if value.startswith('"'):
            try:
                text = json.loads(value)
            except ValueError:
                continue
            if isinstance(text, str) and text:
                found.append(text)
    return found


def takes_text(flag: Flag) -> bool:
    """Whether a flag's handler is given its value as text: the only kind that can refuse a name."""
    return bool(_TAKES_TEXT.search(flag.handler))


def accepted(flag: Flag, index: Index, than: Reach | None = None) -> Reach:
    """The constants a flag's handler can compare its value with (through what it calls, two calls deep);
    for a handler that takes any text and names none, those the calls of its help reach instead. Compared
    with an earlier reach (`than`), a call it newly cannot resolve is looked for in the wider index."""
    found = _accepted(flag, index)
    if than is not None and index.wider is not None and found.unresolved - than.unresolved:
        return _accepted(flag, index.wider())
    return found


def _accepted(flag: Flag, index: Index) -> Reach:
    handler = reach(flag.handler, index)
    if names(set(handler.literals)) or not takes_text(flag):
        return handler
    helpers = calls(flag.help_code)
    return reach(" ".join(f"{name}()" for name in helpers), index) if helpers else handler


def entry_for(passed: Passed, table: Mapping[str, Flag]) -> Flag | None:
    """The argument table's entry a flag or environment variable sets."""
    if passed.kind == "flag":
        return table.get(passed.name)
    return next((f for f in table.values() if passed.name in f.env), None)


@dataclass(frozen=True)
class Refused:
    """A named value Ollama passes that the handler knew at the old ref and no longer names at the new."""

    passed: Passed
    value: str
    flag: Flag  # the entry at the new ref
    before: Reach
    after: Reach
    place: tuple[str, int]  # where the value was written at the old ref: (path, line)


def refused_values(
    settings: Sequence[Passed],
    old: tuple[Mapping[str, Flag], Index],
    new: tuple[Mapping[str, Flag], Index],
    old_text: Callable[[str], str],
) -> list[Refused]:
    """Each constant Ollama passes that its entry's handler knew by name at the old ref and not at the new."""
    found = []
    for passed in settings:
        before, after = entry_for(passed, old[0]), entry_for(passed, new[0])
        if before is None or after is None or not takes_text(before):
            continue  # a flag that is gone is the flag detector's
        values = constants(passed.values)
        if not values:
            continue
        known = accepted(before, old[1])
        now = accepted(after, new[1], than=known)
        for value in values:
            if value in known.literals and value not in now.literals:
                place = _written_at(value, before, known, old_text)
                found.append(Refused(passed, value, after, known, now, place))
    return found


def _written_at(value: str, flag: Flag, known: Reach, old_text: Callable[[str], str]) -> tuple[str, int]:
    """Where the old ref wrote the value: the first body or table it reached that holds it, else the entry."""
    quoted = json.dumps(value)
    for path, line, _ in known.places:
        lines = old_text(path).split("\n")
        for n in range(line - 1, min(len(lines), line + 400)):
            if quoted in lines[n]:
                return path, n + 1
    return "", flag.line


def refused_draft(item: Refused, table_path: str, where_now: Callable[[str, int], int | None]) -> Draft:
    """The finding: the value, the flag, Ollama's lines, before and now."""
    path, line = item.place
    at_entry = not path or path == table_path
    unread = sorted(item.after.unresolved - item.before.unresolved)
    lines = [_what_changed(item, "" if at_entry else f" ({code_span(f'{path}:{line}')})"), _CONSEQUENCE]
    if unread:
        lines.append(
            f"The new handler also calls {', '.join(f'{code_span(u)}' for u in unread[:4])}, which the review could "
            "not read: check there before changing Ollama."
        )
    return Draft(
        "server",
        "medium" if unread else "high",
        f"llama-server no longer accepts {code_span(item.value)} for {item.passed.name}; Ollama passes it",
        "\n\n".join(lines),
        table_path if at_entry else path,
        item.flag.line if at_entry else where_now(path, line),
        removed=(table_path if at_entry else path, json.dumps(item.value)),
        local_refs=item.passed.refs,
        cause=f"value:{item.passed.name}={item.value}",
    )


_CONSEQUENCE = (
    "llama-server refuses a value its handler does not know (or the setting silently changes), so the runner "
    "fails to start where Ollama passes it: pass a value the new handler accepts."
)


def _what_changed(item: Refused, where: str) -> str:
    """Ollama's side, then the handler's before and now."""
    passed = item.passed
    what = _setting(passed)
    gained = sorted(names(set(item.after.literals)) - names(set(item.before.literals)))
    return (
        f"Ollama passes {code_span(item.value)} to {what} ({_where(passed.refs)})"
        + ("" if passed.always else " on some starts")
        + f". At the old ref llama-server's handler for {code_span(item.flag.names[-1])} knew {code_span(item.value)}{where}"
        + "; at the new ref nothing it reads names it"
        + (f" (new names: {', '.join(f'{code_span(g)}' for g in gained[:6])})" if gained else "")
        + "."
    )


@dataclass(frozen=True)
class Redirected:
    """A named value Ollama passes whose branch in the flag's handler does something else at the new ref."""

    passed: Passed
    value: str
    flag: Flag  # the entry at the new ref
    before: str  # the branch's statements, as written
    after: str


def redirected_values(
    settings: Sequence[Passed], old: Mapping[str, Flag], new: Mapping[str, Flag]
) -> list[Redirected]:
    """Each constant Ollama passes that the handler tests for at both refs (`if (value == "none") {...}`),
    with other statements in that branch at the new ref."""
    found = []
    for passed in settings:
        before, after = entry_for(passed, old), entry_for(passed, new)
        if before is None or after is None or before.handler == after.handler:
            continue
        for value in constants(passed.values):
            was, now = value_branch(before.handler, value), value_branch(after.handler, value)
            if was and now and was.split() != now.split():
                found.append(Redirected(passed, value, after, " ".join(was.split()), " ".join(now.split())))
    return found


MAX_BRANCH = 2000  # characters of a value's branch read


def value_branch(handler: str, value: str) -> str | None:
    """The statements a handler runs for one named value: the block (or the statement) after the condition
    that compares the value with the name; None when no condition does, or several do."""
    quoted = re.escape(json.dumps(value))
    tests = list(re.finditer(rf"==\s*{quoted}|{quoted}\s*==", handler))
    if len(tests) != 1:
        return None
    depth, at = 0, tests[0].end()
    while at < len(handler) and depth >= 0:
        depth += {"(": 1, ")": -1}.get(handler[at], 0)
        at += 1
    rest = handler[at : at + MAX_BRANCH].lstrip()
    if not rest.startswith("{"):
        end = rest.find(";")
        return rest[: end + 1] if end > 0 else None
    depth = 0
    for i, ch in enumerate(rest):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            return rest[1:i].strip() or None
    return None


def redirected_draft(item: Redirected, table_path: str) -> Draft:
    """The finding: the value, what its branch did and does, Ollama's lines."""
    passed = item.passed
    what = _setting(passed)
    return Draft(
        "server",
        "medium",
        f"What {code_span(item.value)} for {passed.name} does changed in llama-server; Ollama passes it",
        f"Ollama passes {code_span(item.value)} to {what} ({_where(passed.refs)})"
        + ("" if passed.always else " on some starts")
        + f". llama-server's handler for {code_span(item.flag.names[-1])} still knows the name, but what it does "
        f"for it changed: was {code_span(item.before)}, now {code_span(item.after)}. Check that it still means "
        "what Ollama passes it for.",
        table_path,
        item.flag.line,
        blame=item.flag.lines,
        local_refs=passed.refs,
        cause=f"value:{passed.name}={item.value}",
    )


def _setting(passed: Passed) -> str:
    """The flag, or the environment variable, as a finding names it."""
    return (
        code_span(passed.name)
        if passed.kind == "flag"
        else f"the environment variable {code_span(passed.name)}"
    )


def _where(refs: Sequence[LocalRef], shown: int = 3) -> str:
    listed = ", ".join(f"{r.path}:{r.line}" for r in refs[:shown])
    return listed + (f" and {len(refs) - shown} more" if len(refs) > shown else "")
