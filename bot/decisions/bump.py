"""Bumping pins: which ref each moves to, the version file's new text, the branch, the pull request's title
and body, and which open pull request a bump updates.

Pure functions over plain data. The service (`bot.worker.bump`) and the command line (`bot.cli.bump`) read
the repository and the upstreams, run the engine on the bumped tree, and write what these decide.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.config import Config, Pin, validate_ref
from bot.markup import code_span, one_line
from bot.model import REBUILT, UNRESOLVED, AnalysisError, Commit, PinReport, Report

BRANCH_PREFIX = "llama-bot/bump-"
# a line of its own, as `fit_body` writes it last: a name quoted in the text above may hold the same words
MARKER = re.compile(r"^<!-- llama-bot:bump (\{[^<>]*\}) -->\r?$", re.MULTILINE)
MAX_TAG_LENGTH = 100  # longer tag names are no release a version file could hold
_BRANCH_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class BumpRequest:
    """What a person asked for: these pins, to this ref (one pin only) or else each to its newest release."""

    pins: tuple[str, ...]
    ref: str | None = None
    skipped: frozenset[str] = frozenset()  # refs a scheduled bump leaves out (`/llama skip`)


def parse_request(args: Sequence[str], config: Config) -> BumpRequest | str:
    """The pins and the ref of `bump <pin> [<pin> ...] [<ref>]`, or why they cannot be bumped: the words
    that name configured pins are pins, a last word that names none is the ref."""
    names = [p.name for p in config.pins]
    pins = list(dict.fromkeys(a for a in args if a in names))
    rest = [a for a in args if a not in names]
    problem = _misplaced(args, pins, rest, names)
    if problem:
        return problem
    try:
        ref = validate_ref(rest[0], "the ref") if rest else None
    except AnalysisError as exc:
        return str(exc)
    return BumpRequest(tuple(pins), ref)


def _misplaced(args: Sequence[str], pins: list[str], rest: list[str], names: list[str]) -> str | None:
    """Why the words do not read as pins then at most one ref (for one pin)."""
    known = ", ".join(code_span(n) for n in names) or "none"
    if not pins:
        return f"{code_span(args[0] if args else '')} is not a pin. The pins are: {known}."
    if len(rest) > 1 or (rest and args[-1] != rest[0]):
        return f"{code_span(rest[0])} is not a pin (the pins are: {known}); a ref comes last, after one pin."
    if rest and len(pins) > 1:
        return (
            f"A ref ({code_span(rest[0])}) moves one pin; several pins move each to its newest release tag: "
            "name them without a ref."
        )
    return None


@dataclass(frozen=True)
class RefChoice:
    """Where one pin moves: its ref now, the ref chosen, and why it may not move there."""

    pin: str
    current: str | None  # the version file's ref before the bump (None: no file, or not a ref)
    ref: str | None  # None when refused
    explicit: bool = False  # the person named the ref
    refusal: str | None = None

    @property
    def already(self) -> bool:
        return self.ref is not None and self.ref == self.current


def release_key(tag: str, pattern: str) -> tuple[int, ...] | None:
    """The numbers of a release tag, in the pattern's group order; None for a tag that is no release."""
    if len(tag) > MAX_TAG_LENGTH:
        return None
    found = re.fullmatch(pattern, tag)
    if found is None:
        return None
    groups = [g or "0" for g in found.groups()]
    return tuple(int(g) for g in groups) if all(g.isdigit() for g in groups) else None


def newest_release(tags: Iterable[str], pattern: str) -> str | None:
    """The tag with the highest numbers (ties: the longest, then the last in text order)."""
    keyed = [(key, len(tag), tag) for tag in tags if (key := release_key(tag, pattern)) is not None]
    return max(keyed)[2] if keyed else None


def ask_for(prefix: str | None, pin: str, ref: str) -> str:
    """How a person asks for the bump of `pin` to `ref`: the command under `prefix`, or without one (None)
    the command line's options."""
    return code_span(f"{prefix} bump {pin} {ref}") if prefix is not None else f"--pin {pin} --ref {ref}"


