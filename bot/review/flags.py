"""llama-server flags: the option table of upstream's `common/arg.cpp` at both refs, against the
flags Ollama starts upstream programs with (the contract inventory's launch settings).

A flag that disappears makes llama-server refuse to start; one that is
deprecated, replaced, or no longer offered to the server will soon; a
changed value set, default or help can change behaviour silently.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.cache import facts
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.source import LineIndex, split_args, string_value

_ENTRY = re.compile(r"\bcommon_arg\s*\(")
_NAMES_GROUP = re.compile(r'\{\s*"-[^"]*"(?:\s*,\s*"-[^"]*")*\s*,?\s*\}')
_DEPRECATED = re.compile(
    r"(?i)\bdeprecated\b|\bno longer (?:used|supported)\b|\bis ignored\b|\bhas no effect\b"
    r"|\breplaced by\b|\bremoved\b|\buse\s+'?(--?[\w-]+)'?\s+instead\b"
)
_TAKES_OVER = re.compile(r"(?i)\breplac|\binstead\b|\bsupersed|\bdeprecat")
_SERVER = ("LLAMA_EXAMPLE_SERVER", "LLAMA_EXAMPLE_COMMON")


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]  # every spelling of the option, negations included
    value_hint: str
    help: str  # the help expression: literal text plus the code that fills its placeholders
    examples: tuple[str, ...]  # set_examples(); empty = every program
    excludes: tuple[str, ...]
    line: int
    handler: str = ""  # the lambda that reads the value
    help_code: str = ""  # the help expression as written
    env: tuple[str, ...] = ()  # set_env(): the environment variable that sets it too
    end_line: int = 0  # the last line of its entry: a change anywhere in the entry is a change of the flag

    @property
    def lines(self) -> tuple[tuple[int, int], ...]:
        """The entry's line range, for crediting the commits that changed it."""
        return ((self.line, max(self.line, self.end_line)),)

    @property
    def deprecated(self) -> bool:
        return bool(_DEPRECATED.search(self.help))

    @property
    def for_server(self) -> bool:
        return (
            not self.examples or any(e in self.examples for e in _SERVER)
        ) and "LLAMA_EXAMPLE_SERVER" not in self.excludes


def _help_text(expr: str) -> str:
    """Help as words: literals joined, code normalised, so that re-wrapping a string changes nothing."""
    parts = []
    for m in re.finditer(r'"((?:\\.|[^"\\\n])*)"|[^\s"]+', expr):
        parts.append((string_value(m[0]) or "") if m[1] is not None else m[0])
    return " ".join(" ".join(parts).split())


def _chain(code: str, at: int, call: str) -> tuple[str, ...]:
    """Enum names given to `.set_examples({...})` / `.set_excludes({...})` after an entry."""
    m = re.search(r"\.\s*" + call + r"\s*\(\s*\{([^}]*)\}", _tail(code, at))
    return tuple(sorted(re.findall(r"\w+", m[1]))) if m else ()


def _tail(code: str, at: int) -> str:
    """The calls chained after an entry, up to the end of its statement."""
    return code[at : at + 600].split(";", 1)[0]


TABLE = facts.Extractor("flag-table", 1, __name__)


@lru_cache(maxsize=4)
@facts.by_content(TABLE)
def flag_table(code: str) -> dict[str, Flag]:
    """Every flag of arg.cpp's `common_arg(...)` entries (comment-free code), by spelling (read once per text:
    the flag, value and default checks all ask)."""
    index = LineIndex(code)
    table: dict[str, Flag] = {}
    for m in _ENTRY.finditer(code):
        flag = _entry_flag(code, m.end() - 1, index.line(m.start()), index)
        if flag is None:
            continue
        for name in flag.names:
            table.setdefault(name, flag)
    return table


