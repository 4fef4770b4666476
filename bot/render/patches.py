"""What the texts show of a pin's patches: the commits a bump brings, each patch's one-line status, the notes
on hunks that did not apply as they are, and the shell steps that reproduce a conflict.

Every name in a shell step is one `shlex.quote`d word; a name holding a character that is not printable (a
line break among them) is not written into a step at all, as no quoting makes such a line safe to read.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass

from bot.model import REBUILT, Commit, HunkResult, PatchResult, PinReport
from bot.render.words import plural, rebuilt_advice

APPLIES = ("clean", "offset")  # the committed patch applies as it is
REGENERATED_DIR = "/tmp/llama-bot-regenerated"  # where the reproduce steps have `check --out` write
# A patch's one-line status by its status; a conflict without conflicting hunks, an obsolete or an
# unusable patch says its message instead.
_STATUS_TEXT = {
    "clean": "applies exactly as it is",
    "offset": "applies as it is, {moved} of {hunks} hunks at shifted lines",
    "regenerated": "rebuilt by a clean three-way merge: {rebuild}",
    "fuzzy": "rebuilt with tolerance: review it, {rebuild}",
}


@dataclass(frozen=True)
class HunkNote:
    """One line of a patch's details: where a hunk (or several with the same reason) went, and why."""

    file: str
    old_lines: tuple[int, ...]
    text: str
    commits: tuple[Commit, ...] = ()

    @property
    def where(self) -> str:
        lines = ", ".join(str(n) for n in self.old_lines)
        return f"hunk{'s' if len(self.old_lines) > 1 else ''} at old line{'s' if len(self.old_lines) > 1 else ''} {lines}"

    def joined(self, other: HunkNote) -> HunkNote:
        """This note and another with the same reason as one line: their old lines and their commits."""
        commits = self.commits + tuple(c for c in other.commits if c not in self.commits)
        return HunkNote(self.file, (*self.old_lines, *other.old_lines), self.text, commits)


@dataclass
class PinView:
    """What the checklist shows of one checked pin."""

    report: PinReport
    commits: str
    rows: list[tuple[PatchResult, str]]  # (patch, its one-line status)
    # patch path -> the hunks that need explaining, for the patches that need a change
    notes: dict[str, list[HunkNote]]
    reproduce: list[str]
    patch_dir: str | None

    @property
    def details(self) -> list[tuple[PatchResult, list[HunkNote]]]:
        return [(p, self.notes[p.path]) for p in self.report.patches if p.path in self.notes]


def commits_text(pin: PinReport) -> str:
    """How far the bump moves upstream; a downgrade says how many commits it takes away."""
    added, reverted = pin.commit_count, pin.reverted_count
    if reverted and not added:
        return f"downgrade: {plural(reverted, 'upstream commit')} reverted"
    if reverted:
        return (
            f"{plural(added, 'upstream commit')} added and {reverted} reverted "
            "(the new ref does not descend from the old one)"
        )
    if not added:
        return "no upstream change"
    return plural(added, "upstream commit")


def patch_status(patch: PatchResult, prefix: str | None) -> str:
    """The table's one-line status of a patch; the details say the specifics."""
    failed = sum(1 for h in patch.hunks if h.status == "conflict")
    if patch.status == "conflict" and failed:
        return f"{failed} of {len(patch.hunks)} hunks conflict: rebase it by hand"
    text = _STATUS_TEXT.get(patch.status)
    if text is None:
        message = patch.message.rstrip(".")
        return message[:1].lower() + message[1:]
    moved = sum(1 for h in patch.hunks if h.status == "offset")
    return text.format(moved=moved, hunks=len(patch.hunks), rebuild=rebuilt_advice(prefix))


def _hunk_note(h: HunkResult) -> HunkNote | None:
    """A hunk's note: where it went, or why it conflicts; a hunk that applies has one only for a question
    about it (upstream duplicated the hooked code)."""
    if h.status in APPLIES:
        return HunkNote(h.file, (h.old_line,), h.detail, tuple(h.upstream_commits)) if h.detail else None
    if h.status == "merged":
        text = f"merged, now at line {h.new_line}"
    elif h.status == "relocated":
        text = f"relocated to line {h.new_line}" + (f" ({h.detail})" if h.detail else "")
    else:
        text = (h.detail or h.status).removeprefix(f"{h.file}: ")
    return HunkNote(h.file, (h.old_line,), text, tuple(h.upstream_commits))


def hunk_notes(patch: PatchResult) -> list[HunkNote]:
    """The hunks that did not apply as they are; conflicting hunks with one reason are one note."""
    notes: list[HunkNote] = []
    first: dict[tuple[str, str], int] = {}  # (file, text) -> where the first note saying it is
    for h in patch.hunks:
        note = _hunk_note(h)
        if note is None:
            continue
        key = (note.file, note.text)
        if h.status == "conflict" and key in first:
            notes[first[key]] = notes[first[key]].joined(note)
        else:
            first.setdefault(key, len(notes))
            notes.append(note)
    return notes