def choose_ref(
    pin: Pin, current: str | None, requested: str | None, tags: Iterable[str], prefix: str | None
) -> RefChoice:
    """The ref `pin` moves to: the one named, else the upstream's newest release tag. Whether that goes back
    is the engine's to say, by ancestry (`ancestry_downgrade`); only a current tag the upstream no longer
    lists, whose history cannot be asked, is judged by the pattern's numbers here. `prefix` is the command's,
    for the advice (None: the command line's)."""
    tags = list(tags)
    if requested is not None:
        return RefChoice(pin.name, current, requested, True)
    name_it = f"name the ref: {ask_for(prefix, pin.name, '<ref>')}"
    if pin.release_tags is None:
        return RefChoice(
            pin.name,
            current,
            None,
            refusal=f"{code_span(pin.name)} has no `release_tags` pattern: {name_it}.",
        )
    newest = newest_release(tags, pin.release_tags)
    if newest is None:
        why = f"no tag of {pin.upstream} matches {code_span(pin.name)}'s `release_tags` pattern {code_span(pin.release_tags)}"
        return RefChoice(pin.name, current, None, refusal=f"{why}: {name_it}.")
    if current not in tags and _older(newest, current, pin.release_tags):
        why = (
            f"{code_span(pin.name)}'s newest release {code_span(newest)} is older than the pinned {code_span(current)}. To go back to it "
            f"anyway, name it: {ask_for(prefix, pin.name, newest)}."
        )
        return RefChoice(pin.name, current, None, refusal=why)
    return RefChoice(pin.name, current, newest)


def _older(ref: str, current: str | None, pattern: str | None) -> bool:
    """Whether `ref` is an older release than `current`, by the pattern's numbers (False when either is no
    release)."""
    if pattern is None or current is None:
        return False
    new, old = release_key(ref, pattern), release_key(current, pattern)
    return new is not None and old is not None and new < old


def ancestry_downgrade(pin: PinReport) -> bool:
    """Whether the bump only takes upstream commits away: the new ref is an ancestor of the old one."""
    return pin.commit_count == 0 and pin.reverted_count > 0


def unnamed_downgrade(report: Report, choices: Sequence[RefChoice]) -> PinReport | None:
    """A pin whose bump only takes upstream commits away although its ref was not named (the pattern could
    not tell: the current ref is a commit id): refused like an older release."""
    named = {c.pin for c in choices if c.explicit}
    return next((p for p in report.pins if p.name not in named and ancestry_downgrade(p)), None)


def version_file(config: Config, name: str) -> str:
    """The version file of the configured pin `name`."""
    pin = config.pin(name)
    if pin is None:
        raise ValueError(f"no pin is named {name!r}")
    return pin.version_file


def version_text(old: bytes | None, ref: str) -> bytes:
    """The version file naming `ref`: its one ref line rewritten and its blank lines and line ending kept;
    a file that is not one line of text becomes the ref and a newline."""
    try:
        lines = (old or b"").decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        lines = []
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) != 1:
        return f"{ref}\n".encode()
    line = lines[filled[0]]
    lines[filled[0]] = line.replace(line.strip(), ref, 1)
    return "".join(lines).encode()


def branch_name(choices: Sequence[RefChoice]) -> str:
    """`llama-bot/bump-<pin>-<ref>`, each pin and ref in turn; what git refuses in a branch becomes `-`."""
    parts = (f"{c.pin}-{_short(c.ref)}" for c in choices)
    safe = _BRANCH_UNSAFE.sub("-", "-".join(parts)).replace("..", "-").strip(".-")
    return BRANCH_PREFIX + (safe.removesuffix(".lock") or "pin")


def title(pins: Sequence[PinReport]) -> str:
    """`<pin>: <old> -> <new>`, joined for several pins; a commit id shortened to 12 digits."""
    return ", ".join(f"{p.name}: {_short(p.old_ref)} -> {_short(p.new_ref)}" for p in pins)


def _short(ref: str | None) -> str:
    return ref[:12] if ref and re.fullmatch(r"[0-9a-f]{40}", ref) else str(ref)


def marker(pins: Iterable[str]) -> str:
    """The hidden line of a bump pull request's body naming its pins (`bump_pins` reads it back)."""
    text = json.dumps({"pins": sorted(set(pins))}, ensure_ascii=True)
    hidden = text.replace("<", "\\u003c").replace(">", "\\u003e")  # nothing in it ends the comment
    return f"<!-- llama-bot:bump {hidden} -->"


