"""The identifiers Ollama's C/C++ compatibility code uses: those of its compat sources and of the C/C++
files its patches add, each with where it stands (bot/review/compat.py checks upstream's headers for them).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping

from bot.model import LocalRef
from bot.patchfile import PatchFile
from bot.review.compat import COMPAT_SOURCES
from bot.review.source import (
    C_SOURCES,
    C_STRING,
    FIXED_WIDTH_TYPES,
    LineIndex,
    code_text,
    extension,
    glob_match,
)

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
IDENT = re.compile(r"\b[A-Za-z_]\w{2,}")


def _ollama_identifiers(text: str) -> Iterable[tuple[str, int]]:
    index = LineIndex(text)
    for m in IDENT.finditer(C_STRING.sub(lambda s: " " * len(s[0]), text)):
        if m[0] not in _KEYWORDS:
            yield m[0], index.line(m.start())


def compat_uses(files: Mapping[str, str], patches: list[tuple[str, PatchFile]]) -> dict[str, list[LocalRef]]:
    """Identifiers of Ollama's compat sources (comment-free texts) and of the C/C++ files its patches add."""
    found: dict[str, list[LocalRef]] = {}
    compat = (
        (name, LocalRef(path, line))
        for path in sorted(p for p in files if glob_match(p, COMPAT_SOURCES))
        for name, line in _ollama_identifiers(files[path])
    )
    for name, ref in itertools.chain(compat, _patch_identifiers(patches)):
        refs = found.setdefault(name, [])
        if len(refs) < 10 and ref not in refs:
            refs.append(ref)
    return found


def _patch_identifiers(patches: list[tuple[str, PatchFile]]) -> Iterator[tuple[str, LocalRef]]:
    """The identifiers of the C/C++ files the patches add, each where it stands in its patch file."""
    for patch_path, pf in patches:
        for fp in pf.files:
            if not fp.is_new or extension(fp.path) not in C_SOURCES:
                continue
            for hunk in fp.hunks:
                added = "".join(
                    line.text.decode("utf-8", "replace") if line.kind == "+" else "\n" for line in hunk.lines
                )
                for name, line in _ollama_identifiers(code_text(added, fp.path)):
                    yield name, LocalRef(patch_path, hunk.header_line + line)
