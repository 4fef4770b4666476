"""The patch engine: check every carried patch of a pin against the new upstream ref.

Patches are processed in apply-patch.cmake's order, each against the new
upstream tree with the earlier ones (regenerated where needed) applied.
A patch that does not apply is rebuilt by a three-way merge first (edit by
edit, bot/merge.py), then by tolerant relocation; a result is never called
good when it collides with what upstream added at the same place.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pygit2

from bot import buildpatches, gitapply, identifiers, obsolete
from bot.config import CONFIG_PATH, Config, Pin, read_version
from bot.hunks import (
    Placement,
    Renumbered,
    best_candidate,
    collisions,
    copies_of,
    find_exact,
    mentions_value,
    norm,
    relocate,
    renumber,
)
from bot.merge import Overlap, merge
from bot.model import REBUILT, AnalysisError, Commit, Finding, HunkResult, PatchResult, PinReport, Report
from bot.patchfile import (
    FilePatch,
    Hunk,
    Line,
    PatchError,
    PatchFile,
    apply_delta,
    binary_payload,
    lines_of,
    parse,
    safety_problem,
)
from bot.snapshot import GitSnapshot, Snapshot
from bot.upstream import History, Upstream

OpenUpstream = Callable[[Pin, list[str]], Upstream]


class Tree:
    """An upstream tree with patches applied on top: git objects below, an overlay above."""

    def __init__(self, base: GitSnapshot | None):
        self.base = base
        self.overlay: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes | None:
        if path in self.overlay:
            return self.overlay[path]
        return self.base.read(path) if self.base else None

    def update(self, changes: dict[str, bytes | None]) -> None:
        self.overlay.update(changes)

    def copy(self) -> Tree:
        tree = Tree(self.base)
        tree.overlay = dict(self.overlay)
        return tree


class NoFit(Exception):
    """A file change cannot be applied as it is; the message says why."""


def apply_exact(tree: Tree, fp: FilePatch) -> tuple[dict[str, bytes | None], list[Placement]]:
    """Apply one file change the way `git apply` does; raises NoFit with the reason."""
    current = tree.read(fp.old_path) if fp.old_path else None
    if fp.is_new and tree.read(fp.new_path or "") is not None:
        raise NoFit(f"{fp.new_path} already exists upstream")
    if not fp.is_new and current is None:
        raise NoFit(f"{fp.old_path} does not exist upstream")
    changes: dict[str, bytes | None] = {}
    if fp.old_path and fp.new_path and fp.old_path != fp.new_path:
        changes[fp.old_path] = None
    if fp.is_binary:
        payload = binary_payload(fp)
        if payload is None:
            raise PatchError(f"{fp.path}: binary change without data ('Binary files differ')")
        if fp.index_old and current is not None and not str(pygit2.hash(current)).startswith(fp.index_old):
            raise NoFit(f"binary file {fp.path} is not the one the patch was made against")
        kind, data = payload
        result = data if kind == "literal" else apply_delta(current or b"", data)
        if fp.new_path:
            changes[fp.new_path] = result
        else:
            changes[fp.old_path or ""] = None
        return changes, []
    image = lines_of(current)
    placements = []
    for number, hunk in enumerate(fp.hunks, 1):
        placement = find_exact(image, hunk)
        if placement is None:
            raise NoFit(f"hunk {number} of {fp.path} does not match")
        image[placement.start:placement.start + len(hunk.before)] = hunk.after
        placements.append(placement)
    if fp.is_deleted:
        if image:
            raise NoFit(f"{fp.old_path} has content the deletion does not cover")
        changes[fp.old_path or ""] = None
    else:
        changes[fp.new_path or ""] = b"".join(image)
    return changes, placements


def reverse_applies(tree: Tree, pf: PatchFile) -> bool:
    """Whether the new upstream already has every change of the patch."""
    for fp in pf.files:
        if fp.is_binary:
            return False
        target = tree.read(fp.new_path) if fp.new_path else None
        if fp.is_deleted:
            if tree.read(fp.old_path or "") is not None:
                return False
            continue
        if target is None:
            return False
        image = lines_of(target)
        for hunk in fp.hunks:
            reverse = Hunk(hunk.new_start, hunk.new_count, hunk.old_start, hunk.old_count, hunk.section,
                           [Line({"+": "-", "-": "+"}.get(line.kind, " "), line.text) for line in hunk.lines])
            placement = find_exact(image, reverse)
            if placement is None:
                return False
            image[placement.start:placement.start + len(reverse.before)] = reverse.after
    return True


@dataclass
class PinContext:
    """What every patch of one pin is checked against."""

    pin: Pin
    upstream: Upstream
    history: History
    new_ref: str
    old_tree: Tree | None
    new_tree: Tree
    local_sources: dict[str, bytes] = field(default_factory=dict)  # Ollama's own files beside the patches

    def old_blob(self, fp: FilePatch) -> bytes | None:
        """The file the patch was written against: the old stacked tree, else the `index` line's blob."""
        if self.old_tree is not None and fp.old_path:
            data = self.old_tree.read(fp.old_path)
            if data is not None:
                return data
        if fp.index_old and len(fp.index_old) >= 4 and set(fp.index_old) != {"0"}:
            try:
                obj = self.upstream.repo.revparse_single(fp.index_old)
            except (KeyError, ValueError, pygit2.GitError):
                return None
            if isinstance(obj, pygit2.Blob):
                return obj.data
        return None

    def commits_near(self, path: str | None, line: int, length: int, hunk: Hunk) -> list[Commit]:
        """Upstream commits that changed the hunk's surroundings: lines there now, or its old context."""
        if not path:
            return []
        return self.history.commits_for_lines(path, line - 3, line + length + 3, hunk.before)