PR_BODY_LIMIT = 65536  # GitHub's limit on a pull request's body


def fit_body(text: str, hidden: str) -> str:
    """The body and its hidden marker within GitHub's limit: a text too long loses its end, never the marker
    (which makes the pull request the pin's open bump)."""
    room = PR_BODY_LIMIT - len(hidden) - 40
    shown = text if len(text) <= room else text[:room] + "\n\n… (cut to fit)"
    return f"{shown}\n{hidden}\n"


def bump_pins(pull: dict, repository: str) -> tuple[str, ...]:
    """The pins an open pull request the bot made to bump them moves: its branch in this repository under
    BRANCH_PREFIX, opened by a bot, its body's marker naming them; () for any other pull request."""
    return _marked_pins(pull.get("body") or "") if _bot_bump_branch(pull, repository) else ()


def _bot_bump_branch(pull: dict, repository: str) -> bool:
    """Whether `pull` is open, by a bot, from a BRANCH_PREFIX branch of `repository` itself."""
    head = pull.get("head") or {}
    return (
        pull.get("state") == "open"
        and (pull.get("user") or {}).get("type") == "Bot"
        and ((head.get("repo") or {}).get("full_name") or "").lower() == repository.lower()
        and str(head.get("ref") or "").startswith(BRANCH_PREFIX)
    )


def _marked_pins(body: str) -> tuple[str, ...]:
    """The pin names of a body's bump marker; () without a readable one."""
    found = next(reversed(list(MARKER.finditer(body))), None)
    try:
        pins = json.loads(found[1])["pins"] if found else []
    except (ValueError, KeyError, TypeError):
        return ()
    return tuple(p for p in pins if isinstance(p, str)) if isinstance(pins, list) else ()


def open_bump(pulls: Iterable[dict], pins: Iterable[str], repository: str) -> dict | None:
    """The oldest open bump pull request the bot made for any of `pins`: a bump updates it."""
    wanted = set(pins)
    found = [p for p in pulls if wanted & set(bump_pins(p, repository))]
    return min(found, key=lambda p: p["number"]) if found else None


def broken_consumers(report: PinReport, pin: Pin) -> list[str]:
    """The pins that consume `pin` and no longer compile against its new ref: the high build findings of
    the consumer review (bot/review/api.py titles them "..., which <consumer> still uses the old way")."""
    consumers = [c.pin for c in pin.consumers if c.pin is not None]
    return [
        name
        for name in consumers
        if any(
            f.severity == "high"
            and f.area == "build"
            and f.title.endswith(f"which {name} still uses the old way")
            for f in report.findings
        )
    ]


@dataclass(frozen=True)
class MovesTogether:
    """Pins a bump leaves broken, and the command that bumps them with it."""

    pin: str
    consumers: tuple[str, ...]
    command: str


def moves_together(report: Report, config: Config, bumped: Iterable[str], prefix: str) -> list[MovesTogether]:
    """For each bumped pin whose consumer pins no longer compile against it (and are not bumped with it),
    the command that bumps them in one pull request."""
    moving = set(bumped)
    found = []
    for pin_report in report.pins:
        pin = config.pin(pin_report.name)
        broken = [c for c in broken_consumers(pin_report, pin) if c not in moving] if pin else []
        if broken:
            command = f"{prefix} bump {' '.join([*sorted(moving), *broken])}"
            found.append(MovesTogether(pin_report.name, tuple(broken), command))
    return found


@dataclass(frozen=True)
class PatchFile:
    """A rebuilt patch to commit: its path, status and new bytes."""

    path: str
    status: str
    data: bytes


def rebuilt_files(report: Report, current: dict[str, bytes | None]) -> list[PatchFile]:
    """The regenerated and fuzzy patches whose new text differs from the file at the bump's start."""
    return [
        PatchFile(p.path, p.status, p.new_text)
        for pin in report.pins
        for p in pin.patches
        if p.status in REBUILT and p.new_text is not None and p.new_text != current.get(p.path)
    ]


MESSAGE_COMMITS = 40  # the upstream commits a version commit's message lists per pin
BODY_COMMITS = 100  # those the pull request's body lists per pin, past the ones the review credits


