"""A name or a line that a pull request or its upstream controls, written into Markdown as data: one code
span, or a code block, whose fence no backtick run in the text can close, and nothing in it that could
start a line. Every layer that writes Markdown (the review's details, the engine's messages, the renderers)
writes names with these."""

from __future__ import annotations

import re
from collections.abc import Iterable

_BACKTICKS = re.compile(r"`+")


def one_line(text: str) -> str:
    """`text` with each character that is not printable (a line break, a tab, a control or format
    character) written as its escape, so nothing in it is hidden or starts a line."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def code_span(text: object) -> str:
    """`text` as one code span, whatever backticks it holds: HTML and mentions in a code span are inert."""
    flat = one_line(str(text))
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(flat)), default=0) + 1)
    # a span losing one space at each end when both have one, a span starting or ending with a backtick is
    # padded with a space: what it shows is `text` exactly
    ends = flat[:1] + flat[-1:]
    pad = " " if "`" in ends or (ends == "  " and flat.strip()) else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def fence(lines: Iterable[str]) -> str:
    """A code block's fence: longer than any backtick run in its `lines`, which so cannot close it."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def code_block(lines: list[str], info: str = "") -> str:
    """`lines` as one fenced code block (`info` its language) that none of them can close."""
    mark = fence(lines)
    return f"{mark}{info}\n" + "\n".join(lines) + f"\n{mark}"