@dataclass
class FileOutcome:
    fp: FilePatch
    status: str  # clean|offset|merged|relocated|conflict
    changes: dict[str, bytes | None]
    hunks: list[HunkResult]
    reason: str = ""


def _exact_outcome(ctx: PinContext, fp: FilePatch) -> FileOutcome | None:
    try:
        changes, placements = apply_exact(ctx.new_tree, fp)
    except NoFit:
        return None
    hunks = [HunkResult(fp.path, h.old_start, p.start + 1, "clean" if p.offset == 0 else "offset",
                        patch_line=h.header_line)
             for h, p in zip(fp.hunks, placements)]
    status = "offset" if any(h.status == "offset" for h in hunks) else "clean"
    return FileOutcome(fp, status, changes, hunks)


def _three_way(ctx: PinContext, fp: FilePatch) -> FileOutcome | None:
    """The file merged edit by edit (bot/merge.py); None when an edit overlaps upstream's."""
    if fp.is_new or fp.is_deleted or fp.is_binary or not fp.old_path:
        return None
    base = ctx.old_blob(fp)
    theirs = ctx.new_tree.read(fp.old_path)
    if base is None or theirs is None:
        return None
    try:
        ours_changes, placements = apply_exact(_single(fp.old_path, base), fp)
    except NoFit:
        return None
    ours = ours_changes[fp.new_path or fp.old_path]
    assert ours is not None
    try:
        merged = merge(lines_of(base), lines_of(ours), lines_of(theirs))
    except Overlap:
        return None
    upstream_image = lines_of(theirs)
    hunks = []
    grown = 0
    for h, placement in zip(fp.hunks, placements):
        start = placement.start - grown  # where the hunk's preimage is in the base
        grown += len(h.after) - len(h.before)
        own = [p for p in merged.ours if start <= p.edit.start and p.edit.end <= start + len(h.before)]
        at = own[0].at - (own[0].edit.start - start) + 1 if own else h.new_start
        exact = find_exact(upstream_image, h)
        if exact is not None:  # this hunk alone still fits: only its neighbours needed the merge
            hunks.append(HunkResult(fp.path, h.old_start, at, "clean" if exact.offset == 0 else "offset",
                                    patch_line=h.header_line))
            continue
        notes = list(dict.fromkeys(n for p in own for n in p.notes))
        hunks.append(HunkResult(fp.path, h.old_start, at, "relocated" if notes else "merged",
                                ctx.commits_near(fp.old_path, at, len(h.after), h), "; ".join(notes),
                                patch_line=h.header_line))
    changes: dict[str, bytes | None] = {fp.new_path or fp.old_path: b"".join(merged.lines)}
    if fp.new_path and fp.new_path != fp.old_path:
        changes[fp.old_path] = None
    status = "relocated" if any(h.status == "relocated" for h in hunks) else "merged"
    return FileOutcome(fp, status, changes, hunks)


def _single(path: str, data: bytes) -> Tree:
    tree = Tree(None)
    tree.update({path: data})
    return tree


def _relocated(ctx: PinContext, fp: FilePatch) -> FileOutcome:
    """Place each hunk on its own: exactly if it can, else with tolerance, else say why not."""
    current = ctx.new_tree.read(fp.old_path) if fp.old_path else None
    if fp.is_new or current is None:
        why = (f"{fp.new_path} already exists upstream" if fp.is_new
               else f"{fp.old_path} does not exist at the new ref (removed or renamed upstream)")
        failed = [HunkResult(fp.path, h.old_start, h.new_start, "conflict", [], why, h.header_line) for h in fp.hunks]
        return FileOutcome(fp, "conflict", {}, failed, why)
    image = lines_of(current)
    hunks: list[HunkResult] = []
    reasons = []
    for number, hunk in enumerate(fp.hunks, 1):
        exact = find_exact(image, hunk)
        if exact is not None:
            image[exact.start:exact.start + len(hunk.before)] = hunk.after
            hunks.append(HunkResult(fp.path, hunk.old_start, exact.start + 1,
                                    "clean" if exact.offset == 0 else "offset", patch_line=hunk.header_line))
            continue
        found = relocate(image, hunk)
        if found is not None:
            placement, replacement = found
            length = len([line for line in hunk.lines if line.kind != "+"]) - placement.fuzz
            image[placement.start:placement.start + length] = replacement
            hunks.append(HunkResult(fp.path, hunk.old_start, placement.start + 1, "relocated",
                                    ctx.commits_near(fp.old_path, placement.start + 1, len(replacement), hunk),
                                    _relocation_note(placement), hunk.header_line))
            continue
        reason = _conflict_note(image, hunk, number, ctx.new_ref, fp.old_path or "")
        reasons.append(reason)
        candidate = best_candidate(image, hunk)
        near = candidate[0] + 1 if candidate else hunk.new_start
        hunks.append(HunkResult(fp.path, hunk.old_start, near, "conflict",
                                ctx.commits_near(fp.old_path, near, len(hunk.before), hunk), reason, hunk.header_line))
    status = "conflict" if reasons else "relocated"
    changes: dict[str, bytes | None] = {}
    if not reasons:
        if fp.is_deleted:
            changes[fp.old_path or ""] = None
        else:
            changes[fp.new_path or ""] = b"".join(image)
            if fp.new_path != fp.old_path:
                changes[fp.old_path or ""] = None
    return FileOutcome(fp, status, changes, hunks, "; ".join(reasons))


