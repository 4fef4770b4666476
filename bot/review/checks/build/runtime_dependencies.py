"""Libraries a target Ollama installs newly links that Ollama's install leaves out of its payload: the
install carries only the runtime dependencies its filter keeps (`PRE_INCLUDE_REGEXES hipblas rocblas ...`,
`PRE_EXCLUDE_REGEXES ".*"`), so the shipped library needs the new one on the user's machine, or no longer
loads. A link reached anew because an option's default changed counts: the walk takes upstream's defaults
where Ollama sets nothing."""

from __future__ import annotations

import re
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
    before = {(k.target, k.library) for k in linked_libraries(old_texts, list(old_texts), options, targets)}
    built = {name for text in new_texts.values() for name in _DECLARED.findall(text)}
    drafts: dict[tuple[str, str], Draft] = {}
    for link in linked_libraries(new_texts, list(new_texts), options, targets):
        key = (link.target, link.library)
        bundling = carried.get(link.target)
        if bundling is None or key in before or link.library in built:
            continue
        if bundling.carries(link.library) is False:
            drafts.setdefault(key, _draft(link, bundling))
    return list(drafts.values())


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
