"""Placing a whole patch: each file by the first strategy that fits, the enum values it adds renumbered past
upstream's (`renumbering`), the result checked for collisions with what upstream added at the same place."""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine.context import FileOutcome, PinContext
from bot.engine.renumbering import renumber_added
from bot.engine.sections import added_lines, file_section, render
from bot.engine.strategies import exact_outcome, merge_inputs, relocated, three_way
from bot.model import Commit, HunkResult, PatchResult
from bot.patches.enumentries import collisions
from bot.patches.hunks import Image, copies_of, find_exact
from bot.patches.obsolete_report import commit_note
from bot.patches.patchfile import FilePatch, Hunk, Line, PatchFile, lines_of
from bot.patches.tree import Tree, reverse_applies

REBUILDERS = (three_way,)  # tried in this order on a file that does not apply exactly, before relocation


def _resolved(ctx: PinContext, fp: FilePatch, exact: FileOutcome | None) -> FileOutcome:
    """The file's exact outcome, else the first rebuilder's, else relocation's: the last resort always
    answers (a conflict when nothing fits)."""
    if exact is not None:
        return exact
    for rebuild in REBUILDERS:
        outcome = rebuild(ctx, fp)
        if outcome is not None:
            return outcome
    return relocated(ctx, fp)


def place(ctx: PinContext, path: str, pf: PatchFile, data: bytes) -> PatchResult:
    """Each file of the patch placed by the first way that fits (exact, three-way merge, relocation), the
    enum values it adds renumbered past upstream's, then the result checked for collisions with upstream;
    the tree takes the changes only when the patch applies."""
    outcomes = [exact_outcome(ctx, fp) for fp in pf.files]
    unplaceable = _unplaceable(ctx, path, pf, outcomes)
    if unplaceable is not None:
        return unplaceable
    resolved = [_resolved(ctx, fp, o) for fp, o in zip(pf.files, outcomes)]
    hunks = [h for o in resolved for h in o.hunks]
    in_conflict = _in_conflict(ctx, path, resolved, hunks)
    if in_conflict is not None:
        return in_conflict
    changes: dict[str, bytes | None] = {}
    for o in resolved:
        changes.update(o.changes)
    return _checked(ctx, path, pf, data, resolved, hunks, changes)


def _unplaceable(
    ctx: PinContext, path: str, pf: PatchFile, outcomes: list[FileOutcome | None]
) -> PatchResult | None:
    """The result of a patch some file of which does not apply exactly and that no rebuild is for: its
    change is already there, or a binary file changed; None when rebuilding may place it."""
    if None in outcomes and reverse_applies(ctx.new_tree, pf):
        return _already_there(ctx, path, pf, [])
    binary = next((fp for fp, o in zip(pf.files, outcomes) if o is None and fp.is_binary), None)
    if binary is None:
        return None
    return PatchResult(
        path,
        "error",
        f"The binary change to {binary.path} no longer applies as it is: "
        "binary patches cannot be rebuilt, make it again against the new ref.",
    )


def _in_conflict(
    ctx: PinContext, path: str, resolved: list[FileOutcome], hunks: list[HunkResult]
) -> PatchResult | None:
    """A patch some hunk of which found no place: how many, and the first file's reason; None when every
    file found its place."""
    first = next((o.reason for o in resolved if o.status == "conflict"), None)
    if first is None:
        return None
    return PatchResult(
        path,
        "conflict",
        f"{_count(hunks, 'conflict')} of {len(hunks)} hunks cannot be placed on {ctx.new_ref}: {first}.",
        None,
        hunks,
    )


def _checked(
    ctx: PinContext,
    path: str,
    pf: PatchFile,
    data: bytes,
    resolved: list[FileOutcome],
    hunks: list[HunkResult],
    changes: dict[str, bytes | None],
) -> PatchResult:
    """A patch whose every hunk found a place, after the checks on the placed result: its enum values
    renumbered (or why they cannot be), questions about code upstream copied, collisions with upstream's
    entries; the tree takes the changes when the patch still changes something."""
    unmovable = renumber_added(ctx, resolved, changes)
    if unmovable:
        return _unplaced(path, hunks, unmovable, f"Cannot be rebuilt: {unmovable}.")
    for o in resolved:
        _ask_about_copies(ctx, o, changes)
    sections, clashes = _sections(ctx, resolved, changes)
    if clashes:
        return _unplaced(
            path, hunks, "; ".join(clashes), f"Applying it would collide with upstream: {clashes[0]}."
        )
    if not sections:
        return _already_there(ctx, path, pf, hunks)
    ctx.new_tree.update(changes)
    return _placed(ctx, path, pf, data, {o.status for o in resolved}, hunks, sections)


