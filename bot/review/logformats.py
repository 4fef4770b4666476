"""Log lines Ollama parses: its regular expressions and `strings.Contains`/`HasPrefix` literals,
against upstream's `printf`-style log format strings rendered with sample values.

A format string that produced a line Ollama matches at the old ref, and has
no counterpart at the new ref that still matches, means Ollama stops
recognising that line (device memory, system info, errors) without any
error anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial

from bot.model import LocalRef
from bot.review.changes import Draft, FileChange, Span
from bot.review.needles import needles
from bot.review.source import LineIndex, non_test_paths, region_code, split_args, string_value

OLLAMA_PARSERS = ("llm/**/*.go", "discover/**/*.go", "server/**/*.go", "ml/**/*.go")
CALL_LOOKBEHIND = 5  # lines above a changed line where a logging call reaching onto it may start
MIN_LITERAL = 5  # shorter Contains/HasPrefix literals are not evidence of parsing log output
_GO_STRING = r'(`[^`]*`|"(?:\\.|[^"\\\n])*")'
_GO_REGEX = re.compile(r"regexp\.(?:MustCompile|Compile)(?:POSIX)?\(\s*" + _GO_STRING + r"\s*\)")
_GO_LITERAL = re.compile(
    r"(?:strings|bytes)\.(?:Contains|HasPrefix|HasSuffix|Index|Cut|CutPrefix)\(\s*"
    r"[^,()]*(?:\([^()]*\))?[^,()]*,\s*(?:\[\]byte\(\s*)?" + _GO_STRING
)
_MATCHING_CALLS = ("regexp.", "Contains(", "Prefix(")  # a file with none applies no pattern: never scanned
_CALL = re.compile(r"(?:LOG\w*|printf|_(?:INF|WRN|ERR|DBG|CNT))\s*\(")  # starts with a literal: fast to scan
_SPEC = re.compile(
    r"%(%|[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L|q)?([diouxXeEfFgGaAcspn]))"
)
_KIND = {
    **dict.fromkeys("diou", "d"),
    **dict.fromkeys("xX", "x"),
    **dict.fromkeys("eEfFgGaA", "f"),
    "c": "c",
    "s": "s",
    "p": "p",
    "n": "",
}
_SAMPLES = (
    {"s": "CUDA0", "d": "1024", "f": "1.50", "c": "x", "p": "0x7f00", "x": "1f", "": ""},
    {"s": "NVIDIA GeForce RTX 4090", "d": "24564", "f": "0.25", "c": "x", "p": "0x7f00", "x": "ff", "": ""},
)


@dataclass(frozen=True)
class LogPattern:
    source: str  # as Ollama wrote it
    regex: re.Pattern
    ref: LocalRef


@dataclass(frozen=True)
class LogFormat:
    text: str  # the decoded format string
    line: int  # 1-based line of the call
    last_line: int


def _go_value(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return re.sub(
        r"\\(.)", lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m[1], "\\" + m[1]), literal[1:-1]
    )


def ollama_patterns(files: Mapping[str, str]) -> list[LogPattern]:
    """The regular expressions and literals Ollama's Go code applies to text (llama-server output among it)."""
    found = []
    for path in non_test_paths(files, OLLAMA_PARSERS):
        text = files[path]
        if not any(call in text for call in _MATCHING_CALLS):
            continue
        index = LineIndex(text)
        found += _regex_patterns(text, path, index)
        found += _literal_patterns(text, path, index)
    return found


def _regex_patterns(text: str, path: str, index: LineIndex) -> list[LogPattern]:
    """The `regexp.MustCompile(...)` expressions of a Go file that Python's `re` can compile."""
    found = []
    for m in _GO_REGEX.finditer(text):
        source = _go_value(m[1])
        regex = _compiled(source)
        if regex is not None:
            found.append(LogPattern(source, regex, LocalRef(path, index.line(m.start()))))
    return found


def _compiled(source: str) -> re.Pattern | None:
    """A Go regular expression as Python's; None for a Go-only construct: it cannot be judged."""
    try:
        return re.compile(source.replace(r"\z", r"\Z"))
    except re.error:
        return None


def _literal_patterns(text: str, path: str, index: LineIndex) -> list[LogPattern]:
    """The `strings.Contains(x, "...")`-style literals of a Go file long and wordy enough to be a log line's."""
    found = []
    for m in _GO_LITERAL.finditer(text):
        source = _go_value(m[1])
        if len(source.strip()) >= MIN_LITERAL and re.search(r"[A-Za-z]", source):
            found.append(
                LogPattern(source, re.compile(re.escape(source)), LocalRef(path, index.line(m.start())))
            )
    return found


