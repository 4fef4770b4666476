"""The stream frames llama-server writes, checked against Ollama's stream reader function by function.

Ollama's reader (as the contract inventory gives it) accepts a line by its prefixes (`data: `, `:`) and, after
a prefix, by constants it compares the rest with (`[DONE]`). A function of the server whose frames at the old
ref are all lines the reader accepts is one Ollama reads; at the new ref, a pattern of Ollama's that matched
one of its frames and matches none now, or a new frame line no pattern accepts, breaks the stream (high).
Frames written through a named constant count as the constant's text, so a refactor that names a frame is
no change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.servercode import ServerCode, Unit

STREAM_KINDS = ("prefix", "equals")


def frame_lines(units: Sequence[Unit]) -> dict[str, tuple[str, int]]:
    """The non-empty lines of the frames of the units (one function's, overloads together), each with its
    frame and the line of code writing it."""
    lines: dict[str, tuple[str, int]] = {}
    for unit in units:
        for frame, at in unit.frames().items():
            for line in frame.split("\n"):
                if line:
                    lines.setdefault(line, (frame, at))
    return lines


def _stream_patterns(patterns: Sequence) -> list:
    """The prefixes and constants Ollama compares what it read from a stream with."""
    return [p for p in patterns if p.kind in STREAM_KINDS and any(s.endswith(" stream") for s in p.sources)]


class Reader:
    """Ollama's stream reader as its patterns say: the prefixes it accepts a line by (`data: `, `:`) and the
    constants it compares with what follows one (`[DONE]`, those the old ref's frames hold)."""

    def __init__(self, patterns: Sequence, written: Iterable[str]):
        read = _stream_patterns(patterns)
        prefixes = [p for p in read if p.kind == "prefix"]
        self.prefixes = [p.value for p in prefixes]
        lines = list(written)
        self.patterns = prefixes + [p for p in read if p.kind != "prefix" and self.matches_any(p, lines)]

    def matched(self, pattern, line: str) -> bool:
        if pattern.kind == "prefix":
            return line.startswith(pattern.value)
        return line == pattern.value or any(
            line.startswith(p) and line[len(p) :] == pattern.value for p in self.prefixes
        )

    def matches_any(self, pattern, lines: Iterable[str]) -> bool:
        return any(self.matched(pattern, line) for line in lines)

    def accepts(self, line: str) -> bool:
        return any(self.matched(p, line) for p in self.patterns)

    def lost(self, before: Iterable[str], after: Iterable[str]) -> list:
        """The patterns some old line matches and no new line does."""
        old, new = list(before), list(after)
        return [p for p in self.patterns if self.matches_any(p, old) and not self.matches_any(p, new)]


def frame_drafts(
    old: ServerCode, new: ServerCode, patterns: Sequence, skipped: Callable[[object], bool]
) -> list[Draft]:
    """Per function whose frames Ollama's reader accepts at the old ref: the patterns its new frames no longer
    match, and the new lines none accepts. A function that only stops writing some frames (they moved, or a
    terminator was dropped) loses only the terminators Ollama does more with than skip (`skipped`)."""
    reader = Reader(patterns, {line for unit in old.units for line in frame_lines([unit])})
    if not reader.prefixes:
        return []
    drafts = []
    after = _by_function(new.units)
    for qualified, units in _by_function(old.units).items():
        before = frame_lines(units)
        if before and qualified in after and all(reader.accepts(line) for line in before):
            drafts += list(_frame_changes(units[0], after[qualified], before, reader, skipped))
    return drafts


def _by_function(units: Sequence[Unit]) -> dict[str, list[Unit]]:
    """The units by the function they are written in: a lambda's frames are its function's (upstream moves a
    frame between a function and the lambdas it hands on, `res->next = [...]` or `set_next([...])`)."""
    found: dict[str, list[Unit]] = {}
    for unit in units:
        found.setdefault(unit.qualified.split("/", 1)[0], []).append(unit)
    return found


def _frame_changes(
    was: Unit,
    units: Sequence[Unit],
    before: dict[str, tuple[str, int]],
    reader: Reader,
    skipped: Callable[[object], bool],
) -> Iterator[Draft]:
    after = frame_lines(units)
    new_lines = [line for line in after if line not in before]
    for pattern in _lost(reader, before, after, new_lines, skipped):
        shown = next((line for line in before if reader.matched(pattern, line)), next(iter(before)))
        yield _lost_draft(was, units[0], pattern, before[shown], new_lines)
    for line in new_lines:
        if not reader.accepts(line):
            yield _unexpected_draft(units[0], *after[line], reader.patterns)


def _lost(
    reader: Reader, before: Iterable[str], after: Iterable[str], new_lines: list[str], skipped: Callable
) -> list:
    """The patterns the function's frames no longer match; where it only dropped frames (none rewritten),
    the terminators Ollama does more with than skip."""
    lost = reader.lost(before, after)
    if new_lines:
        return lost
    return [p for p in lost if p.kind != "prefix" and not skipped(p)]


def _shown(line: str) -> str:
    return line.encode("unicode_escape").decode("ascii").replace("`", "'")


def _lost_draft(was: Unit, unit: Unit, pattern, written: tuple[str, int], new_lines: list[str]) -> Draft:
    frame, at = written
    now = ", ".join(code_span(_shown(x)) for x in new_lines[:3]) or "no such frame"
    ollama = pattern.used_at[0] if pattern.used_at else pattern.ref
    file = unit.path.rsplit("/", 1)[-1]
    return Draft(
        "streaming",
        "high",
        f"llama-server's stream frames changed in {file}: Ollama's {code_span(_shown(pattern.value))} no longer matches",
        (
            f"Ollama's stream reader looks for {code_span(_shown(pattern.value))} ({pattern.kind}, {ollama.path}:"
            f"{ollama.line}) in what llama-server writes; {code_span(unit.qualified)} wrote {code_span(_shown(frame))} at the old "
            f"ref ({was.path}:{at}) and writes {now} at the new ref. Ollama will not "
            "recognise these frames: it fails the request when it parses one as JSON, or waits for a frame "
            "that never comes."
        ),
        unit.path,
        unit.line,
        removed=(was.path, f'"{_shown(frame)}'),
        local_refs=tuple(dict.fromkeys((*pattern.used_at, pattern.ref))),
        cause=f"wire-frames:{unit.qualified}",
    )


def _unexpected_draft(unit: Unit, frame: str, at: int, stream: Sequence) -> Draft:
    listed = ", ".join(f"{code_span(_shown(p.value))} ({p.ref.path}:{p.ref.line})" for p in stream[:4])
    file = unit.path.rsplit("/", 1)[-1]
    return Draft(
        "streaming",
        "high",
        f"llama-server's stream frames changed in {file}: {code_span(_shown(frame))} new",
        (
            f"{code_span(unit.qualified)} writes a new frame {code_span(_shown(frame))} on the stream Ollama reads, and none "
            f"of Ollama's stream patterns accepts it ({listed}): Ollama's reader will take it for a chunk and "
            "fail the request when it parses it as JSON."
        ),
        unit.path,
        at,
        blame=((at, at),),
        local_refs=tuple(dict.fromkeys(r for p in stream for r in (*p.used_at, p.ref))),
        cause=f"wire-frames:{unit.qualified}",
    )
