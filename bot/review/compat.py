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

from bot.model import LocalRef
from bot.patchfile import PatchFile
from bot.review.changes import Draft, FileChange
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
_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)")
_TYPE = re.compile(r"^\s*(?:typedef\s+)?(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)\s*(?:[:{]|$)")
_ALIAS = re.compile(r"^\s*(?:using\s+(\w+)\s*=|typedef\b.*?\b(\w+)\s*;)")
_DECL_HEAD = r"^\s*(?:(?:[\w:]+(?:<[^;{}()]*>)?|[*&]+)\s+)+[*&]*"
_FUNCTION = re.compile(_DECL_HEAD + r"(~?\w+)\s*\(")
_FIELD = re.compile(_DECL_HEAD + r"(\w+)\s*(?:\[[^\]]*\]\s*)*(?:=[^;]*|\{[^;]*\})?;")
_ENUM_VALUE = re.compile(r"^\s*(\w+)\s*(?:=[^,]*)?,?\s*(?:\}.*)?$")
_STATEMENT_WORDS = frozenset(
    [
        "return",
        "else",
        "case",
        "goto",
        "new",
        "delete",
        "throw",
        "co_return",
        "if",
        "while",
        "for",
        "switch",
        "sizeof",
    ]
)


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


def _scope(header: str, outer: str) -> str:
    """What a `{` opens, from the text before it on its line (or the line before)."""
    if outer in ("function", "init"):
        return outer
    if re.search(r"\benum\b", header):
        return "enum"
    if re.search(r"\b(?:struct|class|union)\b", header) and "(" not in header:
        return "struct"
    if re.search(r"\bnamespace\b|\bextern\b", header):
        return "namespace"
    if ")" in header or re.search(r"\b(?:else|do|try)\s*$", header):
        return "function"
    return "init"


def declarations(code_lines: list[str]) -> list[tuple[int, str, str]]:
    """(line, kind, name) of comment-free lines: macros and types anywhere outside function bodies,
    functions and variables at namespace or struct scope, struct fields, and enum values.

    Function bodies are skipped: a local variable is nobody's interface."""
    found = []
    stack = ["namespace"]
    previous = ""
    for number, line in enumerate(code_lines, 1):
        scope = stack[-1]
        if scope in ("function", "init") and "{" not in line and "}" not in line and "#" not in line:
            continue  # the bulk of any file: statements inside bodies
        plain = C_STRING.sub('""', line) if '"' in line else line
        if m := _MACRO.match(line):
            found.append((number, "macro", m[1]))
        elif scope == "enum":
            if m := _ENUM_VALUE.match(plain):
                found.append((number, "enum value", m[1]))
        elif scope in ("namespace", "struct"):
            first = plain.split(None, 1)[:1]
            if m := _TYPE.match(plain):
                found.append((number, "type", m[1]))
            elif m := _ALIAS.match(plain):
                found.append((number, "type", m[1] or m[2]))
            elif first and first[0] not in _STATEMENT_WORDS:
                if m := _FUNCTION.match(plain):
                    found.append((number, "function", m[1].lstrip("~")))
                elif m := _FIELD.match(plain):
                    found.append((number, "field" if scope == "struct" else "variable", m[1]))
        if "{" in plain or "}" in plain:
            start = 0
            for brace in re.finditer(r"[{}]", plain):
                if brace[0] == "{":
                    header = plain[start : brace.start()].strip() or previous
                    stack.append(_scope(header, stack[-1]))
                elif len(stack) > 1:
                    stack.pop()
                start = brace.end()
        if scope not in ("function", "init") and plain.strip():
            previous = plain.strip()
    return found


def kinds_by_name(decls: Iterable[tuple[int, str, str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for _, kind, name in decls:
        found.setdefault(name, set()).add(kind)
    return found


def _by_line(decls: list[tuple[int, str, str]]) -> dict[int, list[tuple[str, str]]]:
    found: dict[int, list[tuple[str, str]]] = {}
    for line, kind, name in decls:
        found.setdefault(line, []).append((kind, name))
    return found


def _area(name: str, path: str) -> str:
    return (
        "discovery"
        if name.startswith("ggml_backend") or (path.startswith("ggml/") and name.startswith("ggml_"))
        else "models"
    )


def compat_drafts(
    uses: Mapping[str, list[LocalRef]], change: FileChange, added_elsewhere: Callable[[str], set[str]]
) -> list[Draft]:
    """Declarations Ollama's compat code uses that this upstream file change removes, renames or re-kinds.

    `added_elsewhere(name)` gives the kinds `name` is declared as on added lines of the other changed
    files (a declaration that only moved is no removal); it is called only for a vanished name.
    """
    drafts: list[Draft] = []
    if not change.old_path or not change.significant:
        return drafts
    old_at = _by_line(declarations(change.old_code_lines))
    new_decls = declarations(change.new_code_lines) if change.new_path else []
    new_at, new_kinds = _by_line(new_decls), kinds_by_name(new_decls)
    for span in change.significant:
        gone = kinds_by_name(
            (n, kind, name) for n in span.old_lines for kind, name in old_at.get(n, ()) if name in uses
        )
        if not gone:
            continue
        added = kinds_by_name((n, kind, name) for n in span.new_lines for kind, name in new_at.get(n, ()))
        for name in sorted(gone):
            old_kinds = gone[name]
            now = new_kinds.get(name) or added_elsewhere(name)
            if old_kinds & now:
                continue  # still declared as the same kind of thing
            blame = ((span.new_start, span.new_start + span.new_count - 1),) if span.new_count else ()
            was = "/".join(sorted(old_kinds))
            removed = (change.old_path or change.path, name)
            if now:
                became = "/".join(sorted(now))
                drafts.append(
                    Draft(
                        _area(name, change.path),
                        "high",
                        f"`{name}` changed from {was} to {became} upstream",
                        f"Ollama's compatibility code uses `{name}`; upstream turned it from a {was} into a {became} "
                        f"in `{change.path}`.",
                        change.path,
                        change.where(span),
                        blame,
                        removed,
                        tuple(uses[name]),
                    )
                )
                continue
            twins = [n for n, kinds in added.items() if old_kinds & kinds and n != name]
            twin = max(twins, key=lambda n: difflib.SequenceMatcher(None, n, name).ratio(), default=None)
            if twin is not None and difflib.SequenceMatcher(None, twin, name).ratio() < 0.5:
                twin = None
            drafts.append(
                Draft(
                    _area(name, change.path),
                    "high",
                    removed_title(name),
                    f"Ollama's compatibility code uses the {was} `{name}`, which `{change.path}` no longer declares"
                    + (f"; it was probably renamed to `{twin}`." if twin else "."),
                    change.path,
                    change.where(span),
                    blame,
                    removed,
                    tuple(uses[name]),
                )
            )
    return drafts
