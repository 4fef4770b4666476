"""The environment variables upstream's code reads, by the string constant that names them (`getenv("X")`,
`.set_env("X")`), at both refs, against the ones Ollama sets for the programs it starts.

A variable Ollama sets that no upstream code Ollama builds names any more is silently ignored: whatever Ollama
chose with it (a backend library, a device list, a workaround, a flag's value) falls back to upstream's default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.producers import SourceFile
from bot.review.source import LineIndex

ENV_CONSTANT = re.compile(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"')


def env_constants(code: str) -> dict[str, int]:
    """Each constant of a comment-free text that can name an environment variable, with its first offset."""
    found: dict[str, int] = {}
    for m in ENV_CONSTANT.finditer(code):
        found.setdefault(m[1], m.start())
    return found


@dataclass(frozen=True)
class Lost:
    """An environment-variable name a changed file wrote at the old ref and no changed file writes now."""

    name: str
    change: FileChange
    line: int  # where the old ref wrote it
    successors: tuple[str, ...]  # names the same change writes that the old file did not


def lost_names(
    changes: Iterable[FileChange], wanted: Callable[[str], bool] = lambda name: True
) -> list[Lost]:
    """The `wanted` names that leave a changed file and that no other changed file adds (read from the
    hunks first: a name that leaves a file is on one of its removed lines)."""
    changes = list(changes)
    added = {n for c in changes for n in _on_lines(c.added_raw)}
    found = []
    for change in changes:
        removed = {n for n in _on_lines(change.removed_raw) if wanted(n)} - added
        if removed and change.old_path:
            found += _left(change, removed)
    return found


def _on_lines(lines: list[str]) -> list[str]:
    return ENV_CONSTANT.findall("\n".join(lines))


def _left(change: FileChange, removed: set[str]) -> list[Lost]:
    """The removed names the file no longer writes anywhere, with where the old ref wrote them."""
    before = env_constants(change.old_code)
    after = env_constants(change.new_code) if change.new_path else {}
    gone = sorted(n for n in removed if n in before and n not in after)
    if not gone:
        return []
    index = LineIndex(change.old_code)
    successors = tuple(n for n in after if n not in before)
    return [Lost(n, change, index.line(before[n]), successors) for n in gone]


def lost_drafts(
    lost: Sequence[Lost],
    settings: Mapping[str, tuple[tuple[LocalRef, ...], bool]],
    flags_of: Callable[[str], Sequence[str]],
) -> list[Draft]:
    """A high item for each name Ollama sets (name -> (where, whether on every start)); `flags_of` names the
    flags an `LLAMA_ARG_*`-style variable belonged to at the old ref."""
    return [_draft(item, *settings[item.name], flags_of(item.name)) for item in lost if item.name in settings]


def _draft(item: Lost, refs: tuple[LocalRef, ...], always: bool, flags: Sequence[str]) -> Draft:
    change = item.change
    old_path = change.old_path or change.path
    successor = _nearest(item)
    what = f"{code_span(flags[0])}'s environment variable" if flags else "an environment variable"
    detail = (
        f"At the old ref {code_span(f'{old_path}:{item.line}')} read {code_span(item.name)} ({what}); at the new ref no upstream "
        "code Ollama builds names it"
        + (f" (the same change reads {code_span(successor)})" if successor else "")
        + f". Ollama sets it ({_where(refs)})"
        + ("" if always else " on some starts")
        + ": the setting is now silently ignored, and what Ollama chose with it falls back to upstream's "
        "default. Set the variable upstream reads now, or drop the setting."
    )
    return Draft(
        "discovery" if old_path.startswith("ggml/") else "server",
        "high",
        f"Upstream no longer reads environment variable {item.name}; Ollama sets it",
        detail,
        change.path,
        change.new_line(item.line),
        removed=(old_path, f'"{item.name}"'),
        local_refs=refs,
        cause=f"env:{item.name}",
    )


def _nearest(item: Lost) -> str | None:
    """The name the change writes nearest the old one's place: what upstream reads instead, most likely."""
    if not item.successors or not item.change.new_path:
        return None
    near = item.change.new_line(item.line) or 0
    index = LineIndex(item.change.new_code)
    at = env_constants(item.change.new_code)
    return min(item.successors, key=lambda n: abs(index.line(at[n]) - near))