def log_formats(code: str, first_line: int = 1) -> list[LogFormat]:
    """Format strings of logging/printf calls in comment-free C/C++ code (an excerpt from `first_line` on)."""
    if '"' not in code:
        return []
    index = LineIndex(code)
    found = []
    for m in _CALL.finditer(code):
        args, end = split_args(code, m.end() - 1)
        for arg in args[:3]:
            value = string_value(arg)
            if value is not None:
                found.append(
                    LogFormat(value, index.line(m.start()) + first_line - 1, index.line(end) + first_line - 1)
                )
                break
    return found


def _fill(values: dict[str, str], spec: re.Match) -> str:
    return "%" if spec[1] == "%" else values[_KIND[spec[2]]]


def formats_on_lines(
    lines: list[str], numbers: list[int], path: str, wanted: list[frozenset[str]] | None = None
) -> list[LogFormat]:
    """Format strings of calls that reach onto the given (sorted, 1-based) lines of a file, parsing only
    windows around them (a call may start CALL_LOOKBEHIND lines above) that hold a literal of `wanted`."""
    windows = _windows(numbers)
    texts = [lines[first - 1 : last] for first, last in windows]
    if wanted is not None:
        windows, texts = _holding_windows(windows, texts, wanted)
    on = set(numbers)
    found = []
    for (first, _), code in zip(windows, region_code(texts, path)):
        found += [f for f in log_formats("\n".join(code), first) if _reaches(f, on)]
    return found


def _windows(numbers: list[int]) -> list[list[int]]:
    """[first, last] line ranges covering each of the sorted `numbers` and CALL_LOOKBEHIND lines above it,
    ranges that touch or overlap merged."""
    windows: list[list[int]] = []
    for n in numbers:
        if windows and n - CALL_LOOKBEHIND <= windows[-1][1] + 1:
            windows[-1][1] = n
        else:
            windows.append([max(1, n - CALL_LOOKBEHIND), n])
    return windows


def _holding_windows(
    windows: list[list[int]], texts: list[list[str]], wanted: list[frozenset[str]]
) -> tuple[list[list[int]], list[list[str]]]:
    """The windows (and their lines) that hold a literal of `wanted`."""
    keep = [i for i, t in enumerate(texts) if _holds(t, wanted)]
    return [windows[i] for i in keep], [texts[i] for i in keep]


def _holds(lines: list[str], wanted: list[frozenset[str]]) -> bool:
    """Whether the lines (lower-cased) hold any literal of `wanted`."""
    return _holds_a_needle("\n".join(lines).lower(), wanted)


def _holds_a_needle(text: str, wanted: list[frozenset[str]]) -> bool:
    """Whether the (lower-case) text holds a needle of any pattern of `wanted`: else no line of it
    that a pattern matches can come from it."""
    return any(n in text for w in wanted for n in w)


def _reaches(fmt: LogFormat, lines: Container[int]) -> bool:
    """Whether the call of `fmt` spans one of `lines`."""
    return any(n in lines for n in range(fmt.line, fmt.last_line + 1))


@lru_cache(maxsize=65536)
def render(fmt: str) -> tuple[str, ...]:
    """Lines the format prints, once with short and once with multi-word sample values."""
    lines: list[str] = []
    for sample in _SAMPLES:
        text = _SPEC.sub(partial(_fill, sample), fmt)
        lines += [line for line in text.split("\n") if line.strip()]
    return tuple(lines)


def produces(fmt: str, pattern: LogPattern) -> bool:
    return any(pattern.regex.search(line) for line in render(fmt))


def matched(
    patterns: Iterable[LogPattern], formats: Iterable[LogFormat]
) -> list[tuple[LogPattern, LogFormat]]:
    """(pattern, format) pairs where the format prints a line the pattern matches (first format per pattern)."""
    formats = list(formats)
    pairs = []
    for pattern in patterns:
        fmt = next((f for f in formats if produces(f.text, pattern)), None)
        if fmt is not None:
            pairs.append((pattern, fmt))
    return pairs


def vanished(
    pairs: Iterable[tuple[LogPattern, LogFormat]], new: Iterable[str]
) -> list[tuple[LogPattern, LogFormat]]:
    """The matched pairs for which no format string at the new ref prints a matching line."""
    new = list(new)
    return [(p, f) for p, f in pairs if not _printed(p, new)]


def _printed(pattern: LogPattern, formats: list[str]) -> bool:
    """Whether one of the format strings prints a line the pattern matches."""
    return any(produces(text, pattern) for text in formats)


