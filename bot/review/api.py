"""One pinned upstream's API as the code that consumes it uses it: what a bump breaks there.

mlx-c wraps MLX's C++ API and is pinned on its own (`MLX_C_VERSION`): a bump of MLX that changes a
function mlx-c calls leaves mlx-c, at its pin, no longer compiling, although nothing in MLX's own diff
says so. The producer's side is every function and type its changed headers declare, at both refs; the
consumer's side is every call (with its argument count) and every qualified name in its sources. A call
is broken when no overload at the new ref takes its arguments the way the old one did; a qualified
name is broken when what it names is gone. Plain data in, drafts out: the engine reads both sides.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from bot.lang import cpp, syntax
from bot.markup import code_span
from bot.review import cppapi
from bot.review.changes import Draft
from bot.review.cppapi import Declared, Use

# export macros in front of declarations (`MLX_API void f();`, `class MLX_API array`): blanked before
# parsing, so the declaration reads as C++ does after the preprocessor
EXPORT_MACRO = re.compile(rb"\b[A-Z][A-Z0-9]*_(?:API|EXPORT)\b")
MAX_SITES = 8  # call sites listed per finding


@dataclass(frozen=True)
class ConsumerCode:
    """The sources of code that uses a pinned upstream, as the build compiles them."""

    name: str  # a pin's name, or "Ollama"
    label: str  # how the finding names it: "mlx-c at `fba4470b8907` with its carried patch"
    advice: str  # what to do when it no longer compiles
    files: Mapping[str, bytes]
    link: str = ""  # a URL prefix a path and `#L<line>` complete; "" for no links


@dataclass(frozen=True)
class ApiChange:
    """A function whose overloads lost a signature, or a type that is gone."""

    name: str  # qualified: `mlx::core::detail::compile_erase`
    kind: str  # function | type
    before: tuple[Declared, ...]
    after: tuple[Declared, ...]
    old_path: str
    path: str  # the header that declares it at the new ref (the old one when it is gone)


@dataclass(frozen=True)
class BrokenUse:
    path: str
    use: Use


def declarations(text: bytes) -> list[Declared]:
    """The functions and types a header declares, export macros read as the preprocessor leaves them."""
    blanked = EXPORT_MACRO.sub(lambda m: b" " * len(m.group()), text)
    return [d for d in cppapi.interface(blanked) if d.kind in ("function", "type") and d.name != d.owner]


def _normal(parameter: str) -> str:
    return re.sub(r"\s*([&*<>,:()\[\]])\s*", r"\1", parameter)


def _signature(d: Declared) -> tuple[str, ...]:
    """Parameter types, `=` ending those with a default."""
    return tuple(_normal(p) for p in d.parameters if _normal(p) != "void")


def _passed_as(parameter: str) -> str:
    """What a caller's argument binds to: `T`, `const T` and `const T&` take the same arguments."""
    kind = parameter.rstrip("=")
    if kind.startswith("const ") and not kind.endswith(("*", "&&")):  # `const char*` points to const
        kind = kind.removeprefix("const ").removesuffix("&")
    return kind


def _types(d: Declared) -> tuple[str, ...]:
    return tuple(_passed_as(p) for p in _signature(d))


def _index(headers: Mapping[str, bytes]) -> dict[str, list[tuple[str, Declared]]]:
    found: dict[str, list[tuple[str, Declared]]] = {}
    for path, text in sorted(headers.items()):
        for d in declarations(text):
            found.setdefault(d.qualified, []).append((path, d))
    return found


