"""Model architectures: `{ LLM_ARCH_X, "x" }` of upstream's `src/llama-arch.cpp` at both refs, and the
architectures Ollama's own model patches register.

When upstream starts supporting natively an architecture a carried patch
adds, the patch collides with it or duplicates it: it may need removal or
a rebase onto upstream's implementation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.patches.patchfile import PatchFile
from bot.review.changes import Draft
from bot.review.source import LineIndex

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


def patch_added_lines(patches: list[tuple[str, PatchFile]]) -> list[tuple[str, LocalRef]]:
    """Every line the patches add, with the patch line that adds it."""
    found = []
    for patch_path, pf in patches:
        for fp in pf.files:
            for hunk in fp.hunks:
                row = hunk.header_line
                for line in hunk.lines:
                    row += 1
                    if line.kind == "+":
                        found.append((line.text.decode("utf-8", "replace"), LocalRef(patch_path, row)))
    return found


def patch_architectures(patches: list[tuple[str, PatchFile]]) -> list[tuple[Arch, LocalRef]]:
    """Architectures the patches' added lines register, with the patch line that adds each."""
    return [
        (Arch(m[1], m[2], 0), ref) for text, ref in patch_added_lines(patches) for m in _ENTRY.finditer(text)
    ]


def arch_drafts(
    old: dict[str, Arch],
    new: dict[str, Arch],
    patched: list[tuple[Arch, LocalRef]],
    where_now: Callable[[int], int | None],
    path: str,
    renamed: Callable[[str], list[tuple[str, str, LocalRef]]] = lambda arch: [],
) -> list[Draft]:
    """New, natively supported and removed architectures. For one Ollama's patches implement and upstream
    now has, `renamed(name)` gives the GGUF names the two implementations write differently."""
    removed = [_removed_arch_draft(arch, path, where_now) for arch in _only_in(old, new)]
    return [*_added_arch_drafts(old, new, patched, renamed, path), *removed]


def _only_in(table: dict[str, Arch], other: dict[str, Arch]) -> list[Arch]:
    """The architectures of `table` that `other` has under neither enum nor name (a renamed enum is the
    same architecture), by enum."""
    names = {a.name for a in other.values()}
    return [table[e] for e in sorted(set(table) - set(other)) if table[e].name not in names]


def _added_arch_drafts(
    old: dict[str, Arch],
    new: dict[str, Arch],
    patched: list[tuple[Arch, LocalRef]],
    renamed: Callable[[str], list[tuple[str, str, LocalRef]]],
    path: str,
) -> list[Draft]:
    """Each architecture new upstream: native when an Ollama patch adds it too."""
    drafts = []
    for arch in _only_in(new, old):
        refs = tuple(ref for a, ref in patched if a.enum == arch.enum or a.name == arch.name)
        drafts.append(
            _native_draft(arch, refs, renamed(arch.name), path) if refs else _new_arch_draft(arch, path)
        )
    return drafts


def _native_draft(
    arch: Arch, refs: tuple[LocalRef, ...], names: list[tuple[str, str, LocalRef]], path: str
) -> Draft:
    """An architecture upstream now has that an Ollama patch adds too, with the GGUF names the two write
    differently (`names`: Ollama's, upstream's, where)."""
    listed = "".join(
        f"\n- {code_span(ours)} is {code_span(theirs)} upstream ({code_span(f'{ref.path}:{ref.line}')})"
        for ours, theirs, ref in names
    )
    translate = (
        f"\n\nModels made for Ollama's implementation name these differently from upstream's, "
        f"which will not find them: translate them in the compat layer before dropping the "
        f"patch.{listed}"
        if names
        else ""
    )
    return Draft(
        "models",
        "high",
        f"Upstream now supports architecture {code_span(arch.name)} natively",
        f'{code_span(arch.enum)} / `"{arch.name}"` is new upstream, and an Ollama patch adds the same '
        "architecture: the local patch may need removal or rebase onto upstream's "
        "implementation." + translate,
        path,
        arch.line,
        local_refs=refs + tuple(ref for _, _, ref in names),
    )


def _new_arch_draft(arch: Arch, path: str) -> Draft:
    """An architecture new upstream that no Ollama patch adds: for information."""
    return Draft(
        "models",
        "info",
        f"New architecture {code_span(arch.name)}",
        f'Upstream added {code_span(arch.enum)} (`"{arch.name}"`).',
        path,
        arch.line,
    )


