"""CMake variables Ollama sets that a CMake file of its build stops reading: the setting no longer reaches
what it configured there (a backend's CMake that stops forwarding an option as a compile definition), while
the option itself, still declared elsewhere, looks untouched."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from tree_sitter import Node

from bot.lang import cmakelang, syntax
from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange

_EXPANDED = re.compile(r"\$\{(\w+)\}")
_CONDITION = re.compile(r"^[ \t]*(?:if|elseif|while)[ \t]*\((.*)\)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_NAME = re.compile(r"(?<![\w${])([A-Za-z_]\w*)(?![\w}])")


@lru_cache(maxsize=64)
def reads(code: str) -> Counter[str]:
    """The variables a comment-free CMake text reads, with how often: `${X}` anywhere, and the bare names
    an `if`, `elseif` or `while` tests (keywords among them are never a name Ollama sets)."""
    found: Counter[str] = Counter(_EXPANDED.findall(code))
    for condition in _CONDITION.findall(code):
        found.update(_NAME.findall(re.sub(r'"[^"]*"', "", condition)))
    return found


def dropped_read_drafts(
    changes: Iterable[FileChange],
    set_by_ollama: Mapping[str, Sequence[LocalRef]],
    built: Callable[[str], bool],
    installed: frozenset[str] | None = None,
) -> list[Draft]:
    """An item per changed CMake file of Ollama's build that read a variable Ollama sets and no longer does,
    unless another changed file reads it more now (the read moved). `installed`: the install components
    Ollama's install runs, when it runs named ones only (None: every rule); a read that only decided whether
    install rules of other components run is information."""
    changed = list(changes)
    gained = {name for c in changed for name, n in _after(c).items() if n > _before(c)[name]}
    built_both = [c for c in changed if c.old_path and c.new_path and built(c.path)]
    return [
        _weighed(_dropped(c, name, set_by_ollama[name]), c.old_code, name, installed)
        for c in built_both
        for name in _unread(c, set_by_ollama.keys() - gained)
    ]


_INSTALL_RUN = re.compile(r"--install(?=[\s<\"'$])")
_COMPONENT = re.compile(r"--component[\s=]+[\"']?([\w.-]+)")
COMMAND_REACH = 240  # characters after an `--install` its `--component` may be written in (a continued line)


def installed_components(texts: Iterable[str]) -> frozenset[str] | None:
    """The install components the command lines of these texts run (`cmake --install build --component X`),
    when every install they run names one; None when one installs everything (or none is found)."""
    found: set[str] = set()
    for text in texts:
        for run in _INSTALL_RUN.finditer(text):
            component = _COMPONENT.search(text, run.end(), run.end() + COMMAND_REACH)
            if component is None:
                return None
            found.add(component[1])
    return frozenset(found) or None


def _weighed(draft: Draft, old_code: str, name: str, installed: frozenset[str] | None) -> Draft:
    """The draft, as information when every read of the variable was a condition around `install()` rules
    alone, none of a component Ollama's install runs: what it decided never reached Ollama's payload."""
    if installed is None or not _only_guards_installs(old_code, name, installed):
        return draft
    shown = ", ".join(code_span(c) for c in sorted(installed))
    detail = (
        f"{draft.detail} At the old ref it only decided whether upstream's own `install()` rules run, and none of "
        f"them is in a component Ollama's install runs ({shown}): its payload is the same."
    )
    return replace(draft, severity="info", detail=detail)


def _only_guards_installs(old_code: str, name: str, installed: frozenset[str]) -> bool:
    """Whether every read of the variable is an `if()` whose branches hold only `install()` commands of
    components other than `installed` (no COMPONENT: the default one)."""
    root = cmakelang.parse(old_code)
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    guarded = _install_guards(root, word, installed)
    return bool(guarded) and all(c.id in guarded for c in _reading(root, word))


def _install_guards(root: Node, word: re.Pattern[str], installed: frozenset[str]) -> set[int]:
    """The ids of the conditions naming the variable whose blocks hold only such `install()` commands; none
    when one block naming it holds anything else."""
    guarded: set[int] = set()
    for block in _blocks(root):
        heads = [c for c in block.children if c.type in ("if_command", "elseif_command")]
        if not any(word.search(syntax.node_text(h)) for h in heads):
            continue
        if not all(_installs_elsewhere(b, installed) for b in cmakelang.children(block, "body")):
            return set()
        guarded |= {c.id for c in heads}
    return guarded


def _blocks(root: Node) -> Iterable[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "if_condition":
            yield node
        stack.extend(node.children)


def _reading(root: Node, word: re.Pattern[str]) -> Iterable[Node]:
    """The commands and branch conditions that name the variable."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("normal_command", "if_command", "elseif_command", "while_command"):
            if word.search(syntax.node_text(node)):
                yield node
            continue
        stack.extend(node.children)


def _installs_elsewhere(body: Node, installed: frozenset[str]) -> bool:
    """Whether a branch holds only `install()` commands, none of an installed component."""
    for node in body.named_children:
        if node.type != "normal_command" or cmakelang.name(node) != "install":
            return False
        args = cmakelang.arguments(node)
        component = args[args.index("COMPONENT") + 1] if "COMPONENT" in args[:-1] else ""
        if component in installed:
            return False
    return True


def _unread(change: FileChange, names: Collection[str]) -> list[str]:
    """The names the change's file read at the old ref and does not at the new one."""
    after = _after(change)
    return [name for name in _before(change) if name in names and not after[name]]


def _before(change: FileChange) -> Counter[str]:
    return reads(change.old_code) if change.old_path else Counter()


def _after(change: FileChange) -> Counter[str]:
    return reads(change.new_code) if change.new_path else Counter()


def _dropped(change: FileChange, name: str, refs: Sequence[LocalRef]) -> Draft:
    return Draft(
        "build",
        "medium",
        f"{code_span(change.path)} no longer reads {code_span(name)}, which Ollama's build sets",
        f"At the old ref {code_span(change.path)} read {code_span(name)}; at the new ref it does not, and no other changed CMake "
        "file reads it more. What Ollama's setting configured there (a definition, a flag, a branch) no longer "
        "happens in that part of the build: check whether the setting still has an effect.",
        change.path,
        None,
        removed=(change.path, name),
        local_refs=tuple(refs),
        cause=f"cmake-read:{name}",
    )