def _relocation_note(p: Placement) -> str:
    parts = [f"placed {abs(p.offset)} lines {'below' if p.offset >= 0 else 'above'} the expected position"]
    if p.terminator:
        parts.append(f"anchored on the end of the list (`{p.terminator.decode(errors='replace')}`): "
                     "after upstream's last entry")
    elif p.fuzz:
        parts.append(f"with {p.fuzz} context line{'s' if p.fuzz > 1 else ''} dropped")
    if p.whitespace:
        parts.append("ignoring whitespace changes")
    if p.reindent:
        parts.append(f"added lines re-indented by {p.reindent:+d} columns like their neighbours")
    return ", ".join(parts)


def _conflict_note(image: list[bytes], hunk: Hunk, number: int, ref: str, path: str) -> str:
    where = f"hunk {number} expected near {path}:{hunk.new_start} at {ref}"
    candidate = best_candidate(image, hunk)
    if candidate is None:
        return f"{where}; none of its context lines exist there any more"
    pos, count = candidate
    distance = pos + 1 - hunk.new_start
    return (f"{where}; best candidate is line {pos + 1} ({abs(distance)} lines "
            f"{'below' if distance >= 0 else 'above'}), where {count} of {len(hunk.before)} lines still match")


def _added_lines(before: bytes, after: bytes) -> set[int]:
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    return {line.new_lineno - 1 for hunk in patch.hunks for line in hunk.lines if line.origin == "+"}


def file_section(fp: FilePatch, before: bytes | None, after: bytes | None) -> bytes:
    """This file's part of a patch, rebuilt against `before`, in the original's header format."""
    diff = pygit2.Patch.create_from(before or b"", after or b"", fp.old_path or fp.path,
                                    fp.new_path or fp.path, context_lines=context_width(fp)).data
    body = diff[diff.find(b"\n@@") + 1:] if b"\n@@" in diff else b""
    header = []
    for line in fp.header:
        if line.startswith(b"index ") and fp.index_old is not None:
            width = len(fp.index_old)
            old_id = "0" * width if before is None else str(pygit2.hash(before))[:width]
            new_id = "0" * width if after is None else str(pygit2.hash(after))[:width]
            suffix = line.rstrip(b"\r\n").split(b" ")[2:]
            line = b" ".join([b"index", f"{old_id}..{new_id}".encode(), *suffix]) + b"\n"
        header.append(line)
    return b"".join(header) + body


def context_width(fp: FilePatch) -> int:
    """The context lines the patch was made with (`git diff -U<n>`): the most any hunk has at one end;
    git's default of three for a file without hunks."""
    changed = [h for h in fp.hunks if h.leading < len(h.lines)]
    return max((n for h in changed for n in (h.leading, h.trailing)), default=3)


def render(pf: PatchFile, sections: list[bytes]) -> bytes:
    return pf.preamble + b"".join(sections) + pf.trailer


def check_patch(ctx: PinContext, path: str, data: bytes) -> PatchResult:
    """One patch's status against the stacked new tree; updates the stacks for the next patch."""
    try:
        pf = parse(data)
        unsafe = [p for p in (safety_problem(fp) for fp in pf.files) if p] + _through_symlinks(ctx.new_tree, pf)
        if unsafe:
            return PatchResult(path, "error", f"Unsafe patch, never applied: {unsafe[0]}.")
        unreadable = _unreadable(ctx, pf)
        if unreadable:
            return PatchResult(path, "error", f"Cannot be checked: {unreadable}.")
        result = _check_parsed(ctx, path, pf, data)
    except PatchError as exc:
        return PatchResult(path, "error", f"Malformed patch: {exc}.")
    if ctx.old_tree is not None:  # the old stack always carries the patch as written
        _apply_all(ctx.old_tree, pf)
    return result


def _unreadable(ctx: PinContext, pf: PatchFile) -> str | None:
    """Why the patch cannot be checked when a partial upstream clone lacks a file it touches, at either ref."""
    stacks = [(ctx.new_tree, ctx.new_ref)]
    if ctx.old_tree is not None:
        stacks.append((ctx.old_tree, f"the old ref ({str(ctx.history.old.id)[:12]})"))
    for tree, ref in stacks:
        for path in sorted({p for fp in pf.files for p in (fp.old_path, fp.new_path) if p}):
            if path not in tree.overlay and tree.base is not None and tree.base.missing(path):
                return ctx.upstream.missing_note(path, ref)
    return None


def _through_symlinks(tree: Tree, pf: PatchFile) -> list[str]:
    """Paths the patch would write at or below a symbolic link of the upstream tree: git apply refuses them
    ("beyond a symbolic link"), and a link pointing outside would make the patch write anywhere."""
    problems = []
    for path in {p for fp in pf.files for p in (fp.old_path, fp.new_path) if p}:
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            entry = tree.base.entry(prefix) if tree.base and prefix not in tree.overlay else None
            if entry is not None and entry.filemode == pygit2.GIT_FILEMODE_LINK:
                problems.append(f"{path} is at or below {prefix}, a symbolic link upstream")
                break
    return sorted(problems)


def _apply_all(tree: Tree, pf: PatchFile) -> None:
    changes: dict[str, bytes | None] = {}
    scratch = tree.copy()
    try:
        for fp in pf.files:
            file_changes, _ = apply_exact(scratch, fp)
            scratch.update(file_changes)
            changes.update(file_changes)
    except (NoFit, PatchError):
        return
    tree.update(changes)