def _where(refs: Sequence[LocalRef], shown: int = 4) -> str:
    listed = ", ".join(f"{r.path}:{r.line}" for r in refs[:shown])
    return listed + (f" and {len(refs) - shown} more" if len(refs) > shown else "")


# ------------------------------------------------------------------------------------------ values read anew


_GETENV = re.compile(r'\bgetenv\s*\(\s*"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"\s*\)')
_HELD_IN = re.compile(r"(\w+)\s*=\s*(?:std\s*::\s*)?$")  # `const char * value = ` before a getenv
MAX_SHOWN_LINES = 4


@dataclass(frozen=True)
class Reread:
    """An environment variable upstream still reads whose value the code around the read now uses
    otherwise: changed lines of the reading function that name the value (or read it)."""

    name: str
    change: FileChange
    function: str
    line: int  # the first such line at the new ref
    before: tuple[str, ...]  # the removed lines that used it
    after: tuple[str, ...]  # the added ones
    # the lines that use it are the same: the changed lines are in a block one of them opens
    # (`if (path) { ... }`), which its value decides
    governed: bool = False


def reread_names(changes: Iterable[FileChange], wanted: Callable[[str], bool]) -> list[Reread]:
    """The `wanted` variables a changed file reads with `getenv` at both refs, in a function whose changed
    lines use the value read (the variable holding it, or the read itself); a change elsewhere in the file
    leaves the value as it was used."""
    found = []
    for change in changes:
        if change.old_path and change.new_path and "getenv" in change.new_text:  # else no comment to read out
            found += _reread_in(change, wanted)
    return found


def _reread_in(change: FileChange, wanted: Callable[[str], bool]) -> list[Reread]:
    reads = [m for m in _GETENV.finditer(change.new_code) if wanted(m[1])]
    if not reads:  # the file reads none of the variables Ollama sets: nothing to parse
        return []
    sources = SourceFile(change.old_code, change.path), SourceFile(change.new_code, change.path)
    index, found = LineIndex(change.new_code), {}
    for m in reads:
        if m[1] not in found:
            item = _reread_at(change, sources, m, index.line(m.start()))
            if item is not None:
                found[m[1]] = item
    return list(found.values())


def _reread_at(
    change: FileChange, sources: tuple[SourceFile, SourceFile], read: re.Match[str], line: int
) -> Reread | None:
    """The read at `line` of the new text, when its function read it at the old ref too."""
    old, new = sources
    function = new.function_at(line)
    if function is None:
        return None
    spans = old.function_span(name=function), new.function_span(line)
    if spans[0] is None or spans[1] is None or read[0] not in _lines_text(old.lines, spans[0]):
        return None
    return _reread(change, read, function, (spans[0], spans[1]))


def _reread(
    change: FileChange, read: re.Match[str], function: str, spans: tuple[tuple[int, int], tuple[int, int]]
) -> Reread | None:
    """The read's variable, when the function's changed lines use its value (the variable that holds it,
    or the read itself) at either ref."""
    uses = (
        _uses(change.old_code, _line_index(change.old_code), spans[0], read[1]),
        _uses(change.new_code, _line_index(change.new_code), spans[1], read[1]),
    )
    before = _using(change, spans[0], "old", uses[0])
    after = _using(change, spans[1], "new", uses[1])
    if not (before or after) or _operations(change.old_code_lines, spans[0], uses[0]) == _operations(
        change.new_code_lines, spans[1], uses[1]
    ):
        return _governed(change, read[1], function, spans, uses)
    line = after[0][0] if after else change.new_line(before[0][0]) or spans[1][0]
    return Reread(read[1], change, function, line, tuple(t for _, t in before), tuple(t for _, t in after))