def api_changes(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> list[ApiChange]:
    """What the bump removed or re-signed among the declarations of the headers it changed (path -> text at
    each ref). An added overload breaks nobody; a signature that no longer exists may."""
    before, after = _index(old), _index(new)
    changes = []
    for name, entries in sorted(before.items()):
        now = after.get(name, [])
        kind = _lost_kind(entries, now)
        if kind is None:
            continue
        changes.append(
            ApiChange(
                name,
                kind,
                _of_kind(entries, kind),
                _of_kind(now, kind),
                entries[0][0],
                now[0][0] if now else entries[0][0],
            )
        )
    return changes


def _lost_kind(entries: list[tuple[str, Declared]], now: list[tuple[str, Declared]]) -> str | None:
    """ "function" for a function whose overloads lost a signature, "type" for a type that is no longer a type,
    None for a name nothing was taken from."""
    if any(d.kind == "function" for _, d in entries):
        return "function" if _signatures(entries) - _signatures(now) else None
    if any(d.kind == "type" for _, d in now):
        return None
    return "type"


def _signatures(entries: list[tuple[str, Declared]]) -> set[tuple[str, ...]]:
    return {_signature(d) for _, d in entries if d.kind == "function"}


def _of_kind(entries: list[tuple[str, Declared]], kind: str) -> tuple[Declared, ...]:
    return tuple(d for _, d in entries if d.kind == kind)


def accepts(d: Declared, count: int) -> bool:
    """Whether a call passing `count` arguments can bind to the declaration."""
    params = _signature(d)
    required = sum(1 for p in params if not p.endswith("=") and "..." not in p)
    if any("..." in p for p in params):
        return count >= required
    return required <= count <= len(params)


def breaks(change: ApiChange, use: Use) -> bool:
    """Whether the use compiled against the old declarations and no longer does: a type or function that is
    gone; a call no new overload takes that many arguments from; a call whose arguments the new overloads
    take as other types at a position it passes (a parameter inserted before them). A call that fitted no
    old overload was written for the new one."""
    if not change.after:
        return True
    if use.arguments is None:
        return False  # a function named, not called: its address or a friend declaration
    passed = use.arguments
    fit_before = [d for d in change.before if accepts(d, passed)]
    if not fit_before:
        return False
    fit_now = [d for d in change.after if accepts(d, passed)]
    return not _take_alike(fit_now, fit_before, passed)


def _take_alike(now: list[Declared], before: list[Declared], passed: int) -> bool:
    """Whether some new overload takes the first `passed` arguments as the same types as an old one does."""
    return any(_types(n)[:passed] == _types(o)[:passed] for n in now for o in before)


def _refers(spelled: str, change: ApiChange) -> bool:
    """Whether a spelled name means the changed declaration: a qualified name that ends its qualified name,
    or an unqualified name of a function at global scope (a C function). An unqualified name of a
    namespace's function, or a member call `.name`, could be anyone's."""
    spelled = spelled.removeprefix("::")
    if spelled.startswith("."):
        return False
    if "::" not in spelled:
        return change.name == spelled
    return change.name == spelled or change.name.endswith("::" + spelled)


_CGO_CALL = syntax.pattern(
    "go",
    "(call_expression function: (selector_expression operand: (identifier) @package) arguments: (argument_list) @args) @call",
)


def cgo_uses(source: bytes) -> tuple[Use, ...]:
    """The C functions a Go file calls through cgo (`C.mlx_array_free(a)`), with their argument counts."""
    calls = syntax.captures(_CGO_CALL, syntax.root("go", source)).get("call", [])
    return tuple(use for use in map(_cgo_use, calls) if use is not None)


def _cgo_use(call: Node) -> Use | None:
    """A call of `C.<function>(...)`; None for a call on another package or value."""
    function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return None
    package, field = function.child_by_field_name("operand"), function.child_by_field_name("field")
    if package is None or field is None or package.text != b"C":
        return None
    count = sum(1 for a in arguments.named_children if a.type != "comment")
    return Use(call.start_point[0] + 1, (field.text or b"").decode(), count)


def _uses(path: str, text: bytes) -> tuple[Use, ...]:
    if path.endswith(".go"):
        return cgo_uses(text)
    return cppapi.uses(text) if cpp.is_c_family(path) else ()


def broken_uses(changes: list[ApiChange], consumer: ConsumerCode) -> dict[str, list[BrokenUse]]:
    """Per changed name, the consumer's uses that no longer compile: in C and C++ files, and the cgo calls
    of Go files. Files that do not spell a changed name are never parsed."""
    words = {c.before[0].name.encode() for c in changes}
    found: dict[str, list[BrokenUse]] = {}
    for path, text in sorted(consumer.files.items()):
        if not any(w in text for w in words):
            continue
        for use in _uses(path, text):
            for change in _broken_by(use, changes):
                found.setdefault(change.name, []).append(BrokenUse(path, use))
    return found


def _broken_by(use: Use, changes: list[ApiChange]) -> Iterator[ApiChange]:
    """The changed declarations the use means and no longer compiles against."""
    return (change for change in changes if _refers(use.name, change) and breaks(change, use))


def _parameters(d: Declared) -> list[tuple[str, str]]:
    """(type, name) of each parameter, `=` ending the type of one with a default; "" for no name."""
    names = d.parameter_names + ("",) * (len(d.parameters) - len(d.parameter_names))
    return [(_normal(t), n) for t, n in zip(d.parameters, names) if _normal(t) != "void"]


def _shown(parameter: tuple[str, str]) -> str:
    """A parameter as the declaration spells it, its default value elided."""
    kind, name = parameter
    text = f"{kind.rstrip('=')} {name}".strip() if name else kind.rstrip("=")
    return text + (" = …" if kind.endswith("=") else "")


def _declared(d: Declared) -> str:
    if d.kind != "function":
        return d.qualified
    return f"{d.qualified}({', '.join(_shown(p) for p in _parameters(d))})"


def _closest(before: Declared, after: tuple[Declared, ...]) -> Declared:
    """The new overload most like an old one: the most parameters in common, by name then by type."""
    old = set(_parameters(before))
    return max(after, key=lambda d: (len(old & set(_parameters(d))), -abs(len(_parameters(d)) - len(old))))


def parameter_changes(before: Declared, after: Declared) -> list[str]:
    """What changed between two signatures, parameter by parameter: by name when both name every
    parameter, else by position."""
    old, new = _parameters(before), _parameters(after)
    if all(n for _, n in old + new):
        return _changes_by_name(old, new)
    return _changes_by_position(old, new)


def _changes_by_name(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> list[str]:
    old_types, new_names = {n: t for t, n in old}, {n for _, n in new}
    said = [_named_change(position, new, old_types) for position in range(len(new))]
    said += [
        f"parameter {code_span(_shown((kind, name)))} removed" for kind, name in old if name not in new_names
    ]
    return [s for s in said if s]


def _named_change(position: int, new: list[tuple[str, str]], old_types: dict[str, str]) -> str:
    """What became of the new signature's parameter at `position`: new, re-typed, or "" (as it was)."""
    kind, name = new[position]
    if name not in old_types:
        following = next((n for _, n in new[position + 1 :] if n in old_types), None)
        return f"new parameter {code_span(_shown((kind, name)))}" + (
            f" before {code_span(following)}" if following else ""
        )
    was, now = old_types[name].rstrip("="), kind.rstrip("=")
    return f"parameter {code_span(name)}: {code_span(was)} became {code_span(now)}" if was != now else ""


def _changes_by_position(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> list[str]:
    said = [_positional_change(n, old, new) for n in range(max(len(old), len(new)))]
    return [s for s in said if s]


def _positional_change(position: int, old: list[tuple[str, str]], new: list[tuple[str, str]]) -> str:
    """What became of the parameter at `position`: added, removed, re-typed, or "" (as it was)."""
    if position >= len(old):
        return f"new parameter {position + 1}: {code_span(_shown(new[position]))}"
    if position >= len(new):
        return f"parameter {position + 1} {code_span(_shown(old[position]))} removed"
    was, now = old[position], new[position]
    if was[0].rstrip("=") == now[0].rstrip("="):
        return ""
    return f"parameter {position + 1}: {code_span(_shown(was))} became {code_span(_shown(now))}"


def _signature_change(change: ApiChange, sites: list[BrokenUse]) -> list[str]:
    """What changed in the signature the broken calls were written for."""
    if not change.after:
        return []
    lost = _lost_overload(change, sites)
    return parameter_changes(lost, _closest(lost, change.after))


def _lost_overload(change: ApiChange, sites: list[BrokenUse]) -> Declared:
    """The old overload the broken calls were written for: one they fit whose signature is gone."""
    passed = next((s.use.arguments for s in sites if s.use.arguments is not None), None)
    fitted = [d for d in change.before if passed is not None and accepts(d, passed)] or list(change.before)
    kept = {_signature(a) for a in change.after}
    return next((d for d in fitted if _signature(d) not in kept), fitted[0])


def _site(consumer: ConsumerCode, site: BrokenUse) -> str:
    where = f"{site.path}:{site.use.line}"
    shown = (
        f"[{code_span(f'{consumer.name}:{where}')}]({consumer.link}{site.path}#L{site.use.line})"
        if consumer.link
        else (code_span(f"{consumer.name}:{where}"))
    )
    called = f"calls {code_span(site.use.name)} with {site.use.arguments} argument{'s' if site.use.arguments != 1 else ''}"
    return f"- {shown} " + (called if site.use.arguments is not None else f"names {code_span(site.use.name)}")


def _briefly(changed: list[str]) -> str:
    """The signature change for a title: the first part, and how many more."""
    more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
    return changed[0] + more


def consumer_drafts(
    producer: str, changes: list[ApiChange], consumer: ConsumerCode, where_now
) -> list[Draft]:
    """One high draft per changed declaration the consumer's code uses in a way that no longer compiles,
    naming both sides and what to do."""
    broken = broken_uses(changes, consumer)
    return [
        _consumer_draft(producer, change, broken[change.name], consumer, where_now)
        for change in changes
        if broken.get(change.name)
    ]


def _consumer_draft(
    producer: str, change: ApiChange, sites: list[BrokenUse], consumer: ConsumerCode, where_now
) -> Draft:
    """The draft of one changed or removed declaration, with the consumer's uses it breaks."""
    first = change.before[0]
    changed = _signature_change(change, sites)
    if change.after:
        what = "changed the signature of"
        sides = "Before: " + ", ".join(code_span(_declared(d)) for d in change.before)
        sides += ".\nNow: " + ", ".join(code_span(_declared(d)) for d in change.after) + "."
        sides = (f"Changed: {'; '.join(changed)}.\n" if changed else "") + sides
        line = change.after[0].line
    else:
        what = "removed"
        sides = f"It declared {code_span(_declared(first))} in {code_span(change.old_path)}."
        line = where_now(change.old_path, first.line)
    listed = "\n".join(_site(consumer, s) for s in sites[:MAX_SITES])
    more = f"\n- and {len(sites) - MAX_SITES} more" if len(sites) > MAX_SITES else ""
    named = f" ({_briefly(changed)})" if changed else ""
    return Draft(
        "build",
        "high",
        f"{producer} {what} {code_span(change.name)}{named}, which {consumer.name} still uses the old way",
        f"{consumer.label} no longer compiles against the new {producer}.\n\n{sides}\n\n"
        f"Calls written for the old declaration:\n{listed}{more}\n\n"
        f"{consumer.advice}",
        change.path,
        line,
        removed=(change.old_path, first.name) if not change.after else None,
    )
