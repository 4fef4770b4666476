"""Ollama's copies of upstream files (mlx-c's headers, which its Go bindings compile against): which of them
no longer equal the upstream file at the new pin with the carried patches applied."""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.markup import code_block, code_span
from bot.model import Commit, Finding, LocalRef

MAX_DIFF_LINES = 80  # per file, folded


@dataclass(frozen=True)
class Copy:
    name: str  # the file's name inside the copied directory
    upstream_path: str
    upstream: bytes | None  # None: gone upstream
    copy: bytes | None  # None: Ollama has no copy


def _lines(data: bytes | None) -> list[str]:
    return (data or b"").decode("utf-8", "replace").splitlines(keepends=True)


def _first_difference(copy: bytes | None, upstream: bytes | None) -> int:
    for number, (a, b) in enumerate(zip(_lines(copy), _lines(upstream)), 1):
        if a != b:
            return number
    return min(len(_lines(copy)), len(_lines(upstream))) + 1


def _diff(directory: str, c: Copy) -> str:
    lines = list(
        difflib.unified_diff(
            _lines(c.copy), _lines(c.upstream), f"a/{directory}/{c.name}", f"b/{c.upstream_path}"
        )
    )
    shown = code_block([line.removesuffix("\n") for line in lines[:MAX_DIFF_LINES]], "diff")
    cut = f"\n… {len(lines) - MAX_DIFF_LINES} more lines" if len(lines) > MAX_DIFF_LINES else ""
    return f"<details><summary><code>{html.escape(c.name)}</code></summary>\n\n{shown}{cut}\n\n</details>"


def _same_code(a: bytes | None, b: bytes | None) -> bool:
    """Whether two copies differ in whitespace only (a blank line, re-indentation): the bindings generated
    from either are the same."""
    return a is not None and b is not None and re.sub(rb"\s+", b"", a) == re.sub(rb"\s+", b"", b)


def drift_finding(
    pin: str,
    directory: str,
    changed: list[Copy],
    commits_of: Callable[[str], list[Commit]] = lambda path: [],
) -> Finding | None:
    """One high finding listing each copy in `directory` that differs from its upstream file in more than
    whitespace, among the files the bump changed, with the upstream commits that changed them
    (`commits_of` an upstream path); None when every copy still matches."""
    drifted = [c for c in changed if c.copy != c.upstream and not _same_code(c.copy, c.upstream)]
    if not drifted:
        return None
    return Finding(
        "build",
        "high",
        _drift_title(pin, directory, drifted),
        f"Ollama compiles against its copies in {code_span(directory)}, and the bump (or its carried patches) changed "
        f"the {pin} files they copy. Refresh the copies (the build's vendoring step copies them from {pin}'s "
        "sources) and regenerate the bindings that wrap them.\n\n"
        + "\n".join(f"- {code_span(f'{directory}/{c.name}')}: {_state(c)}" for c in drifted)
        + "\n\n"
        + "\n\n".join(_diff(directory, c) for c in drifted),
        drifted[0].upstream_path,
        None,
        _commits(drifted, commits_of),
        local_refs=[_first_drift(directory, c) for c in drifted if c.copy],
        check="build.vendored-copies",
    )


def _commits(drifted: list[Copy], commits_of: Callable[[str], list[Commit]]) -> list[Commit]:
    """The upstream commits that changed the drifted files, each once."""
    return list({c.sha: c for d in drifted for c in commits_of(d.upstream_path)}.values())


def _first_drift(directory: str, c: Copy) -> LocalRef:
    """Where Ollama's copy first differs from the upstream file."""
    return LocalRef(f"{directory}/{c.name}", _first_difference(c.copy, c.upstream))


def _drift_title(pin: str, directory: str, drifted: list[Copy]) -> str:
    names = ", ".join(code_span(c.name) for c in drifted)
    count = len(drifted)
    files = "files" if count > 1 else "file"
    differ = "differs" if count == 1 else "differ"
    return f"{count} vendored {pin} {files} in {code_span(directory)} {differ} from {pin} at the new pin: {names}"


def _state(c: Copy) -> str:
    """How a drifted copy stands against its upstream file."""
    if c.upstream is None:
        return "gone upstream, still vendored"
    if c.copy is None:
        return "new upstream, not vendored"
    return "differs"
