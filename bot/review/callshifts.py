"""Calls a carried patch makes whose arguments land in other parameters once upstream inserts one.

A parameter inserted before the last ones of a function, with a default, keeps every old call compiling
when the types line up: a call that passes arguments past the insertion now hands each of them to the
parameter before which it was meant to go. A patch's call that passes that far means something else,
silently. Only calls some added line of the patch is part of are the patch's own (upstream rewrites its own
calls, and the patch's context then fails to apply).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review import compat
from bot.review.changes import Draft, FileChange
from bot.review.cppapi import Declared

MAX_CALL = 4000  # characters of a call's argument list read before it is left unread
DECLARATION_REACH = 40  # lines above a changed line where the declaration it may be a parameter of starts
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_KEYWORDS = frozenset(
    [
        "if",
        "for",
        "while",
        "switch",
        "return",
        "sizeof",
        "alignof",
        "decltype",
        "catch",
        "defined",
        "static_cast",
        "const_cast",
        "reinterpret_cast",
        "dynamic_cast",
        "noexcept",
        "static_assert",
    ]
)
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
# what may stand right before a call's name: an expression starts there, not a declaration's type
_CALL_AFTER = re.compile(r"(?:^|[=(,;{}?!|+\-/<>]|(?<!:):|\breturn|\.)\s*$")


@dataclass(frozen=True)
class Insertion:
    """Parameters upstream inserted into a function before some of its old ones."""

    name: str
    old: Declared
    new: Declared
    at: int  # the index of the first inserted parameter
    count: int  # how many were inserted

    def accepts(self, arguments: int) -> bool:
        """Whether an old call with that many arguments went to the old declaration and passes the point."""
        required = sum(not p.endswith("=") for p in self.old.parameters)
        return self.at < arguments and required <= arguments <= len(self.old.parameters)


@dataclass(frozen=True)
class Call:
    """A call of a patch hunk's post-image: its arguments' patch lines and texts."""

    line: LocalRef  # the line naming the function
    arguments: tuple[tuple[LocalRef, str], ...]
    added: bool  # some line of the call is one the patch adds


def insertions(change: FileChange) -> list[Insertion]:
    """The functions the change inserts parameters into, by overload, with no overload keeping the old
    parameters."""
    old = [d for d in compat.declared(change.old_code_lines) if d.kind == "function"]
    new = [d for d in compat.declared_after(change) if d.kind == "function"]
    kept = {(d.qualified, d.parameters) for d in new}
    found = []
    for d in old:
        if (d.qualified, d.parameters) not in kept:
            found += _insertions_into(d, new)
    return found


def _insertions_into(old: Declared, new: list[Declared]) -> list[Insertion]:
    found = (_insertion(old, n) for n in new if n.qualified == old.qualified)
    return [i for i in found if i is not None]


def _insertion(old: Declared, new: Declared) -> Insertion | None:
    at = _inserted_at(old, new)
    return (
        None if at is None else Insertion(old.name, old, new, at, len(new.parameters) - len(old.parameters))
    )


def _inserted_at(old: Declared, new: Declared) -> int | None:
    """Where the new parameter list is the old one with new parameters put in before some old ones (each
    with its type and name), if it is."""
    before = list(zip(old.parameters, old.parameter_names))
    after = list(zip(new.parameters, new.parameter_names))
    count = len(after) - len(before)
    if count <= 0 or len(old.parameter_names) != len(old.parameters):
        return None
    for at in range(len(before)):
        if after[:at] == before[:at] and after[at + count :] == before[at:]:
            inserted = {name for _, name in after[at : at + count]}
            return at if not inserted & {name for _, name in before} else None
    return None


def patch_calls(patches: Sequence[tuple[str, object]]) -> Iterator[tuple[str, Call]]:
    """(function name, call) of every call in the post-image of the carried patches' hunks that some line
    the patch adds is part of."""
    for patch_path, patch in patches:
        for fp in getattr(patch, "files", []):
            for hunk in fp.hunks:
                found = _calls(patch_path, hunk)
                yield from ((n, call) for n, call in found if call.added and n not in _KEYWORDS)


def _calls(patch_path: str, hunk) -> Iterator[tuple[str, Call]]:
    post = _PostImage(patch_path, hunk)
    for m in _CALLED.finditer(post.text):
        spans = argument_spans(post.text, m.end())
        line_start = post.text.rfind("\n", 0, m.start()) + 1
        if spans is not None and _CALL_AFTER.search(post.text[line_start : m.start()]):
            last = spans[-1][1] if spans else m.end()
            arguments = tuple((post.ref(a), " ".join(post.text[a:b].split())) for a, b in spans)
            yield m[1], Call(post.ref(m.start()), arguments, post.adds(m.start(), last))


class _PostImage:
    """A hunk's lines after the patch (context and added), strings blanked, as one text."""

    def __init__(self, patch_path: str, hunk):
        self.path = patch_path
        self.rows = [
            (hunk.header_line + 1 + offset, line.kind == "+", line.text.decode("utf-8", "replace"))
            for offset, line in enumerate(hunk.lines)
            if line.kind in (" ", "+")
        ]
        self.text = "\n".join(_STRING.sub(blank_string, text) for _, _, text in self.rows)
        self.starts = list(itertools.accumulate((len(text) + 1 for _, _, text in self.rows), initial=0))

    def _row(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def ref(self, offset: int) -> LocalRef:
        """The patch line of an offset of the text."""
        return LocalRef(self.path, self.rows[self._row(offset)][0])

    def adds(self, start: int, end: int) -> bool:
        """Whether a line from `start` to `end` is one the patch adds."""
        return any(added for _, added, _ in self.rows[self._row(start) : self._row(end) + 1])


def blank_string(m: re.Match) -> str:
    """A string literal with its text blanked (its length kept): its commas and parentheses are no code."""
    return m[0][0] + " " * (len(m[0]) - 2) + m[0][-1]


def argument_spans(text: str, start: int) -> list[tuple[int, int]] | None:
    """The (start, end) offsets of each argument of the call whose `(` ends at `start` (blanks trimmed);
    None when the list does not close within MAX_CALL characters."""
    spans: list[tuple[int, int]] = []
    begin, closing = start, []
    for at in range(start, min(len(text), start + MAX_CALL)):
        ch = text[at]
        if ch in _OPENERS:
            closing.append(_OPENERS[ch])
        elif closing and ch == closing[-1]:
            closing.pop()
        elif not closing and ch in ",)":
            piece = text[begin:at]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                spans.append((begin + lead, begin + len(piece.rstrip())))
            if ch == ")":
                return spans
            begin = at + 1
    return None


def shift_drafts(changes: Sequence[FileChange], patches: Sequence[tuple[str, object]]) -> list[Draft]:
    """A high item per call of a carried patch whose arguments a parameter upstream inserted shifts: only the
    changes near a declaration of a function the patches call are read for insertions."""
    calls = list(patch_calls(patches))
    if not calls:
        return []
    by_name = _insertions_near(changes, {n for n, _ in calls})
    drafts = []
    for name, call in calls:
        hit = _one_function(by_name.get(name, []), call)
        drafts += [_draft(*hit, call)] if hit else []
    return drafts


def _insertions_near(
    changes: Sequence[FileChange], names: set[str]
) -> dict[str, list[tuple[FileChange, Insertion]]]:
    """Function name -> the insertions into it of the changes near a declaration of one of the names."""
    named = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\s*\(")
    by_name: dict[str, list[tuple[FileChange, Insertion]]] = {}
    for change in (c for c in changes if c.old_path and c.new_path and _near(c, named)):
        for insertion in insertions(change):
            by_name.setdefault(insertion.name, []).append((change, insertion))
    return by_name


def _near(change: FileChange, named: re.Pattern) -> bool:
    """Whether a changed part of the old code lies within a declaration's reach below a line naming one of
    the called functions (a parameter list runs over many lines)."""
    lines = change.old_code_lines
    for span in change.significant:
        start = max(0, span.old_start - 1 - DECLARATION_REACH)
        if any(_declares(line, named) for line in lines[start : span.old_start + span.old_count]):
            return True
    return False


def _declares(line: str, named: re.Pattern) -> bool:
    """Whether the line names one of the functions where an expression cannot start (after a type, as a
    declaration does), not as a call."""
    return any(
        line[: m.start()].strip() and not _CALL_AFTER.search(line[: m.start()]) for m in named.finditer(line)
    )


def _one_function(
    found: list[tuple[FileChange, Insertion]], call: Call
) -> tuple[FileChange, Insertion] | None:
    """The insertion into the one function whose old overload the call took (its declaration and its
    definition alike; a header's first); None when the call's arguments fit none or several."""
    hits = sorted(
        ((c, i) for c, i in found if i.accepts(len(call.arguments))),
        key=lambda hit: not hit[0].path.endswith(compat.HEADERS),
    )
    functions = {(i.old.qualified, i.old.parameters, i.new.parameters) for _, i in hits}
    return hits[0] if len(functions) == 1 else None


def _draft(change: FileChange, insertion: Insertion, call: Call) -> Draft:
    old, new, at = insertion.old, insertion.new, insertion.at
    moved = [
        f"{code_span(text)} now goes to {code_span(new.parameter_names[i])} (was {code_span(old.parameter_names[i])})"
        for i, (_, text) in enumerate(call.arguments)
        if i >= at
    ]
    inserted = ", ".join(code_span(n) for n in new.parameter_names[at : at + insertion.count])
    detail = (
        f"Ollama's patch calls {code_span(old.qualified)} with {len(call.arguments)} arguments "
        f"({code_span(f'{call.line.path}:{call.line.line}')}). Upstream inserted {inserted} before "
        f"{code_span(old.parameter_names[at])} ({code_span(f'{change.path}:{new.line}')}), with a default, so the call still "
        f"compiles: {'; '.join(moved[:4])}{'; ...' if len(moved) > 4 else ''}. Pass the arguments by their new "
        "positions in the patch."
    )
    refs = tuple(dict.fromkeys([call.line, *(ref for ref, _ in call.arguments[at:])]))
    return Draft(
        compat.area(old.name, change.path),
        "high",
        f"Arguments of Ollama's patch's call to {code_span(old.name)} shift: upstream inserted {inserted}",
        detail,
        change.path,
        new.line,
        blame=((new.line, new.line),),
        local_refs=refs,
        cause=f"call-shift:{old.qualified}",
    )