def log_draft(
    pattern: LogPattern,
    fmt: LogFormat,
    path: str,
    line: int | None,
    blame: tuple[tuple[int, int], ...],
    removed: tuple[str, str],
    nearest: str | None,
) -> Draft:
    sample = next(line for line in render(fmt.text) if pattern.regex.search(line))
    detail = (
        f"Ollama matches `{pattern.source}` against llama-server's output. At the old ref upstream printed "
        f"it with `{fmt.text.strip()!s}` (for example `{sample.strip()}`); no format string at the new ref "
        "produces a matching line any more."
    )
    if nearest is not None:
        detail += f"\n\nThe new format here is `{nearest.strip()}`."
    return Draft(
        "server",
        "high",
        f"Log line Ollama parses changed: `{pattern.source}` no longer matches",
        detail,
        path,
        line,
        blame,
        removed,
        (pattern.ref,),
    )


def _holding(
    changes: list[FileChange], patterns: list[LogPattern]
) -> tuple[list[FileChange], list[frozenset[str]] | None]:
    """The changes whose removed lines hold the literals every line a pattern matches must hold, and those
    literals (None, and every change, when some pattern has none): the others are never parsed."""
    known = [w for p in patterns if (w := needles(p.regex)) is not None]
    if len(known) != len(patterns):
        return changes, None
    return [c for c in changes if _holds_a_needle(c.changed_raw[1], known)], known


def _vanished_formats(
    change: FileChange, patterns: list[LogPattern], wanted: list[frozenset[str]] | None
) -> list[tuple[LogPattern, LogFormat]]:
    removed = sorted(n for s in change.significant for n in s.old_lines)
    pairs = matched(patterns, formats_on_lines(change.old_lines, removed, change.old_path or "", wanted))
    return vanished(pairs, [f.text for f in log_formats(change.new_code)]) if pairs else []


def _added_formats(changes: list[FileChange]) -> list[str]:
    """Format strings the bump added anywhere: a line that moved to another file still prints."""
    added = []
    for c in changes:
        if _adds_a_string(c):
            lines = {n for s in c.significant for n in s.new_lines}
            added += [f.text for f in log_formats(c.new_code) if _reaches(f, lines)]
    return added


def _adds_a_string(change: FileChange) -> bool:
    """Whether the change adds a line holding a string: only such a change can add a format string."""
    return bool(change.new_path and any('"' in line for line in change.added_raw))


def _vanished_draft(change: FileChange, pattern: LogPattern, fmt: LogFormat) -> Draft:
    span = _replacing_span(change, fmt.line)
    blame = ((span.new_start, span.new_start + span.new_count - 1),) if span else ()
    nearby = [f.text for f in log_formats(change.new_code) if span and f.line in span.new_lines]
    return log_draft(
        pattern,
        fmt,
        change.path,
        change.new_line(fmt.line),
        blame,
        (change.old_path or change.path, change.old_lines[fmt.line - 1].strip()),
        nearby[0] if nearby else None,
    )


def _replacing_span(change: FileChange, old_line: int) -> Span | None:
    """The first span that removes `old_line`, when it puts lines in its place."""
    span = next((s for s in change.spans if old_line in s.old_lines), None)
    return span if span is not None and span.new_count > 0 else None


def log_line_drafts(
    changes: list[FileChange], local: Mapping[str, str], runs: Callable[[str], bool]
) -> list[Draft]:
    """One draft per log line Ollama matches whose format string the bump removed from a program Ollama runs
    and put nowhere else."""
    lost_a_string = [c for c in changes if _loses_a_string(c, runs)]
    patterns = ollama_patterns(local) if lost_a_string else []
    if not patterns:
        return []
    found = _lost_formats(lost_a_string, patterns)
    if not found:
        return []
    elsewhere = _added_formats(changes)
    return [
        _vanished_draft(change, pattern, fmt)
        for change, pattern, fmt in found
        if not _printed(pattern, elsewhere)
    ]


def _lost_formats(
    changes: list[FileChange], patterns: list[LogPattern]
) -> list[tuple[FileChange, LogPattern, LogFormat]]:
    """(change, pattern, old format) for each format string a change removed that printed a line a pattern
    matches, with no format of that file at the new ref printing one."""
    candidates, wanted = _holding(changes, patterns)
    return [(c, p, f) for c in candidates for p, f in _vanished_formats(c, patterns, wanted)]


def _loses_a_string(change: FileChange, runs: Callable[[str], bool]) -> bool:
    """Whether the change removes a line holding a string from a file of a program Ollama runs."""
    return bool(change.old_path and runs(change.old_path) and any('"' in line for line in change.removed_raw))
