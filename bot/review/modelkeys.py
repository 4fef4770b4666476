"""Optional model keys whose absence Ollama relies on, read another way by the bump.

A model's loader reads an optional key into a variable that holds a default when the model lacks it
(`uint32_t period = 4; ml.get_key(LLM_KV_FULL_ATTENTION_INTERVAL, period, false);`). Ollama's converters write
some keys only under a condition (`if q.Interval > 0 { kv["full_attention_interval"] = q.Interval }`) and its
compatibility code removes others from published models, so models it made or translated lack them and load
with the default. A bump that changes that default, or makes the key required, changes how those models load
(or fails them), and no text Ollama spells changes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft, FileChange
from bot.review.producers import function_above
from bot.review.source import LineIndex, opening_line, split_args

_READ = re.compile(r"\bget_key\w*\s*(\()\s*(LLM_KV_\w+)\s*,")
_KEY_NAME = re.compile(r'\{\s*(LLM_KV_\w+)\s*,\s*"(%s\.)?([\w.]+)"')
_ARCH_NAME = re.compile(r'\{\s*(LLM_ARCH_\w+)\s*,\s*"([\w.-]+)"')
_CASE = re.compile(r"^\s*case\s+(LLM_ARCH_\w+)\s*:")
DEFAULT_REACH = 12  # lines above a read where the variable it fills is given its default
CASE_REACH = 40  # lines above a read where the `case` of the architecture it loads may stand
GO_BLOCK_REACH = 20  # lines above a write in Ollama's Go code where the block holding it may open
REFS_SHOWN = 4
_GO_WRITE = '\\w+\\["{key}"\\]\\s*=(?!=)'
_REMOVES = re.compile(r"\b(?:\w*remove\w*|delete)\s*\(")
_OPENS_CONDITION = re.compile(r"^\s*(?:\}\s*else\b|if\b|case\b|for\b)")


@dataclass(frozen=True)
class KeyRead:
    """An optional or required read of a model key into a variable, in a function of one file."""

    key: str  # the key's enum: LLM_KV_FULL_ATTENTION_INTERVAL
    function: str
    required: bool
    default: str | None  # what the variable holds before the read, as written (squeezed); None if not found
    line: int  # 1-based, of the new text


def reads(code: str) -> dict[tuple[str, str], KeyRead]:
    """The first read of each key in each function of a file's comment-free code."""
    lines = code.split("\n")
    index = LineIndex(code)
    found: dict[tuple[str, str], KeyRead] = {}
    for m in _READ.finditer(code):
        args, _ = split_args(code, m.start(1))
        line = index.line(m.start())
        function = function_above(lines, line) or ""
        if len(args) < 2 or (m[2], function) in found:
            continue
        required = args[-1] != "false" if len(args) > 2 else True
        found[(m[2], function)] = KeyRead(m[2], function, required, _default(lines, line, args[1]), line)
    return found


def _default(lines: list[str], line: int, variable: str) -> str | None:
    """The value a local variable is given nearest above its read, squeezed; None for a member or when
    not found."""
    if not re.fullmatch(r"[A-Za-z_]\w*", variable):
        return None
    given = re.compile(rf"\b{re.escape(variable)}\s*(?:=(?!=)\s*([^;]+);|\{{([^}}]*)\}})")
    for n in range(line - 1, max(0, line - DEFAULT_REACH), -1):
        m = given.search(lines[n - 1])
        if m is not None:
            return " ".join((m[1] or m[2] or "").split())
    return None


@dataclass(frozen=True)
class ReadChange:
    """A key read the bump changed: required now, or given another default."""

    before: KeyRead
    after: KeyRead
    path: str
    archs: tuple[str, ...]  # the architectures the read loads, by name


def changed_reads(change: FileChange, archs: Mapping[str, str]) -> list[ReadChange]:
    """The reads of the change's functions whose default changed or that are now required, with the
    architectures they load (`archs`: enum -> name): the file's own name, or the `case`s above the read."""
    old, new = reads(change.old_code), reads(change.new_code)
    found = []
    for key, after in new.items():
        before = old.get(key)
        if before is None or not _changed(before, after):
            continue
        loaded = _archs(change, after.line, archs)
        if loaded:
            found.append(ReadChange(before, after, change.path, loaded))
    return found


def _changed(before: KeyRead, after: KeyRead) -> bool:
    if after.required and not before.required:
        return True
    return before.default is not None and after.default is not None and before.default != after.default


