"""Text a pull request or its upstream controls (file names, refs, titles, messages, commit subjects),
written into Markdown as data: a name as one code span, free text as one line whose HTML, links and
mentions are inert. Nothing such a text holds can start a line, a box, a table cell or a comment.
"""

from __future__ import annotations

import html
import re

from bot.markup import code_span as code
from bot.markup import one_line
from bot.model import Commit

_BACKTICKS = re.compile(r"`+")
# outside code spans: what could open HTML, a comment, a link or image, an entity, emphasis, a mention, or
# a code span with a backtick of the text around
_INERT = str.maketrans(
    {
        "\\": "\\\\",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "[": "\\[",
        "]": "\\]",
        "*": "\\*",
        "~": "\\~",
        "`": "\\`",
        "@": "@&#8203;",
    }
)
_EMPHASIS = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # `_` inside a word emphasises nothing


def code_cell(text: str) -> str:
    """`code` for a table cell: GitHub splits cells at a `|` even inside a code span unless escaped."""
    return code(text).replace("|", "\\|")


def html_text(text: str) -> str:
    """`text` for an HTML element (a `<summary>`, where Markdown is not read): escaped, mentions inert."""
    return html.escape(one_line(text)).replace("@", "@&#8203;")


def _spans(text: str) -> list[tuple[bool, str]]:
    """`text` cut into (is a code span, piece): a backtick run opens a span closed by the next run of its
    length, and is plain text when none follows."""
    pieces: list[tuple[bool, str]] = []
    at = plain_from = 0
    while (run := _BACKTICKS.search(text, at)) is not None:
        close = re.compile(f"(?<!`){run[0]}(?!`)").search(text, run.end())
        if close is None:
            at = run.end()
            continue
        pieces += [(False, text[plain_from : run.start()]), (True, text[run.start() : close.end()])]
        at = plain_from = close.end()
    return [*pieces, (False, text[plain_from:])]


_COMMENT = re.compile(r"[ \t]*<!--.*?-->", re.DOTALL)
_FOLD = re.compile(r"^([ \t]*)<details><summary>(.*?)</summary>[ \t]*$", re.MULTILINE)
_TAG = re.compile(r"</?(?:details|sub)>")


def terminal_text(markdown: str) -> str:
    """A text rendered for GitHub, for a terminal: its HTML comments (ids, markers) gone, a folded section's
    summary a line of its own, no tags; the rest is Markdown a person reads as it is."""
    text = _TAG.sub("", _FOLD.sub(r"\1\2:", _COMMENT.sub("", markdown)))
    return re.sub(r"\n{3,}", "\n\n", text)


def plain(text: str) -> str:
    """Free text (which may hold code spans) as one line of Markdown: outside its code spans, HTML,
    entities, links and mentions are escaped; the code spans stay as they are, where all of it is inert."""
    return "".join(
        piece if is_code else _EMPHASIS.sub(r"\\_", piece.translate(_INERT))
        for is_code, piece in _spans(one_line(text))
    )


def plain_cell(text: str) -> str:
    """`plain` for a table cell: every `|` escaped, in a code span too."""
    return plain(text).replace("|", "\\|")


def subject(commit: Commit) -> str:
    """A commit's subject as inert text, its `(#1234)` linked to the upstream pull request."""
    base = commit.url.split("/commit/")[0]
    return re.sub(r"\(#(\d+)\)", lambda m: f"([#{m[1]}]({base}/pull/{m[1]}))", plain(commit.subject))
