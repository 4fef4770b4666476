"""An `#error` added to an upstream header that Ollama's compatibility sources include (directly or through
other headers): every build that compiles them stops there, when the preprocessor branch around it is taken
(`#if defined(LLAMA_SHARED) && !defined(LLAMA_BUILD)`), before anything else the review reads can matter."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run

BRANCH_REACH = 200  # lines above an `#error` read for the conditional around it
REFS_SHOWN = 6
MAX_SHOWN = 160  # characters of a message or condition shown
_ERROR = re.compile(r"^\s*#\s*error\b\s*(.*)$")
_OPENS = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b\s*(.*)$")
_CLOSES = re.compile(r"^\s*#\s*endif\b")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


@check(
    "compat.header-errors", area="build", inputs=("diff", "ollama-build"), applies=lambda run: run.compat_used
)
def header_errors(run: Run) -> list[Draft]:
    drafts = []
    for change in run.built_c_changes():
        if change.new_path in run.consumers.headers:
            for line, message in added_errors(change):
                drafts.append(
                    _draft(
                        change,
                        line,
                        message,
                        _condition(change.new_code_lines, line),
                        _includers(run, change.path),
                    )
                )
    return drafts


def added_errors(change: FileChange) -> list[tuple[int, str]]:
    """The `#error` lines a change adds, with their messages."""
    return [
        (line, m[1].strip())
        for span in change.significant
        for line, code in change.added_code(span)
        if (m := _ERROR.match(code))
    ]


def _condition(lines: list[str], line: int) -> str:
    """The condition of the innermost conditional directive open at the line (`#ifdef X` as `defined(X)`), ""
    when none is."""
    depth = 0
    for n in range(line - 1, max(line - BRANCH_REACH, 0), -1):
        text = lines[n - 1]
        if _CLOSES.match(text):
            depth += 1
        elif m := _OPENS.match(text):
            if depth == 0:
                kind, condition = m[1], " ".join(m[2].split())
                return {"ifdef": f"defined({condition})", "ifndef": f"!defined({condition})"}.get(
                    kind, condition
                )
            depth -= 1
    return ""


def _includers(run: Run, header: str) -> tuple[LocalRef, ...]:
    """The lines of Ollama's compat sources that include a header of that file name (else their first lines:
    they reach it through another header)."""
    name = posixpath.basename(header)
    found = []
    for path in run.consumers.compat_sources:
        text = run.local.get(path) or ""
        found += [
            LocalRef(path, text.count("\n", 0, m.start()) + 1)
            for m in _INCLUDE.finditer(text)
            if posixpath.basename(m[1]) == name
        ]
    return tuple(found[:REFS_SHOWN]) or tuple(
        LocalRef(p, 1) for p in run.consumers.compat_sources[:REFS_SHOWN]
    )


def _draft(change: FileChange, line: int, message: str, condition: str, refs: tuple[LocalRef, ...]) -> Draft:
    header = code_span(change.path)
    where = f" where {code_span(condition[:MAX_SHOWN])} holds" if condition else ""
    return Draft(
        "build",
        "medium" if condition else "high",
        f"{header}, which Ollama's compat sources include, now stops the build{where}",
        f"Upstream added {code_span(('#error ' + message)[:MAX_SHOWN])} ({code_span(f'{change.path}:{line}')})"
        f"{where}. Ollama's compatibility sources include the header, so a build that compiles them fails there"
        + (
            ": check the condition against the definitions of the targets that compile them."
            if condition
            else "."
        ),
        change.path,
        line,
        ((line, line),),
        local_refs=refs,
        cause=f"header-error:{change.path}:{line}",
    )
