"""The unit a flag's handler reads its value in, at both refs, for the flags (and their environment variables)
Ollama passes.

A handler that scales the number it parses (`std::stoull(value) * 1024*1024`) reads it in a unit: MiB there.
When the bump changes that arithmetic (drops it, or scales by another factor), the number Ollama computed in the
old unit means something else at the new ref, and nothing fails: a margin in MiB read as bytes, a timeout in
seconds read as milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.contracts.model import LaunchSetting
from bot.review.flags import Flag

# Arithmetic by a constant (`* 1024*1024`, `/(1024*1024)`, `* 1e6`, `<< 20`) on what a parse call returns
# (`std::stoull(v)`, `atoi(v)`, `strtod(v, ...)`) or on the handler's value itself.
_BY_CONSTANT = r"((?:[*/]|<<|>>)\s*\(?\s*\d[\w.]*(?:\s*[*/]\s*\d[\w.]*)*\s*\)?)"
_PARSED = r"\b(?:std::)?(?:sto|ato|strto)\w*\s*\((?:[^()]|\([^()]*\))*\)"
_VALUE = re.compile(r",\s*(?:const\s+)?[\w:]+\s*&?\s*(\w+)\s*\)\s*\{")  # the lambda's value parameter


def scaling(handler: str) -> list[str]:
    """The arithmetic by constants on the value a handler parses, spaces and brackets out, in order."""
    value = _VALUE.search(handler)
    operand = _PARSED + (rf"|\b{value[1]}\b" if value else "")
    found = re.finditer(rf"(?:{operand})\s*{_BY_CONSTANT}", handler)
    return [re.sub(r"[\s()]", "", m[1]) for m in found]


def unit_drafts(
    old: Mapping[str, Flag], new: Mapping[str, Flag], launches: Sequence[LaunchSetting], path: str
) -> list[Draft]:
    """A medium item per flag Ollama passes (by name or by its environment variable) whose handler scales
    the value otherwise than at the old ref."""
    drafts = []
    for name, refs in _passed(old, launches).items():
        before, after = old[name], new.get(name)
        if after is not None and scaling(before.handler) != scaling(after.handler):
            drafts.append(_draft(name, before, after, refs, path))
    return drafts


def _passed(table: Mapping[str, Flag], launches: Sequence[LaunchSetting]) -> dict[str, tuple[LocalRef, ...]]:
    """The table's flags Ollama passes, each by its first spelling, with where it passes it or sets its
    environment variable."""
    by_env = {env: flag for flag in table.values() for env in flag.env}
    found: dict[str, tuple[LocalRef, ...]] = {}
    for setting in launches:
        flag = table.get(setting.name) if setting.kind == "flag" else by_env.get(setting.name)
        if flag is not None:
            name = next((n for n in flag.names if n.startswith("--")), flag.names[0])
            found[name] = tuple(dict.fromkeys(found.get(name, ()) + setting.refs))
    return found


def _draft(name: str, before: Flag, after: Flag, refs: tuple[LocalRef, ...], path: str) -> Draft:
    def shown(flag: Flag) -> str:
        return " ".join(code_span(s) for s in scaling(flag.handler)) or "no arithmetic"

    spellings = ", ".join(code_span(n) for n in (*after.names, *after.env))
    detail = (
        f"The handler of {spellings} converts the value it parses otherwise: before {shown(before)}, now "
        f"{shown(after)} (its placeholder: before {code_span(before.value_hint or '-')}, now "
        f"{code_span(after.value_hint or '-')}). Ollama passes it: check that the number it computes is in the "
        "unit upstream now reads."
    )
    return Draft(
        "server",
        "medium",
        f"llama-server flag {name} reads its value in another unit; Ollama passes it",
        detail,
        path,
        after.line,
        local_refs=refs,
        cause=f"flag {name}",
    )