def _check_parsed(ctx: PinContext, path: str, pf: PatchFile, data: bytes) -> PatchResult:
    """What the new upstream already provides comes first (bot/obsolete.py): all of it makes the patch
    `upstreamed`, part of it is dropped and the rest placed. Names upstream removed or renamed that the
    added lines use (bot/identifiers.py) are renamed one for one or named. Either makes a placed patch
    `fuzzy`: the rebuilt patch is an inference a person should look at."""
    assessment = obsolete.assess(pf, _file_sides(ctx, pf))
    if assessment.whole and reverse_applies(ctx.new_tree, pf):
        return _place(ctx, path, pf, data)  # upstream has the very change: the plain `upstreamed`
    if assessment.whole:
        return obsolete.result(path, ctx.new_ref, assessment, _placed_hunks(ctx, assessment),
                               lambda p: _commits_at(ctx, p.file, p.lines))
    rest = obsolete.without(pf, {(p.file, p.index) for p in assessment.provided})
    rest, uses = identifiers.adapt(rest, _removed_declarations(ctx, rest),
                                   {fp.old_path: ctx.old_tree.read(fp.old_path) if ctx.old_tree else None
                                    for fp in rest.files if fp.old_path})
    if not assessment.provided and not uses:
        return _place(ctx, path, pf, data)
    before = {fp.path: ctx.new_tree.read(fp.old_path) if fp.old_path else None for fp in rest.files}
    result = _place(ctx, path, rest, data)
    for use in uses:
        c = use.change
        use.commits = _commits_at(ctx, c.path, [c.new_line], [c.old_text.encode()])
    provided = [(p, _commits_at(ctx, p.file, p.lines)) for p in assessment.provided]
    amended = obsolete.amend(result, ctx.new_ref, [fp.path for fp in pf.files], provided, uses)
    if amended.status == "fuzzy":
        unchanged = {id(fp) for fp in pf.files}
        sections = [fp.raw if fp.is_binary or (id(fp) in unchanged and _all_clean(amended, fp)) else
                    file_section(fp, before[fp.path], ctx.new_tree.read(fp.new_path) if fp.new_path else None)
                    for fp in rest.files]
        amended.new_text = render(rest, sections)
    return amended


def _file_sides(ctx: PinContext, pf: PatchFile) -> dict[str, obsolete.FileSides]:
    upstream = Tree(ctx.new_tree.base)
    return {fp.old_path: obsolete.FileSides(ctx.old_tree.read(fp.old_path) if ctx.old_tree else None,
                                            ctx.new_tree.read(fp.old_path), upstream.read(fp.old_path))
            for fp in pf.files if fp.old_path}


def _removed_declarations(ctx: PinContext, pf: PatchFile) -> dict[str, list[identifiers.UpstreamChange]]:
    """Per file of the patch: the declarations the upstream diff removed from it and from its headers."""
    old, new = GitSnapshot(ctx.upstream.repo, ctx.history.old), ctx.new_tree.base
    out: dict[str, list[identifiers.UpstreamChange]] = {}
    for fp in pf.files:
        if not fp.old_path or new is None:
            continue
        for p in (fp.old_path, *identifiers.headers_of(fp.old_path)):
            if old.missing(p) or new.missing(p):
                continue
            before, after = old.read(p), new.read(p)
            if before is not None and after is not None:
                out.setdefault(fp.path, []).extend(identifiers.removed_declarations(p, before, after))
    return out


def _commits_at(ctx: PinContext, path: str, lines: list[int], removed: Iterable[bytes] = ()) -> list[Commit]:
    return ctx.history.commits_for_lines(path, min(lines), max(lines), removed) if lines else []


def _placed_hunks(ctx: PinContext, assessment: obsolete.Assessment) -> dict[tuple[str, int], HunkResult]:
    """Where each hunk upstream does not provide would go, by the exact search alone."""
    out = {}
    for left in assessment.leftovers:
        image = lines_of(ctx.new_tree.read(left.file))
        found = find_exact(image, left.hunk)
        status = "conflict" if found is None else "clean" if found.offset == 0 else "offset"
        out[(left.file, left.index)] = HunkResult(left.file, left.hunk.old_start,
                                                  found.start + 1 if found else left.hunk.new_start, status,
                                                  patch_line=left.hunk.header_line)
    return out


def _all_clean(result: PatchResult, fp: FilePatch) -> bool:
    return all(h.status == "clean" for h in result.hunks if h.file == fp.path)


def _place(ctx: PinContext, path: str, pf: PatchFile, data: bytes) -> PatchResult:
    """Each file of the patch placed by the first way that fits (exact, three-way merge, relocation), the
    enum values it adds renumbered past upstream's, then the result checked for collisions with upstream;
    the tree takes the changes only when the patch applies."""
    outcomes = [_exact_outcome(ctx, fp) for fp in pf.files]
    if None in outcomes and reverse_applies(ctx.new_tree, pf):
        return _already_there(ctx, path, pf, [])
    binary = next((fp for fp, o in zip(pf.files, outcomes) if o is None and fp.is_binary), None)
    if binary is not None:
        return PatchResult(path, "error", f"The binary change to {binary.path} no longer applies as it is: "
                           "binary patches cannot be rebuilt, make it again against the new ref.")
    resolved = [o if o is not None else _three_way(ctx, fp) or _relocated(ctx, fp) for fp, o in zip(pf.files, outcomes)]
    hunks = [h for o in resolved for h in o.hunks]
    if any(o.status == "conflict" for o in resolved):
        failed = [h for h in hunks if h.status == "conflict"]
        first = next(o.reason for o in resolved if o.status == "conflict")
        return PatchResult(path, "conflict",
                           f"{len(failed)} of {len(hunks)} hunks cannot be placed on {ctx.new_ref}: {first}.",
                           None, hunks)
    changes: dict[str, bytes | None] = {}
    for o in resolved:
        changes.update(o.changes)
    unmovable = _renumber(ctx, resolved, changes)
    if unmovable:
        return _unplaced(path, hunks, unmovable, f"Cannot be rebuilt: {unmovable}.")
    for o in resolved:
        _ask_about_copies(ctx, o, changes)
    sections, clashes = _sections(ctx, resolved, changes)
    if clashes:
        return _unplaced(path, hunks, "; ".join(clashes), f"Applying it would collide with upstream: {clashes[0]}.")
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


