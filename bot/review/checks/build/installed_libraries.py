"""Shared libraries upstream's build newly makes a target Ollama installs load, which Ollama's install leaves
out: Ollama installs named targets (`install(TARGETS ${_base_libs} ...)`) and files its globs find, so a
library the shipped program links that became shared, or that is new, is not in the payload, and the program
does not start on the user's machine. Only what changed between the refs is told."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.bundling import bundlings
from bot.review.consumers.contracts.build import build_items, installed_programs
from bot.review.consumers.libraries import Target, library_graph, shared_by_default
from bot.review.consumers.shared import OLLAMA_CMAKE, OptionSetting, text_of
from bot.review.consumers.upstream_build import Link
from bot.review.source import glob_match

if TYPE_CHECKING:
    from bot.review.run import Run

# the file name part of a quoted glob in Ollama's CMake code that names a library before its first `*`
# ("${_dir}/libggml-cpu*"); one naming nothing (`*.dll`) is taken for a glob of something else
_GLOB = re.compile(r"""[/"]((?:lib)?[\w+-]{3}[\w.+-]*\*[\w.*+-]*)\\?["]""")
MAX_GLOBS = 64


@check(
    "build.installed-libraries",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def installed_libraries(run: Run) -> list[Draft]:
    installed = installed_programs(run.local, list(run.local))
    if not installed:
        return []
    options = run.consumers.options
    shipped = _Shipped(installed, _install_globs(run.local), bundlings(run.local, list(run.local)))
    old_texts, new_texts = run.cmake_texts
    now = _unshipped(new_texts, options, shipped)  # mostly none: the old ref is read only when some are
    before = _unshipped(old_texts, options, shipped) if now else {}
    return _drafts(run, [v for name, v in sorted(now.items()) if name not in before])


def _drafts(run: Run, told: list[tuple[Target, str, Link]]) -> list[Draft]:
    """The items, with the lines where Ollama names each target that loads a library left out."""
    if not told:
        return []
    refs = {i.name: i.refs for i in build_items(run.local, list(run.local)) if i.kind == "target"}
    settings = run.consumers.options.get("BUILD_SHARED_LIBS", ())
    setting = next((s.ref for s in settings if s.value.upper() == "ON"), None)
    return [_draft(target, root, link, refs.get(root, ()), setting) for target, root, link in told]


class _Shipped:
    """What Ollama's install carries: the targets it names, the files its globs find, the runtime
    dependencies it carries beside a target."""

    def __init__(self, installed: frozenset[str], globs: list[str], carried: Mapping) -> None:
        self.installed = installed
        self.globs = globs
        self.carried = carried

    def ships(self, library: str) -> bool:
        if library in self.installed:
            return True
        files = (f"lib{library}.so", f"{library}.dll", f"lib{library}.dylib")
        if any(fnmatch.fnmatchcase(f, g) for f in files for g in self.globs):
            return True
        return any(b.carries(library) is not False for b in self.carried.values())


def _install_globs(ollama: Mapping[str, str]) -> list[str]:
    globs: list[str] = []
    for path in ollama:
        if glob_match(path, OLLAMA_CMAKE) and "*" in (text := text_of(ollama, path) or ""):
            globs += _GLOB.findall(text)
    return globs[:MAX_GLOBS]


def _unshipped(
    upstream: Mapping[str, str], options: Mapping[str, tuple[OptionSetting, ...]], shipped: _Shipped
) -> dict[str, tuple[Target, str, Link]]:
    """Each shared library an installed target loads that the install leaves out, with its declaration and
    the link that reaches it."""
    graph = library_graph(upstream, list(upstream), options)
    shared = shared_by_default(options)
    return {
        name: (next(t for t in graph.targets[name] if t.shared(shared)), root, link)
        for name, (root, link) in graph.loaded(shipped.installed, shared).items()
        if not shipped.ships(name)
    }


def _draft(
    target: Target, root: str, link: Link, refs: tuple[LocalRef, ...], setting: LocalRef | None
) -> Draft:
    kind = "declared SHARED" if target.kind == "SHARED" else "declared without a kind"
    because = (
        f", and Ollama's build sets {code_span('BUILD_SHARED_LIBS')} ON ({code_span(f'{setting.path}:{setting.line}')})"
        if target.kind == "" and setting is not None
        else ""
    )
    through = (
        ""
        if root == link.target
        else f"{code_span(root)} reaches {code_span(link.target)} through its links, and "
    )
    detail = (
        f"At the new ref {through}{code_span(link.target)} links {code_span(link.library)} "
        f"({code_span(f'{link.path}:{link.line}')}), a shared library there: {kind} at "
        f"{code_span(f'{target.path}:{target.line}')}{because}. Ollama's install does not carry it: it installs "
        "named targets and the files its globs find, and names neither this library nor a pattern its file "
        f"matches. The shipped {code_span(root)} then cannot load it on the user's machine, and the "
        "programs that link it do not start. Install it beside the others, or keep it static."
    )
    return Draft(
        "build",
        "high",
        f"{code_span(target.name)} is now a shared library a shipped target loads, and Ollama's install leaves it out",
        detail,
        target.path,
        target.line,
        local_refs=refs,
        cause=f"installed-libraries:{target.name}",
    )