def _fetch_spec(ref: str) -> str:
    return ref if re.fullmatch(r"[0-9a-f]{40}", ref) else f"tag {shlex.quote(ref)}"


def _fetch_steps(pin: PinReport, new_ref: str, url: str, rebuilding: bool) -> list[str]:
    """A fresh repository holding the two refs with their whole history but no file contents until they are
    read (a blobless fetch: the CLI refuses a shallow clone, whose history is cut); the CLI rebuilds patches
    from it, fetching the blobs it reads."""
    refs = list(dict.fromkeys(r for r in (pin.old_ref, new_ref) if r))
    work = "/tmp/" + re.sub(r"[^A-Za-z0-9._-]", "_", f"{pin.name}-{new_ref[:12]}")
    steps = [
        "# OLLAMA: a checkout of this branch"
        + ("; LLAMA_BOT: a llama-bot checkout set up by `make test`" if rebuilding else ""),
        f"git init -q {shlex.quote(work)} && cd {shlex.quote(work)}",
        f"git remote add upstream {shlex.quote(url)}",
        f"git fetch -q --filter=blob:none upstream {' '.join(_fetch_spec(r) for r in refs)}",
    ]
    if rebuilding:
        steps.append(
            f'"$LLAMA_BOT/.venv/bin/python" -m bot check --repo "$OLLAMA" '
            f"--upstream-dir {shlex.quote(f'{pin.name}={work}')} --out {shlex.quote(REGENERATED_DIR)} "
            "> /dev/null  # writes the rebuilt patches"
        )
    return steps


def _apply_step(n: int, p: PatchResult, rebuilt: list[PatchResult]) -> str:
    """How the `n`th patch of the stack goes on: from the checkout, as the CLI rebuilt it, checked, or
    skipped; a comment without the name when its name holds a character that is not printable."""
    if not p.path.isprintable():
        return f"# patch {n} of the stack is not shown: its file name holds a line break or control character"
    if p.status in REBUILT and p in rebuilt:
        return f"git apply --index {shlex.quote(f'{REGENERATED_DIR}/{p.path}')}"
    if p.status in APPLIES or p.status in REBUILT:
        return f'git apply --index "$OLLAMA"/{shlex.quote(p.path)}'
    if p.status == "conflict":
        return f'git apply --check "$OLLAMA"/{shlex.quote(p.path)}  # conflict (see above); --3way leaves markers'
    return f"# skipped: {p.path} ({p.status})"


def _up_to_last_conflict(patches: list[PatchResult]) -> list[PatchResult]:
    """The stack to reproduce: the patches up to the last conflict; none without a conflict."""
    conflicts = [i for i, p in enumerate(patches) if p.status == "conflict"]
    return patches[: conflicts[-1] + 1] if conflicts else []


def _to_rebuild(stack: list[PatchResult], committed: Collection[str]) -> list[PatchResult]:
    """The rebuilt patches the CLI must write again: those not yet committed to the branch."""
    return [p for p in stack if p.status in REBUILT and p.path not in committed]


def reproduce_steps(pin: PinReport, committed: Collection[str] = ()) -> list[str]:
    """Shell steps that stack the pin's patches on its new ref the way the check did, through every conflict.

    Upstream comes from a blobless fetch of the two refs (their history, file contents fetched as they are
    read): the old ref holds the blobs `git apply --3way` merges from, and the CLI the README installs
    rebuilds the earlier patches from the same fetch (`check --upstream-dir`), writing them where `--out`
    says. Rebuilt patches already
    `committed` to the branch are read from the checkout like the others.
    """
    stack = _up_to_last_conflict(pin.patches)
    if not stack or not pin.compare_url or not pin.new_ref:
        return []
    url = pin.compare_url.split("/compare/")[0]
    if not all(text.isprintable() for text in (pin.name, url, pin.new_ref, pin.old_ref or "")):
        return ["# not shown: the pin's name, upstream or refs hold a line break or control character"]
    rebuilt = _to_rebuild(stack, committed)
    return [
        *_fetch_steps(pin, pin.new_ref, url, bool(rebuilt)),
        f"git checkout -q {shlex.quote(pin.new_ref)}",
        *(_apply_step(n, p, rebuilt) for n, p in enumerate(stack, 1)),
    ]


def pin_view(
    pin: PinReport, prefix: str | None, patch_dir: str | None, committed: Collection[str] = ()
) -> PinView:
    rows = [(p, patch_status(p, prefix)) for p in pin.patches]
    notes = {p.path: found for p in pin.patches if (found := hunk_notes(p))}
    return PinView(pin, commits_text(pin), rows, notes, reproduce_steps(pin, committed), patch_dir)
