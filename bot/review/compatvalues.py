"""Enum values Ollama's compatibility code names or produces, against the upstream code that handles them.

The compat code writes strings (GGUF metadata) that upstream's name<->string tables turn into enum values,
and names values itself. A change that drops a value's `case` (to a default that aborts), removes the
value, or drops its table row leaves Ollama's models failing to load; this names the upstream change and
the Ollama lines that reach the value.
"""

from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from bot.cache import facts
from bot.lang import cpp, cppvalues, syntax
from bot.markup import code_span
from bot.model import LocalRef
from bot.review import cppapi
from bot.review.changes import Draft, FileChange
from bot.review.compat import area, similar

_LITERAL = re.compile(r'"([^"\\\n]*)"')
_IDENT = re.compile(r"\b[A-Za-z_]\w{2,}")  # an identifier of three characters or more


# A file's table rows depend on its blob alone: kept by it, a re-check reads no file's code for them.
OLD_TABLE_ROWS = facts.Extractor("old-table-rows", 1, __name__)


def value_strings(changes: Iterable[FileChange]) -> dict[str, set[str]]:
    """The strings name<->string tables of the changes' old code pair with each enum value
    (`{ PROJECTOR_TYPE_GEMMA4A, "gemma4a" }`): how a string Ollama writes becomes a value."""
    found: dict[str, set[str]] = {}
    for change in changes:
        for row in facts.remembered(OLD_TABLE_ROWS, change.fact_key("-"), partial(_old_rows, change)):
            found.setdefault(row.value, set()).add(row.string)
    return found


def _old_rows(change: FileChange) -> tuple[cppvalues.TableRow, ...]:
    return cppvalues.string_tables(change.old_code.encode())


def _value_refs(
    value: str,
    names: Mapping[str, Sequence[LocalRef]],
    strings: Mapping[str, Sequence[LocalRef]],
    strings_of: Mapping[str, set[str]],
) -> tuple[list[str], tuple[LocalRef, ...]]:
    """(the strings through which Ollama reaches `value`, every compat line that names or produces it)."""
    produced = sorted(s for s in strings_of.get(value, ()) if s in strings)
    refs = [*names.get(value, ()), *(r for s in produced for r in strings[s])]
    return produced, tuple(dict.fromkeys(refs))


def _reached(value: str, produced: list[str]) -> str:
    if produced:
        quoted = ", ".join(f'`"{s}"`' for s in produced)
        return f"Ollama's compatibility code produces {quoted}, which upstream reads as {code_span(value)}"
    return f"Ollama's compatibility code uses {code_span(value)}"


_ABORTS = re.compile(r"\b(?:GGML_ABORT|abort|throw|GGML_ASSERT|assert)\b")


@dataclass(frozen=True)
class _Lost:
    """A value this change stops recognising, with what to say: before it becomes a draft."""

    value: str
    title: str
    detail: str
    old_line: int
    refs: tuple[LocalRef, ...]
    severity: str = "high"


def _dropped_cases(
    change: FileChange, old: bytes, new: bytes, reach, names: Mapping[str, Sequence[LocalRef]]
) -> list[_Lost]:
    """A case dropped from a switch that still exists (`names`: what Ollama's code names, the functions it
    calls among them)."""
    old_switches = cppvalues.switches(old)  # first: the new code is parsed from its tree
    new_switches = _cases_by_switch(new)
    lost = []
    for s in old_switches:
        now = new_switches.get((s.function, s.subject))
        if now is None:
            continue  # a switch that is gone drops no case of its own
        handled = {v for v, _ in s.cases}
        for (value, line), body in zip(s.cases, s.bodies):
            if value in now or body == s.default_body:  # the default does what the case did
                continue
            produced, refs = reach(value)
            if refs:
                twin = similar(value, sorted(now - handled))
                lost.append(
                    _dropped_case(change, s, value, line, (produced, refs), twin, body, s.function in names)
                )
    return lost


def _cases_by_switch(source: bytes) -> dict[tuple[str, str], set[str]]:
    """The values the file's switches have a case for, by (function, switched expression)."""
    cases: dict[tuple[str, str], set[str]] = {}
    for s in cppvalues.switches(source):
        cases.setdefault((s.function, s.subject), set()).update(v for v, _ in s.cases)
    return cases