def _entry_flag(code: str, paren: int, line: int, index: LineIndex) -> Flag | None:
    """The flag of the `common_arg(` entry whose parenthesis opens at `paren`; None for one without names."""
    args, end = split_args(code, paren)
    names, rest = _names_and_rest(args)
    if not names:
        return None
    hint = string_value(rest[0]) or rest[0] if len(rest) > 1 else ""
    return Flag(
        tuple(names),
        hint,
        _help_text(rest[-1]) if rest else "",
        _chain(code, end, "set_examples"),
        _chain(code, end, "set_excludes"),
        line,
        next((a for a in args if a.startswith("[")), ""),
        rest[-1] if rest else "",
        tuple(re.findall(r'\.\s*set_env\s*\(\s*"([^"]+)"', _tail(code, end))),
        index.line(max(paren, end - 1)),
    )


def _names_and_rest(args: list[str]) -> tuple[list[str], list[str]]:
    """An entry's spellings (its leading `{"-x", "--xx"}` groups) and the arguments after them, up to the
    handler lambda: the value hint (when there are two) and the help."""
    names: list[str] = []
    rest: list[str] = []
    for arg in args:
        if not rest and _NAMES_GROUP.fullmatch(arg):
            names += re.findall(r'"(-[^"]*)"', arg)
        elif arg.startswith("["):
            break
        else:
            rest.append(arg)
    return names, rest


def _successor(
    flag: Flag, name: str, new: Mapping[str, Flag], old: Mapping[str, Flag], gone: bool
) -> str | None:
    """A flag that takes over `name`'s job: the one its deprecation text names, or a new flag that says it
    replaces `name` (for a flag that is `gone`, also one that merely names it or has nearly its help)."""
    return _named_successor(flag, new) or _new_flag_taking_over(flag, name, new, old, gone)


def _named_successor(flag: Flag, new: Mapping[str, Flag]) -> str | None:
    """The other, existing flag that `flag`'s deprecation text says to use instead."""
    m = _DEPRECATED.search(flag.help)
    if m and m[1] and m[1] in new and m[1] not in flag.names:
        return m[1]
    return None


def _new_flag_taking_over(
    flag: Flag, name: str, new: Mapping[str, Flag], old: Mapping[str, Flag], gone: bool
) -> str | None:
    """The first flag new upstream whose help says it takes over `name`'s job."""
    mention = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
    for other, f in new.items():
        if other not in old and _takes_over(flag, f, mention, gone):
            return other
    return None


def _takes_over(flag: Flag, candidate: Flag, mention: re.Pattern[str], gone: bool) -> bool:
    """Whether `candidate`'s help names the flag as the one it replaces; for a flag that is `gone`, naming
    it at all, or help nearly the same as the flag's, is enough."""
    if mention.search(candidate.help) and (gone or _TAKES_OVER.search(candidate.help)):
        return True
    return gone and len(flag.help) > 20 and _similar_help(flag.help, candidate.help)


def _similar_help(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b).ratio() > 0.8


def unread_table_draft(
    change: FileChange, new_commit: str, passed: Mapping[str, Sequence[LocalRef]]
) -> Draft:
    """One item where the new ref holds no argument table the review can read: the flags go unchecked."""
    return Draft(
        "server",
        "info",
        f"llama-server's flags not checked: no argument table found at {code_span(new_commit[:12])}",
        f"At the old ref {code_span(change.old_path or '')} defined the flags Ollama passes; at the new ref no changed "
        "file holds entries of that form. Check by hand that every flag Ollama passes is still taken.",
        change.old_path or "",
        None,
        local_refs=tuple(dict.fromkeys(r for refs in passed.values() for r in refs)),
    )


def passed_or_set(
    passed: Mapping[str, Sequence[LocalRef]], env: Mapping[str, Sequence[LocalRef]], table: Mapping[str, Flag]
) -> dict[str, tuple[LocalRef, ...]]:
    """The flags Ollama passes, and those whose entry's environment name it sets (setting
    `LLAMA_ARG_CTX_SIZE` is passing `--ctx-size`), each with every place."""
    found = {name: tuple(refs) for name, refs in passed.items()}
    for flag in dict.fromkeys(table.values()):
        refs = tuple(r for name in flag.env for r in env.get(name, ()))
        if refs:
            name = next((n for n in flag.names if n.startswith("--")), flag.names[0])
            found[name] = tuple(dict.fromkeys(found.get(name, ()) + refs))
    return found


