"""Upstream declarations Ollama's compatibility code uses (in the headers it includes) that the diff
removes, re-kinds or changes."""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING

from bot.review import compat, hookparams
from bot.review.changes import Draft, FileChange
from bot.review.checks import check

if TYPE_CHECKING:
    from bot.review.run import Run

_WORD = re.compile(r"\b[A-Za-z_]\w{2,}")


@check(
    "compat.declarations", area="models", inputs=("diff", "ollama-build"), applies=lambda run: run.compat_used
)
def declarations(run: Run) -> list[Draft]:
    """What became of the declarations the compat code uses, in the built headers whose removed lines name
    one."""
    uses = run.consumers.names
    drafts = []
    for change in run.built_c_changes():
        if change.old_path in run.consumers.headers and _words(change.removed_raw) & uses.keys():
            drafts += compat.compat_drafts(
                uses,
                change,
                partial(_declared_elsewhere, run, skip=change),
                called=partial(_called_everywhere, run),
                reaches=hookparams.field_reach(run.hook_names, uses),
            )
    return drafts


def _called_everywhere(run: Run, name: str) -> bool:
    """Whether every Ollama line that reaches `name` as a member (`x.name`, `x->name`) calls it: a bare
    `name` in a function body is a local or another class's member, which a field of an upstream struct
    turned function does not touch."""
    member = re.compile(rf"(?:\.|->)\s*{re.escape(name)}\b(\s*\()?")
    found = []
    for ref in run.consumers.names.get(name, ()):
        text = run.local.get(ref.path) or ""
        line = text.split("\n")[ref.line - 1] if ref.line <= text.count("\n") + 1 else ""
        found += [m[1] is not None for m in member.finditer(line)]
    return bool(found) and all(found)


def _declared_elsewhere(run: Run, name: str, skip: FileChange) -> set[str]:
    """The kinds of declaration of `name` that the other changes' added lines make."""
    kinds: set[str] = set()
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for c in run.c_changes:
        if c is not skip and c.new_path and any(pattern.search(line) for line in c.added_raw):
            kinds |= _added_kinds(c, name)
    return kinds


def _words(lines: list[str]) -> set[str]:
    """The names (three characters or more) the lines spell."""
    return set(_WORD.findall("\n".join(lines)))


def _added_kinds(change: FileChange, name: str) -> set[str]:
    """The kinds of declaration of `name` on the lines a change adds."""
    added = {n for s in change.spans for n in s.new_lines}
    return {
        kind for line, kind, n in compat.declarations(change.new_code_lines) if n == name and line in added
    }