def _archs(change: FileChange, line: int, archs: Mapping[str, str]) -> tuple[str, ...]:
    stem = posixpath.splitext(posixpath.basename(change.path))[0]
    if stem in archs.values():
        return (stem,)
    lines = change.new_code_lines
    found: list[str] = []
    for n in range(line - 1, max(0, line - CASE_REACH), -1):
        m = _CASE.match(lines[n - 1])
        if m:
            found.append(archs.get(m[1], ""))
        elif found:
            break
    return tuple(a for a in found if a)


def table_names(code: str) -> tuple[dict[str, str], dict[str, str]]:
    """The architecture table's names: (key enum -> key, `%s.` written as `{arch}.`), (arch enum -> name)."""
    keys = {m[1]: ("{arch}." if m[2] else "") + m[3] for m in _KEY_NAME.finditer(code)}
    return keys, {m[1]: m[2] for m in _ARCH_NAME.finditer(code)}


# ------------------------------------------------------------------------------------------ Ollama's side


@dataclass(frozen=True)
class Reliance:
    """Where Ollama's code leaves a model without a key: a write under a condition, or a removal."""

    how: str  # "writes it only under a condition", "removes it"
    refs: tuple[LocalRef, ...]


def reliances(ollama: Mapping[str, str], arch: str, key: str) -> list[Reliance]:
    """Where Ollama's code writes the key of `arch` only under a condition (Go, `kv["key"] = ...` inside an
    `if`) or removes it (`gguf_remove_key(meta, "arch.key")`): the key's full name, or its name without the
    architecture in a file that names the architecture."""
    full = key.replace("{arch}", arch)
    bare = key.replace("{arch}.", "")
    found = []
    for path in ollama:
        if not _source(path):
            continue
        text = ollama.get(path) or ""
        if bare not in text:
            continue
        named = f'"{arch}"' in text or f'"{arch}.' in text
        names = [full] + ([bare] if bare != full and named else [])
        found += list(_places(path, text, names))
    return found


def _source(path: str) -> bool:
    if path.endswith(".go"):
        return not path.endswith("_test.go")
    return path.endswith((".c", ".cc", ".cpp", ".h", ".hpp"))


def _places(path: str, text: str, names: list[str]) -> Iterator[Reliance]:
    lines = text.split("\n")
    for name in names:
        quoted = f'"{name}"'
        write = re.compile(_GO_WRITE.format(key=re.escape(name)))
        for n, line in enumerate(lines, 1):
            if quoted not in line:
                continue
            if _REMOVES.search(line):
                yield Reliance("removes it", (LocalRef(path, n),))
            elif path.endswith(".go") and write.search(line):
                opened = _condition_above(lines, n)
                if opened is not None:
                    yield Reliance(
                        "writes it only under a condition", (LocalRef(path, opened), LocalRef(path, n))
                    )


def _condition_above(lines: list[str], line: int) -> int | None:
    """The line opening the block that holds `line`, when it is a condition (`if`, `else`, `case`, a
    loop)."""
    n = opening_line(lines, line, GO_BLOCK_REACH)
    return n if n is not None and _OPENS_CONDITION.match(lines[n - 1]) else None


# ------------------------------------------------------------------------------------------ the findings


def key_drafts(changed: list[ReadChange], keys: Mapping[str, str], ollama: Mapping[str, str]) -> list[Draft]:
    """One medium draft per changed read of a key Ollama leaves some of its models without."""
    drafts = []
    for read in changed:
        key = keys.get(read.after.key)
        if key is None:
            continue
        for arch in read.archs:
            found = reliances(ollama, arch, key)
            if found:
                drafts.append(_draft(read, key.replace("{arch}", arch), found))
                break
    return drafts


def _draft(read: ReadChange, name: str, found: list[Reliance]) -> Draft:
    before, after = read.before, read.after
    if after.required and not before.required:
        title, what = "is now required", "is now required: a model without it fails to load"
    else:
        title = "has another default"
        what = (
            f"is read with another default: {code_span(str(before.default))} before, "
            f"{code_span(str(after.default))} now: a model without it loads another way"
        )
    how = "; ".join(dict.fromkeys(r.how for r in found))
    refs = tuple(dict.fromkeys(ref for r in found for ref in r.refs))[:REFS_SHOWN]
    return Draft(
        "models",
        "medium",
        f"Model key {code_span(name)} {title}, and Ollama {how}",
        f"{code_span(read.after.function)} reads {code_span(name)} ({code_span(read.after.key)}), which {what}. "
        f"Ollama's code {how}, so models it made or translated lack the key: check they still load as "
        "they did.",
        read.path,
        read.after.line,
        ((read.after.line, read.after.line),),
        local_refs=refs,
        cause=f"model key {name}",
    )