def _governed(
    change: FileChange,
    name: str,
    function: str,
    spans: tuple[tuple[int, int], tuple[int, int]],
    uses: tuple[re.Pattern[str], re.Pattern[str]],
) -> Reread | None:
    """The read's variable, used alike, when the blocks that lines using its value open (`if (path) {
    load(path); return; }`) hold other statements: what the value decides changed."""
    old = _opened_by(change.old_code_lines, spans[0], uses[0])
    new = _opened_by(change.new_code_lines, spans[1], uses[1])
    if old == new:
        return None
    before, after = [t for t in old if t not in new], [t for t in new if t not in old]
    lines = change.new_code_lines
    line = next(
        (n for n in range(spans[1][0], spans[1][1] + 1) if lines[n - 1].strip() in after), spans[1][0]
    )
    return Reread(name, change, function, line, tuple(before), tuple(after), governed=True)


MAX_BLOCK_LINES = 200  # lines of a block a use of the value opens that are read


def _opened_by(lines: list[str], span: tuple[int, int], uses: re.Pattern[str]) -> list[str]:
    """The statements (stripped, in order) of the blocks that lines using the value open within the
    function, the lines using it left out."""
    inside: list[str] = []
    for n in range(span[0] - 1, min(span[1], len(lines))):
        if uses.search(lines[n]) and lines[n].count("{") > lines[n].count("}"):
            inside += _block_lines(lines, n, span[1])
    return [" ".join(t.split()) for t in inside if t.strip() not in ("", "}") and not uses.search(t)]


def _block_lines(lines: list[str], start: int, end: int) -> list[str]:
    """The lines after `start` (0-based) up to the brace that closes the block it opens."""
    depth, found = 0, []
    for n in range(start, min(end, len(lines), start + MAX_BLOCK_LINES)):
        depth += lines[n].count("{") - lines[n].count("}")
        if n > start:
            found.append(lines[n])
        if depth <= 0:
            break
    return found


@lru_cache(maxsize=8)
def _line_index(code: str) -> LineIndex:
    return LineIndex(code)


@lru_cache(maxsize=8)
def _getenv_reads(code: str) -> tuple[tuple[str, int, int, str], ...]:
    """Every `getenv` read of a text: (variable, line, offset, the read as written), found once per text."""
    index = _line_index(code)
    return tuple((m[1], index.line(m.start()), m.start(), m[0]) for m in _GETENV.finditer(code))


def _uses(code: str, index: LineIndex, span: tuple[int, int], name: str) -> re.Pattern[str]:
    """What names the value of the variable in the function: its read, and the local that holds it."""
    read = next((r for r in _getenv_reads(code) if r[0] == name and span[0] <= r[1] <= span[1]), None)
    if read is None:
        return re.compile(re.escape(f'"{name}"'))
    held = _HELD_IN.search(code, max(0, read[2] - 80), read[2])
    return re.compile(re.escape(read[3]) + (rf"|\b{held[1]}\b" if held else ""))


# The innermost call an expression is an argument of, and a constant (a string or a number) on the line.
_INNER_CALL = re.compile(r"([A-Za-z_][\w:]*)\s*\(([^()]*)\)")
_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|(?<![\w.])\d[\w.]*')
_HOLDER = "\x00"


def _operations(lines: list[str], span: tuple[int, int], uses: re.Pattern[str]) -> frozenset[str]:
    """What the function does with the value: the calls it is passed to (innermost, `std::` aside) and the
    constants on the lines that use it; the same for code that only renames its local or respells a test."""
    found = set()
    for line in lines[span[0] - 1 : span[1]]:
        if not uses.search(line):
            continue
        held = uses.sub(_HOLDER, line)
        found |= {m[1].removeprefix("std::") for m in _INNER_CALL.finditer(held) if _HOLDER in m[2]}
        found |= {c for c in _LITERAL.findall(line) if c != "0"}
    return frozenset(found)


