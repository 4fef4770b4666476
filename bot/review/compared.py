"""The constants Ollama compares with what llama-server answers: each checked against the values the server's
functions write into the compared field, at both refs.

The contract inventory gives each constant with the expression it is compared with (`result.Status`,
`strings.ToLower(result.Error.Message)`); the expression's last field names the decoded field, through the Go
field its struct declares. A function that wrote a value matching the constant at the old ref and writes none
at the new ref breaks the comparison: high, with the old and the new values. A function that wrote a value
matching a constant and now also writes a value of its kind (a word, like the others: `"context"` beside
`"limit"`) that none of Ollama's constants for the field match may send it where it sent the matching one:
medium.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.payloads import Decoded, Writers
from bot.review.servercode import Unit

_WORD = re.compile(r"^[A-Za-z_][\w-]{0,39}$")  # an enum-like value: `limit`, `tool_calls`
_SELECTOR = re.compile(r"(?:\b\w+\s*\.\s*)+(\w+)\b(?!\s*\()")
_FOLDING = re.compile(r"\b(?:ToLower|ToUpper|EqualFold)\b")
COMPARED_KINDS = ("equals", "equals (any case)", "prefix", "suffix", "substring")


def compared_field(expression: str) -> str:
    """The Go field an expression compares: the last selector that is not a call (`result.Error.Message`
    of `strings.ToLower(strings.TrimSpace(result.Error.Message))`)."""
    found = _SELECTOR.findall(expression)
    return found[-1] if found else ""


def matches(kind: str, constant: str, value: str, fold: bool, trim: bool) -> bool:
    """Whether a written value passes Ollama's comparison of that kind with the constant."""
    if trim:
        value = value.strip()
    if fold or kind.endswith("(any case)"):
        constant, value = constant.casefold(), value.casefold()
    if kind.startswith("equals"):
        return value == constant
    if kind == "prefix":
        return value.startswith(constant)
    if kind == "suffix":
        return value.endswith(constant)
    return constant in value


def value_drafts(
    old: Writers,
    new: Writers,
    fields: Sequence[Decoded],
    patterns: Sequence,
    go_name: Callable[[Decoded], str],
) -> list[Draft]:
    """One high item per function that wrote a value Ollama compares a field with and writes none now; one
    medium item per function that writes a new value of that kind none of Ollama's constants match."""
    drafts = []
    compared: dict[Decoded, list[tuple[Any, str]]] = {}
    for pattern in patterns:
        if pattern.kind not in COMPARED_KINDS:
            continue
        for expression in pattern.expressions:
            for f in _compared_fields(pattern, expression, fields, go_name):
                drafts += list(_lost_values(old, new, f, pattern, expression))
                compared.setdefault(f, []).append((pattern, expression))
    for f, comparisons in compared.items():
        drafts += list(_new_values(old, new, f, comparisons))
    return drafts


def _compared_fields(pattern, expression: str, fields: Sequence[Decoded], go_name) -> list[Decoded]:
    name = compared_field(expression)
    return [f for f in fields if f.source in pattern.sources and name and go_name(f) == name]


def _written(writers: Writers, unit: Unit | None, key: str) -> list[str]:
    if unit is None:
        return []
    units = writers.by_qualified.get(unit.qualified, [])
    return [s for u in units for e in u.emissions if e.key == key for s in e.values]


def _lost_values(old: Writers, new: Writers, f: Decoded, pattern, expression: str) -> Iterator[Draft]:
    key = f.keys[-1]

    def passing(values: list[str]) -> list[str]:
        return [v for v in values if _passes((pattern, expression), v)]

    anywhere = {
        u.qualified for u in new.code.units if passing(_written(new, u, key))
    }  # functions that still write a passing value
    for qualified, units in old.by_qualified.items():
        before = passing(_written(old, units[0], key))
        if not before:
            continue
        now = new.unit(qualified)
        if passing(_written(new, now, key)) or (now is None and anywhere):
            continue
        yield _value_draft(f, pattern, expression, old, new, qualified, before, _written(new, now, key))


def _passes(comparison: tuple[Any, str], value: str) -> bool:
    pattern, expression = comparison
    fold, trim = bool(_FOLDING.search(expression)), "TrimSpace" in expression
    return matches(pattern.kind, pattern.value, value, fold, trim)