def _sections(ctx: PinContext, resolved: list[FileOutcome],
              changes: dict[str, bytes | None]) -> tuple[list[bytes], list[str]]:
    """The rebuilt patch's file sections (a clean or binary file as it was), and the collisions of the
    added lines with upstream's."""
    clashes, sections = [], []
    for o in resolved:
        fp = o.fp
        before = ctx.new_tree.read(fp.old_path) if fp.old_path else None
        after = changes.get(fp.new_path) if fp.new_path else None
        if before is not None and after is not None and not fp.is_binary:
            clashes += [f"{fp.new_path}: {c}" for c in collisions(lines_of(after), _added_lines(before, after))]
        if o.status == "clean" or fp.is_binary:
            sections.append(fp.raw)
        elif before != after or fp.old_path != fp.new_path or fp.old_mode != fp.new_mode:
            sections.append(file_section(fp, before, after))
    return sections, clashes


def _placed(ctx: PinContext, path: str, pf: PatchFile, data: bytes, statuses: set[str],
            hunks: list[HunkResult], sections: list[bytes]) -> PatchResult:
    """The status of a patch whose every hunk found its place: the least exact way any of them took."""
    if statuses <= {"clean"}:
        return PatchResult(path, "clean", "Applies exactly as it is.", None, hunks, new_text=data)
    new_text = render(pf, sections)
    if statuses <= {"clean", "offset"}:
        moved = [h for h in hunks if h.status == "offset"]
        return PatchResult(path, "offset", f"Applies as it is; {len(moved)} of {len(hunks)} hunks moved "
                           "(git apply accepts line offsets).", None, hunks, new_text=new_text)
    if "relocated" in statuses:
        moved = [h for h in hunks if h.status == "relocated"]
        return PatchResult(path, "fuzzy", f"Rebuilt with tolerance: {len(moved)} of {len(hunks)} hunks placed by a "
                           "merge rule or relocated (each hunk says how): review it before committing.",
                           path, hunks, new_text=new_text)
    merged = [h for h in hunks if h.status == "merged"]
    return PatchResult(path, "regenerated", f"Rebuilt by a clean three-way merge of {len(merged)} of "
                       f"{len(hunks)} hunks onto {ctx.new_ref}; the new patch applies as it is.",
                       path, hunks, new_text=new_text)


SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".m", ".mm", ".go")  # Ollama's compat sources


def _renumber(ctx: PinContext, resolved: list[FileOutcome], changes: dict[str, bytes | None]) -> str | None:
    """Moves each enum value the patch adds that upstream now uses to the next free one (hunks.renumber),
    in `changes` and in the notes of the hunk it is in. Where the patch writes the old value elsewhere, a
    line naming the entry is renumbered too; any other line, or a line of Ollama's compat sources that
    writes the old value for the entry, is returned as the reason the patch cannot be rebuilt."""
    images: dict[str, tuple[FileOutcome, list[bytes], set[int]]] = {}
    moves: list[tuple[str, Renumbered]] = []
    for o in resolved:
        after = changes.get(o.fp.new_path) if o.fp.new_path and not o.fp.is_binary else None
        if after is None:
            continue
        before = ctx.new_tree.read(o.fp.old_path) if o.fp.old_path else None
        added = _added_lines(before or b"", after)
        image, moved = renumber(lines_of(after), added)
        images[o.fp.new_path or ""] = (o, image, added)
        moves += [(o.fp.new_path or "", m) for m in moved]
    entries = {(p, m.line) for p, m in moves}
    for path, move in moves:
        _note(images[path][0], move.line, move.note, _commits_taking(ctx, path, move))
        for other, (o, image, added) in images.items():
            for j in sorted(added):
                if (other, j) in entries or not mentions_value(image[j], move.old):
                    continue
                if move.name.encode() not in image[j]:
                    return (f"{path}: {move.clash}, but the patch also writes {move.old} at {other}:{j + 1} "
                            f"(`{image[j].strip().decode(errors='replace')}`): renumber them by hand")
                image[j] = re.sub(rb"(?<![\w.])" + str(move.old).encode() + rb"(?![\w.])",
                                  str(move.new).encode(), image[j])
                _note(o, j, f"{move.old} renumbered to {move.new} like {move.name}")
        for local, data in ctx.local_sources.items():
            for j, line in enumerate(lines_of(data)):
                if move.name.encode() in line and mentions_value(line, move.old):
                    return (f"{path}: {move.clash}, but Ollama's {local}:{j + 1} writes {move.old} for {move.name} "
                            f"(`{line.strip().decode(errors='replace')}`): renumber them by hand")
    for path, (o, image, _) in images.items():
        if o.status == "relocated":
            changes[path] = b"".join(image)
    return None