def _unplaced(path: str, hunks: list[HunkResult], why: str, message: str) -> PatchResult:
    """A conflict found after the hunks were placed: the moved and merged ones say why."""
    for h in hunks:
        if h.status in ("merged", "relocated"):
            h.status, h.detail = "conflict", why
    return PatchResult(path, "conflict", message, None, hunks)


def _sections(
    ctx: PinContext, resolved: list[FileOutcome], changes: dict[str, bytes | None]
) -> tuple[list[bytes], list[str]]:
    """The rebuilt patch's file sections (a clean or binary file as it was), and the collisions of the
    added lines with upstream's."""
    clashes, sections = [], []
    for o in resolved:
        before, after = ctx.stacked_file(o.fp), o.placed_text(changes)
        if before is not None and after is not None:
            clashes += [
                f"{o.fp.new_path}: {c}" for c in collisions(lines_of(after), added_lines(before, after))
            ]
        section = _section(o, before, after)
        if section is not None:
            sections.append(section)
    return sections, clashes


def _section(o: FileOutcome, before: bytes | None, after: bytes | None) -> bytes | None:
    """The file's section of the rebuilt patch: as it was when clean or binary, else written anew from
    upstream's file and the placed one; None when the file no longer changes anything."""
    fp = o.fp
    if o.status == "clean" or fp.is_binary:
        return fp.raw
    if before != after or fp.old_path != fp.new_path or fp.old_mode != fp.new_mode:
        return file_section(fp, before, after)
    return None


def _placed(
    ctx: PinContext,
    path: str,
    pf: PatchFile,
    data: bytes,
    statuses: set[str],
    hunks: list[HunkResult],
    sections: list[bytes],
) -> PatchResult:
    """The status of a patch whose every hunk found its place: the least exact way any of them took."""
    if statuses <= {"clean"}:
        return PatchResult(path, "clean", "Applies exactly as it is.", None, hunks, new_text=data)
    new_text = render(pf, sections)
    if statuses <= {"clean", "offset"}:
        return PatchResult(
            path,
            "offset",
            f"Applies as it is; {_count(hunks, 'offset')} of {len(hunks)} hunks moved "
            "(git apply accepts line offsets).",
            None,
            hunks,
            new_text=new_text,
        )
    if "relocated" in statuses:
        return PatchResult(
            path,
            "fuzzy",
            f"Rebuilt with tolerance: {_count(hunks, 'relocated')} of {len(hunks)} hunks placed by a "
            "merge rule or relocated (each hunk says how): review it before committing.",
            path,
            hunks,
            new_text=new_text,
        )
    return PatchResult(
        path,
        "regenerated",
        f"Rebuilt by a clean three-way merge of {_count(hunks, 'merged')} of "
        f"{len(hunks)} hunks onto {ctx.new_ref}; the new patch applies as it is.",
        path,
        hunks,
        new_text=new_text,
    )


def _count(hunks: list[HunkResult], status: str) -> int:
    """How many of the hunks have the status: the figures a patch's message gives."""
    return sum(h.status == status for h in hunks)


SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".m", ".mm", ".go")  # Ollama's compat sources


def _ask_about_copies(ctx: PinContext, outcome: FileOutcome, changes: dict[str, bytes | None]) -> None:
    """A question in the detail of each hunk whose surroundings upstream copied elsewhere in the file (they
    appear more often in the new upstream file than in the old one): the copy may need the change too,
    which only a person can say: a merged hunk asking it makes the patch fuzzy, not regenerated."""
    texts = _copy_texts(ctx, outcome, changes)
    if texts is None:
        return
    old, new, placed = texts
    files = _Copies(
        Image(lines_of(placed)), added_lines(new, placed), Image(lines_of(old)), Image(lines_of(new))
    )
    for hunk, result in zip(outcome.fp.hunks, outcome.hunks):
        copies = files.of_site(hunk, result.new_line - 1)
        if copies:
            _ask(outcome, result, copies)


