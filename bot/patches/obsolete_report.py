"""The `upstreamed` results of bot/patches/obsolete.py's assessment: a patch obsolete as a whole, and the rest of
a patch once the hunks upstream provides were dropped and the names it removed renamed or named."""

from __future__ import annotations

from collections.abc import Callable

from bot.model import REBUILT, Commit, HunkResult, PatchResult
from bot.patches.identifiers import Use
from bot.patches.obsolete import Assessment, Leftover, Provided

APPLIED = ("clean", "offset", *REBUILT)


def commit_note(commits: list[Commit]) -> str:
    """`by <sha> <subject>, …` for up to three commits."""
    if not commits:
        return ""
    named = ", ".join(f"{c.sha[:12]} {c.subject}" for c in commits[:3])
    return f"by {named}" + (f" and {len(commits) - 3} more" if len(commits) > 3 else "")


def _by_clause(commits: list[Commit]) -> str:
    """` (by <sha> <subject>, …)` after what the commits did; nothing without commits."""
    return f" ({commit_note(commits)})" if commits else ""


def _what(provided: list[Provided]) -> str:
    keys = list(dict.fromkeys(k for p in provided for k in p.keys))
    places = [w for p in provided if not p.keys for w in p.what]
    return ", ".join(keys + places)


def _differences(provided: list[Provided], leftovers: list[Leftover]) -> str:
    """What the patch adds that upstream does not have, and where upstream's version is not the patch's."""
    parts = []
    missing = list(dict.fromkeys(f"{left.summary} ({left.file})" for left in leftovers))
    if missing:
        parts.append("upstream does not have " + "; ".join(missing))
    other = list(dict.fromkeys(d for p in provided for d in p.differs))
    if other:
        parts.append("upstream's version differs in " + "; ".join(other))
    return ": " + ", and ".join(parts) if parts else ""


def provided_hunk(p: Provided, commits: list[Commit]) -> HunkResult:
    detail = f"upstream now provides {', '.join(p.what)} (line {p.lines[0]})" if p.lines else ""
    if p.differs:
        detail += f"; it differs in {'; '.join(p.differs)}"
    return HunkResult(
        p.file,
        p.hunk.old_start,
        p.lines[0] if p.lines else p.hunk.new_start,
        "upstreamed",
        commits,
        detail,
        p.hunk.header_line,
    )


def result(
    path: str,
    ref: str,
    assessment: Assessment,
    placed: dict[tuple[str, int], HunkResult],
    commits_of: Callable[[Provided], list[Commit]],
) -> PatchResult:
    """The `upstreamed` result of a patch obsolete as a whole: what upstream provides, by which commits,
    and what differs. `placed` has where each leftover hunk would go."""
    hunks: list[tuple[tuple[int, int], HunkResult]] = []
    commits: list[Commit] = []
    for p in assessment.provided:
        found = commits_of(p)
        commits += [c for c in found if c not in commits]
        hunks.append(((p.fileno, p.index), provided_hunk(p, found)))
    for left in assessment.leftovers:
        h = placed[(left.file, left.index)]
        h.detail = f"upstream does not have {left.summary}"
        hunks.append(((left.fileno, left.index), h))
    message = (
        f"{ref} now provides what it adds: {_what(assessment.provided)}"
        + _by_clause(commits)
        + "; drop the patch, or reconcile it with upstream's version"
        + _differences(assessment.provided, assessment.leftovers)
        + "."
    )
    return PatchResult(path, "upstreamed", message, None, [h for _, h in sorted(hunks, key=lambda x: x[0])])


def _note_uses(hunks: list[HunkResult], uses: list[Use]) -> list[str]:
    """Add each renamed or named use to the detail and commits of its hunk; the notes, once each."""
    per_file: dict[str, list[HunkResult]] = {}
    for h in hunks:
        per_file.setdefault(h.file, []).append(h)
    notes = []
    for use in uses:
        placed = per_file.get(use.file, [])
        note = use.note + _by_clause(use.commits)
        if use.hunk < len(placed):
            _add_note(placed[use.hunk], note, use.commits)
        if note not in notes:
            notes.append(note)
    return notes


def _add_note(h: HunkResult, note: str, commits: list[Commit]) -> None:
    h.detail = "; ".join(d for d in (h.detail, note) if d)
    h.upstream_commits += [c for c in commits if c not in h.upstream_commits]


def _dropped_sentence(ref: str, provided: list[tuple[Provided, list[Commit]]], total: int) -> str:
    """What of the patch `ref` has already, by which commits, and how upstream's version differs."""
    commits = [c for _, found in provided for c in found]
    return (
        f"{len(provided)} of {total} hunks are in {ref} already: "
        f"{_what([p for p, _ in provided])}"
        + _by_clause(list(dict.fromkeys(commits)))
        + "; they are dropped from the patch"
        + _differences([p for p, _ in provided], [])
        + "."
    )


def amend(
    result: PatchResult,
    ref: str,
    order: list[str],
    provided: list[tuple[Provided, list[Commit]]],
    uses: list[Use],
) -> PatchResult:
    """The result of the rest of a patch once the hunks upstream provides were dropped and the names
    upstream removed were renamed or named: `fuzzy` when the rest applies, its own status otherwise."""
    notes = _note_uses(result.hunks, uses)
    hunks = list(result.hunks) + [provided_hunk(p, commits) for p, commits in provided]
    rank = {f: i for i, f in enumerate(order)}
    hunks.sort(key=lambda h: (rank.get(h.file, len(rank)), h.old_line))
    sentences = [_dropped_sentence(ref, provided, len(hunks))] if provided else []
    sentences += [n[:1].upper() + n[1:] + "." for n in notes]
    if result.status not in APPLIED:
        return PatchResult(
            result.path,
            result.status,
            " ".join([result.message, *sentences]),
            result.regenerated,
            hunks,
            new_text=result.new_text,
        )
    tail = (
        result.message
        if result.status in REBUILT
        else "The rest applies as it is: review the rebuilt patch before committing."
    )
    return PatchResult(result.path, "fuzzy", " ".join([*sentences, tail]), result.path, hunks)
