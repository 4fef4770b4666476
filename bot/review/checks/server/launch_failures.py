"""A setting Ollama starts llama-server with that the server now refuses where it went on before: a block of
one condition in one function, testing what a flag Ollama passes switches on (`if (params_base.ctx_shift) {`),
that warned and carried on and now logs an error and fails (`return false;`, `exit(1)`, a throw). The server
then does not start for every model that meets the rest of the condition. A condition on the values Ollama
passes (`n_batch > n_ubatch`) is not judged: they may not meet it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check
from bot.review.checks.server.error_status import blocks
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.flags import Flag, flag_table
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run

_FAILS = re.compile(r"\breturn\s+(?:false|1|-1|nullptr)\s*;|\bexit\s*\(\s*[1-9]|\bthrow\b|\bGGML_ABORT\b")
_ERROR_LOG = re.compile(r"\b\w*ERR\w*\s*\(|\bLOG_ERR|fprintf\s*\(\s*stderr|\bthrow\b|\bGGML_ABORT\b")
_MESSAGE = re.compile(r'"((?:[^"\\]|\\.){8,})"')
_SETS = re.compile(r"\bparams\s*\.\s*([\w.]+)\s*=(?!=)\s*([^;]*)")
_SWITCH = re.compile(r"(?:true|false)")  # what a flag that only switches something sets its member to
_BOOL_VALUE = re.compile(r"^\s*\[[^\]]*\]\s*\([^)]*\bbool\s+(\w+)\s*\)")  # a handler given on or off
_MEMBER = re.compile(r"(?:\.|->)\s*([A-Za-z_]\w*)\b(?!\s*\()")


@dataclass(frozen=True)
class Refusal:
    path: str
    line: int  # the failure, at the new ref
    condition: str
    members: tuple[str, ...]  # what the condition tests
    message: str


@check(
    "server.launch-failures",
    area="server",
    inputs=("diff", "inventory"),
    applies=lambda run: bool(run.c_changes),
)
def launch_failures(run: Run) -> list[Draft]:
    server = run.profile_globs("server_sources")
    found = [r for c in run.c_changes if c.new_path and glob_match(c.path, server) for r in refusals(c)]
    if not found:
        return []
    _, table_code = run.code_at_both(run.arg_table_path)
    settings = [s for s in run.contracts.launch if s.kind == "flag"]
    return refusal_drafts(found, flag_table(table_code or ""), settings)


def refusal_drafts(
    found: Sequence[Refusal], table: Mapping[str, Flag], settings: Sequence[LaunchSetting]
) -> list[Draft]:
    """One high item per refusal whose condition tests what a flag Ollama passes sets."""
    passed, valued = _passed_members(table, settings)
    drafts = []
    for r in found:
        flags = [s for m in r.members for s in passed.get(m, [])]
        on_values = not valued.isdisjoint(
            r.members
        )  # a condition on values Ollama passes: they may not meet it
        if flags and not on_values:
            drafts.append(_draft(r, tuple(dict.fromkeys(flags))))
    return drafts


def _passed_members(
    table: Mapping[str, Flag], settings: Sequence[LaunchSetting]
) -> tuple[dict[str, list[LaunchSetting]], set[str]]:
    """Each member a flag Ollama passes (its positive name: `--context-shift`, not `--no-context-shift`) sets
    in its handler, with Ollama's settings of that flag; and the members a flag sets to the value it is given
    (a number, a text), not switched on."""
    setting_of = {s.name: s for s in settings}
    passed: dict[str, list[LaunchSetting]] = {}
    valued: set[str] = set()
    for flag in dict.fromkeys(table.values()):
        given = [setting_of[n] for n in flag.names if n in setting_of and not n.lstrip("-").startswith("no-")]
        for name, switch in _members_set(flag) if given else ():
            passed.setdefault(name, []).extend(given)
            valued |= set() if switch else {name}
    return passed, valued


def _members_set(flag: Flag) -> Iterator[tuple[str, bool]]:
    """Each member the flag's handler sets, and whether it is switched (to a constant, or to the handler's
    `bool` value) rather than given the flag's value."""
    switched = _BOOL_VALUE.match(flag.handler)
    for member, value in _SETS.findall(flag.handler):
        on = _SWITCH.fullmatch(value.strip()) or (switched is not None and value.strip() == switched[1])
        yield member.rsplit(".", 1)[-1], bool(on)


def refusals(change: FileChange) -> Iterator[Refusal]:
    """The blocks of one condition in one function that did not fail at the old ref and, changed, log an
    error and fail at the new one."""
    old = blocks(change.old_code_lines)
    added = {n for span in change.significant for n, _ in change.added_code(span)}
    for key, (line, body) in blocks(change.new_code_lines).items():
        was = old.get(key)
        fails = _FAILS.search(body)
        if was is None or fails is None or _FAILS.search(was[1]) or not _ERROR_LOG.search(body):
            continue
        at = line + 1 + body.count("\n", 0, fails.start())
        if at in added:
            message = _MESSAGE.search(body)
            members = tuple(dict.fromkeys(_MEMBER.findall(key[1])))
            yield Refusal(change.path, at, key[1], members, message[1] if message else "")


def _draft(r: Refusal, flags: tuple[LaunchSetting, ...]) -> Draft:
    names = ", ".join(code_span(s.name) for s in flags)
    said = f" ({code_span(r.message)})" if r.message else ""
    refs: tuple[LocalRef, ...] = tuple(dict.fromkeys(ref for s in flags for ref in s.refs))
    return Draft(
        "server",
        "high",
        f"llama-server now fails where {code_span(r.condition)} holds, which Ollama's {names} sets",
        f"At the old ref the block on {code_span(r.condition)} went on; at the new ref it fails "
        f"({code_span(f'{r.path}:{r.line}')}){said}. Ollama starts llama-server with {names}, which sets what "
        "the condition tests: the server no longer starts (or the request fails) wherever the rest of the "
        "condition holds. Stop passing it there, or check what upstream asks for instead.",
        r.path,
        r.line,
        ((r.line, r.line),),
        local_refs=refs[:6],
        cause=f"launch-failure:{r.path}:{r.condition}",
    )
