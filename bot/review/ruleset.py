"""The review's rules as data: `bot/rules.toml`, extended or overridden by the repository's `[rules]` table.

A repository rule with a shipped id overrides that rule key by key (`enabled = false` turns it off); a new
id adds a rule. Every problem names the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from bot.config import reject_unknown
from bot.model import SEVERITY_ORDER, AnalysisError
from bot.review.changes import AREAS

SHIPPED_RULES = Path(__file__).resolve().parent.parent / "rules.toml"
KEYS = {
    "area",
    "severity",
    "title",
    "text",
    "paths",
    "pattern",
    "block",
    "local_paths",
    "local_pattern",
    "exclude_paths",
    "subject",
    "when",
    "local_match",
    "enabled",
}
WHEN = ("changed", "removed")
LOCAL_MATCHES = ("word", "string")
REQUIRED = ("area", "severity", "title", "paths")


@dataclass(frozen=True)
class Rule:
    id: str
    area: str
    severity: str
    title: str  # `{path}` and `{file}` name the upstream file
    text: str
    paths: tuple[str, ...]
    pattern: re.Pattern | None = None
    block: str | None = None
    local_paths: tuple[str, ...] = ()
    local_pattern: re.Pattern | None = None
    exclude_paths: tuple[str, ...] = ()
    subject: re.Pattern | None = None  # what a matched line is about (group `subject`, else the match)
    when: str = "changed"  # "removed": only subjects the new file no longer has count
    local_match: str = (
        "word"  # a subject stands in an Ollama string as a "word" of it, or as the whole "string"
    )


def _strings(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(map(_filled, value)):
        raise AnalysisError(f"{where}: expected a non-empty list of glob strings")
    return tuple(value)


def _filled(value) -> bool:
    """Whether the value is a non-empty string, as every text of a rule must be."""
    return isinstance(value, str) and bool(value)


def _regex(value, where: str) -> re.Pattern:
    if not _filled(value):
        raise AnalysisError(f"{where}: expected a regular expression string")
    try:
        return _compiled(value)
    except re.error as exc:
        raise AnalysisError(f"{where}: not a valid regular expression ({exc})") from None


@lru_cache(maxsize=256)
def _compiled(value: str) -> re.Pattern:
    """A rule's regex, compiled once for every analysis that has it: per line (`^`/`$` also hold in the
    joined text of a prefilter)."""
    return re.compile(value, re.MULTILINE)


def _text(raw: dict, key: str, where: str, required: bool) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str) or (required and not value):
        raise AnalysisError(f"{where}.{key}: expected a non-empty string")
    return value


def _choice(key: str, allowed: Collection[str], default: str | None = None) -> Callable[[dict], str | None]:
    """A check that the rule's `key` (else `default`) is one of `allowed`."""

    def problem(raw: dict) -> str | None:
        if raw.get(key, default) in allowed:
            return None
        return f"{key}: expected one of {', '.join(allowed)}, got {raw.get(key)!r}"

    return problem


def _missing(raw: dict) -> str | None:
    return next((f"{key}: missing" for key in REQUIRED if key not in raw), None)


def _pattern_and_block(raw: dict) -> str | None:
    return "block: a rule has a pattern or a block, not both" if "pattern" in raw and "block" in raw else None


def _subject_without_pattern(raw: dict) -> str | None:
    if ("subject" in raw or "when" in raw) and "pattern" not in raw:
        return "subject: a subject needs a pattern"
    return None


_RULE_CHECKS = (  # in this order: the first problem found is the one reported
    _missing,
    _choice("area", AREAS),
    _choice("severity", SEVERITY_ORDER),
    _pattern_and_block,
    _choice("when", WHEN, "changed"),
    _choice("local_match", LOCAL_MATCHES, "word"),
    _subject_without_pattern,
)


def _nonempty(value, where: str) -> str:
    if not _filled(value):
        raise AnalysisError(f"{where}: expected a non-empty string")
    return value


# What `@name` in `local_paths` stands for: Ollama's files as its contract inventory and build model find them,
# wherever they live (bot.review.checks.rules resolves them).
SCOPES = {
    "stream-readers": "the Go files that read an upstream program's HTTP stream",
    "output-readers": "the Go files that match what an upstream program prints",
    "upstream-callers": "the Go files that start an upstream program or send it requests",
    "compat": "the sources Ollama's build compiles into upstream's targets",
    "pin-build": "the CMake files where Ollama's build fetches and configures the pin",
}


def _local_paths(value, where: str) -> tuple[str, ...]:
    """Globs of Ollama's files, or `@scope` names (SCOPES)."""
    paths = _strings(value, where)
    unknown = [p for p in paths if p.startswith("@") and p[1:] not in SCOPES]
    if unknown:
        raise AnalysisError(f"{where}: {unknown[0]!r} is not one of {', '.join('@' + s for s in SCOPES)}")
    return paths


def _optional(raw: dict, key: str, where: str, read: Callable, absent=None):
    """The rule's `key` read and checked by `read`, or `absent` when the rule does not have it."""
    return read(raw[key], f"{where}.{key}") if key in raw else absent


def parse_rule(rule_id: str, raw, where: str) -> Rule | None:
    """One validated rule (None when disabled); every problem names its key."""
    if not isinstance(raw, dict):
        raise AnalysisError(f"{where}: expected a table")
    reject_unknown(raw, KEYS, where)
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise AnalysisError(f"{where}.enabled: expected true or false")
    if not enabled:
        return None
    problem = next((p for check in _RULE_CHECKS if (p := check(raw))), None)
    if problem:
        raise AnalysisError(f"{where}.{problem}")
    return Rule(
        rule_id,
        raw["area"],
        raw["severity"],
        _text(raw, "title", where, True),
        _text(raw, "text", where, False),
        _strings(raw["paths"], f"{where}.paths"),
        _optional(raw, "pattern", where, _regex),
        _optional(raw, "block", where, _nonempty),
        _optional(raw, "local_paths", where, _local_paths, ()),
        _optional(raw, "local_pattern", where, _regex),
        _optional(raw, "exclude_paths", where, _strings, ()),
        _optional(raw, "subject", where, _regex),
        raw.get("when", "changed"),
        raw.get("local_match", "word"),
    )


def load_rules(overrides: dict, shipped: str | None = None) -> list[Rule]:
    """The shipped rules merged with the repository's; raises AnalysisError naming the bad key."""
    base = tomllib.loads(shipped)["rules"] if shipped is not None else shipped_tables()
    merged = _merged(base, overrides)
    rules = []
    for rule_id, raw in merged.items():
        source = ".github/llama-bot.toml" if rule_id in overrides else "bot/rules.toml"
        rule = parse_rule(rule_id, raw, f"{source}: rules.{rule_id}")
        if rule is not None:
            rules.append(rule)
    return rules


@cache
def shipped_tables() -> dict[str, dict]:
    """The tables of `bot/rules.toml`, read once (`_merged` copies them before it changes any)."""
    return tomllib.loads(SHIPPED_RULES.read_text())["rules"]


def _merged(base: dict, overrides: dict) -> dict[str, dict]:
    """Each shipped rule with the repository's keys over it, and the repository's new rules."""
    if not isinstance(overrides, dict):
        raise AnalysisError("rules: expected a table of rules")
    merged = {rule_id: dict(raw) for rule_id, raw in base.items()}
    for rule_id, raw in overrides.items():
        if not isinstance(raw, dict):
            raise AnalysisError(f"rules.{rule_id}: expected a table")
        merged[rule_id] = {**merged.get(rule_id, {}), **raw}
    return merged
