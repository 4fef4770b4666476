"""Ollama's C/C++ compatibility code against upstream internals it is compiled with.

`llama/compat/**` (and the files its patches add) reach into upstream's
structs, member functions, enums and macros. A declaration that the
upstream diff removes, renames or turns into another kind of thing (a
field that became a method) breaks that code; this names the upstream
change and the Ollama lines that use it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping

from bot import cpp
from bot.model import LocalRef
from bot.patchfile import PatchFile
from bot.review.changes import Draft, FileChange, Span
from bot.review.source import (
    C_SOURCES,
    C_STRING,
    FIXED_WIDTH_TYPES,
    LineIndex,
    code_text,
    extension,
    glob_match,
)
from bot.review.symbols import removed_title

COMPAT_SOURCES = ("llama/compat/**/*.{c,cc,cpp,h,hpp}",)
# what another translation unit can see of upstream: a .cpp file's own structs and statics are private
HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc")
_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "asm",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "constexpr",
        "const_cast",
        "continue",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "nullptr",
        "operator",
        "or",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
        "override",
        "final",
        "include",
        "define",
        "ifdef",
        "ifndef",
        "endif",
        "pragma",
        "std",
        *FIXED_WIDTH_TYPES,
        "string",
        "vector",
        "nullptr_t",
        "NULL",
    ]
)
_IDENT = re.compile(r"\b[A-Za-z_]\w{2,}")


def _ollama_identifiers(text: str) -> Iterable[tuple[str, int]]:
    index = LineIndex(text)
    for m in _IDENT.finditer(C_STRING.sub(lambda s: " " * len(s[0]), text)):
        if m[0] not in _KEYWORDS:
            yield m[0], index.line(m.start())


def compat_uses(files: Mapping[str, str], patches: list[tuple[str, PatchFile]]) -> dict[str, list[LocalRef]]:
    """Identifiers of Ollama's compat sources (comment-free texts) and of the C/C++ files its patches add."""
    found: dict[str, list[LocalRef]] = {}

    def note(name: str, ref: LocalRef) -> None:
        refs = found.setdefault(name, [])
        if len(refs) < 10 and ref not in refs:
            refs.append(ref)

    for path in sorted(p for p in files if glob_match(p, COMPAT_SOURCES)):
        for name, line in _ollama_identifiers(files[path]):
            note(name, LocalRef(path, line))
    for patch_path, pf in patches:
        for fp in pf.files:
            if not fp.is_new or extension(fp.path) not in C_SOURCES:
                continue
            for hunk in fp.hunks:
                added = "".join(
                    line.text.decode("utf-8", "replace") if line.kind == "+" else "\n" for line in hunk.lines
                )
                for name, line in _ollama_identifiers(code_text(added, fp.path)):
                    note(name, LocalRef(patch_path, hunk.header_line + line))
    return found


def declared(code_lines: list[str]) -> tuple[cpp.Declared, ...]:
    """What comment-free lines declare outside function bodies, with owners and signatures (one parse
    per text: the parse is cached by the text)."""
    return cpp.interface("\n".join(code_lines).encode())


def declarations(code_lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, kind, name) of comment-free lines: macros and types, functions and variables at namespace
    or struct scope, struct fields, and enum values. A local variable is nobody's interface."""
    return [(d.line, d.kind, d.name) for d in declared(code_lines)]


