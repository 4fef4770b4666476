"""Values a program prints that Ollama reads, changed in place with no print statement changed:

- a string value, a definition's (`#define GGML_VK_NAME "Vulkan"`), an assignment's or a return's (`return
  GGML_CUDA_NAME "_Host";`), where the old value holds text one of Ollama's output patterns looks for and the
  new one does not: names a program prints (devices, buffers, backends) are made of such values;
- a keyed value (`{ "ARCHS", STRINGIFY(__CUDA_ARCH_LIST__) }`) whose key a pattern of Ollama's names and
  captures a value after, now computed by another expression: what Ollama parses there may be in other
  units or another notation."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.contracts.model import OutputPattern

if TYPE_CHECKING:
    from bot.review.changes import FileChange
    from bot.review.run import Run

MIN_LETTERS = 3  # a pattern with fewer letters is found in too many values to say anything
MAX_SHOWN = 80  # characters of a value shown
_TEXT_KINDS = ("substring", "prefix", "suffix", "equals", "equals (any case)")  # compared as text
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_HOLDERS = (
    ("define", re.compile(r"^\s*#\s*define\s+(\w+)")),
    ("return", re.compile(r"^\s*(return)\b")),
    ("assignment", re.compile(r"^[^\"=(]*?\b(\w+)\s*(?:\[\s*\])?\s*=[^=]")),
)


@dataclass(frozen=True)
class Value:
    """A line's string value: what holds it (`define GGML_VK_NAME`), its literals joined, its line."""

    holder: tuple[str, str]
    text: str
    line: int


@check("output.string-values", area="server", inputs=("diff", "inventory", "ollama-build"))
def string_values(run: Run) -> list[Draft]:
    patterns = run.contracts.output_patterns
    if not patterns:
        return []
    telling = [p for p in patterns if _telling(p)]
    alternatives = _alternatives([p for p in patterns if p.kind in _TEXT_KINDS], run.local)
    drafts: dict[tuple[str, str, int], Draft] = {}
    for change in run.built_c_changes():
        drafts.update(_value_drafts(change, telling, alternatives))
        drafts.update(_pair_drafts(change, patterns))
    return list(drafts.values())


def _value_drafts(
    change: FileChange,
    patterns: list[OutputPattern],
    alternatives: Mapping[OutputPattern, list[OutputPattern]],
) -> dict[tuple[str, str, int], Draft]:
    """The string values of one file that no longer hold what a pattern looks for, nor another text Ollama
    accepts in its place, one per pattern and line."""
    found: dict[tuple[str, str, int], Draft] = {}
    for old, new in _changed_values(change) if patterns else ():
        for pattern in patterns:
            if not _holds(pattern, old.text) or _holds(pattern, new.text):
                continue
            if not any(_holds(other, new.text) for other in alternatives.get(pattern, ())):
                found.setdefault((pattern.value, change.path, old.line), _draft(change, old, new, pattern))
    return found


def _alternatives(
    patterns: list[OutputPattern], ollama: Mapping[str, str]
) -> dict[OutputPattern, list[OutputPattern]]:
    """Per pattern, the others Ollama accepts in its place: written on the same Go line, joined by `||` and
    by no `&&` (`strings.Contains(s, "rocm") || strings.Contains(s, "hip")`)."""
    by_line: dict[LocalRef, list[OutputPattern]] = {}
    for pattern in patterns:
        by_line.setdefault(pattern.ref, []).append(pattern)
    found: dict[OutputPattern, list[OutputPattern]] = {}
    for ref, written in by_line.items():
        if len(written) > 1 and _either(ollama, ref):
            found.update((p, [q for q in written if q != p]) for p in written)
    return found


def _either(ollama: Mapping[str, str], ref: LocalRef) -> bool:
    """Whether the Go line joins what it compares by `||` alone."""
    lines = (ollama.get(ref.path) or "").split("\n")
    text = lines[ref.line - 1] if 0 < ref.line <= len(lines) else ""
    return "||" in text and "&&" not in text


def _pair_drafts(change: FileChange, patterns: Sequence[OutputPattern]) -> dict[tuple[str, str, int], Draft]:
    """The keyed values of one file computed otherwise whose key a pattern reads after, one per key and line."""
    found: dict[tuple[str, str, int], Draft] = {}
    for name, before, after, line in _changed_pairs(change):
        for pattern in (p for p in patterns if _reads_after(p, name)):
            found.setdefault(
                (name, change.path, -line), _pair_draft(change, name, before, after, line, pattern)
            )
    return found


_PAIR = re.compile(r'\{\s*"([A-Za-z_][\w-]{2,})"\s*,\s*(.+?)\s*\}')