def _lines_text(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(lines[span[0] - 1 : span[1]])


def _using(
    change: FileChange, span: tuple[int, int], side: str, uses: re.Pattern[str]
) -> list[tuple[int, str]]:
    """The changed lines (number, code) of one side within the function's span that match `uses`."""
    lines = change.old_code_lines if side == "old" else change.new_code_lines
    numbers = sorted(
        n
        for s in change.significant
        for n in (s.old_lines if side == "old" else s.new_lines)
        if span[0] <= n <= span[1]
    )
    return [(n, lines[n - 1].strip()) for n in numbers if uses.search(lines[n - 1])]


def reread_drafts(
    reread: Sequence[Reread],
    settings: Mapping[str, tuple[tuple[LocalRef, ...], bool]],
    values: Mapping[str, tuple[str, ...]] | None = None,
) -> list[Draft]:
    """A medium item for each variable Ollama sets whose value upstream now uses otherwise; information where
    the new code compares the value with constants that include each one Ollama sets (`values`: the
    inventory's, constants JSON-quoted), and the old code compared it with none."""
    return [
        _reread_draft(item, *settings[item.name], _still_taken(item, (values or {}).get(item.name, ())))
        for item in reread
        if item.name in settings
    ]


def _still_taken(item: Reread, values: tuple[str, ...]) -> bool:
    """Whether every value Ollama sets is a constant the new lines test the value equal to (`strcmp(v, "1") ==
    0`), where the old lines tested no constant (whether it was set at all)."""
    constants = [c for c in map(_constant, values) if c is not None]
    strings = {m for line in item.before for m in _STRING.findall(line)} - {json.dumps(item.name)}
    if not constants or len(constants) < len(values) or strings:
        return False
    return all(any(_equal_to(c).search(line) for line in item.after) for c in constants)


_STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def _constant(value: str) -> str | None:
    """A JSON-quoted constant's text; None for a kind of value (`integer`) or a malformed quote."""
    try:
        text = json.loads(value) if value.startswith('"') else None
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def _equal_to(constant: str) -> re.Pattern[str]:
    quoted = re.escape(json.dumps(constant))
    return re.compile(
        rf"(?<!!)\bstrcmp\s*\([^,()]+,\s*{quoted}\s*\)\s*==\s*0|!\s*strcmp\s*\([^,()]+,\s*{quoted}\s*\)"
        rf"|==\s*{quoted}|{quoted}\s*=="
    )


def _reread_draft(item: Reread, refs: tuple[LocalRef, ...], always: bool, taken: bool = False) -> Draft:
    where = f"Ollama sets it ({_where(refs)})" + ("" if always else " on some starts")
    if taken:
        detail = (
            f"{code_span(item.function)} now compares {code_span(item.name)} with constants, among them each value "
            f"Ollama sets: before {_shown(item.before)}, now {_shown(item.after)}. {where}."
        )
        return _env_draft(
            item,
            refs,
            "info",
            f"Upstream now takes only some values of environment variable {item.name}",
            detail,
        )
    if item.governed:  # the value used alike: often a refactor, so only a pointer to look at
        detail = (
            f"{code_span(item.function)} still reads {code_span(item.name)} and uses the value as before, but the "
            f"bump changed what the block it decides does: before {_shown(item.before)}, now "
            f"{_shown(item.after)}. {where}."
        )
        return _env_draft(
            item, refs, "info", f"What environment variable {item.name} decides changed upstream", detail
        )
    detail = (
        f"{code_span(item.function)} still reads {code_span(item.name)}, but the bump changed how it uses the "
        f"value: before {_shown(item.before)}, now {_shown(item.after)}. {where}: check that the value Ollama "
        "gives is still taken, and means what it meant."
    )
    return _env_draft(
        item, refs, "medium", f"Upstream uses environment variable {item.name} differently", detail
    )


def _env_draft(item: Reread, refs: tuple[LocalRef, ...], severity: str, what: str, detail: str) -> Draft:
    return Draft(
        "discovery" if item.change.path.startswith("ggml/") else "server",
        severity,
        f"{what}; Ollama sets it",
        detail,
        item.change.path,
        item.line,
        local_refs=refs,
        cause=f"env:{item.name}",
    )


def _shown(lines: tuple[str, ...]) -> str:
    if not lines:
        return "no line"
    shown = " ".join(code_span(line) for line in lines[:MAX_SHOWN_LINES])
    return shown + (f" and {len(lines) - MAX_SHOWN_LINES} more lines" if len(lines) > MAX_SHOWN_LINES else "")
