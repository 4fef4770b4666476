"""The packages upstream's build looks for (`find_package`), as Ollama's settings make its build, at both refs.

A package upstream looked for before only where an option Ollama turns off led, or without requiring it, and
now must find in Ollama's build (REQUIRED, or a condition dropped) fails every Ollama build host that lacks
it; the option Ollama sets is the line that used to keep it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.markup import code_span
from bot.model import LocalRef
from bot.review.changes import Draft
from bot.review.consumers.upstream_build import Lookup


def required_drafts(
    old: Mapping[str, list[Lookup]], new: Mapping[str, list[Lookup]], mentions: Mapping[str, list[LocalRef]]
) -> list[Draft]:
    """Packages upstream looked for before that Ollama's build now must find (REQUIRED where it runs for
    Ollama, and was not), or now looks for where it did not: a condition dropped, or an option Ollama turns
    off no longer keeping it out."""
    drafts = []
    for package in sorted(old.keys() & new.keys()):
        now = _running(new[package])
        before = _running(old[package])
        required = [lookup for lookup in now if lookup.required]
        if (required and not _running(before, required=True)) or (now and not before):
            drafts.append(_draft(package, (required or now)[0], old[package], bool(before), mentions))
    return drafts


def _running(lookups: Sequence[Lookup], required: bool = False) -> list[Lookup]:
    """The lookups Ollama's build runs (the REQUIRED ones only, when asked)."""
    return [lookup for lookup in lookups if lookup.guard is None and (lookup.required or not required)]


def _draft(
    package: str, lookup: Lookup, old: list[Lookup], ran: bool, mentions: Mapping[str, list[LocalRef]]
) -> Draft:
    guards = sorted({o.guard for o in old if o.guard})
    refs = tuple(dict.fromkeys(r for g in guards for r in mentions.get(g, ())))
    call = f"find_package({package}{' REQUIRED' if lookup.required else ''})"
    consequence = (
        "every Ollama build host without its development files now fails to configure: install it in the "
        "build images and CI, or keep the feature that needs it off"
        if lookup.required
        else "Ollama's build now picks it up where a build host has it: check what it turns on"
    )
    return Draft(
        "build",
        "high" if lookup.required else "medium",
        f"Build dependency {package} is now {'required' if lookup.required else 'looked for'} in Ollama's build",
        f"Upstream's build runs {code_span(call)} ({code_span(f'{lookup.path}:{lookup.line}')}) with Ollama's settings; before, it "
        f"{_before(ran, guards, refs)}. So {consequence}.",
        lookup.path,
        lookup.line,
        local_refs=refs,
        cause=f"package:{package}",
    )


def _before(ran: bool, guards: list[str], refs: tuple[LocalRef, ...]) -> str:
    """What the old ref did with the package in Ollama's build."""
    if ran:
        return "looked for it without requiring it"
    if not guards:
        return "never looked for it in Ollama's configuration"
    where = f" ({', '.join(f'{r.path}:{r.line}' for r in refs[:4])})" if refs else ""
    return (
        "looked for it only when "
        + ", ".join(f"{code_span(g)} is on" for g in guards)
        + ", which Ollama's build is not"
        + where
    )