def _changed_pairs(change: FileChange) -> Iterator[tuple[str, str, str, int]]:
    """(key, old expression, new expression, new line) of each `{ "KEY", value }` a hunk writes with another
    value expression."""
    for span in change.significant:
        before = {
            m[1]: " ".join(m[2].split())
            for _, code in change.removed_code(span)
            for m in _PAIR.finditer(code)
        }
        for number, code in change.added_code(span):
            for m in _PAIR.finditer(code):
                old, new = before.get(m[1]), " ".join(m[2].split())
                if old is not None and old != new:
                    yield m[1], old, new, number


def _reads_after(pattern: OutputPattern, key: str) -> bool:
    """Whether an expression of Ollama's names the key as a word of its own and captures what follows it."""
    if pattern.kind != "regexp" or "(" not in pattern.value:
        return False
    at = re.search(rf"(?<![\w\\]){re.escape(key)}(?!\w)", pattern.value)
    return at is not None and "(" in pattern.value[at.end() :]


def _pair_draft(
    change: FileChange, key: str, before: str, after: str, line: int, pattern: OutputPattern
) -> Draft:
    where = ", ".join(f"{r.path}:{r.line}" for r in (pattern.ref, *pattern.used_at)[:3])
    detail = (
        f"At {code_span(f'{change.path}:{line}')} the value given with {code_span(key)} was "
        f"{code_span(_shown(before))} and is now {code_span(_shown(after))}. Ollama's expression "
        f"{code_span(pattern.value)} reads what follows {code_span(key)} in "
        f"{', '.join(code_span(s) for s in pattern.sources) or 'what upstream prints'} ({code_span(where)}): check that the value "
        "still has the notation and units Ollama parses it with."
    )
    return Draft(
        "server",
        "medium",
        f"The value printed with {code_span(key)}, which Ollama parses, is computed otherwise",
        detail,
        change.path,
        line,
        local_refs=(pattern.ref, *pattern.used_at),
        cause=f"keyed-value:{change.path}:{key}",
    )


def _telling(pattern: OutputPattern) -> bool:
    """A pattern a value can be said to hold: text compared as such, with letters enough to be specific; not
    a stream's frame pattern (`data: `), whose frames `server.wire` compares function by function."""
    streamed = bool(pattern.sources) and all(s.endswith(" stream") for s in pattern.sources)
    return (
        pattern.kind in _TEXT_KINDS
        and sum(ch.isalpha() for ch in pattern.value) >= MIN_LETTERS
        and not streamed
    )


def _holds(pattern: OutputPattern, text: str) -> bool:
    """Whether a value holds what the pattern looks for where it looks (case aside for a substring: Ollama
    often lowers the text first)."""
    if pattern.kind == "substring":
        return pattern.value.lower() in text.lower()
    if pattern.kind == "prefix":
        return text.startswith(pattern.value)
    if pattern.kind == "suffix":
        return text.endswith(pattern.value)
    if pattern.kind == "equals (any case)":
        return text.lower() == pattern.value.lower()
    return text == pattern.value


def _changed_values(change: FileChange) -> Iterator[tuple[Value, Value]]:
    """Each value a hunk removes with the value the same holder gets in its added lines (in order)."""
    for span in change.significant:
        added: dict[tuple[str, str], list[Value]] = {}
        for value in _values(change.added_code(span)):
            added.setdefault(value.holder, []).append(value)
        for old in _values(change.removed_code(span)):
            if added.get(old.holder):
                yield old, added[old.holder].pop(0)


def _values(lines: list[tuple[int, str]]) -> Iterator[Value]:
    for number, code in lines:
        literals = _LITERAL.findall(code)
        if not literals:
            continue
        holder = next(((kind, m[1]) for kind, regex in _HOLDERS if (m := regex.match(code))), None)
        if holder is not None:
            yield Value(holder, "".join(literals), number)


def _draft(change: FileChange, old: Value, new: Value, pattern: OutputPattern) -> Draft:
    kind, name = old.holder
    holder = f"the value {code_span(name)} defines" if kind != "return" else "the value returned"
    if kind == "assignment":
        holder = f"the value given to {code_span(name)}"
    where = ", ".join(f"{r.path}:{r.line}" for r in (pattern.used_at or (pattern.ref,))[:3])
    detail = (
        f"At {code_span(f'{change.path}:{old.line}')} {holder} was {code_span(_shown(old.text))} and is "
        f"now {code_span(_shown(new.text))}. Ollama looks for {code_span(pattern.value)} ({pattern.kind}) in "
        f"{', '.join(code_span(s) for s in pattern.sources) or 'what upstream prints'} ({code_span(where)}): the old value holds it, "
        "the new one does not, so where upstream prints or answers with this value Ollama no longer "
        "recognises it."
    )
    return Draft(
        "server",
        "medium",
        f"{code_span(name if kind != 'return' else change.path)} no longer holds {code_span(pattern.value)}, "
        "which Ollama looks for",
        detail,
        change.path,
        change.new_line(old.line) or new.line,
        local_refs=pattern.used_at or (pattern.ref,),
        cause=f"string-value:{change.path}:{pattern.value}",
    )


def _shown(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"