def _dropped_case(
    change: FileChange,
    s: cppvalues.Switch,
    value: str,
    line: int,
    reached: tuple[list[str], tuple[LocalRef, ...]],
    twin: str | None,
    body: str,
    called: bool,
) -> _Lost:
    """What to say of a case Ollama reaches that the switch no longer has (`twin`: the case put in its place,
    `body`: what the case ran, `called`: whether Ollama's code calls the function itself)."""
    where = code_span(s.function) if s.function else f"a switch of {code_span(change.path)}"
    produced, refs = reached
    if _answers(body) and _answers(s.default_body):
        return _default_answer(change, s, where, value, line, reached, body, called)
    outcome = (
        f"its default branch aborts ({code_span(s.default[:80])})"
        if _ABORTS.search(s.default)
        else "it falls to the default branch: an 'unknown' error or a wrong result"
    )
    detail = (
        f"Upstream dropped {code_span(f'case {value}:')} from the switch on {code_span(s.subject)} in {where} ({code_span(change.path)})"
        + (f", putting {code_span(f'case {twin}:')} in its place" if twin else "")
        + f". {_reached(value, produced)}: that value is no longer recognised there, so {outcome}. "
        + "Map it to the value upstream handles now in the compat code, or carry a patch that restores the case."
    )
    return _Lost(value, f"{where} no longer handles {code_span(value)}", detail, line, refs)


def _answers(body: str) -> bool:
    """Whether a branch only returns a value (a predicate's or a lookup's answer), aborting nothing."""
    return body.startswith("return ") and body.count(";") == 1 and not _ABORTS.search(body)


def _default_answer(
    change: FileChange,
    s: cppvalues.Switch,
    where: str,
    value: str,
    line: int,
    reached: tuple[list[str], tuple[LocalRef, ...]],
    body: str,
    called: bool,
) -> _Lost:
    """A case dropped from a switch whose branches only answer: the value is still recognised, and gets the
    default's answer now, which upstream chose (a capability it now has, a lookup it now leaves out). Medium
    where Ollama's code calls the function and so reads the answer; where it only produces the value, upstream
    answers itself, and that is worth knowing."""
    produced, refs = reached
    detail = (
        f"Upstream dropped {code_span(f'case {value}:')} from the switch on {code_span(s.subject)} in {where} "
        f"({code_span(change.path)}): {_reached(value, produced)}, which now gets the default's "
        f"{code_span(s.default_body)} where its case gave {code_span(body)}. "
        + (
            "Check that Ollama's use of that value still works with the new answer."
            if called
            else "Ollama's code does not call it: upstream's own handling of the value changed."
        )
    )
    title = f"{where} answers {code_span(value)} by its default now"
    return _Lost(value, title, detail, line, refs, "medium" if called else "info")


def _enum_values(source: bytes) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for d in cppapi.interface(source):
        if d.kind == "enum value":
            found.setdefault(d.owner, {})[d.name] = d.line
    return found


def _removed_enum_values(change: FileChange, old: bytes, new: bytes, reach) -> list[_Lost]:
    """An enum value removed or renamed, of an enum that still exists, that Ollama's code produces."""
    old_enums = _enum_values(old)  # first: the new code is parsed from its tree
    new_enums = _enum_values(new)
    lost = []
    for enum, values in old_enums.items():
        for value, line in values.items() if enum in new_enums else ():
            produced, refs = reach(value) if value not in new_enums[enum] else ([], ())
            if not refs or not produced:
                continue  # a value Ollama only names fails to compile: compat_drafts says so
            twin = similar(value, sorted(set(new_enums[enum]) - set(values)))
            lost.append(_removed_enum_value(change, enum, value, line, produced, refs, twin))
    return lost


def _removed_enum_value(
    change: FileChange,
    enum: str,
    value: str,
    line: int,
    produced: list[str],
    refs: tuple[LocalRef, ...],
    twin: str | None,
) -> _Lost:
    """What to say of an enum value Ollama produces that the enum no longer has (`twin`: its likely new name)."""
    detail = (
        f"{code_span(change.path)} no longer declares {code_span(value)}"
        + (f"; it is probably {code_span(twin)} now" if twin else "")
        + f". {_reached(value, produced)}: upstream no longer recognises it, so a model that needs "
        + "it fails to load (an 'unknown' error or an abort). Map it to the new value in the compat code, "
        + "or carry a patch."
    )
    title = (
        f"Enum value {code_span(value)} of {code_span(enum)} was {'renamed' if twin else 'removed'} upstream"
    )
    return _Lost(value, title, detail, line, refs)


def _dropped_rows(change: FileChange, old_rows, new_rows, names, strings) -> list[_Lost]:
    """A row dropped from a name<->string table that still exists."""
    kept = {(r.table, r.value, r.string) for r in new_rows}
    tables = {r.table for r in new_rows}
    lost = []
    for row in old_rows:
        if row.table not in tables or (row.table, row.value, row.string) in kept:
            continue
        produced, refs = _value_refs(row.value, names, strings, {row.value: {row.string}})
        if refs:
            detail = (
                f'Upstream dropped `{{ {row.value}, "{row.string}" }}` from {code_span(row.table)} in {code_span(change.path)}. '
                + f"{_reached(row.value, produced)}: the lookup no longer finds it, so upstream reports it "
                + "unknown or aborts. Map it to the new value in the compat code, or carry a patch."
            )
            title = f'{code_span(row.table)} no longer pairs {code_span(row.value)} with "{row.string}"'
            lost.append(_Lost(row.value, title, detail, row.line, refs))
    return lost