@dataclass(frozen=True)
class Brought:
    """An upstream commit a bump brings that touches what Ollama builds or reads: what the review credits it
    with (its review items, the build files of Ollama's it changes)."""

    commit: Commit
    why: tuple[str, ...]


def brought(pin: PinReport) -> tuple[list[Brought], list[Commit]]:
    """The commits the bump brings, newest first: those the review credits with a high or medium item or a
    build file Ollama's build reads, each with what; then the others."""
    why: dict[str, list[str]] = {}
    for f in pin.findings:
        if f.severity in ("high", "medium"):
            for c in f.upstream_commits:
                why.setdefault(c.sha, []).append(f"{f.severity}: {f.title}")
    for change in pin.build_changes:
        for c in change.commits:
            why.setdefault(c.sha, []).append(f"changes {change.path}, which Ollama's build reads")
    credited = [Brought(c, tuple(dict.fromkeys(why[c.sha]))) for c in pin.brought if c.sha in why]
    return credited, [c for c in pin.brought if c.sha not in why]


def version_message(pins: Sequence[PinReport], requested_by: str) -> str:
    """The first commit's message: the pins moved, the compare links, the upstream commits each brings
    (those the review credits first, at most MESSAGE_COMMITS), who asked."""
    lines = [f"- {p.name}: {p.old_ref} -> {p.new_ref} ({p.compare_url})" for p in pins]
    for p in pins:
        lines += ["", *_message_commits(p)]
    return "\n".join([title(pins), "", *lines, "", requested_by, "", "Generated by llama-bot (`bump`)."])


def _message_commits(pin: PinReport) -> list[str]:
    """A pin's upstream commits as plain lines, the ones touching what Ollama uses first."""
    credited, others = brought(pin)
    listed = [*(b.commit for b in credited), *others][:MESSAGE_COMMITS]
    lines = [f"{pin.name} brings {pin.commit_count} upstream commit{'' if pin.commit_count == 1 else 's'}:"]
    lines += [f"- {c.sha[:12]} {one_line(c.subject)[:100]}" for c in listed]
    if pin.commit_count > len(listed):
        lines.append(f"- ... and {pin.commit_count - len(listed)} more")
    return lines


def patches_message(pins: Sequence[PinReport], files: Sequence[PatchFile]) -> str:
    """The second commit's message: the patches rebuilt for the new refs, each with its status."""
    head = "Regenerate carried patches for " + ", ".join(f"{p.name} {p.new_ref}" for p in pins)
    listed = [f"- {f.path} ({f.status})" for f in files]
    return "\n".join([head, "", *listed, "", "Generated by llama-bot (`bump`)."])


@dataclass
class BumpSummary:
    """What the body of a bump pull request and the reply say about one bump."""

    pins: list[PinReport]
    choices: list[RefChoice]
    requested_by: str  # "@alice in <link>", or the scheduled bump's reason
    committed: list[PatchFile] = field(default_factory=list)
    together: list[MovesTogether] = field(default_factory=list)

    @property
    def unresolved(self) -> list[tuple[str, str, str]]:
        """(pin, path, status) of each patch left for a person."""
        return [
            (pin.name, p.path, p.status) for pin in self.pins for p in pin.patches if p.status in UNRESOLVED
        ]

    def brought(self, pin: PinReport) -> tuple[list[Brought], list[Commit], int]:
        """The commits the body lists for `pin`: those the review credits, then at most BODY_COMMITS
        others, and how many more there are."""
        credited, others = brought(pin)
        shown = others[:BODY_COMMITS]
        return credited, shown, pin.commit_count - len(credited) - len(shown)

    def off_branch(self) -> list[PinReport]:
        """The pins moved to a commit that no branch or tag of their upstream contains (a fork's, an
        unmerged pull request's): said where the person asking looks, not only in the checklist."""
        return [
            p
            for p in self.pins
            if any(f.check == "pin.on-branch" and f.severity == "high" for f in p.findings)
        ]

    def downgrade(self, name: str) -> bool:
        """Whether the bump takes pin `name` back: its new ref an ancestor of the old one."""
        pin = next((p for p in self.pins if p.name == name), None)
        return bool(pin and ancestry_downgrade(pin))
