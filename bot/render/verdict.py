"""The checklist's verdict: one sentence that says what the maintainer must do."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.model import PatchResult, PinReport
from bot.render.markdown import plain
from bot.render.patches import APPLIES
from bot.render.words import plural, rebuilt_advice

REVIEW_SEVERITIES = ("high", "medium")  # the review items the verdict counts


@dataclass(frozen=True)
class _Attention:
    """A patch status that needs the maintainer: its noun and what to do, for one patch and for several."""

    status: str
    one: str
    many: str
    do_one: str
    do_many: str

    def said(self, count: int, prefix: str | None) -> str:
        if count == 1:
            return f"1 {self.one} ({self.do_one.format(rebuild=rebuilt_advice(prefix))})"
        return f"{count} {self.many} ({self.do_many.format(rebuild=rebuilt_advice(prefix, many=True))})"


_ATTENTION = (
    _Attention(
        "regenerated",
        "rebuilt",
        "rebuilt",
        "{rebuild}",
        "{rebuild}",
    ),
    _Attention("fuzzy", "fuzzy", "fuzzy", "review it", "review them"),
    _Attention("conflict", "conflict", "conflicts", "rebase it by hand", "rebase them by hand"),
    _Attention("upstreamed", "obsolete", "obsolete", "drop it", "drop them"),
    _Attention("error", "unusable", "unusable", "fix the patch file", "fix the patch files"),
)


def _failed_part(failed: list[PinReport]) -> str:
    if not failed:
        return ""
    return "Could not check " + ", ".join(f"**{plain(pin.name)}**" for pin in failed) + " (see below)"


def _unchecked_part(pins: list[PinReport]) -> str:
    """The pins something of which could not be checked: never "nothing to do"."""
    partly = [pin for pin in pins if pin.unchecked]
    if not partly:
        return ""
    return (
        "Not everything of "
        + ", ".join(f"**{plain(pin.name)}**" for pin in partly)
        + " could be checked (see below)"
    )


def _attention_part(patches: list[PatchResult], needing: list[PatchResult], prefix: str | None) -> str:
    """How many patches need attention, by kind, each with what to do."""
    if not needing:
        return ""
    counts = [(kind, sum(1 for p in needing if p.status == kind.status)) for kind in _ATTENTION]
    kinds = ", ".join(kind.said(count, prefix) for kind, count in counts if count)
    return f"{len(needing)} of {len(patches)} patches need attention: {kinds}"


def _applies_part(patches: list[PatchResult], needing: list[PatchResult], something_else: bool) -> str:
    """That every patch applies, said only when the sentence has something else to say."""
    return "every patch applies as it is" if patches and not needing and something_else else ""


def _questions_part(questions: int) -> str:
    return (
        f"{plural(questions, 'question')} about where a patch hooks (see the patch details)"
        if questions
        else ""
    )


def _review_part(review_counts: Mapping[str, int]) -> str:
    items = [f"{review_counts[s]} {s}" for s in REVIEW_SEVERITIES if review_counts.get(s)]
    if not items:
        return ""
    total = sum(review_counts.get(s, 0) for s in REVIEW_SEVERITIES)
    return f"{' and '.join(items)} review item{'' if total == 1 else 's'} to check"


def _said(*parts: str) -> list[str]:
    """The parts that have something to say, in order."""
    return [part for part in parts if part]


def _nothing_to_do(pins: list[PinReport], patches: list[PatchResult]) -> str:
    """Nothing to do; without patches, it names the pins checked: another pin may carry some."""
    if not patches:
        names = " and ".join(plain(pin.name) for pin in pins)
        carry = "carries" if len(pins) == 1 else "carry"
        return f"Nothing to do: {names} {carry} no patches and the review found nothing that affects Ollama."
    return "Nothing to do: every patch applies and the review found nothing that affects Ollama."


def _needing(patches: list[PatchResult]) -> list[PatchResult]:
    """The patches that do not apply as they are."""
    return [p for p in patches if p.status not in APPLIES]


def _questions(patches: list[PatchResult]) -> int:
    """Questions about hunks that apply: where upstream duplicated the code a patch hooks."""
    return sum(1 for p in patches if p.status in APPLIES for h in p.hunks if h.detail)


def verdict(
    pins: list[PinReport], failed: list[PinReport], review_counts: Mapping[str, int], prefix: str | None
) -> str:
    """One sentence: what the maintainer must do, from the patches, the review items and the failed pins."""
    if not (pins or failed):
        return "This change touches no pinned upstream: nothing to check."
    patches = [p for pin in pins for p in pin.patches]
    needing = _needing(patches)
    questions = _questions(patches)
    unchecked = _unchecked_part(pins)
    something_else = bool(failed or unchecked or questions or any(review_counts.values()))
    parts = _said(
        _failed_part(failed),
        unchecked,
        _attention_part(patches, needing, prefix),
        _applies_part(patches, needing, something_else),
        _questions_part(questions),
        _review_part(review_counts),
    )
    if not parts:
        return _nothing_to_do(pins, patches)
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."