# A string that names something (a key, a type's name): no spaces, formats or escapes.
_KEY = re.compile(r"[A-Za-z][\w.\-]*[A-Za-z0-9]")
_DEFINE = re.compile(r"\s*#\s*define\s+(\w+)")
_INCLUDE = re.compile(r"\s*#\s*include\b")


class Elsewhere:
    """What the bump's lines spell, for a name Ollama writes that one change stops spelling: whether a line
    it adds spells the name in code (the name moved), and how many removed lines spell each identifier (a
    macro's readers that changed with it)."""

    def __init__(self, changes: Iterable[FileChange], strings: Mapping[str, Sequence[LocalRef]]) -> None:
        self._adding: dict[str, list[FileChange]] = {}
        self.removed_words: Counter[str] = Counter()
        for change in changes:
            for name in {s for line in change.added_raw if '"' in line for s in _LITERAL.findall(line)}:
                if name in strings:
                    self._adding.setdefault(name, []).append(change)
            self.removed_words.update(w for line in change.removed_raw for w in set(_IDENT.findall(line)))

    def adds(self, name: str) -> bool:
        """Whether a line the bump adds spells the name, in code (a comment that recalls it does not)."""
        return any(f'"{name}"' in change.new_code for change in self._adding.get(name, ()))


def _dropped_strings(
    change: FileChange, strings: Mapping[str, Sequence[LocalRef]], elsewhere: Callable[[], Elsewhere]
) -> list[_Lost]:
    """A name Ollama's compat code writes (a GGUF key, a type's name) that upstream's code read and spells
    nowhere now: a macro that named it names another string, or is gone with the code that read it; a
    literal in code gone from this file and from every line the bump adds."""
    lost: dict[str, _Lost] = {}
    for line, name in _names_gone(change, strings):
        if name in lost or elsewhere().adds(name) or not _read_upstream(line, change.new_code, elsewhere()):
            continue
        quoted = f'"{name}"'
        old_line = change.old_code.count("\n", 0, change.old_code.find(quoted)) + 1
        twin = _renamed_to(name, _new_names(change, strings))
        lost[name] = _dropped_string(change, name, old_line, tuple(strings[name]), twin)
    return list(lost.values())


def _new_names(change: FileChange, strings: Mapping[str, Sequence[LocalRef]]) -> set[str]:
    """What may have taken a name's place: a string an added line spells that the file did not before (and
    that is not one Ollama writes)."""
    return {
        s
        for line in change.added_raw
        if '"' in line
        for s in _LITERAL.findall(line)
        if f'"{s}"' not in change.old_code and s not in strings
    }


def _names_gone(change: FileChange, strings: Mapping[str, Sequence[LocalRef]]) -> Iterator[tuple[str, str]]:
    """(removed line, name) for each name Ollama writes that a removed line spells, in the old code and not in
    the new (a comment that spells it is no code); never an include's file name."""
    for line in change.removed_raw:
        if '"' not in line or _INCLUDE.match(line):
            continue
        for name in _LITERAL.findall(line):
            if (
                name in strings
                and _KEY.fullmatch(name)
                and _only_in(f'"{name}"', change.old_code, change.new_code)
            ):
                yield line, name


def _only_in(text: str, old: str, new: str) -> bool:
    return text in old and text not in new