def kinds_by_name(decls: Iterable[tuple[int, str, str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for _, kind, name in decls:
        found.setdefault(name, set()).add(kind)
    return found


def _area(name: str, path: str) -> str:
    return (
        "discovery"
        if name.startswith("ggml_backend") or (path.startswith("ggml/") and name.startswith("ggml_"))
        else "models"
    )


def _accepts_old_calls(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """A call written for `old` parameters compiles against `new` ones: the same types, then defaults."""
    return new[: len(old)] == old and all(p.endswith("=") for p in new[len(old) :])


def _similar(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` (a rename's new name), if any is half alike."""
    best = max(candidates, key=lambda n: difflib.SequenceMatcher(None, n, name).ratio(), default=None)
    if best is None or difflib.SequenceMatcher(None, best, name).ratio() < 0.5:
        return None
    return best


def compat_drafts(
    uses: Mapping[str, list[LocalRef]],
    change: FileChange,
    added_elsewhere: Callable[[str], set[str]],
    *,
    still_declared: Callable[[str, str], bool] | None = None,
) -> list[Draft]:
    """Declarations Ollama's compat code uses that this upstream header change removes, renames, re-kinds
    or whose parameter types it changes (what a source file declares, no other file sees).

    A declaration belongs to its struct or enum: a field `n_layer` of `llama_hparams` that became a
    function is a change even while another struct keeps a field `n_layer`. `added_elsewhere(name)`
    gives the kinds `name` is declared as on added lines of the other changed files (a declaration that
    only moved is no removal); `still_declared(name, kind)` says whether the headers Ollama's code
    includes still declare it as that kind at the new ref. Both are called only for a vanished name.
    """
    drafts: list[Draft] = []
    if not change.old_path or not change.old_path.endswith(HEADERS) or not change.significant:
        return drafts
    old = declared(change.old_code_lines)
    new = declared(change.new_code_lines) if change.new_path else ()
    old_at: dict[int, list[cpp.Declared]] = {}
    for d in old:
        if d.name in uses:
            old_at.setdefault(d.line, []).append(d)
    if not old_at:
        return drafts
    before = {(d.owner, d.name, d.kind) for d in old}
    members: dict[tuple[str, str], list[cpp.Declared]] = {}
    arrived: dict[str, set[str]] = {}  # kinds of names declared where they were not before
    for d in new:
        members.setdefault((d.owner, d.name), []).append(d)
        if (d.owner, d.name, d.kind) not in before:
            arrived.setdefault(d.name, set()).add(d.kind)
    for span in change.significant:
        gone: dict[str, list[cpp.Declared]] = {}
        for n in span.old_lines:
            for d in old_at.get(n, ()):
                gone.setdefault(d.name, []).append(d)
        if not gone:
            continue
        added = kinds_by_name(
            (d.line, d.kind, d.name)
            for d in new
            if span.new_start <= d.line < span.new_start + span.new_count
        )
        for name in sorted(gone):
            was_decls = gone[name]
            old_kinds = {d.kind for d in was_decls}
            same_place = [d for w in was_decls for d in members.get((w.owner, name), ())]
            now = {d.kind for d in same_place} or arrived.get(name, set()) | added_elsewhere(name)

            was = "/".join(sorted(old_kinds))
            if old_kinds & now:
                signature = _signature_draft(name, was_decls, same_place, change.path)
                if signature is not None:
                    drafts.append(_draft(change, span, name, uses, *signature, gone=False))
                continue  # still declared as the same kind of thing
            if not now and still_declared is not None and any(still_declared(name, k) for k in old_kinds):
                continue  # declared by another header Ollama's code includes
            if now:
                became = "/".join(sorted(now))
                owner = next((d.owner for d in was_decls if d.owner), "")
                detail = (
                    f"Ollama's compatibility code uses `{name}`; upstream turned it from a {was} into a {became}"
                    + (f" of `{owner}`" if owner else "")
                    + f" in `{change.path}`"
                    + (f": it must now be called, `{name}()`." if became == "function" else ".")
                )
                drafts.append(
                    _draft(
                        change, span, name, uses, f"`{name}` changed from {was} to {became} upstream", detail
                    )
                )
                continue
            twin = _similar(name, [n for n, kinds in added.items() if old_kinds & kinds and n != name])
            detail = (
                f"Ollama's compatibility code uses the {was} `{name}`, which `{change.path}` no longer declares"
                + (f"; it was probably renamed to `{twin}`." if twin else ".")
            )
            drafts.append(_draft(change, span, name, uses, removed_title(name), detail))
    return drafts


def _draft(
    change: FileChange,
    span: Span,
    name: str,
    uses: Mapping[str, list[LocalRef]],
    title: str,
    detail: str,
    gone: bool = True,
) -> Draft:
    return Draft(
        _area(name, change.path),
        "high",
        title,
        detail,
        change.path,
        change.where(span),
        ((span.new_start, span.new_start + span.new_count - 1),) if span.new_count else (),
        (change.old_path or change.path, name) if gone else None,
        tuple(uses[name]),
        cause=f"declaration:{name}",
    )


def _signature_draft(
    name: str, was: list[cpp.Declared], now: list[cpp.Declared], path: str
) -> tuple[str, str] | None:
    """(title, detail) when a function Ollama calls lost the parameter list it had and no remaining
    overload accepts the old calls."""
    old = [d for d in was if d.kind == "function"]
    new = [d for d in now if d.kind == "function"]
    if not old or not new:
        return None
    lost = [
        d
        for d in old
        if not any(
            _accepts_old_calls(d.parameters, n.parameters) and d.qualifiers == n.qualifiers for n in new
        )
    ]
    if not lost:
        return None
    return (
        f"Signature of `{name}` changed upstream",
        f"Ollama's compatibility code calls `{name}`, declared in `{path}`.\n\n"
        f"Was: `{name}{lost[0].signature}`\n\nNow: " + ", ".join(f"`{name}{d.signature}`" for d in new),
    )
