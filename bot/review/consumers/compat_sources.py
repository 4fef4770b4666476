"""Ollama's compat sources: the upstream headers they include, transitively, and the names they use."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.cache import facts
from bot.lang import syntax
from bot.lang.syntax import node_text
from bot.model import LocalRef
from bot.patches.patchfile import FilePatch
from bot.review.consumers.shared import (
    CPP_SOURCES,
    INCLUDE,
    Refs,
    add_ref,
    frozen_refs,
    text_of,
)
from bot.review.source import code_text


def compat_source_texts(
    ollama: Mapping[str, str], paths: list[str], patches: list[tuple[str, object]], compat_dir: str = ""
) -> list[tuple[str, str, str]]:
    """(path, text, side) of every C/C++ text Ollama adds to the upstream build: the files in and below the
    patches' directory, or the pin's configured one (`compat_dir`) when it carries none (side "ollama"), and
    per file a patch adds or edits, the lines its hunks add (side "patch", path `<patch>:<upstream path>`,
    each line where it stands in the patch file, the rest blank)."""
    roots = _compat_roots(patches, compat_dir)
    out = [
        (p, t, "ollama")
        for p in paths
        if p.endswith(CPP_SOURCES) and any(p.startswith(r) for r in roots)
        if (t := text_of(ollama, p)) is not None
    ]
    return out + _patch_sources(patches)


def _patch_sources(patches: list[tuple[str, object]]) -> list[tuple[str, str, str]]:
    """The sources of side "patch": per file a patch adds or edits, the C/C++ lines its hunks add."""
    out = []
    for patch_path, patch in patches:
        for fp in getattr(patch, "files", []):
            source = _patch_source(patch_path, fp)
            if source is not None:
                out.append(source)
    return out


def _compat_roots(patches: list[tuple[str, object]], compat_dir: str) -> list[str]:
    """The outermost directories holding the patches (else the configured one), with a slash."""
    configured = [compat_dir.rstrip("/") + "/"] if compat_dir else []
    dirs = sorted({posixpath.dirname(p) + "/" for p, _ in patches}) or configured
    return [d for d in dirs if not any(d != o and d.startswith(o) for o in dirs)]


def _patch_source(patch_path: str, fp: FilePatch) -> tuple[str, str, str] | None:
    """The C/C++ lines one file of a patch adds, each on its line of the patch file (the rest blank), as a
    source of side "patch"; None for another kind of file or one the patch adds nothing to."""
    path = fp.new_path or ""
    if not path.endswith(CPP_SOURCES):
        return None
    lines = {
        hunk.header_line + offset: line.text.decode("utf-8", "replace").rstrip("\r\n")
        for hunk in fp.hunks
        for offset, line in enumerate(hunk.lines)
        if line.kind == "+"
    }
    if not lines:
        return None
    text = "\n".join(lines.get(n, "") for n in range(max(lines) + 1))
    return f"{patch_path}:{path}", code_text(text, path), "patch"


@dataclass(frozen=True)
class CompatUses:
    names: dict[str, tuple[LocalRef, ...]]
    strings: dict[str, tuple[LocalRef, ...]]


_USES_QUERY = syntax.pattern(
    "cpp",
    """