def _renamed_to(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` past the dotted prefix they share (`clip.vision.` says nothing of a
    rename), if any is half alike there."""

    def alike(candidate: str) -> float:
        shared = len(os.path.commonprefix([name, candidate]).rpartition(".")[0])
        return difflib.SequenceMatcher(None, name[shared:], candidate[shared:]).ratio()

    best = max(sorted(candidates), key=alike, default=None)
    return best if best is not None and alike(best) >= 0.5 else None


def _read_upstream(line: str, new_code: str, other: Elsewhere) -> bool:
    """Whether upstream read the name the removed line spells: a macro's name still defined (it names
    another string now) or spelled by removed lines besides its definition (code that read it changed); a
    literal in code, always."""
    define = _DEFINE.match(line)
    if define is None:
        return True
    macro = define.group(1)
    return bool(re.search(rf"#\s*define\s+{macro}\b", new_code)) or other.removed_words.get(macro, 0) > 1


def _dropped_string(
    change: FileChange, name: str, old_line: int, refs: tuple[LocalRef, ...], twin: str | None
) -> _Lost:
    """What to say of a name Ollama writes that upstream no longer spells (`twin`: the one in its place)."""
    spelled = change.old_lines[old_line - 1].strip()
    detail = (
        f'Upstream no longer spells `"{name}"` ({code_span(change.path)}: {code_span(spelled[:120])})'
        + (f'; it is probably `"{twin}"` now' if twin else "")
        + f'. Ollama\'s compatibility code writes `"{name}"` for upstream to read: upstream no longer looks it '
        + "up, so what Ollama writes there is ignored, or a model that needs it fails to load. Write the new "
        + "name in the compat code, or carry a patch."
    )
    title = f'`"{name}"` was {"renamed" if twin else "removed"} upstream'
    return _Lost(name, title, detail, old_line, refs)


def _drops_what_ollama_value_refs(gone: list[tuple[str, list[str]]], names, strings, paired) -> bool:
    """Whether the removed lines hold a case Ollama reaches, a value it produces or a string it writes."""
    return _drops_reached_case(gone, names, strings, paired) or _drops_written(gone, strings, paired)


def _drops_reached_case(gone: list[tuple[str, list[str]]], names, strings, paired) -> bool:
    """Whether a removed `case` line names a value Ollama names or produces."""
    return any(
        v in names or paired.get(v, set()) & strings.keys() for line, vs in gone if "case" in line for v in vs
    )


def _drops_written(gone: list[tuple[str, list[str]]], strings, paired) -> bool:
    """Whether a removed line names a value Ollama produces, or holds a string Ollama writes."""
    return any(paired.get(v, set()) & strings.keys() for _, vs in gone for v in vs) or any(
        s in strings for line, _ in gone if '"' in line for s in _LITERAL.findall(line)
    )


def value_drafts(
    change: FileChange,
    names: Mapping[str, Sequence[LocalRef]],
    strings: Mapping[str, Sequence[LocalRef]],
    strings_of: Mapping[str, set[str]] | None = None,
    elsewhere: Callable[[], Elsewhere] | None = None,
) -> list[Draft]:
    """Enum values Ollama's compat code names or produces (as the string a table pairs with them) that
    this upstream change stops recognising: an enum value removed or renamed, a `case` dropped from a
    switch, a row dropped from a name<->string table. Such a value still compiles; at run time the
    switch falls to its default (often an abort) or the lookup answers 'unknown'. And a name Ollama writes
    (a GGUF key) that upstream's code read and no longer spells (`elsewhere`: what the bump's other lines
    spell, asked for only then).

    `strings_of` pairs values with strings from tables in other files (see `value_strings`); this
    file's own tables, at both refs, are always read."""
    if (
        not change.old_path
        or not change.new_path
        or not change.significant
        or not cpp.is_c_family(change.path)
    ):
        return []
    paired = strings_of or {}
    gone = [(line, _IDENT.findall(line)) for line in change.removed_raw]
    if not _drops_what_ollama_value_refs(gone, names, strings, paired):
        return []
    old, new = change.old_code.encode(), change.new_code.encode()
    with syntax.edited_from([(old, new)]):  # the new code parsed from the old code's tree
        old_rows, new_rows = cppvalues.string_tables(old), cppvalues.string_tables(new)
        pairs = _pairs(paired, (*old_rows, *new_rows))

        def reach(value: str) -> tuple[list[str], tuple[LocalRef, ...]]:
            return _value_refs(value, names, strings, pairs)

        lost = [
            *_dropped_cases(change, old, new, reach, names),
            *_removed_enum_values(change, old, new, reach),
            *_dropped_rows(change, old_rows, new_rows, names, strings),
        ]
    lost += _other_names(
        lost, pairs, _dropped_strings(change, strings, elsewhere or (lambda: Elsewhere([change], strings)))
    )
    return [_lost_draft(change, item) for item in lost]


def _other_names(lost: list[_Lost], pairs: Mapping[str, set[str]], names: list[_Lost]) -> list[_Lost]:
    """The names Ollama writes that upstream stopped reading, but those of a value already lost (a dropped
    table row says so)."""
    reached = {item.value for item in lost} | {s for item in lost for s in pairs.get(item.value, ())}
    return [item for item in names if item.value not in reached]


def _pairs(paired: Mapping[str, set[str]], rows: Iterable[cppvalues.TableRow]) -> dict[str, set[str]]:
    """The strings each value is paired with: in other files' tables, and in this file's at both refs."""
    pairs: dict[str, set[str]] = {k: set(v) for k, v in paired.items()}
    for row in rows:
        pairs.setdefault(row.value, set()).add(row.string)
    return pairs


def _lost_draft(change: FileChange, item: _Lost) -> Draft:
    """The item for a value the change stops recognising, at the new line of its old one."""
    line = change.new_line(item.old_line)
    return Draft(
        area(item.value, change.path),
        item.severity,
        item.title,
        item.detail,
        change.path,
        line,
        ((line, line),) if line else (),
        (change.old_path or change.path, change.old_lines[item.old_line - 1].strip()),
        item.refs,
        cause=f"declaration:{item.value}",
    )