def _new_values(
    old: Writers, new: Writers, f: Decoded, comparisons: list[tuple[Any, str]]
) -> Iterator[Draft]:
    """The functions that wrote a value one of Ollama's comparisons holds for, all their values words, and
    now also write a word none of them holds for: more such words than they dropped (a renamed one is none)."""
    key = f.keys[-1]
    for qualified, units in old.by_qualified.items():
        before = _words(_written(old, units[0], key))
        held = [c for c in comparisons if any(_passes(c, v) for v in before)]
        now = new.unit(qualified)
        if not held or now is None:
            continue
        added = _added_words(before, _written(new, now, key), comparisons)
        if added:
            yield _new_value_draft(f, held[0], now, before, added)


def _words(values: list[str]) -> list[str]:
    """The values, once each, when every one is a word (an enum's name); none otherwise."""
    unique = list(dict.fromkeys(values))
    return unique if all(map(_WORD.match, unique)) else []


def _added_words(before: list[str], written: list[str], comparisons: list[tuple[Any, str]]) -> list[str]:
    """The words written now and not before that none of the comparisons holds for, when there are more of
    them than values dropped (a renamed value is no new one)."""
    after = list(dict.fromkeys(written))
    added = [
        v for v in after if v not in before and _WORD.match(v) and not any(_passes(c, v) for c in comparisons)
    ]
    return added if len(added) > len(set(before) - set(after)) else []


def _new_value_draft(
    f: Decoded, held: tuple[Any, str], now: Unit, before: list[str], added: list[str]
) -> Draft:
    pattern, expression = held
    ollama = pattern.used_at[0] if pattern.used_at else pattern.ref
    new_values = ", ".join(code_span(v) for v in added)
    detail = (
        f"Ollama compares {code_span(f.name)} of llama-server's {f.source} ({pattern.kind}) with "
        f"{code_span(pattern.value)} ({code_span(f'{ollama.path}:{ollama.line}')}: {code_span(expression)}). "
        f"{code_span(now.qualified)} ({code_span(f'{now.path}:{now.line}')}) wrote "
        f"{', '.join(code_span(v) for v in before)} there and now writes {new_values} too, which none of "
        "Ollama's comparisons of the field hold for. Where llama-server sends it in a case that sent "
        f"{code_span(pattern.value)} before, what Ollama does on that value no longer happens: check when the "
        "new value is sent."
    )
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "medium",
        f"llama-server's {f.source} can now send {new_values} as {code_span(f.name)}, which Ollama does not "
        "compare with",
        detail,
        now.path,
        now.line,
        local_refs=tuple(dict.fromkeys((*pattern.used_at, pattern.ref))),
        cause=f"wire-field:{now.qualified}:{f.keys[-1]}",
    )


def _value_draft(
    f: Decoded, pattern, expression: str, old: Writers, new: Writers, qualified: str, before, after
) -> Draft:
    was = old.unit(qualified)
    now = new.unit(qualified)
    assert was is not None
    home = _literal_home(old, before[0], was.path)
    ollama = pattern.used_at[0] if pattern.used_at else pattern.ref
    shown = ", ".join(f'"{v}"' for v in dict.fromkeys(after)) if after else "no value there"
    detail = (
        f"Ollama compares {code_span(f.name)} of llama-server's {f.source} ({pattern.kind}) with "
        f'"{pattern.value}" ({ollama.path}:{ollama.line}: {code_span(expression)}). At the old ref {code_span(qualified)} '
        f'({was.path}:{was.line}) wrote "{before[0]}"; at the new ref it writes {shown}. Ollama\'s comparison '
        "no longer holds: what it does on that value (a state, a reason it reports) never happens."
    )
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "high",
        f"Ollama's \"{pattern.value}\" for {code_span(f.name)} no longer matches what llama-server's {f.source} sends",
        detail,
        now.path if now is not None else was.path,
        now.line if now is not None else None,
        removed=(home, f'"{before[0]}"'),
        local_refs=tuple(dict.fromkeys((*pattern.used_at, pattern.ref))),
        cause=f"wire-field:{qualified}:{f.keys[-1]}",
    )


def _literal_home(writers: Writers, value: str, prefer: str) -> str:
    """The file of the old ref that holds the value as a literal (the function's own file first)."""
    needle = f'"{value}"'
    paths = [prefer, *(p for p in writers.code.texts if p != prefer)]
    return next((p for p in paths if needle in writers.code.texts.get(p, "")), prefer)
