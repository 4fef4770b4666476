"""Ollama's compat sources: the upstream headers they include, transitively, and the names they use."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from bot import syntax
from bot.model import LocalRef
from bot.review.consumers.shared import (
    CPP_SOURCES,
    DEFAULT_COMPAT_DIR,
    INCLUDE,
    Refs,
    add_ref,
    frozen_refs,
    node_text,
    text_of,
)
from bot.review.source import code_text


def compat_source_texts(
    ollama: Mapping[str, str], paths: list[str], patches: list[tuple[str, object]]
) -> list[tuple[str, str, str]]:
    """(path, text, side) of every C/C++ text Ollama adds to the upstream build: the files in and below the
    patches' directory (side "ollama"), and per file a patch adds or edits, the lines its hunks add (side
    "patch", path `<patch>:<upstream path>`, each line where it stands in the patch file, the rest blank)."""
    dirs = sorted({posixpath.dirname(p) + "/" for p, _ in patches}) or [DEFAULT_COMPAT_DIR]
    roots = [d for d in dirs if not any(d != o and d.startswith(o) for o in dirs)]
    out = [
        (p, t, "ollama")
        for p in paths
        if p.endswith(CPP_SOURCES) and any(p.startswith(r) for r in roots)
        if (t := text_of(ollama, p)) is not None
    ]
    for patch_path, patch in patches:
        for fp in getattr(patch, "files", []):
            path = fp.new_path or ""
            if not path.endswith(CPP_SOURCES):
                continue
            lines: dict[int, str] = {}
            for hunk in fp.hunks:
                for offset, line in enumerate(hunk.lines):
                    if line.kind == "+":
                        lines[hunk.header_line + offset] = line.text.decode("utf-8", "replace").rstrip("\r\n")
            if lines:
                text = "\n".join(lines.get(n, "") for n in range(max(lines) + 1))
                out.append((f"{patch_path}:{path}", code_text(text, path), "patch"))
    return out


@dataclass(frozen=True)
class CompatUses:
    names: dict[str, tuple[LocalRef, ...]]
    strings: dict[str, tuple[LocalRef, ...]]


_USES_QUERY = """
(field_expression field: (field_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (qualified_identifier) @qualified_call)
(qualified_identifier) @qualified
(type_identifier) @type
(identifier) @bare
(string_content) @string
(preproc_defined (identifier) @macro)
(preproc_ifdef name: (identifier) @macro)
"""


_OWN_QUERY = """
(function_definition declarator: (function_declarator declarator: (_) @function))
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @function)))
(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @function)))
(declaration declarator: (function_declarator declarator: (_) @function))
(struct_specifier name: (type_identifier) @type body: (_))
(class_specifier name: (type_identifier) @type body: (_))
(enum_specifier name: (type_identifier) @type body: (_))
(enumerator name: (identifier) @local)
(type_definition declarator: (type_identifier) @type)
(alias_declaration name: (type_identifier) @type)
(namespace_definition name: (namespace_identifier) @namespace)
(preproc_def name: (identifier) @macro_def)
(preproc_function_def name: (identifier) @macro_def)
(parameter_declaration declarator: (_) @local)
(optional_parameter_declaration declarator: (_) @local)
(init_declarator declarator: (_) @local)
(declaration declarator: (identifier) @local)
(for_range_loop declarator: (_) @local)
(structured_binding_declarator (identifier) @local)
(lambda_capture_specifier (identifier) @local)
(field_declaration declarator: (_) @field)
(template_parameter_list (type_parameter_declaration (type_identifier) @type))
"""


def _declared(node: Node | None) -> str | None:
    """The name a declarator declares, through pointers, references, arrays and initialisers."""
    while node is not None and node.type not in ("identifier", "field_identifier", "type_identifier"):
        if node.type == "qualified_identifier":
            node = node.child_by_field_name("name")
            continue
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next(
                (c for c in node.named_children if c.type.endswith(("identifier", "declarator"))), None
            )
        node = inner
    return node_text(node) if node is not None else None


def compat_uses(sources: list[tuple[str, str, str]]) -> CompatUses:
    """Upstream identifiers the compat sources use (member accesses, calls, qualified names, types, macros,
    enum values) and their string literals; their own functions, types, locals and parameters are no uses."""
    own: set[str] = set()
    locals_: set[str] = set()
    strong: Refs = {}
    bare: Refs = {}
    strings: Refs = {}
    for path, text, _side in sources:
        root = syntax.root("cpp", text)
        for kind, nodes in syntax.captures("cpp", _OWN_QUERY, root).items():
            for node in nodes:
                name = _declared(node) if kind in ("local", "field", "function") else node_text(node)
                if not name:
                    continue
                name = name.rsplit("::", 1)[-1]
                (locals_ if kind in ("local", "field") else own).add(name)
        ref_path = path.split(":", 1)[0]  # a patch's lines are shown where they stand in the patch
        for kind, nodes in syntax.captures("cpp", _USES_QUERY, root).items():
            for node in nodes:
                ref = LocalRef(ref_path, node.start_point[0] + 1)
                if kind == "string":
                    add_ref(strings, node_text(node), ref)
                    continue
                name = node_text(node)
                if kind == "bare":
                    parent = node.parent
                    if parent is not None and parent.type in ("qualified_identifier",):
                        continue
                    add_ref(bare, name, ref)
                elif kind in ("qualified", "qualified_call"):
                    if node.parent is not None and node.parent.type == "qualified_identifier":
                        continue
                    compact = "".join(name.split())
                    add_ref(strong, compact, ref)
                    add_ref(strong, compact.rsplit("::", 1)[-1], ref)
                else:
                    add_ref(strong, name, ref)
    names: Refs = {}
    for name, refs in strong.items():
        last = name.rsplit("::", 1)[-1]
        head = name.split("::", 1)[0]
        if last in own or (head in own and "::" in name) or not re.fullmatch(r"[A-Za-z_][\w:<>,]*", name):
            continue
        names[name] = refs
    for name, refs in bare.items():
        if name in names:
            names[name].update(refs)
        elif name not in own and name not in locals_:
            names[name] = refs
    return CompatUses(frozen_refs(names), frozen_refs(strings))


def included_headers(
    sources: list[tuple[str, str, str]],
    ollama: Mapping[str, str],
    ollama_paths: list[str],
    upstream: Mapping[str, str],
    upstream_paths: list[str],
) -> frozenset[str]:
    """Upstream headers the compat sources include, transitively: `#include "x.h"` resolved in the
    includer's directory, else among upstream files named x.h (the one in the includer's directory first,
    then the shortest path), else among Ollama's compat files of that name."""
    by_name: dict[str, list[str]] = {}
    for path in upstream_paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    ollama_by_name: dict[str, list[str]] = {}
    for path, _text_, side in sources:
        if side == "ollama":
            ollama_by_name.setdefault(posixpath.basename(path), []).append(path)
    upstream_set = set(upstream_paths)
    ollama_set = set(ollama_paths)
    found: set[str] = set()
    queue: list[tuple[str, str, str]] = []  # (includer dir, include text, tree "upstream" | "ollama")
    for path, text, side in sources:
        includer = path.split(":", 1)[-1]
        tree = "ollama" if side == "ollama" else "upstream"  # a patch's lines land in upstream's tree
        for m in INCLUDE.finditer(text):
            queue.append((posixpath.dirname(includer), m[1], tree))
    seen_ollama: set[str] = {p for p, _, s in sources if s == "ollama"}
    while queue:
        base, name, tree = queue.pop()
        local = posixpath.normpath(posixpath.join(base, name))
        target: str | None = None
        target_tree = tree
        if tree == "upstream" and local in upstream_set:
            target, target_tree = local, "upstream"
        elif tree == "ollama" and local in ollama_set:
            target, target_tree = local, "ollama"
        else:
            candidates = [
                p for p in by_name.get(posixpath.basename(name), ()) if p.endswith("/" + name) or p == name
            ]
            if candidates:
                target = min(candidates, key=lambda p: (posixpath.dirname(p) != base, p.count("/"), p))
                target_tree = "upstream"
            elif posixpath.basename(name) in ollama_by_name:
                target, target_tree = ollama_by_name[posixpath.basename(name)][0], "ollama"
        if target is None or target in found or target in seen_ollama:
            continue
        if target_tree == "upstream":
            found.add(target)
            included = text_of(upstream, target)
        else:
            seen_ollama.add(target)
            included = text_of(ollama, target)
        for m in INCLUDE.finditer(included or ""):
            queue.append((posixpath.dirname(target), m[1], target_tree))
    return frozenset(found)