(field_expression field: (field_identifier) @member)
(call_expression function: (identifier) @call)
(call_expression function: (qualified_identifier) @qualified_call)
(qualified_identifier) @qualified
(type_identifier) @type
(identifier) @bare
(string_content) @string
(preproc_defined (identifier) @macro)
(preproc_ifdef name: (identifier) @macro)
""",
)


_OWN_QUERY = syntax.pattern(
    "cpp",
    """
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
""",
)


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
    uses = _Uses()
    for path, text, _side in sources:
        # a patch's lines are shown where they stand in the patch
        file_own, file_locals, strong, bare, strings = _source_uses(text, path.split(":", 1)[0])
        own |= file_own
        locals_ |= file_locals
        for found, more in ((uses.strong, strong), (uses.bare, bare), (uses.strings, strings)):
            for name, refs in more.items():
                found.setdefault(name, {}).update(refs)
    names = _upstream_names(uses.strong, own)
    for name, refs in uses.bare.items():
        if name in names:
            names[name].update(refs)
        elif name not in own and name not in locals_:
            names[name] = refs
    return CompatUses(frozen_refs(names), frozen_refs(uses.strings))


# Ollama's compat sources change rarely: what each one declares and uses is kept by its text, as
# (its own names, its locals, its strong uses, its bare uses, its strings), the places given in `ref_path`.
SOURCE_USES = facts.Extractor("compat-source-uses", 1, __name__)
_SourceUses = tuple[frozenset[str], frozenset[str], Refs, Refs, Refs]


def _source_uses(text: str, ref_path: str) -> _SourceUses:
    return facts.remembered(
        SOURCE_USES, (facts.text_id(text), ref_path), lambda: _read_source_uses(text, ref_path)
    )


def _read_source_uses(text: str, ref_path: str) -> _SourceUses:
    root = syntax.root("cpp", text)
    own: set[str] = set()
    locals_: set[str] = set()
    uses = _Uses()
    _add_own(root, own, locals_)
    _add_uses(root, ref_path, uses)
    return frozenset(own), frozenset(locals_), uses.strong, uses.bare, uses.strings


def _add_own(root: Node, own: set[str], locals_: set[str]) -> None:
    """The names a source declares: its functions, types, namespaces and macros into `own`, its locals,
    parameters and fields into `locals_`."""
    for kind, nodes in syntax.captures(_OWN_QUERY, root).items():
        declared = locals_ if kind in ("local", "field") else own
        declared.update(name for node in nodes if (name := _own_name(kind, node)) is not None)


def _add_uses(root: Node, ref_path: str, uses: _Uses) -> None:
    """Every use a source makes, each recorded the way its capture says, at its line of `ref_path`."""
    for kind, nodes in syntax.captures(_USES_QUERY, root).items():
        record = _RECORD_USE.get(kind, _Uses.strong_use)
        for node in nodes:
            record(uses, node, LocalRef(ref_path, node.start_point[0] + 1))


def _own_name(kind: str, node: Node) -> str | None:
    """The unqualified name a compat source declares at a capture of `_OWN_QUERY`."""
    name = _declared(node) if kind in ("local", "field", "function") else node_text(node)
    return name.rsplit("::", 1)[-1] if name else None


@dataclass
class _Uses:
    """What the compat sources use: names that are surely upstream's when not their own (`strong`), bare
    identifiers that may be locals (`bare`), and string literals."""

    strong: Refs = field(default_factory=dict)
    bare: Refs = field(default_factory=dict)
    strings: Refs = field(default_factory=dict)

    def string_use(self, node: Node, ref: LocalRef) -> None:
        add_ref(self.strings, node_text(node), ref)

    def bare_use(self, node: Node, ref: LocalRef) -> None:
        """A bare identifier, unless it is part of a qualified name (counted as that)."""
        if node.parent is None or node.parent.type not in ("qualified_identifier",):
            add_ref(self.bare, node_text(node), ref)

    def qualified_use(self, node: Node, ref: LocalRef) -> None:
        """An outermost qualified name, compacted, and its last part."""
        if node.parent is not None and node.parent.type == "qualified_identifier":
            return
        compact = "".join(node_text(node).split())
        add_ref(self.strong, compact, ref)
        add_ref(self.strong, compact.rsplit("::", 1)[-1], ref)

    def strong_use(self, node: Node, ref: LocalRef) -> None:
        add_ref(self.strong, node_text(node), ref)


_RECORD_USE = {  # capture of `_USES_QUERY` -> how a use of it is recorded (else as a strong use)
    "string": _Uses.string_use,
    "bare": _Uses.bare_use,
    "qualified": _Uses.qualified_use,
    "qualified_call": _Uses.qualified_use,
}


def _upstream_names(strong: Refs, own: set[str]) -> Refs:
    """The strong uses that name no declaration of the compat sources' own (nor anything inside one of
    their own namespaces or types) and look like a C++ name."""
    names: Refs = {}
    for name, refs in strong.items():
        last = name.rsplit("::", 1)[-1]
        head = name.split("::", 1)[0]
        if last in own or (head in own and "::" in name) or not re.fullmatch(r"[A-Za-z_][\w:<>,]*", name):
            continue
        names[name] = refs
    return names


def included_headers(
    sources: list[tuple[str, str, str]],
    ollama: Mapping[str, str],
    ollama_paths: list[str],
    upstream: Mapping[str, str],
    upstream_paths: list[str],
) -> frozenset[str]:
    """Upstream headers the compat sources include, transitively: `#include "x.h"` resolved in the
    includer's directory, else among upstream files named x.h (the one in the includer's directory first,
    then the shortest path), else among Ollama's compat files of that name. A patch's lines are compiled in
    the upstream file it edits, so they see that file's includes too."""
    walk = _Includes(sources, ollama, ollama_paths, upstream, upstream_paths)
    queue: list[tuple[str, str, str]] = []  # (includer dir, include text, tree "upstream" | "ollama")
    for path, text, side in sources:
        includer = path.split(":", 1)[-1]
        tree = "ollama" if side == "ollama" else "upstream"  # a patch's lines land in upstream's tree
        edited = (text_of(upstream, includer) or "") if side == "patch" else ""
        queue += [(posixpath.dirname(includer), m[1], tree) for m in INCLUDE.finditer(f"{text}\n{edited}")]
    while queue:
        resolved = walk.resolve(*queue.pop())
        if resolved is not None:
            queue += walk.visit(*resolved)
    return frozenset(walk.found)


