"""GGML API declarations (`ggml/include/*.h`) that Ollama's Go, C and C++ code calls.

Ollama binds to ggml through cgo and its own C++: a removed function or a
changed signature breaks the build at best and memory at worst.
Parameter names are not part of a signature, so renaming one is no change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.source import FIXED_WIDTH_TYPES, LineIndex, globs, refs_by_name, split_args, tokens

HEADERS = globs(
    "ggml/include/*.h",
)
# Wherever Ollama's code may call ggml: its C and C++ sources, and its Go code (cgo, and the names it
# looks for in what ggml prints), in whichever folder
OLLAMA_USERS = globs("**/*.{go,c,cc,cpp,h,hpp}")
_DECL = re.compile(r"\b(GGML_API|GGML_BACKEND_API)\b([^;{}()]*?)\b((?:ggml|gguf)_\w+)\s*\(")
# led by the letters `gg`, the word boundary checked behind them: the scan jumps from one `gg` to the next
# (7x faster over all of Ollama's code than a pattern led by a look-ahead)
_USE = re.compile(r"gg(?<!\wgg)(?:ml|uf)_\w+")
_TYPE_WORDS = frozenset(
    [
        "void",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "bool",
        "const",
        "volatile",
        "struct",
        "enum",
        "union",
        *FIXED_WIDTH_TYPES,
    ]
)


@dataclass(frozen=True)
class Declaration:
    name: str
    signature: str
    deprecated: bool
    path: str
    line: int


def _parameter_type(param: str) -> str:
    """`struct ggml_tensor * a` -> `struct ggml_tensor *`; `int64_t ne[4]` -> `int64_t []`."""
    t = tokens(param)
    suffix = []
    if "[" in t:
        t, suffix = t[: t.index("[")], ["[]"]
    if _ends_in_name(t):
        t = t[:-1]
    return " ".join(t + suffix)


def _ends_in_name(t: list[str]) -> bool:
    """Whether a parameter's last token is its name: a word after a type, not a type word itself, the tag
    of `struct tag`, or the type of `const type`."""
    return bool(
        len(t) > 1
        and re.fullmatch(r"[A-Za-z_]\w*", t[-1])
        and t[-1] not in _TYPE_WORDS
        and t[-2] not in ("struct", "enum", "union")
        and t[:-1] != ["const"]
    )


def declarations(code: str, path: str) -> dict[str, Declaration]:
    """`GGML_API ret name(params);` of comment-free header code, by name."""
    index = LineIndex(code)
    found: dict[str, Declaration] = {}
    for m in _DECL.finditer(code):
        params, end = split_args(code, m.end() - 1)
        after = code[end : end + 40].lstrip()
        if not after.startswith((";", ",", ")")):
            continue  # a definition or a macro use, not a declaration
        start = max(
            code.rfind(";", 0, m.start()), code.rfind("}", 0, m.start()), code.rfind("{", 0, m.start())
        )
        deprecated = "GGML_DEPRECATED" in code[start + 1 : m.start()]
        signature = (
            f"{' '.join(tokens(m[2]))} {m[3]}({', '.join(_parameter_type(p) for p in params)})".strip()
        )
        found.setdefault(m[3], Declaration(m[3], signature, deprecated, path, index.line(m.start())))
    return found


def ollama_uses(files: Mapping[str, str]) -> dict[str, list[LocalRef]]:
    """ggml_*/gguf_* names in Ollama's Go, C and C++ code."""
    return refs_by_name(files, OLLAMA_USERS, _USE, limit=10)


def removed_title(name: str) -> str:
    """Shared with the compat detector so that both reports of one removal merge into one finding."""
    return f"{code_span(name)} was removed upstream"


def symbol_drafts(
    old: Mapping[str, Declaration],
    new: Mapping[str, Declaration],
    used: Mapping[str, list[LocalRef]],
    where_now: Callable[[str, int], int | None],
) -> list[Draft]:
    drafts = []
    for name in sorted(set(old) & set(used)):
        before, after, refs = old[name], new.get(name), tuple(used[name])
        if after is None:
            drafts.append(
                Draft(
                    "discovery",
                    "high",
                    removed_title(name),
                    f"{code_span(before.signature)} is no longer declared in {code_span(before.path)}; Ollama uses it.",
                    before.path,
                    where_now(before.path, before.line),
                    removed=(before.path, name),
                    local_refs=refs,
                )
            )
        elif after.signature != before.signature:
            drafts.append(
                Draft(
                    "discovery",
                    "high",
                    f"Signature of {code_span(name)} changed",
                    f"Was: {code_span(before.signature)}\n\nNow: {code_span(after.signature)}",
                    after.path,
                    after.line,
                    local_refs=refs,
                )
            )
        elif after.deprecated and not before.deprecated:
            drafts.append(
                Draft(
                    "discovery",
                    "medium",
                    f"{code_span(name)} is now deprecated",
                    f"Upstream marked {code_span(after.signature)} deprecated; Ollama uses it.",
                    after.path,
                    after.line,
                    local_refs=refs,
                )
            )
    return drafts
