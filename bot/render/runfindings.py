"""A platform run's findings (the contract probe's, read from its report) joined with the review's by cause:
a run finding on an Ollama line that a review finding names, or in an Ollama file it names and naming what
its title names in code (`repeat_penalty`), is that finding shown by a second witness, so it adds its
evidence to that item (and its severity, when higher) instead of a second box; the others are items of their
own. Only runs of the head count; their text came from a workflow and is made inert here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from bot.model import SEVERITY_ORDER, Finding
from bot.render.markdown import plain

RUN_LABEL = "The {platform} run shows it too"


def run_findings(rows: Iterable[dict]) -> list[tuple[str, Finding]]:
    """(platform, finding) of each platform row's report, for rows of the head."""
    return [
        (row["name"], _inert(f)) for row in rows if not row.get("stale") for f in row.get("findings") or ()
    ]


def joined(findings: list[Finding], runs: list[tuple[str, Finding]]) -> list[Finding]:
    """The review's findings with the runs' joined by the Ollama lines they name, most severe first."""
    merged = list(findings)
    for platform, run in runs:
        at = next((i for i, f in enumerate(merged) if _same_cause(run, f)), None)
        if at is None:
            merged.append(run)
            continue
        same = merged[at]
        merged[at] = replace(
            same,
            severity=min(same.severity, run.severity, key=SEVERITY_ORDER.__getitem__),
            detail=f"{same.detail}\n\n{RUN_LABEL.format(platform=plain(platform))}: {plain(run.title)}. {run.detail}",
        )
    return sorted(merged, key=lambda f: SEVERITY_ORDER[f.severity])


def _same_cause(run: Finding, f: Finding) -> bool:
    """Whether a run's finding and a review finding tell one cause: they share an Ollama line, or an Ollama
    file and a name the review finding's title gives in code."""
    if set(run.local_refs) & set(f.local_refs):
        return True
    if not {r.path for r in run.local_refs} & {r.path for r in f.local_refs}:
        return False
    names = re.findall(r"`([^`\n]+)`", f.title)
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", run.title) for n in names)


def _inert(f: Finding) -> Finding:
    """A run's finding whose text is shown as text: every line of its detail escaped as Markdown (its title is,
    wherever a title is shown)."""
    return replace(f, detail="\n".join(plain(line) for line in f.detail.splitlines()))
