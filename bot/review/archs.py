"""Model architectures: `{ LLM_ARCH_X, "x" }` of upstream's `src/llama-arch.cpp` at both refs, and the
architectures Ollama's own model patches register.

When upstream starts supporting natively an architecture a carried patch
adds, the patch collides with it or duplicates it: it may need removal or
a rebase onto upstream's implementation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.model import LocalRef
from bot.patchfile import PatchFile
from bot.review.changes import Draft
from bot.review.source import LineIndex

ARCH_FILE = "src/llama-arch.cpp"
_ENTRY = re.compile(r'\{\s*(LLM_ARCH_\w+)\s*,\s*"([^"]+)"\s*\}')


@dataclass(frozen=True)
class Arch:
    enum: str
    name: str
    line: int


def architectures(code: str) -> dict[str, Arch]:
    """The enum -> name table (comment-free code), by enum."""
    index = LineIndex(code)
    return {m[1]: Arch(m[1], m[2], index.line(m.start())) for m in _ENTRY.finditer(code)}


def patch_architectures(patches: list[tuple[str, PatchFile]]) -> list[tuple[Arch, LocalRef]]:
    """Architectures the patches' added lines register, with the patch line that adds each."""
    found = []
    for patch_path, pf in patches:
        for fp in pf.files:
            for hunk in fp.hunks:
                row = hunk.header_line
                for line in hunk.lines:
                    row += 1
                    if line.kind != "+":
                        continue
                    for m in _ENTRY.finditer(line.text.decode("utf-8", "replace")):
                        found.append((Arch(m[1], m[2], 0), LocalRef(patch_path, row)))
    return found


def arch_drafts(
    old: dict[str, Arch],
    new: dict[str, Arch],
    patched: list[tuple[Arch, LocalRef]],
    where_now: Callable[[int], int | None],
    path: str = ARCH_FILE,
) -> list[Draft]:
    drafts = []
    old_names = {a.name for a in old.values()}
    for enum in sorted(set(new) - set(old)):
        arch = new[enum]
        if arch.name in old_names:
            continue  # renamed enum, same architecture
        refs = tuple(ref for a, ref in patched if a.enum == enum or a.name == arch.name)
        if refs:
            drafts.append(
                Draft(
                    "models",
                    "high",
                    f"Upstream now supports architecture `{arch.name}` natively",
                    f'`{enum}` / `"{arch.name}"` is new upstream, and an Ollama patch adds the same '
                    "architecture: the local patch may need removal or rebase onto upstream's "
                    "implementation.",
                    path,
                    arch.line,
                    local_refs=refs,
                )
            )
        else:
            drafts.append(
                Draft(
                    "models",
                    "info",
                    f"New architecture `{arch.name}`",
                    f'Upstream added `{enum}` (`"{arch.name}"`).',
                    path,
                    arch.line,
                )
            )
    new_names = {a.name for a in new.values()}
    for enum in sorted(set(old) - set(new)):
        arch = old[enum]
        if arch.name in new_names:
            continue
        drafts.append(
            Draft(
                "models",
                "medium",
                f"Architecture `{arch.name}` was removed",
                f'Upstream dropped `{enum}` (`"{arch.name}"`): models of this architecture no longer load.',
                path,
                where_now(arch.line),
                removed=(path, f'"{arch.name}"'),
            )
        )
    return drafts
