"""The sampler, tokenizer and chat-template behaviours Ollama sets for an upstream program, or leaves to its
defaults: the launch settings and request fields of those areas, each with what Ollama does with it.

An item belongs to an area by the words upstream's own names for such settings are made of (sampling: the
temperature, top-k/p, penalties, seed, grammar ...; tokenizer: tokens and special tokens; template: chat
templates and reasoning). A flag or field Ollama passes only on some paths, or that its encoding leaves out
when zero, leaves upstream's default in force there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from bot.model import LocalRef
from bot.review.consumers.contracts.model import Behaviour, LaunchSetting, WireField

AREAS = (
    ("template", ("template", "jinja", "reasoning", "think")),
    ("tokenizer", ("token", "detoken", "special", "bos", "eos")),
    (
        "sampler",
        (
            "temp",
            "top_k",
            "top_p",
            "min_p",
            "typical",
            "penalty",
            "repeat",
            "seed",
            "mirostat",
            "dry_",
            "xtc",
            "sampl",
            "logit",
            "probs",
            "logprobs",
            "grammar",
            "json_schema",
            "response_format",
            "n_predict",
            "n_keep",
            "stop",
        ),
    ),
)


_PATTERNS = tuple(
    (area, re.compile(r"(?:^|_)(?:" + "|".join(map(re.escape, words)) + ")")) for area, words in AREAS
)


def area_of(name: str) -> str | None:
    """The area a setting's name belongs to, by the words it is made of (a word that starts with one of an
    area's stems; the first area that matches)."""
    words = "_".join(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w)
    for area, pattern in _PATTERNS:
        if pattern.search(words):
            return area
    return None


def behaviours(
    settings: Iterable[LaunchSetting],
    fields: Iterable[WireField],
    endpoints: Iterable[tuple[str, LocalRef]],
    streamed: frozenset[str],
) -> list[Behaviour]:
    """The behaviours of the areas among the launch settings, request fields and requested endpoints: sampling
    only where Ollama reads the answer as a stream (a generation, not a template rendering)."""
    fields = list(fields)
    found = list(_of_settings(settings)) + list(_of_fields(fields, streamed)) + list(_of_endpoints(endpoints))
    order = [area for area, _ in AREAS]
    return sorted(found, key=lambda b: (order.index(b.area), b.subject))


def _of_settings(settings: Iterable[LaunchSetting]) -> Iterator[Behaviour]:
    for setting in settings:
        area = area_of(setting.name)
        if area is None:
            continue
        given = ", ".join(setting.values) or "it"
        when = (
            "on every start"
            if setting.always
            else f"on some starts only; {setting.program}'s default otherwise"
        )
        kind = "flag" if setting.kind == "flag" else "environment variable"
        yield Behaviour(
            area, f"{kind} {setting.name} of {setting.program}", f"passes {given} {when}", setting.refs
        )


def _of_fields(fields: Iterable[WireField], streamed: frozenset[str]) -> Iterator[Behaviour]:
    for field in fields:
        area = area_of(field.path.rsplit(".", 1)[-1])
        if area is None or (area == "sampler" and field.endpoint not in streamed):
            continue
        given = ", ".join(field.values) or field.go_type or "it"
        when = (
            "in some requests only (or not when zero); upstream's default otherwise"
            if field.optional
            else "in every request"
        )
        yield Behaviour(
            area, f"field {field.path} of {field.endpoint}", f"sends {given} {when}", (field.ref,)
        )


def _of_endpoints(endpoints: Iterable[tuple[str, LocalRef]]) -> Iterator[Behaviour]:
    """An endpoint of the tokenizer or template area: Ollama has upstream do that work."""
    merged: dict[tuple[str, str], list[LocalRef]] = {}
    for endpoint, ref in endpoints:
        area = area_of(endpoint.rsplit(" ", 1)[-1])
        if area in ("tokenizer", "template"):
            merged.setdefault((area, endpoint), []).append(ref)
    for (area, endpoint), refs in merged.items():
        yield Behaviour(area, f"endpoint {endpoint}", "has upstream do this work", tuple(refs))