@dataclass(frozen=True)
class _Copies:
    """A placed file, for finding where upstream copied a hunk's surroundings: its lines (`patched`), the
    ones the patch added, the file the patch was written against and upstream's."""

    patched: Image
    added: set[int]
    old: Image
    new: Image

    def of_site(self, hunk: Hunk, start: int) -> list[int]:
        """Where else in the placed file the hunk's surroundings (upstream's lines at the hunk's site from
        0-based `start`) appear, when upstream made more copies of them than the old file had."""
        site = range(start, start + len(hunk.after))
        lines = self.patched.lines
        around = [lines[i] for i in site if i < len(lines) and i not in self.added]
        if len(copies_of(self.new, around)) <= len(copies_of(self.old, hunk.before)):
            return []
        return [i for i in copies_of(self.patched, around) if not site.start - len(around) < i < site.stop]


def _copy_texts(
    ctx: PinContext, outcome: FileOutcome, changes: dict[str, bytes | None]
) -> tuple[bytes, bytes, bytes] | None:
    """The file the patch was written against, upstream's new one and the placed one; None for a change
    that copies cannot matter to (binary, new, deleted) or when a text is missing."""
    placed = outcome.placed_text(changes)
    if placed is None:
        return None
    inputs = merge_inputs(ctx, outcome.fp)
    return None if inputs is None else (inputs[1], inputs[2], placed)


def _ask(outcome: FileOutcome, result: HunkResult, copies: list[int]) -> None:
    """The question whether the copies at `copies` (0-based lines) need the hunk too; a merged hunk asking
    it is relocated, and so is its file."""
    lines = ", ".join(str(i + 1) for i in copies)
    question = (
        f"the hooked code now also appears at line{'s' if len(copies) > 1 else ''} {lines}: "
        "does it need the hook too?"
    )
    result.detail = "; ".join(filter(None, [result.detail, question]))
    if result.status == "merged":
        result.status = outcome.status = "relocated"


def _already_there(ctx: PinContext, path: str, pf: PatchFile, hunks: list[HunkResult]) -> PatchResult:
    """The change is in the stacked tree already: upstream's doing (drop the patch), or, when only the
    earlier carried patches make it, a repeat of one of them (git apply fails on it)."""
    if pf.paths & ctx.new_tree.overlay.keys() and not reverse_applies(Tree(ctx.new_tree.base), pf):
        return PatchResult(
            path,
            "conflict",
            f"Its change is already made by an earlier carried patch, not by "
            f"{ctx.new_ref}: it repeats that patch; drop or merge one of them.",
            None,
            hunks,
        )
    by = commit_note(_commits_of_change(ctx, pf))
    return PatchResult(
        path,
        "upstreamed",
        f"Its change is already in {ctx.new_ref}" + (f" ({by})" if by else "") + ": drop this patch.",
        None,
        hunks,
    )


def _commits_of_change(ctx: PinContext, pf: PatchFile) -> list[Commit]:
    """The upstream commits that made the patch's change themselves: that wrote its added lines where they
    are now, or removed the lines it removes."""
    upstream = Tree(ctx.new_tree.base)
    found: list[Commit] = []
    for fp in pf.files:
        if not fp.new_path:
            continue
        image = Image(lines_of(upstream.read(fp.new_path)) if not fp.is_binary else [])
        for hunk in fp.hunks:
            found += [c for c in _commits_of_hunk(ctx, fp.new_path, image, hunk) if c not in found]
    return found


def _commits_of_hunk(ctx: PinContext, path: str, image: Image, hunk: Hunk) -> list[Commit]:
    """The commits behind one hunk's change in upstream's file: its added lines where the hunk's
    postimage stands now, or the lines it removes; none when its postimage is not there."""
    as_context = [Line(" ", text) for text in hunk.after]
    at = find_exact(
        image, Hunk(hunk.new_start, hunk.new_count, hunk.new_start, hunk.new_count, hunk.section, as_context)
    )
    if at is None:
        return []
    added = hunk.added_rows
    removed = [line.text for line in hunk.lines if line.kind == "-"]
    start, end = (at.start + added[0] + 1, at.start + added[-1] + 1) if added else (at.start + 1, at.start)
    return ctx.history.commits_for_lines(path, start, end, removed)


def all_clean(result: PatchResult, fp: FilePatch) -> bool:
    return all(h.status == "clean" for h in result.hunks if h.file == fp.path)
