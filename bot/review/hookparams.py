"""What a carried patch's code names inside the upstream function it edits.

A line a patch adds to an upstream function body that spells a name bare (`use_mmap = false`) or as
`this->name` reaches that function's parameters and locals, its class's members, or a global: never a
field of another struct, which only `x.name` or `p->name` reaches. So a field some public header drops is
not what such a line names, and a parameter the function no longer takes is: the line now names whatever
else is called so there (a member, a global), or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.patches.patchfile import Hunk
from bot.review import compat
from bot.review.changes import Draft, FileChange
from bot.review.cppapi import Declared

_FUNCTION = re.compile(r"((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)\s*\(")
_NAME = re.compile(r"\b(this\s*->\s*)?([A-Za-z_]\w*)\b")
_NOT_CODE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//.*$|/\*.*?\*/')
_MEMBER_OF_ANOTHER = (".", "->", "::")


@dataclass(frozen=True)
class HookName:
    """A name a patch hunk's added line spells bare or as `this->name`, inside an upstream function."""

    ref: LocalRef  # the patch file's line
    name: str
    function: str  # as the hunk header names it: `llama_model_loader::llama_model_loader`
    path: str  # the upstream file the hunk edits
    member: bool = False  # spelled `this->name`: the class's member, never a parameter

    @property
    def owner(self) -> str:
        """The class the function belongs to ("" for a free function)."""
        return self.function.rsplit("::", 2)[-2] if "::" in self.function else ""


def hook_names(patches: Sequence[tuple[str, object]]) -> list[HookName]:
    """The names the carried patches' hunks spell bare or as `this->name` in the functions they edit."""
    return [
        found
        for patch_path, patch in patches
        for fp in getattr(patch, "files", [])
        if fp.old_path
        for hunk in fp.hunks
        for found in _hunk_names(patch_path, fp.old_path, hunk)
    ]


def _hunk_names(patch_path: str, path: str, hunk: Hunk) -> Iterator[HookName]:
    """The bare and `this->` names of a hunk's added lines, in the function the hunk shows or names."""
    function = _function(hunk.section)
    for offset, line in enumerate(hunk.lines):
        if line.kind != "+":
            function = _function(line.text) or function  # a definition the hunk's context shows
        elif function:
            text = _NOT_CODE.sub(" ", line.text.decode("utf-8", "replace"))
            for name, member in _bare_names(text):
                yield HookName(
                    LocalRef(patch_path, hunk.header_line + 1 + offset), name, function, path, member
                )


def _function(line: bytes) -> str | None:
    """The function a definition's first line names: a line starting in the first column (as a hunk header's
    section does) that opens a parameter list and is not a statement."""
    text = line.decode("utf-8", "replace").rstrip()
    if not text[:1].isalpha() and not text.startswith("_") or text.endswith(";"):
        return None
    m = _FUNCTION.search(text)
    return m[1] if m else None


def _bare_names(text: str) -> Iterator[tuple[str, bool]]:
    """The names a line spells bare or as `this->name` (said by the flag)."""
    for m in _NAME.finditer(text):
        before, after = text[: m.start()].rstrip(), text[m.end() :].lstrip()
        bare = m[1] is not None or not before.endswith(_MEMBER_OF_ANOTHER)
        if bare and m[2] != "this" and not after.startswith("::"):
            yield m[2], m[1] is not None


def field_reach(
    names: Sequence[HookName], uses: Mapping[str, Sequence[LocalRef]]
) -> Callable[[Declared], bool]:
    """Whether Ollama's uses of a declaration's name can reach it: a struct field cannot be what a patch's
    bare or `this->` names reach in a function of another class (or a free function); a use elsewhere may."""
    where = {(h.ref, h.name): h.owner for h in names}

    def reaches(d: Declared) -> bool:
        if d.kind != "field" or not d.owner:
            return True
        owners = [where.get((ref, d.name)) for ref in uses.get(d.name, ())]
        return not owners or any(owner is None or owner == d.owner for owner in owners)

    return reaches


def parameter_drafts(names: Sequence[HookName], by_old_path: Mapping[str, FileChange]) -> list[Draft]:
    """A parameter of an upstream function a patch's code names that the function no longer takes."""
    refs: dict[tuple[str, str, str], list[LocalRef]] = {}
    for h in (h for h in names if not h.member):
        refs.setdefault((h.path, h.function, h.name), []).append(h.ref)
    drafts = []
    for (path, function, name), at in refs.items():
        change = by_old_path.get(path)
        if change is not None and change.new_path:
            draft = _parameter_draft(change, function, name, tuple(dict.fromkeys(at)))
            drafts += [draft] if draft else []
    return drafts


def _parameter_draft(change: FileChange, function: str, name: str, at: tuple[LocalRef, ...]) -> Draft | None:
    old = _definitions(compat.declared(change.old_code_lines), function)
    new = _definitions(compat.declared_after(change), function)
    took = next((d for d in old if name in d.parameter_names), None)
    if took is None or not new or any(name in d.parameter_names for d in new):
        return None
    now = new[0]
    detail = _parameter_detail(change.old_path or change.path, function, name, took, now)
    return Draft(
        compat.area(name, change.path),
        "high",
        f"Parameter {code_span(name)} of {code_span(function)} is gone upstream; Ollama's patch uses it",
        detail,
        change.path,
        now.line,
        removed=(change.old_path or change.path, name),
        local_refs=at,
        cause=f"declaration:{name}",
    )


def _parameter_detail(path: str, function: str, name: str, took: Declared, now: Declared) -> str:
    owner = function.rsplit("::", 2)[-2] if "::" in function else ""
    gone = [n for n in took.parameter_names if n not in now.parameter_names]
    came = [n for n in now.parameter_names if n not in took.parameter_names]
    return (
        f"Ollama's patch adds code to {code_span(function)} ({code_span(path)}) that names {code_span(name)}, a parameter of that "
        f"function at the old ref. Upstream's {code_span(function)} no longer takes {_listed(gone)}"
        + (f"; it takes {_listed(came)} now" if came else "")
        + f", so there {code_span(name)} names whatever else is called so"
        + (f" (a member of {code_span(owner)}, a global)" if owner else " (a global)")
        + ", or nothing: the patch no longer does what it did. Rewrite its use of the parameter."
    )


def _definitions(declared: Sequence[Declared], function: str) -> list[Declared]:
    """The declarations of the function the hunk header names (by its qualified name's tail)."""
    return [
        d
        for d in declared
        if d.kind == "function" and (d.qualified == function or d.qualified.endswith("::" + function))
    ]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(code_span(n) for n in names if n) or "nothing"
