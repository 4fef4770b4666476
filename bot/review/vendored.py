"""Ollama's copies of upstream files (mlx-c's headers, which its Go bindings compile against): which of them
no longer equal the upstream file at the new pin with the carried patches applied."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from bot.model import Finding, LocalRef

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
    shown = "".join(lines[:MAX_DIFF_LINES])
    cut = f"\n… {len(lines) - MAX_DIFF_LINES} more lines" if len(lines) > MAX_DIFF_LINES else ""
    return f"<details><summary><code>{c.name}</code></summary>\n\n```diff\n{shown}```{cut}\n\n</details>"


def drift_finding(pin: str, directory: str, changed: list[Copy]) -> Finding | None:
    """One high finding listing each copy in `directory` that differs from its upstream file, among the
    files the bump changed; None when every copy still matches."""
    drifted = [c for c in changed if c.copy != c.upstream and not (c.copy is None and c.upstream is None)]
    if not drifted:
        return None
    names = ", ".join(f"`{c.name}`" for c in drifted)
    count = len(drifted)
    states = [
        f"- `{directory}/{c.name}`: "
        + (
            "gone upstream, still vendored"
            if c.upstream is None
            else "new upstream, not vendored"
            if c.copy is None
            else "differs"
        )
        for c in drifted
    ]
    return Finding(
        "build",
        "high",
        f"{count} vendored {pin} file{'s' if count > 1 else ''} in `{directory}` differ{'s' if count == 1 else ''} "
        f"from {pin} at the new pin: {names}",
        f"Ollama compiles against its copies in `{directory}`, and the bump (or its carried patches) changed "
        f"the {pin} files they copy. Refresh the copies (the build's vendoring step copies them from {pin}'s "
        "sources) and regenerate the bindings that wrap them.\n\n"
        + "\n".join(states)
        + "\n\n"
        + "\n\n".join(_diff(directory, c) for c in drifted),
        drifted[0].upstream_path,
        None,
        local_refs=[
            LocalRef(f"{directory}/{c.name}", _first_difference(c.copy, c.upstream))
            for c in drifted
            if c.copy
        ],
    )
