"""Ollama's C/C++ compatibility code against upstream internals it is compiled with.

`llama/compat/**` (and the files its patches add) reach into upstream's
structs, member functions, enums and macros. A declaration that the
upstream diff removes, renames or turns into another kind of thing (a
field that became a method) breaks that code; this names the upstream
change and the Ollama lines that use it (bot/review/consumers/compat_sources.py
finds them). The enum values that code names or produces, and upstream stops
handling, are bot/review/compatvalues.py's.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.lang import syntax
from bot.markup import code_span
from bot.model import LocalRef
from bot.review import cppapi
from bot.review.changes import Draft, FileChange, Span
from bot.review.cppapi import Declared
from bot.review.symbols import removed_title

# what another translation unit can see of upstream: a .cpp file's own structs and statics are private
HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc")
_TYPED = ("variable", "field")  # the kinds whose declared type is compared


def declared(code_lines: list[str]) -> tuple[Declared, ...]:
    """What comment-free lines declare outside function bodies, with owners and signatures (one parse
    per text: the parse is cached by the text)."""
    return cppapi.interface("\n".join(code_lines).encode())


def declared_after(change: FileChange) -> tuple[Declared, ...]:
    """`declared` of a change's new code, parsed from its old code's tree where that is still kept."""
    earlier = "\n".join(change.old_code_lines).encode()
    with syntax.edited_from([(earlier, "\n".join(change.new_code_lines).encode())]):
        return declared(change.new_code_lines)


def declarations(code_lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, kind, name) of comment-free lines: macros and types, functions and variables at namespace
    or struct scope, struct fields, and enum values. A local variable is nobody's interface."""
    return [(d.line, d.kind, d.name) for d in declared(code_lines)]


