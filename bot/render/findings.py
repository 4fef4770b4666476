"""What the texts show of the upstream review's findings: which ones, their stable ids and one-line items."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from bot.model import Finding, PinReport
from bot.render.markdown import code, plain
from bot.render.patches import APPLIES

SEVERITY_HEADINGS = {
    "high": "High: Ollama breaks or behaves differently unless it changes",
    "medium": "Medium: Ollama must decide",
}


def finding_id(finding: Finding) -> str:
    """A checkbox id that stays the same while the finding does, so a person's tick survives a re-render."""
    return "finding-" + hashlib.sha1(repr(finding.key).encode()).hexdigest()[:10]


def review_findings(pin: PinReport) -> list[Finding]:
    """The pin's findings without those about nearby upstream changes to a patch the table already flags:
    such a patch gets rebuilt, rebased or dropped, which is the closer look the finding asks for."""
    flagged = {p.path for p in pin.patches if p.status not in APPLIES}
    return [
        f
        for f in pin.findings
        if not (f.area == "patch-context" and any(r.path in flagged for r in f.local_refs))
    ]


def consequence(f: Finding) -> str:
    """The first sentence of a finding's text: what the change does to Ollama."""
    first = f.detail.strip().split("\n", 1)[0]
    end = first.find(". ")
    return (first[: end + 1] if end != -1 else first).strip()


def after_consequence(f: Finding) -> Finding:
    """The finding with its text after the first sentence: what its checklist line already says is not
    said twice in the details under it."""
    said = consequence(f)
    detail = f.detail.strip()
    return replace(f, detail=detail[len(said) :].lstrip() if said and detail.startswith(said) else detail)


def review_item(f: Finding) -> str:
    """A review item's one line: severity, title, consequence and the first place in Ollama it touches."""
    text = f"**{f.severity}** {plain(f.title)}"
    said = consequence(f)
    if said and not said.startswith("Where:"):
        text += f": {plain(said)}"
    if f.local_refs:
        first = f.local_refs[0]
        more = f", +{len(f.local_refs) - 1} more" if len(f.local_refs) > 1 else ""
        text += f" (Ollama: {code(f'{first.path}:{first.line}')}{more})"
    return text
