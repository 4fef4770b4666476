"""The logger's sink: which stream a level is written to, and the verbosity a library's level maps to.

Every line a program logs passes one function that picks the stream by level (`fcur = stdout; if (level !=
NONE) fcur = stderr;`) and one that maps a library's levels to the verbosity filtered against the threshold
(`case GGML_LOG_LEVEL_INFO: return LOG_LEVEL_TRACE;`). A bump that changes either moves or hides every line of
that level with no print changed: Ollama reading one stream of the program waits for lines now on the other,
and the verbosity it starts the program with no longer lets the library's lines through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.model import LaunchSetting, OutputPattern
from bot.review.gopatterns import distinct_refs, is_program_output, program_of
from bot.review.printwhen import MAPS_LEVEL, STREAMS, Upstream, call_level, verbosity_flags
from bot.review.producers import SourceFile

_PICKS_STREAM = re.compile(r"\b(\w+)\s*=\s*(?:stdout|stderr)\s*;")
MAX_REFS = 8  # Ollama's patterns pointed at per stream


@dataclass(frozen=True)
class Sink:
    """What the reading of a program's output relies on of its logger."""

    programs: Callable[[str], frozenset[str] | None]  # the programs code at a path writes to (None: any)
    patterns: Callable[[], Sequence[OutputPattern]]
    launches: Callable[[], Sequence[LaunchSetting]]


def sink_drafts(changes: list[FileChange], sink: Sink, upstream: Upstream) -> list[Draft]:
    """Medium drafts for a changed choice of stream by level, and a changed level mapping (the changes
    are those of code Ollama builds)."""
    drafts = []
    for change in changes:
        if not (change.old_path and change.new_path and change.significant):
            continue
        changed = change.changed_raw[0]
        if _picks_a_stream(change):
            drafts += _stream_drafts(change, sink)
        if MAPS_LEVEL.search(changed):
            drafts += _level_drafts(change, sink, upstream)
    return drafts


# ------------------------------------------------------------------------------------------ streams


def _picks_a_stream(change: FileChange) -> bool:
    return any(s in change.new_text for s in STREAMS) and _PICKS_STREAM.search(change.new_text) is not None


def _stream_drafts(change: FileChange, sink: Sink) -> list[Draft]:
    """One draft per function that picks a stream by level whose changed lines pick it otherwise."""
    old, new = SourceFile(change.old_code, change.path), SourceFile(change.new_code, change.path)
    drafts = []
    for name, line, before, after in _picking_changes(change, old, new):
        read = _single_stream_patterns(change.path, sink)
        if read:
            drafts.append(_stream_draft(change, name, line, before, after, read))
    return drafts


def _picking_changes(
    change: FileChange, old: SourceFile, new: SourceFile
) -> Iterator[tuple[str, int, list[str], list[str]]]:
    """(the variables, line, old lines, new lines) of the changed code of each function that assigns a
    stream to a variable, when the changed lines assign it or decide which."""
    for name, line in _touched(change, new).items():
        before_span, after_span = old.function_span(name=name), new.function_span(name=name)
        if before_span is None or after_span is None:
            continue
        texts = _lines_of(old, before_span) + _lines_of(new, after_span)
        picked = {m[1] for m in _PICKS_STREAM.finditer(texts)}
        before, after = _changed_in(change, before_span, "old"), _changed_in(change, after_span, "new")
        if picked and _decides(before + after, picked):
            yield " or ".join(sorted(picked)), line, before, after


def _touched(change: FileChange, new: SourceFile) -> dict[str, int]:
    """The functions the change's hunks are in at the new ref, with the first hunk's line."""
    found: dict[str, int] = {}
    for span in change.significant:
        name = new.function_at(max(span.new_start, 1))
        if name:
            found.setdefault(name, span.new_start)
    return found


def _lines_of(source: SourceFile, span: tuple[int, int]) -> str:
    return "\n".join(source.lines[span[0] - 1 : span[1]]) + "\n"


def _changed_in(change: FileChange, span: tuple[int, int], side: str) -> list[str]:
    lines = change.old_code_lines if side == "old" else change.new_code_lines
    numbers = sorted(
        n
        for s in change.significant
        for n in (s.old_lines if side == "old" else s.new_lines)
        if span[0] <= n <= span[1]
    )
    return [lines[n - 1].strip() for n in numbers if lines[n - 1].strip()]