def flag_drafts(
    old: Mapping[str, Flag],
    new: Mapping[str, Flag],
    passed: Mapping[str, Sequence[LocalRef]],
    where_now: Callable[[int], int | None],
    path: str,
) -> list[Draft]:
    """Findings for the flags Ollama passes that upstream removed, deprecated, replaced or changed."""
    drafts = []
    for name in sorted(passed):
        if name not in old:
            continue  # not an upstream flag at the old ref (or not a flag at all)
        refs = tuple(passed[name])
        before = old[name]
        after = new.get(name)
        if after is None:
            successor = _successor(before, name, new, old, gone=True)
            drafts.append(_removed_draft(name, before, successor, refs, path, where_now(before.line)))
            continue
        draft = _changed_draft(name, before, after, _successor(after, name, new, old, gone=False), refs, path)
        if draft is not None:
            drafts.append(draft)
    return drafts


def _removed_draft(
    name: str, before: Flag, successor: str | None, refs: tuple[LocalRef, ...], path: str, line: int | None
) -> Draft:
    """A flag Ollama passes that is gone: llama-server refuses to start."""
    return Draft(
        "server",
        "high",
        f"llama-server flag {name} was removed; Ollama passes it",
        f"{code_span(name)} is gone from upstream's option table"
        + (f"; {code_span(successor)} takes over its job" if successor else "")
        + ". llama-server rejects unknown flags, so the runner fails to start.",
        path,
        line,
        removed=(path, f'"{name}"'),
        local_refs=refs,
        cause=f"flag:{name}",
    )


def _changed_draft(
    name: str, before: Flag, after: Flag, successor: str | None, refs: tuple[LocalRef, ...], path: str
) -> Draft | None:
    """The first of: deprecated or replaced, no longer offered to the server, changed value set or help."""
    if (after.deprecated and not before.deprecated) or successor:
        return _deprecated_draft(name, after, successor, refs, path)
    if before.for_server and not after.for_server:
        return _not_for_server_draft(name, after, refs, path)
    if (before.value_hint, before.help) != (after.value_hint, after.help):
        return _value_draft(name, before, after, refs, path)
    return None


def _deprecated_draft(
    name: str, after: Flag, successor: str | None, refs: tuple[LocalRef, ...], path: str
) -> Draft:
    return Draft(
        "server",
        "high",
        f"llama-server flag {name} is deprecated or replaced; Ollama passes it",
        f'Upstream\'s help for {code_span(name)} now reads: "{after.help}"'
        + (f"\n\n{code_span(successor)} takes over its job." if successor else ""),
        path,
        after.line,
        after.lines,
        local_refs=refs,
    )


def _not_for_server_draft(name: str, after: Flag, refs: tuple[LocalRef, ...], path: str) -> Draft:
    return Draft(
        "server",
        "high",
        f"llama-server no longer accepts flag {name}; Ollama passes it",
        f"{code_span(name)} is now limited to {', '.join(after.examples) or 'other programs'}.",
        path,
        after.line,
        after.lines,
        local_refs=refs,
    )


def _value_draft(name: str, before: Flag, after: Flag, refs: tuple[LocalRef, ...], path: str) -> Draft:
    """A changed value set or help (which holds the default)."""
    what = [
        w
        for w, a, b in (
            ("value set", before.value_hint, after.value_hint),
            ("default or help", before.help, after.help),
        )
        if a != b
    ]
    return Draft(
        "server",
        # Ollama passes the flag with its value: only a changed value set can refuse what it asks for
        "medium" if before.value_hint != after.value_hint else "info",
        f"llama-server flag {name} changed its {' and '.join(what)}",
        f"Was: {code_span(before.value_hint)} {before.help}\n\nNow: {code_span(after.value_hint)} {after.help}",
        path,
        after.line,
        after.lines,
        local_refs=refs,
    )
