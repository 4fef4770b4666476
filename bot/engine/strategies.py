"""The ways of placing one file of a patch, tried in `placing.STRATEGIES`' order: exactly, by a three-way merge
edit by edit (bot/patches/merge.py), by tolerant relocation. Each returns an outcome or passes (None); the last
always answers."""

from __future__ import annotations

from bot.engine.context import FileOutcome, PinContext
from bot.markup import code_span
from bot.model import HunkResult
from bot.patches.hunks import Image, Placement, best_candidate, find_exact, relocate
from bot.patches.merge import Merged, Overlap, Placed, merge
from bot.patches.patchfile import FilePatch, Hunk, lines_of
from bot.patches.tree import NoFit, Tree, apply_exact


def exact_outcome(ctx: PinContext, fp: FilePatch) -> FileOutcome | None:
    try:
        changes, placements = apply_exact(ctx.new_tree, fp)
    except NoFit:
        return None
    hunks = [
        HunkResult(
            fp.path,
            h.old_start,
            p.start + 1,
            "clean" if p.offset == 0 else "offset",
            patch_line=h.header_line,
        )
        for h, p in zip(fp.hunks, placements)
    ]
    status = "offset" if any(h.status == "offset" for h in hunks) else "clean"
    return FileOutcome(fp, status, changes, hunks)


def three_way(ctx: PinContext, fp: FilePatch) -> FileOutcome | None:
    """The file merged edit by edit (bot/patches/merge.py); None when an edit overlaps upstream's."""
    inputs = merge_inputs(ctx, fp)
    if inputs is None:
        return None
    path, base, theirs = inputs
    try:
        ours_changes, placements = apply_exact(_single(path, base), fp)
        ours = ours_changes[fp.new_path or path]
        assert ours is not None
        merged = merge(lines_of(base), lines_of(ours), lines_of(theirs))
    except (NoFit, Overlap):
        return None
    hunks = _merged_hunks(ctx, fp, placements, merged, Image(lines_of(theirs)))
    status = "relocated" if any(h.status == "relocated" for h in hunks) else "merged"
    return FileOutcome(fp, status, _written(fp, b"".join(merged.lines)), hunks)


def merge_inputs(ctx: PinContext, fp: FilePatch) -> tuple[str, bytes, bytes] | None:
    """The changed file's old path, the file the patch was written against and upstream's new one (what a
    merge joins, and where placing looks for copies); None for a new, deleted or binary file, or when either
    file is missing."""
    if fp.is_new or fp.is_deleted or fp.is_binary or not fp.old_path:
        return None
    base = ctx.old_blob(fp)
    theirs = ctx.new_tree.read(fp.old_path)
    if base is None or theirs is None:
        return None
    return fp.old_path, base, theirs


def _merged_hunks(
    ctx: PinContext, fp: FilePatch, placements: list[Placement], merged: Merged, upstream_image: Image
) -> list[HunkResult]:
    """Each hunk's result in the merged file: where its edits went (`placements` are where it applied to
    the base, each hunk after the ones before it), and the notes of the rules that placed them."""
    hunks = []
    grown = 0
    for h, placement in zip(fp.hunks, placements):
        start = placement.start - grown  # where the hunk's preimage is in the base
        grown += len(h.after) - len(h.before)
        own = [p for p in merged.ours if start <= p.edit.start and p.edit.end <= start + len(h.before)]
        at = own[0].at - (own[0].edit.start - start) + 1 if own else h.new_start
        hunks.append(_merged_hunk(ctx, fp, h, at, own, upstream_image))
    return hunks


def _merged_hunk(
    ctx: PinContext, fp: FilePatch, h: Hunk, at: int, own: list[Placed], upstream_image: Image
) -> HunkResult:
    """One hunk's result: clean or offset when it alone still fits upstream (only its neighbours needed
    the merge), else merged, or relocated when a rule moved its edits."""
    exact = find_exact(upstream_image, h)
    if exact is not None:
        status = "clean" if exact.offset == 0 else "offset"
        return HunkResult(fp.path, h.old_start, at, status, patch_line=h.header_line)
    notes = list(dict.fromkeys(n for p in own for n in p.notes))
    return HunkResult(
        fp.path,
        h.old_start,
        at,
        "relocated" if notes else "merged",
        ctx.commits_near(fp.old_path, at, len(h.after), h),
        "; ".join(notes),
        patch_line=h.header_line,
    )


def _written(fp: FilePatch, data: bytes) -> dict[str, bytes | None]:
    """The changes a file's new content makes: written at its new path, its old path gone when renamed."""
    changes: dict[str, bytes | None] = {fp.new_path or fp.old_path or "": data}
    if fp.is_renamed:
        changes[fp.old_path or ""] = None
    return changes


def _single(path: str, data: bytes) -> Tree:
    tree = Tree(None)
    tree.update({path: data})
    return tree