def _decides(lines: list[str], picked: set[str]) -> bool:
    """Whether the lines assign a stream to the variable, or are a condition (on a level) before one."""
    text = "\n".join(lines)
    assigns = any(re.search(rf"\b{re.escape(v)}\s*=\s*(?:stdout|stderr)\b", text) for v in picked)
    return assigns or re.search(r"\bif\s*\(.*level", text, re.IGNORECASE) is not None


def _single_stream_patterns(path: str, sink: Sink) -> list[OutputPattern]:
    """Ollama's patterns applied to one stream of a program the code writes to (not to both together)."""
    programs = sink.programs(path)
    found = []
    for contract in sink.patterns():
        if not is_program_output(contract) or (programs is not None and program_of(contract) not in programs):
            continue
        streams = {s.rsplit(" ", 1)[-1] for s in contract.sources if not s.startswith(("GET ", "POST "))}
        if len(streams) == 1 and streams <= set(STREAMS):
            found.append(contract)
    return found


def _stream_draft(
    change: FileChange, name: str, line: int, before: list[str], after: list[str], read: list[OutputPattern]
) -> Draft:
    streams = sorted({s for c in read for s in c.sources})
    shown = ", ".join(
        f"{code_span(c.value)} ({code_span(f'{c.ref.path}:{c.ref.line}')})" for c in read[:MAX_REFS]
    )
    detail = (
        f"The logger picks the stream ({' or '.join(STREAMS)}) each level is written to as {code_span(name)}, and the bump "
        f"changed how: before {_lines(before)}, now {_lines(after)}. Ollama reads {', '.join(streams)} alone with "
        f"{shown}: a line of a level now written to the other stream is never seen."
    )
    return Draft(
        "server",
        "medium",
        f"The logger's sink changed: which of stdout and stderr a level goes to ({code_span(name)})",
        detail,
        change.path,
        line,
        local_refs=distinct_refs(tuple(c.ref for c in read[:MAX_REFS])),
        cause=f"log sink {change.path}",
    )


def _lines(lines: list[str]) -> str:
    return " ".join(code_span(line) for line in lines[:4]) if lines else "no line"


# ------------------------------------------------------------------------------------------ levels


def _level_drafts(change: FileChange, sink: Sink, upstream: Upstream) -> list[Draft]:
    """One draft per level a switch maps to another verbosity, when a verbosity Ollama passes lets the
    old one through and not the new (or the levels are not numbers the headers define)."""
    before = dict(MAPS_LEVEL.findall("\n".join(change.removed_raw)))
    after = {k: (v, n) for n, line in _added_lines(change) for k, v in MAPS_LEVEL.findall(line)}
    drafts = []
    for level, (now, line) in after.items():
        was = before.get(level)
        if was is None or was == now:
            continue
        lost = _filtered(was, now, change.path, sink.launches(), upstream)
        if lost is not None:
            drafts.append(_level_draft(change, line, level, was, now, lost))
    return drafts


def _added_lines(change: FileChange) -> list[tuple[int, str]]:
    lines = change.new_lines
    return [(n, lines[n - 1]) for s in change.significant for n in s.new_lines]


def _filtered(
    was: str, now: str, path: str, launches: Sequence[LaunchSetting], upstream: Upstream
) -> list[tuple[str, LocalRef]] | None:
    """The verbosity flags Ollama passes (name, where) at which the old level printed and the new does not;
    all of them when a level is not a number; None when none filters the new level."""
    low, high = call_level(was, path, upstream.read), call_level(now, path, upstream.read)
    flags = verbosity_flags(launches, upstream.flags())
    if low is None or high is None:
        return [(name, ref) for name, _, refs in flags for ref in refs]
    lost = [(name, ref) for name, value, refs in flags if low <= value < high for ref in refs]
    return lost or None


def _level_draft(
    change: FileChange, line: int, level: str, was: str, now: str, lost: list[tuple[str, LocalRef]]
) -> Draft:
    flags = sorted({name for name, _ in lost})
    detail = (
        f"The logger maps {code_span(level)} to verbosity {code_span(now)} instead of {code_span(was)}: every "
        f"library line of that level is filtered against the threshold at its new verbosity. Ollama starts the "
        f"program with {', '.join(code_span(f) for f in flags) or 'its default verbosity'}: check that the "
        "library lines it parses are still printed."
    )
    return Draft(
        "server",
        "medium",
        f"The logger's sink changed: {code_span(level)} is printed at verbosity {code_span(now)}, not {code_span(was)}",
        detail,
        change.path,
        line,
        local_refs=tuple(dict.fromkeys(ref for _, ref in lost)),
        cause=f"log level {level}",
    )