def _ask_about_copies(ctx: PinContext, outcome: FileOutcome, changes: dict[str, bytes | None]) -> None:
    """A question in the detail of each hunk whose surroundings upstream copied elsewhere in the file (they
    appear more often in the new upstream file than in the old one): the copy may need the change too,
    which only a person can say: a merged hunk asking it makes the patch fuzzy, not regenerated."""
    fp = outcome.fp
    if fp.is_binary or fp.is_new or not fp.old_path or not fp.new_path or changes.get(fp.new_path) is None:
        return
    old, new = ctx.old_blob(fp), ctx.new_tree.read(fp.old_path)
    if old is None or new is None:
        return
    image = lines_of(changes[fp.new_path] or b"")
    old_image, new_image, patched = ([norm(x) for x in lines_of(data)] for data in (old, new, b"".join(image)))
    added = _added_lines(new, changes[fp.new_path] or b"")
    for hunk, result in zip(fp.hunks, outcome.hunks):
        site = range(result.new_line - 1, result.new_line - 1 + len(hunk.after))
        around = [image[i] for i in site if i < len(image) and i not in added]  # upstream's version of it
        if len(copies_of(new_image, around)) <= len(copies_of(old_image, hunk.before)):
            continue
        copies = [i for i in copies_of(patched, around) if not site.start - len(around) < i < site.stop]
        if copies:
            lines = ", ".join(str(i + 1) for i in copies)
            question = (f"the hooked code now also appears at line{'s' if len(copies) > 1 else ''} {lines}: "
                        "does it need the hook too?")
            result.detail = "; ".join(filter(None, [result.detail, question]))
            if result.status == "merged":
                result.status = outcome.status = "relocated"


def _commits_taking(ctx: PinContext, path: str, move: Renumbered) -> list[Commit]:
    """The upstream commits that brought the entries whose values made the move."""
    upstream = lines_of(ctx.new_tree.base.read(path) if ctx.new_tree.base else None)
    names = [re.compile(rb"^\s*" + re.escape(name.encode()) + rb"\b") for _, name in move.taken]
    lines = [i + 1 for i, text in enumerate(upstream) if any(n.match(text) for n in names)]
    return list(dict.fromkeys(c for n in lines for c in ctx.history.commits_for_lines(path, n, n)))


def _note(outcome: FileOutcome, line: int, note: str, commits: list[Commit] | None = None) -> None:
    """A note on the hunk of the outcome that holds 0-based `line` of the new file, with the upstream
    commits behind it; the hunk and the file no longer apply as they are."""
    hunk = max((h for h in outcome.hunks if h.new_line - 1 <= line), key=lambda h: h.new_line,
               default=outcome.hunks[0])
    hunk.status = "relocated"
    hunk.detail = "; ".join(filter(None, [hunk.detail, note]))
    hunk.upstream_commits += [c for c in commits or [] if c not in hunk.upstream_commits]
    outcome.status = "relocated"


def _already_there(ctx: PinContext, path: str, pf: PatchFile, hunks: list[HunkResult]) -> PatchResult:
    """The change is in the stacked tree already: upstream's doing (drop the patch), or, when only the
    earlier carried patches make it, a repeat of one of them (git apply fails on it)."""
    touched = {p for fp in pf.files for p in (fp.old_path, fp.new_path) if p}
    if touched & ctx.new_tree.overlay.keys() and not reverse_applies(Tree(ctx.new_tree.base), pf):
        return PatchResult(path, "conflict", f"Its change is already made by an earlier carried patch, not by "
                           f"{ctx.new_ref}: it repeats that patch; drop or merge one of them.", None, hunks)
    by = obsolete.commit_note(_commits_of_change(ctx, pf))
    return PatchResult(path, "upstreamed", f"Its change is already in {ctx.new_ref}" + (f" ({by})" if by else "")
                       + ": drop this patch.", None, hunks)


def _commits_of_change(ctx: PinContext, pf: PatchFile) -> list[Commit]:
    """The upstream commits that made the patch's change themselves: that wrote its added lines where they
    are now, or removed the lines it removes."""
    upstream = Tree(ctx.new_tree.base)
    found: list[Commit] = []
    for fp in pf.files:
        image = lines_of(upstream.read(fp.new_path)) if fp.new_path and not fp.is_binary else []
        for hunk in fp.hunks:
            post = [line for line in hunk.lines if line.kind != "-"]
            added = [i for i, line in enumerate(post) if line.kind == "+"]
            at = find_exact(image, Hunk(hunk.new_start, hunk.new_count, hunk.new_start, hunk.new_count,
                                        hunk.section, [Line(" ", line.text) for line in post]))
            if at is None or not fp.new_path:
                continue
            removed = [line.text for line in hunk.lines if line.kind == "-"]
            start, end = (at.start + added[0] + 1, at.start + added[-1] + 1) if added else (at.start + 1, at.start)
            found += [c for c in ctx.history.commits_for_lines(fp.new_path, start, end, removed) if c not in found]
    return found


def patch_order(snapshot: Snapshot, directory: str) -> list[str]:
    """apply-patch.cmake's order: every *.patch below the directory, sorted by file name."""
    return buildpatches.directory_order(snapshot, directory)


def pin_stack(snapshot: Snapshot, pin: Pin) -> buildpatches.PatchStack:
    """The pin's patches as the build applies them (its CMake files), else as configured."""
    return buildpatches.patch_stack(snapshot, pin.version_file, pin.patch_sets)


