"""What Ollama's build relies on of upstream's build, checked at both refs: the targets it names (`targets`),
and the packages upstream's build must find with Ollama's settings (`lookups`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from bot.cache import facts
from bot.lang import cmakelang, syntax
from bot.model import LocalRef
from bot.review import cmake, lookups, targets
from bot.review.changes import Draft, FileChange
from bot.review.consumers.contracts.build import build_items
from bot.review.consumers.upstream_build import package_lookups
from bot.review.source import glob_match

_CONDITIONS = syntax.pattern("cmake", "(if_condition) @i")

if TYPE_CHECKING:
    from bot.review.run import Run


def build_contract_drafts(run: Run) -> list[Draft]:
    old_texts, new_texts = run.cmake_texts
    drafts = []
    old_targets, new_targets = targets.defined(old_texts), targets.defined(new_texts)
    lost = targets.lost_targets(old_targets, new_targets)
    if lost:
        used: dict[str, tuple[LocalRef, ...]] = {}
        for i in build_items(run.local, list(run.local)):
            if i.kind == "target":
                used[i.name] = used.get(i.name, ()) + i.refs
        drafts += targets.target_drafts(lost, old_targets, new_targets, used, run.where_now)
    if _changes_lookups(run):
        old = package_lookups(old_texts, list(old_texts), run.consumers.options)
        new = package_lookups(new_texts, list(new_texts), run.consumers.options)
        drafts += lookups.required_drafts(old, new, cmake.ollama_mentions(run.local))
    return drafts


def _changes_lookups(run: Run) -> bool:
    """Whether a changed CMake file can change what `find_package()` Ollama's build runs: a changed line that
    looks for a package or adds a directory, or a changed `if`/`elseif`/`else` of a block that looks for one."""
    return any(
        glob_match(c.path, cmake.CMAKE_FILES) and c.significant and _touches_a_lookup(c) for c in run.changes
    )


def _touches_a_lookup(change: FileChange) -> bool:
    if re.search(r"(?i)\b(?:find_package|add_subdirectory)\s*\(", change.changed_raw[0]):
        return True
    sides = [
        (change.old_code, {n for s in change.spans for n in s.old_lines}),
        (change.new_code, {n for s in change.spans for n in s.new_lines}),
    ]
    return any("find_package" in code and _guards_a_lookup(code, lines) for code, lines in sides)


def _guards_a_lookup(code: str, changed: set[int]) -> bool:
    """Whether one of the `changed` lines is the condition of a block whose body looks for a package."""
    return not _lookup_guards(code).isdisjoint(changed)


# The lines of a CMake file's conditions over package lookups depend on its text alone: kept by content.
LOOKUP_GUARDS = facts.Extractor("cmake-lookup-guards", 1, __name__)


@lru_cache(maxsize=64)
@facts.by_content(LOOKUP_GUARDS)
def _lookup_guards(code: str) -> frozenset[int]:
    """The lines of the `if()`/`elseif()`/`else()` heads of every block whose body looks for a package."""
    lines: set[int] = set()
    for block in syntax.captures(_CONDITIONS, cmakelang.parse(code)).get("i", []):
        if "find_package" in syntax.node_text(block).lower():
            heads = (c for c in block.children if c.type in ("if_command", "elseif_command", "else_command"))
            lines.update(cmakelang.line(head) for head in heads)
    return frozenset(lines)