def _by_file_name(paths: list[str]) -> dict[str, list[str]]:
    """The paths by their file name, each name's in the order given: where an include's name may lead."""
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    return by_name


class _Includes:
    """The include walk over Ollama's and upstream's trees: where an include resolves, and which files it
    has read (upstream headers found, Ollama files seen)."""

    def __init__(
        self,
        sources: list[tuple[str, str, str]],
        ollama: Mapping[str, str],
        ollama_paths: list[str],
        upstream: Mapping[str, str],
        upstream_paths: list[str],
    ) -> None:
        self.ollama, self.upstream = ollama, upstream
        compat = [p for p, _, s in sources if s == "ollama"]
        self.by_name = _by_file_name(upstream_paths)
        self.ollama_by_name = _by_file_name(compat)
        self.trees = {"upstream": set(upstream_paths), "ollama": set(ollama_paths)}
        self.found: set[str] = set()
        self.seen_ollama: set[str] = set(compat)

    def resolve(self, base: str, name: str, tree: str) -> tuple[str, str] | None:
        """The file (and its tree) `#include "name"` in directory `base` of `tree` reads, when it is one not
        read yet: beside the includer, else an upstream file of that name, else an Ollama compat file."""
        target = self._target(base, name, tree)
        if target is None or target[0] in self.found or target[0] in self.seen_ollama:
            return None
        return target

    def _target(self, base: str, name: str, tree: str) -> tuple[str, str] | None:
        local = posixpath.normpath(posixpath.join(base, name))
        if local in self.trees[tree]:
            return local, tree
        candidates = [
            p for p in self.by_name.get(posixpath.basename(name), ()) if p.endswith("/" + name) or p == name
        ]
        if candidates:
            return min(candidates, key=lambda p: (posixpath.dirname(p) != base, p.count("/"), p)), "upstream"
        if posixpath.basename(name) in self.ollama_by_name:
            return self.ollama_by_name[posixpath.basename(name)][0], "ollama"
        return None

    def visit(self, target: str, tree: str) -> list[tuple[str, str, str]]:
        """Read the file and return its own includes to walk."""
        if tree == "upstream":
            self.found.add(target)
            included = text_of(self.upstream, target)
        else:
            self.seen_ollama.add(target)
            included = text_of(self.ollama, target)
        return [(posixpath.dirname(target), m[1], tree) for m in INCLUDE.finditer(included or "")]