def check_pin(pin: Pin, upstream: Upstream, old_ref: str | None, new_ref: str,
              head: Snapshot) -> tuple[PinReport, PinContext]:
    """Every patch of the pin at `head` against `new_ref`; without `old_ref` (a new pin, or garbage in the
    base's version file) against the new ref alone, the three-way merges using the patches' index blobs."""
    new_commit = _resolve(upstream, new_ref, pin.version_file)
    old_commit = _resolve(upstream, old_ref, f"{pin.version_file} at the base revision") if old_ref else None
    history = History(upstream, old_commit or new_commit, new_commit)
    upstream.fetch_missing(history, _upstream_reads(head, pin))
    ctx = PinContext(pin, upstream, history, new_ref,
                     Tree(GitSnapshot(upstream.repo, old_commit)) if old_commit else None,
                     Tree(GitSnapshot(upstream.repo, new_commit)),
                     {p: head.read(p) or b"" for p in head.files(pin.patches) if p.endswith(SOURCE_SUFFIXES)})
    report = PinReport(pin.name, pin.version_file, old_ref or new_ref, new_ref,
                       str((old_commit or new_commit).id), str(new_commit.id),
                       f"{upstream.web_url}/compare/{old_ref or new_ref}...{new_ref}",
                       len(history.between), len(History(upstream, new_commit, old_commit or new_commit).between))
    report.cmake_changed = _cmake_changed(old_commit or new_commit, new_commit)
    stack = pin_stack(head, pin)
    report.patch_source = stack.origin
    for path in stack.paths:
        report.patches.append(check_patch(ctx, path, head.read(path) or b""))
    _confirm_with_git_apply(report.patches, head, GitSnapshot(upstream.repo, new_commit), new_ref)
    return report, ctx


def _confirm_with_git_apply(results: list[PatchResult], head: Snapshot, upstream: GitSnapshot, ref: str) -> None:
    """Run the real `git apply` over the stack as CMake would apply it (the committed patches that apply, the
    rebuilt ones in their place); a patch git refuses is a conflict, whatever the engine thought of it."""
    stack = [(r.path, (r.new_text if r.status in REBUILT else head.read(r.path)) or b"")
             for r in results if r.status in REBUILT or r.status in ("clean", "offset")]
    touched = set()
    for _, text in stack:
        try:
            touched |= {p for fp in parse(text).files for p in (fp.old_path, fp.new_path) if p}
        except PatchError:
            continue
    files = {path: data for path in sorted(touched) if (data := upstream.read(path)) is not None}
    refused = gitapply.refusals(files, stack)
    for r in results:
        if r.path in refused:
            what = "the rebuilt patch" if r.status in REBUILT else "it"
            r.status, r.regenerated, r.new_text = "conflict", None, None
            r.message = (f"llama-bot placed its hunks, but the real `git apply` refuses {what} on {ref} in stack "
                         f"order ({refused[r.path]}): rebase it by hand.")


def _cmake_changed(old: pygit2.Commit, new: pygit2.Commit) -> list[str]:
    """Upstream build files the bump changes: the build must be tried again. Compares tree entries only,
    so no blob is read."""
    paths = {p for d in old.tree.diff_to_tree(new.tree).deltas for p in (d.old_file.path, d.new_file.path)}
    return sorted(p for p in paths if posixpath.basename(p) == "CMakeLists.txt" or p.endswith(".cmake"))


def _upstream_reads(head: Snapshot, pin: Pin) -> Callable[[str], bool]:
    """The upstream files read at both refs besides those that changed: the patched files, and the CMake
    files (the review parses them all); a partial clone fetches them first."""
    from bot.review.cmake import CMAKE_FILES
    from bot.review.source import glob_match

    patched: set[str] = set()
    for path in pin_stack(head, pin).paths:
        try:
            patched |= {p for fp in parse(head.read(path) or b"").files for p in (fp.old_path, fp.new_path) if p}
        except PatchError:
            continue
    patched |= {h for p in list(patched) for h in identifiers.headers_of(p)}  # what bot/identifiers.py reads
    copied = tuple(f"{v.upstream}/{v.files}" for v in pin.vendored)  # compared with Ollama's copies
    return lambda path: path in patched or glob_match(path, CMAKE_FILES) or glob_match(path, copied)


def _resolve(upstream: Upstream, ref: str, where: str) -> pygit2.Commit:
    try:
        return upstream.commit(ref, where)
    except AnalysisError as exc:
        raise AnalysisError(f"{exc}{_abbreviation_hint(upstream.repo, ref)}") from None


def _abbreviation_hint(repo: pygit2.Repository | None, ref: str) -> str:
    """A short hex ref is most likely an abbreviated commit id, which git resolves and a version file may not
    (an abbreviation can become ambiguous as upstream grows)."""
    if not re.fullmatch(r"[0-9a-fA-F]{4,39}", ref):
        return ""
    try:
        found = repo.revparse_single(ref.lower()).peel(pygit2.Commit) if repo is not None else None
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        found = None
    if found is not None:
        return f"; {ref} abbreviates commit {found.id}: use the full 40-hex id"
    if len(ref) >= 7 and len(re.findall(r"[a-fA-F]", ref)) >= 2:  # not a tag like b10488
        return f"; if {ref} is an abbreviated commit id, use the full 40-hex id"
    return ""


def _base_ref(base: Snapshot, pin: Pin) -> str | None:
    try:
        return read_version(base, pin.version_file)
    except AnalysisError:  # garbage in the base's version file: what this change may repair
        return None


def _readable_ref(snapshot: Snapshot, pin: Pin) -> str | None:
    try:
        return read_version(snapshot, pin.version_file)
    except AnalysisError:
        return None


