"""Libraries a target Ollama installs newly links that Ollama's install leaves out of its payload: the
install carries only the runtime dependencies its filter keeps (`PRE_INCLUDE_REGEXES hipblas rocblas ...`,
`PRE_EXCLUDE_REGEXES ".*"`), so the shipped library needs the new one on the user's machine, or no longer
loads. A link reached anew because an option's default changed counts: the walk takes upstream's defaults
where Ollama sets nothing."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.markup import code_span
from bot.review.changes import Draft
from bot.review.checks import check
from bot.review.consumers.bundling import Bundling, bundlings
from bot.review.consumers.upstream_build import Link, linked_libraries

if TYPE_CHECKING:
    from bot.review.run import Run

_DECLARED = re.compile(r"\badd_(?:library|executable)\s*\(\s*([\w.+-]+)", re.IGNORECASE)


@check(
    "build.runtime-dependencies",
    area="build",
    inputs=("cmake", "ollama-build"),
    applies=lambda run: run.cmake_changed,
)
def runtime_dependencies(run: Run) -> list[Draft]:
    carried = bundlings(run.local, list(run.local))
    if not carried:
        return []
    old_texts, new_texts = run.cmake_texts
    options = run.consumers.options
    targets = frozenset(carried)
    old_links = linked_libraries(old_texts, list(old_texts), options, targets)
    new_links = linked_libraries(new_texts, list(new_texts), options, targets)
    before = {(k.target, k.library) for k in old_links}
    built = {name for text in new_texts.values() for name in _DECLARED.findall(text)}
    drafts: dict[tuple[str, str], Draft] = {}
    for link in new_links:
        key = (link.target, link.library)
        bundling = carried.get(link.target)
        if bundling is None or key in before or link.library in built:
            continue
        if bundling.carries(link.library) is False:
            drafts.setdefault(key, _draft(link, bundling))
    return [*drafts.values(), *_no_longer_loaded(old_links, new_links, carried)]


_STATIC = re.compile(r"(?i)(?:^|[_:-])static\b|_static|\.a$")  # a library linked into the target, not loaded


def _no_longer_loaded(old: list[Link], new: list[Link], carried: Mapping[str, Bundling]) -> list[Draft]:
    """A library the install's filter names that a target loaded and no longer loads (linked statically now,
    or not at all): the payload Ollama ships loses the file it carried, which what reads the payload (a
    runtime's version taken from its file name) may rely on. One no longer linked at all while the target
    still loads another library the filter keeps may come in through that one (`hipblas` loads `rocblas`):
    the walk of runtime dependencies still finds it, so that says nothing."""
    loads = {(k.target, k.library) for k in _loaded(new)}
    links = dict.fromkeys(k for k in _loaded(old) if k.target in carried)
    lost = (_lost(link, new, carried[link.target], loads) for link in links)
    return [draft for draft in lost if draft is not None]


def _lost(link: Link, new: list[Link], bundling: Bundling, loads: set[tuple[str, str]]) -> Draft | None:
    """The item for one library a carried target loaded, when the target no longer loads it."""
    pattern = bundling.kept_by(link.library)
    if pattern is None or _still_kept(link.target, pattern, bundling, loads):
        return None
    now = next((k for k in new if k.target == link.target and pattern in k.library.lower()), None)
    if now is None and _loads_a_kept_library(link.target, bundling, loads):
        return None
    return _lost_draft(link, now, bundling, pattern)


def _loads_a_kept_library(target: str, bundling: Bundling, loads: set[tuple[str, str]]) -> bool:
    return any(t == target and bundling.kept_by(library) is not None for t, library in loads)


def _loaded(links: list[Link]) -> list[Link]:
    """The links of libraries loaded at run time (not linked in statically)."""
    return [k for k in links if not _STATIC.search(k.library)]


def _still_kept(target: str, pattern: str, bundling: Bundling, loads: set[tuple[str, str]]) -> bool:
    """Whether the target still loads a library the pattern keeps."""
    return any(t == target and bundling.kept_by(library) == pattern for t, library in loads)


def _lost_draft(link: Link, now: Link | None, bundling: Bundling, pattern: str) -> Draft:
    instead = (
        f"it links {code_span(now.library)} instead ({code_span(f'{now.path}:{now.line}')}), which is not loaded at run time"
        if now is not None
        else "it no longer links it"
    )
    detail = (
        f"At the old ref {code_span(link.target)} loaded {code_span(link.library)} "
        f"({code_span(f'{link.path}:{link.line}')}); at the new ref {instead}. Ollama's install carries that "
        f"library beside {code_span(link.target)} on purpose (its filter keeps {code_span(pattern)}, "
        f"{code_span(f'{bundling.filtered.path}:{bundling.filtered.line}')}): the payload no longer holds it, "
        "and what reads the payload for it (a runtime's version taken from its file name, a library path) "
        "finds nothing. Check what Ollama relies on that file for, and drop it from the filter or keep the "
        "library shared."
    )
    return Draft(
        "build",
        "medium",
        f"{code_span(link.target)} no longer loads {code_span(link.library)}, which Ollama's install carries",
        detail,
        now.path if now else link.path,
        now.line if now else None,
        local_refs=(bundling.filtered, bundling.installed),
        cause=f"runtime-dependency-lost:{link.target}:{link.library}",
    )


def _draft(link: Link, bundling: Bundling) -> Draft:
    kept = " ".join(bundling.include) or "nothing"
    detail = (
        f"At the new ref {code_span(link.target)} links {code_span(link.library)} "
        f"({code_span(f'{link.path}:{link.line}')}), which the old ref's build of Ollama's did not. Ollama "
        f"installs {code_span(link.target)} with only the runtime dependencies its filter keeps "
        f"({code_span(kept)}, {code_span(bundling.filtered.path)}:{bundling.filtered.line}), so the shipped "
        f"library needs {code_span(link.library)} from the user's machine, or does not load and its devices "
        "go missing. Carry it (add it to the filter), or keep the build from linking it."
    )
    return Draft(
        "build",
        "medium",
        f"{code_span(link.target)} now links {code_span(link.library)}, which Ollama's install does not carry",
        detail,
        link.path,
        link.line,
        local_refs=(bundling.installed, bundling.filtered),
        cause=f"runtime-dependency:{link.target}:{link.library}",
    )