def kinds_by_name(decls: Iterable[tuple[int, str, str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for _, kind, name in decls:
        found.setdefault(name, set()).add(kind)
    return found


def area(name: str, path: str) -> str:
    """Where an item about an upstream name belongs: discovery for ggml's backends, else models."""
    return (
        "discovery"
        if name.startswith("ggml_backend") or (path.startswith("ggml/") and name.startswith("ggml_"))
        else "models"
    )


def _accepts_old_calls(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """A call written for `old` parameters compiles against `new` ones: the same types, then defaults."""
    return new[: len(old)] == old and all(p.endswith("=") for p in new[len(old) :])


def similar(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` (a rename's new name), if any is half alike."""
    best = max(candidates, key=lambda n: difflib.SequenceMatcher(None, n, name).ratio(), default=None)
    if best is None or difflib.SequenceMatcher(None, best, name).ratio() < 0.5:
        return None
    return best


@dataclass(frozen=True)
class _HeaderChange:
    """One changed header as `compat_drafts` judges it: the old declarations Ollama's code uses, the new
    ones by (owner, name), the kinds of names newly declared, and the questions about the rest of the tree."""

    change: FileChange
    uses: Mapping[str, Sequence[LocalRef]]
    new: tuple[Declared, ...]
    members: dict[tuple[str, str], list[Declared]]
    arrived: dict[str, set[str]]
    added_elsewhere: Callable[[str], set[str]]
    still_declared: Callable[[str, str], bool] | None
    called: Callable[[str], bool] | None

    def name_draft(self, span: Span, name: str, was_decls: list[Declared]) -> Draft | None:
        """What became of one used name the span took away: moved, still there (maybe re-signed), declared
        by another included header, turned into another kind of thing, or gone."""
        old_kinds = {d.kind for d in was_decls}
        same_place = self._same_place(name, was_decls)
        now = self._kinds_now(name, was_decls, old_kinds, {d.kind for d in same_place})
        if now is None:
            return None  # it moved
        if old_kinds & now:  # still declared as the same kind of thing
            signature = _signature_draft(name, was_decls, same_place, self.change.path)
            return self._re_signed(span, name, signature) or self._re_typed(span, name, was_decls, same_place)
        if now:
            return self._re_kinded(span, name, "/".join(sorted(old_kinds)), "/".join(sorted(now)), was_decls)
        if self.still_declared is not None and any(self.still_declared(name, k) for k in old_kinds):
            return None  # declared by another header Ollama's code includes
        return self._vanished(span, name, old_kinds)

    def _same_place(self, name: str, was_decls: list[Declared]) -> list[Declared]:
        """The new declarations of the name in the places (owners) it had."""
        return [d for w in was_decls for d in self.members.get((w.owner, name), ())]

    def _re_signed(self, span: Span, name: str, signature: tuple[str, str] | None) -> Draft | None:
        """The item for a function whose old calls no longer compile, if its signature says so."""
        return _draft(self.change, span, name, self.uses, *signature, gone=False) if signature else None

    def _re_typed(
        self, span: Span, name: str, was_decls: list[Declared], same_place: list[Declared]
    ) -> Draft | None:
        """The item for a variable or field Ollama's code uses whose declared type changed (what it reads or
        calls on the value may no longer compile, or may mean something else)."""
        was, now = _types(was_decls), _types(same_place)
        if not was or not now or was & now:
            return None
        kind = next(d.kind for d in was_decls if d.kind in _TYPED)
        detail = (
            f"Ollama's compatibility code uses the {kind} {code_span(name)}, declared in "
            f"{code_span(self.change.path)}.\n\nWas: {code_span(min(was))}\n\nNow: {code_span(min(now))}\n\n"
            "What Ollama's code does with its value (the members it calls, what it passes it to) may no longer "
            "compile, or may mean something else."
        )
        draft = _draft(
            self.change, span, name, self.uses, f"Type of {code_span(name)} changed upstream", detail
        )
        return replace(draft, severity="medium")

    def _kinds_now(
        self, name: str, was_decls: list[Declared], old_kinds: set[str], same_place: set[str]
    ) -> set[str] | None:
        """The kinds the name is declared as now: in its old place, else (for a namespace-scope name) where
        it newly appears; None when it only moved (it appears elsewhere as the same kind)."""
        if same_place:
            return same_place
        elsewhere = self.arrived.get(name, set()) | self.added_elsewhere(name)
        if old_kinds & elsewhere:
            return None
        return elsewhere if not any(d.owner for d in was_decls) else set()

    def _vanished(self, span: Span, name: str, old_kinds: set[str]) -> Draft:
        """A used name the header no longer declares: removed, or renamed to the most alike name the span
        adds as the same kind."""
        added = kinds_by_name(
            (d.line, d.kind, d.name)
            for d in self.new
            if span.new_start <= d.line < span.new_start + span.new_count
        )
        twin = similar(name, [n for n, kinds in added.items() if old_kinds & kinds and n != name])
        detail = (
            f"Ollama's compatibility code uses the {'/'.join(sorted(old_kinds))} {code_span(name)}, which "
            f"{code_span(self.change.path)} no longer declares"
            + (f"; it was probably renamed to {code_span(twin)}." if twin else ".")
        )
        return _draft(self.change, span, name, self.uses, removed_title(name), detail)

    def _re_kinded(
        self, span: Span, name: str, was: str, became: str, was_decls: list[Declared]
    ) -> Draft | None:
        if became == "function" and self.called is not None and self.called(name):
            return None  # Ollama's code already calls it
        owner = next((d.owner for d in was_decls if d.owner), "")
        detail = (
            f"Ollama's compatibility code uses {code_span(name)}; upstream turned it from a {was} into a {became}"
            + (f" of {code_span(owner)}" if owner else "")
            + f" in {code_span(self.change.path)}"
            + (f": it must now be called, {code_span(f'{name}()')}." if became == "function" else ".")
        )
        return _draft(
            self.change,
            span,
            name,
            self.uses,
            f"{code_span(name)} changed from {was} to {became} upstream",
            detail,
        )


def compat_drafts(
    uses: Mapping[str, Sequence[LocalRef]],
    change: FileChange,
    added_elsewhere: Callable[[str], set[str]],
    *,
    still_declared: Callable[[str, str], bool] | None = None,
    called: Callable[[str], bool] | None = None,
    reaches: Callable[[Declared], bool] = lambda declared: True,
) -> list[Draft]:
    """Declarations Ollama's compat code uses that this upstream header change removes, renames, re-kinds
    or whose parameter types it changes (what a source file declares, no other file sees).

    A declaration belongs to its struct or enum: a field `n_layer` of `llama_hparams` that became a
    function is a change even while another struct keeps a field `n_layer`, and a field whose struct
    is gone is removed, whatever else of that name another file declares. `added_elsewhere(name)`
    gives the kinds `name` is declared as on added lines of the other changed files (a declaration that
    only moved is no removal); `still_declared(name, kind)` says whether the headers Ollama's code
    includes still declare it as that kind at the new ref. Both are called only for a vanished name.
    `called(name)` says whether every use in Ollama's code already calls it: a field that became a
    function is then already adapted to. `reaches(declaration)` says whether Ollama's uses of its name can
    be uses of it (a field of one struct is not what a bare name in another class's method reaches).
    """
    if not change.old_path or not change.old_path.endswith(HEADERS) or not change.significant:
        return []
    old = declared(change.old_code_lines)
    old_at = _used_at(old, uses, reaches)
    if not old_at:
        return []
    new = declared_after(change) if change.new_path else ()
    members, arrived = _new_declarations(old, new)
    header = _HeaderChange(
        change, uses, tuple(new), members, arrived, added_elsewhere, still_declared, called
    )
    drafts = []
    for span in change.significant:
        gone = _taken_away(span, old_at)
        found = (header.name_draft(span, name, gone[name]) for name in sorted(gone))
        drafts += [draft for draft in found if draft is not None]
    return drafts


def _used_at(
    old: Iterable[Declared], uses: Mapping[str, Sequence[LocalRef]], reaches: Callable[[Declared], bool]
) -> dict[int, list[Declared]]:
    """The old declarations of names Ollama's code uses (and can reach), by line."""
    old_at: dict[int, list[Declared]] = {}
    for d in old:
        if d.name in uses and reaches(d):
            old_at.setdefault(d.line, []).append(d)
    return old_at


def _new_declarations(
    old: Iterable[Declared], new: Iterable[Declared]
) -> tuple[dict[tuple[str, str], list[Declared]], dict[str, set[str]]]:
    """The new declarations by (owner, name), and the kinds of names declared where they were not before."""
    before = {(d.owner, d.name, d.kind) for d in old}
    members: dict[tuple[str, str], list[Declared]] = {}
    arrived: dict[str, set[str]] = {}
    for d in new:
        members.setdefault((d.owner, d.name), []).append(d)
        if (d.owner, d.name, d.kind) not in before:
            arrived.setdefault(d.name, set()).add(d.kind)
    return members, arrived


def _types(decls: Iterable[Declared]) -> set[str]:
    """The declared types of the variables and fields among `decls`."""
    return {d.value_type for d in decls if d.kind in _TYPED and d.value_type}


def _taken_away(span: Span, old_at: Mapping[int, list[Declared]]) -> dict[str, list[Declared]]:
    """The used declarations on the span's old lines, by name."""
    gone: dict[str, list[Declared]] = {}
    for n in span.old_lines:
        for decl in old_at.get(n, ()):
            gone.setdefault(decl.name, []).append(decl)
    return gone


def _draft(
    change: FileChange,
    span: Span,
    name: str,
    uses: Mapping[str, Sequence[LocalRef]],
    title: str,
    detail: str,
    gone: bool = True,
) -> Draft:
    return Draft(
        area(name, change.path),
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
    name: str, was: list[Declared], now: list[Declared], path: str
) -> tuple[str, str] | None:
    """(title, detail) when a namespace-scope function Ollama calls lost the parameter list it had and
    no remaining overload accepts the old calls. A member function's name (`clear`, `begin`) says too
    little without the type of the object it is called on."""
    old = [d for d in was if d.kind == "function" and not d.owner]
    new = [d for d in now if d.kind == "function"]
    lost = _lost_overloads(old, new) if new else []  # with no old overload none is lost
    if not lost:
        return None
    return (
        f"Signature of {code_span(name)} changed upstream",
        f"Ollama's compatibility code calls {code_span(name)}, declared in {code_span(path)}.\n\n"
        f"Was: {code_span(f'{name}{lost[0].signature}')}\n\nNow: "
        + ", ".join(code_span(f"{name}{d.signature}") for d in new),
    )


def _lost_overloads(old: list[Declared], new: list[Declared]) -> list[Declared]:
    """The old overloads whose calls no new one accepts (same qualifiers, the old parameters then defaults)."""
    return [
        d
        for d in old
        if not any(
            _accepts_old_calls(d.parameters, n.parameters) and d.qualifiers == n.qualifiers for n in new
        )
    ]