def analyse(config: Config, base: Snapshot, head: Snapshot, open_upstream: OpenUpstream,
            changed_paths: Iterable[str] | None = None, review: bool = True,
            errors: dict[str, str] | None = None, also_watch: bool = True) -> Report:
    """The whole report for the pins a change touches (all pins when `changed_paths` is None).

    A pin that cannot be analysed raises AnalysisError; with `errors`, it is recorded there
    (pin name -> why) and in `Report.failed`, and the other pins are still analysed.
    """
    report = Report()
    for pin in config.touched_pins(changed_paths, head, also_watch):
        try:
            pin_report = _analyse_pin(pin, config, base, head, open_upstream, review)
        except AnalysisError as exc:
            if errors is None:
                raise
            errors[pin.name] = str(exc)
            report.failed.append(PinReport(pin.name, pin.version_file, _readable_ref(base, pin),
                                           _readable_ref(head, pin), error=str(exc)))
            continue
        if pin_report is not None:
            report.pins.append(pin_report)
    return report


def _analyse_pin(pin: Pin, config: Config, base: Snapshot, head: Snapshot, open_upstream: OpenUpstream,
                 review: bool) -> PinReport | None:
    """One pin's report; None when neither revision has its version file (the repository does not pin it).

    Only garbage in the base's version file is skipped (the change may repair it): a well-formed base
    ref that upstream lacks is an error, since comparing against the new ref alone would hide the bump.
    """
    new_ref = read_version(head, pin.version_file)
    old_ref = _base_ref(base, pin)
    elsewhere = _fetched_elsewhere(base, pin) if old_ref else None
    if elsewhere is not None:
        old_ref = None  # a ref of another upstream: nothing to compare the new one with
    fetched = _fetched_elsewhere(head, pin) if new_ref else None
    if fetched is not None:
        raise AnalysisError(f"{pin.version_file} names `{new_ref}`, which {fetched.cmake_file}:{fetched.line} fetches "
                            f"from {fetched.repository}, not from {pin.upstream}: set this pin's `upstream` in "
                            f"{CONFIG_PATH}")
    if new_ref is None:
        if base.read(pin.version_file) is None:
            return None
        raise AnalysisError(f"this change deletes {pin.version_file}: the build would no longer pin {pin.name} "
                            f"(remove the pin from {CONFIG_PATH} too, or restore the file)")
    refs = [r for r in dict.fromkeys([old_ref, new_ref]) if r]
    try:
        upstream = open_upstream(pin, refs)
    except AnalysisError as exc:
        raise AnalysisError(f"{exc}{''.join(dict.fromkeys(_abbreviation_hint(None, r) for r in refs))}") from None
    pin_report, ctx = check_pin(pin, upstream, old_ref, new_ref, head)
    if elsewhere is not None:
        pin_report.findings.append(_other_upstream_finding(pin, base, elsewhere))
    if review:
        from bot import crosspin

        code, problems = crosspin.consumer_code(pin, config, head, open_upstream)
        old = GitSnapshot(upstream.repo, ctx.history.old) if old_ref else None
        pin_report.findings += [
            *crosspin.vendored_findings(pin, head, old, ctx.new_tree),
            *_review(ctx, head, config, _explained_hunks(pin_report.patches), tuple(code)),
            *problems,
        ]
    return pin_report


def _same_repository(a: str, b: str) -> bool:
    def key(url: str) -> str:
        return url.lower().rstrip("/").removesuffix(".git")

    return key(a) == key(b)


def _fetched_elsewhere(snapshot: Snapshot, pin: Pin) -> buildpatches.FetchSource | None:
    """Where the build at this revision fetches the version file's ref from, when that is never the pin's
    upstream (a version file that pins another repository). A repository CMake computes is not judged."""
    sources = [s for s in buildpatches.fetch_sources(snapshot, pin.version_file) if "://" in s.repository
               and "$" not in s.repository]
    if not sources or any(_same_repository(s.repository, pin.upstream) for s in sources):
        return None
    return sources[0]


def _other_upstream_finding(pin: Pin, base: Snapshot, source: buildpatches.FetchSource) -> Finding:
    ref = _base_ref(base, pin)
    return Finding(
        "build",
        "info",
        f"The base's {pin.version_file} pinned another repository: checked against the new ref alone",
        f"At the base revision `{source.cmake_file}:{source.line}` fetched `{ref}` from {source.repository}, not "
        f"from {pin.upstream}: there is no {pin.name} ref to compare the new one with, so the patches were "
        "checked against the new ref alone and the upstream diff was not reviewed.",
        pin.version_file,
        None,
    )


QUIET_HUNKS = ("clean", "offset")  # a hunk the patch section says nothing more of


def _explained_hunks(patches: list) -> frozenset[tuple[str, int]]:
    """(patch path, hunk header line) of every hunk the patch section already explains: one that moved,
    merged or conflicts, and every hunk of a patch upstream now carries."""
    return frozenset(
        (p.path, h.patch_line)
        for p in patches
        for h in p.hunks
        if p.status == "upstreamed" or h.status not in QUIET_HUNKS
    )


def _review(ctx: PinContext, head: Snapshot, config: Config, explained: frozenset = frozenset(),
            consumers: tuple = ()) -> list:
    from bot.review import ReviewContext, review

    old = ctx.history.old
    patches = []
    for path in pin_stack(head, ctx.pin).paths:
        try:
            patches.append((path, parse(head.read(path) or b"")))
        except PatchError:
            continue
    return review(ReviewContext(ctx.pin, GitSnapshot(ctx.upstream.repo, old),
                                GitSnapshot(ctx.upstream.repo, ctx.history.new), ctx.history, head,
                                patches, config.rules, explained, consumers))

