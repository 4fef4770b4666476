"""A member llama-server writes into a field Ollama decodes, emptied in fewer places than before: the final
stream chunk's `res->content = ""` (its text was in the partial chunks) dropped, so the chunk carries the
whole text again and Ollama, which reads every chunk alike, takes it in twice."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.payloads import Decoded, Writers, flag_refs
from bot.review.serverjson import Emission

_MEMBER = re.compile(r"(?:this\s*->\s*)?([A-Za-z_]\w*)")


def emptied_drafts(old: Writers, new: Writers, fields: Sequence[Decoded]) -> list[Draft]:
    """One medium item per member, written into a decoded text or list, that the server empties in fewer
    places now."""
    drafts: dict[str, Draft] = {}
    for f in fields:
        if f.go_type == "string" or f.go_type.startswith("[]"):
            for member, writers in _writers(f, old, new).items():
                was, now = _emptied(old.code.texts, member), _emptied(new.code.texts, member)
                if len(now) < len(was) and member not in drafts:
                    draft = _draft(f, member, (was, len(now)), writers, new)
                    flags = flag_refs(new, writers, f, fields)
                    drafts[member] = replace(draft, local_refs=(*draft.local_refs, *flags))
    return list(drafts.values())


def _writers(f: Decoded, old: Writers, new: Writers) -> dict[str, list[tuple[str, Emission]]]:
    """Per member a function writes the field from (`{"content", content}`), the functions that still write
    it, each with its new entry."""
    after = new.writes(f)
    found: dict[str, list[tuple[str, Emission]]] = {}
    for qualified, hits in old.writes(f).items():
        for member in sorted({m[1] for h in hits if (m := _MEMBER.fullmatch(h.value.strip()))}):
            if after.get(qualified):
                found.setdefault(member, []).append((qualified, after[qualified][0]))
    return found


def _emptied(texts: Mapping[str, str], member: str) -> list[tuple[str, int, str]]:
    """Where a member is set empty (`res->content = "";`, `x.tokens = llama_tokens{};`, `.clear()`), or to
    a value a condition picks, one of them empty (`= unsent ? rest : "";`: emptied where the condition says
    the frames carried it all, a refinement of the emptying, not its end)."""
    m = re.escape(member)
    empty = r"(?:\"\"|std::string\s*\(\s*\)|[\w:<>]*\s*\{\s*\})"
    pattern = re.compile(
        rf"(?:->|\.)\s*{m}\s*(?:=\s*(?:{empty}|[^;?]*\?[^;:]*:\s*{empty}|[^;?]*\?\s*{empty}\s*:[^;]*)\s*;"
        rf"|\.\s*clear\s*\(\s*\))"
    )
    return [
        (path, text.count("\n", 0, found.start()) + 1, found[0])
        for path, text in sorted(texts.items())
        if member in text
        for found in pattern.finditer(text)
    ]


def _draft(
    f: Decoded,
    member: str,
    emptied: tuple[list[tuple[str, int, str]], int],
    writers: list[tuple[str, Emission]],
    new: Writers,
) -> Draft:
    """`emptied`: where the old code sets the member empty, and in how many places the new code does."""
    was, now = emptied
    qualified, entry = writers[0]
    unit = new.unit(qualified)
    path = unit.path if unit else was[0][0]
    places = ", ".join(code_span(f"{p}:{n}") for p, n, _ in was[:3])
    named = " and ".join(code_span(q) for q, _ in writers[:3])
    detail = (
        f"Ollama decodes {code_span(f.name)} ({f.go_type}) from llama-server's {f.source} "
        f"({code_span(f'{f.ref.path}:{f.ref.line}')}), which {named} write from {code_span(member)}. Places "
        f"setting {code_span(member)} empty: {len(was)} at the old ref ({places}), {now} at the new. Where it "
        "no longer is, that answer or frame carries what it held, and Ollama takes it in as it reads the "
        "others: check that it does not now repeat what earlier frames said."
    )
    return Draft(
        "streaming" if f.source.endswith("stream") else "server",
        "medium",
        f"{code_span(f.name)} of llama-server's {f.source} is no longer emptied where it was "
        f"({code_span(member)})",
        detail,
        path,
        entry.line,
        blame=((entry.line, entry.line),),
        local_refs=(f.ref,),
        cause=f"wire-emptied:{member}",
    )