def _removed_arch_draft(arch: Arch, path: str, where_now: Callable[[int], int | None]) -> Draft:
    """An architecture upstream dropped: its models no longer load."""
    return Draft(
        "models",
        "medium",
        f"Architecture {code_span(arch.name)} was removed",
        f'Upstream dropped {code_span(arch.enum)} (`"{arch.name}"`): models of this architecture no longer load.',
        path,
        where_now(arch.line),
        removed=(path, f'"{arch.name}"'),
    )


_KEY_ENTRY = re.compile(r'\{\s*LLM_KV_\w+\s*,\s*"%s\.([\w.]+)"')
_TENSOR_ENTRY = re.compile(r'\{\s*LLM_TENSOR_\w+\s*,\s*"([\w.%]+)"')
_STRING = re.compile(r'"([\w.%]+)"')
NAME_MATCH = 0.75  # share of name parts two names must have in common to be one name written two ways


def _parts(name: str) -> list[str]:
    return [p for p in re.split(r"[._]", name) if p]


def _likeness(a: str, b: str) -> float:
    """Parts in common (one part an abbreviation of the other counts) over all parts: 1.0 for the same
    parts in another order (`rope.swa.freq_base`, `rope.freq_base_swa`) or abbreviated (`attn_g`)."""
    left, right = _parts(a), _parts(b)
    common = 0
    for part in left:
        match = next((r for r in right if r.startswith(part) or part.startswith(r)), None)
        if match is not None:
            right.remove(match)
            common += 1
    return common / (len(left) + len(right)) if left else 0.0


def _upstream_name(name: str, names: set[str]) -> str | None:
    """The one upstream name most like `name`, if it is like enough."""
    scored = sorted(((_likeness(name, n), n) for n in names), reverse=True)
    if not scored or scored[0][0] < NAME_MATCH or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


def renamed_model_names(
    arch: str, ollama_texts: dict[str, str], patched_lines: list[tuple[str, LocalRef]], new_code: str
) -> list[tuple[str, str, LocalRef]]:
    """(Ollama's name, upstream's name, where) of the GGUF keys and tensor names that Ollama's own
    implementation of `arch` reads and that upstream's native one reads under another name: models
    made for Ollama's implementation carry Ollama's names.

    Ollama's names: `"<arch>.<key>"` strings of its compat sources (`ollama_texts`, path -> code) and of
    the patches' added lines, and the tensor names those lines add to upstream's tables."""
    translated = {n for text in ollama_texts.values() for n in _STRING.findall(text)}
    return [v for v in _twins(arch, ollama_texts, patched_lines, new_code) if v[1] not in translated]


def _twins(
    arch: str, ollama_texts: dict[str, str], patched_lines: list[tuple[str, LocalRef]], new_code: str
) -> list[tuple[str, str, LocalRef]]:
    """(Ollama's name, upstream's name, where) of each of Ollama's names that upstream writes another way,
    where it is first found; none whose upstream name is itself one of the names found before."""
    keys, tensors = _model_names(new_code)
    found: dict[str, tuple[str, str, LocalRef]] = {}
    for text, ref, name in _named_strings(ollama_texts, patched_lines):
        twin = _twin(name, text, f"{arch}.", keys, tensors)
        if twin and twin not in found and name not in found:
            found[name] = (name, twin, ref)
    return list(found.values())


def _model_names(code: str) -> tuple[set[str], set[str]]:
    """The GGUF key suffixes (after `%s.`) and the tensor names of upstream's tables."""
    return {m[1] for m in _KEY_ENTRY.finditer(code)}, {m[1] for m in _TENSOR_ENTRY.finditer(code)}


def _named_strings(
    ollama_texts: dict[str, str], patched_lines: list[tuple[str, LocalRef]]
) -> Iterator[tuple[str, LocalRef, str]]:
    """(text, where, name) of every name-like string of the compat sources, then of the patches' lines."""
    for path, text in ollama_texts.items():
        index = LineIndex(text)
        for m in _STRING.finditer(text):
            yield text, LocalRef(path, index.line(m.start())), m[1]
    for text, ref in patched_lines:
        for m in _STRING.finditer(text):
            yield text, ref, m[1]


def _twin(name: str, text: str, prefix: str, keys: set[str], tensors: set[str]) -> str | None:
    """Upstream's name for a tensor name (on a line of a tensor table) or an `<arch>.` key upstream does
    not have; None for a name upstream has, or one that is neither."""
    if _TENSOR_ENTRY.search(text) is not None:
        return _upstream_name(name, tensors) if name not in tensors else None
    if not name.startswith(prefix) or name[len(prefix) :] in keys:
        return None
    twin = _upstream_name(name[len(prefix) :], keys)
    return prefix + twin if twin else twin