def relocated(ctx: PinContext, fp: FilePatch) -> FileOutcome:
    """Place each hunk on its own: exactly if it can, else with tolerance, else say why not."""
    current = ctx.stacked_file(fp)
    if fp.is_new or current is None:
        return _missing_file(fp)
    image = Image(lines_of(current))
    hunks, reasons = _placed_hunks(ctx, fp, image)
    if reasons:
        return FileOutcome(fp, "conflict", {}, hunks, "; ".join(reasons))
    changes: dict[str, bytes | None] = (
        {fp.old_path or "": None} if fp.is_deleted else _written(fp, b"".join(image.lines))
    )
    return FileOutcome(fp, "relocated", changes, hunks, "")


def _placed_hunks(ctx: PinContext, fp: FilePatch, image: Image) -> tuple[list[HunkResult], list[str]]:
    """Each hunk placed in turn on the image, changing it: exactly, else relocated, else in conflict; and
    the reason of each conflict."""
    hunks: list[HunkResult] = []
    reasons = []
    for number, hunk in enumerate(fp.hunks, 1):
        placed = _exact_hunk(fp, image, hunk) or _relocated_hunk(ctx, fp, image, hunk)
        if placed is None:
            reason = _conflict_note(image, hunk, number, ctx.new_ref, fp.old_path or "")
            reasons.append(reason)
            placed = _conflict_hunk(ctx, fp, image, hunk, reason)
        hunks.append(placed)
    return hunks, reasons


def _missing_file(fp: FilePatch) -> FileOutcome:
    """Every hunk in conflict: the file the patch creates exists upstream, or the one it changes is gone."""
    why = (
        f"{fp.new_path} already exists upstream"
        if fp.is_new
        else f"{fp.old_path} does not exist at the new ref (removed or renamed upstream)"
    )
    failed = [
        HunkResult(fp.path, h.old_start, h.new_start, "conflict", [], why, h.header_line) for h in fp.hunks
    ]
    return FileOutcome(fp, "conflict", {}, failed, why)


def _exact_hunk(fp: FilePatch, image: Image, hunk: Hunk) -> HunkResult | None:
    """The hunk applied where git apply would put it, the image changed; None when it does not fit."""
    exact = find_exact(image, hunk)
    if exact is None:
        return None
    image.splice(exact.start, exact.start + len(hunk.before), hunk.after)
    status = "clean" if exact.offset == 0 else "offset"
    return HunkResult(fp.path, hunk.old_start, exact.start + 1, status, patch_line=hunk.header_line)


def _relocated_hunk(ctx: PinContext, fp: FilePatch, image: Image, hunk: Hunk) -> HunkResult | None:
    """The hunk applied by tolerant relocation, the image changed; None when it cannot be placed."""
    found = relocate(image, hunk)
    if found is None:
        return None
    placement, replacement = found
    length = len([line for line in hunk.lines if line.kind != "+"]) - placement.fuzz
    image.splice(placement.start, placement.start + length, replacement)
    return HunkResult(
        fp.path,
        hunk.old_start,
        placement.start + 1,
        "relocated",
        ctx.commits_near(fp.old_path, placement.start + 1, len(replacement), hunk),
        _relocation_note(placement),
        hunk.header_line,
    )


def _conflict_hunk(ctx: PinContext, fp: FilePatch, image: Image, hunk: Hunk, reason: str) -> HunkResult:
    """The hunk in conflict, at the best candidate place (else where it expected to be)."""
    candidate = best_candidate(image, hunk)
    near = candidate[0] + 1 if candidate else hunk.new_start
    return HunkResult(
        fp.path,
        hunk.old_start,
        near,
        "conflict",
        ctx.commits_near(fp.old_path, near, len(hunk.before), hunk),
        reason,
        hunk.header_line,
    )


def _relocation_note(p: Placement) -> str:
    parts = [f"placed {abs(p.offset)} lines {'below' if p.offset >= 0 else 'above'} the expected position"]
    if p.terminator:
        parts.append(
            f"anchored on the end of the list ({code_span(p.terminator.decode(errors='replace'))}): "
            "after upstream's last entry"
        )
    elif p.fuzz:
        parts.append(f"with {p.fuzz} context line{'s' if p.fuzz > 1 else ''} dropped")
    if p.whitespace:
        parts.append("ignoring whitespace changes")
    if p.reindent:
        parts.append(f"added lines re-indented by {p.reindent:+d} columns like their neighbours")
    return ", ".join(parts)


def _conflict_note(image: Image, hunk: Hunk, number: int, ref: str, path: str) -> str:
    where = f"hunk {number} expected near {path}:{hunk.new_start} at {ref}"
    candidate = best_candidate(image, hunk)
    if candidate is None:
        return f"{where}; none of its context lines exist there any more"
    pos, count = candidate
    distance = pos + 1 - hunk.new_start
    return (
        f"{where}; best candidate is line {pos + 1} ({abs(distance)} lines "
        f"{'below' if distance >= 0 else 'above'}), where {count} of {len(hunk.before)} lines still match"
    )
