"""One patch against the pin's tree: refusing unsafe ones, what upstream already provides first
(bot/patches/obsolete.py), names upstream renamed (bot/patches/identifiers.py), then placing the rest."""

from __future__ import annotations

import pygit2

from bot.cache import facts
from bot.engine.context import PinContext, commits_at
from bot.engine.placing import all_clean, place
from bot.engine.sections import file_section, render
from bot.model import Doubt, HunkResult, PatchResult
from bot.patches import identifiers, obsolete, obsolete_report
from bot.patches.binarypatch import BINARY_BYTES, carried_bytes
from bot.patches.hunks import Image, find_exact
from bot.patches.patchfile import PatchError, PatchFile, lines_of, parse
from bot.patches.patchsafety import read_patch, safety_problem
from bot.patches.tree import NoFit, Tree, apply_exact, reverse_applies
from bot.repos.snapshot import GitSnapshot, Snapshot, size_text


def check_patch(ctx: PinContext, path: str, head: Snapshot) -> PatchResult:
    """One patch of the head's, its status against the stacked new tree; updates the stacks for the next
    patch."""
    try:
        data = read_patch(head, path)
    except PatchError as exc:
        return PatchResult(path, "error", f"Not checked: {exc}.")
    try:
        return _checked_and_stacked(ctx, path, data)
    finally:
        ctx.stack(path, data)  # whatever became of it, as the trees now hold it


def _checked_and_stacked(ctx: PinContext, path: str, data: bytes) -> PatchResult:
    try:
        pf = parse(data)
        carried = ctx.binary_bytes + carried_bytes(pf)
        refused = _refused(ctx, pf, carried)
        if refused:
            return PatchResult(path, "error", refused)
        ctx.binary_bytes = carried
        result = _kept_check(ctx, path, pf, data)
    except PatchError as exc:
        return PatchResult(path, "error", f"Malformed patch: {exc}.")
    if ctx.old_tree is not None:  # the old stack always carries the patch as written
        _apply_all(ctx.old_tree, pf)
    return result


# What checking a patch finds (its result, and what it changed in the new stacked tree) depends on the patch,
# where it stands, the stacked trees it is checked on, the ref's name and the upstream's URL (its commits link
# there) alone: kept by those, a re-check of the same bump places no hunk again.
CHECKED = facts.Extractor("patch-checked", 1, __name__)


def _kept_check(ctx: PinContext, path: str, pf: PatchFile, data: bytes) -> PatchResult:
    """`_check_parsed`, or what the facts store kept of it. Kept only when every upstream file it could need
    was read: a partial clone's missing blob would make it a different answer."""
    key = (ctx.upstream.web_url, ctx.stacked, path, facts.bytes_id(data), ctx.new_ref)
    complete = ctx.upstream.fetch_problem is None
    if complete:
        found, kept = facts.get(CHECKED, key)
        if found:
            result, changes = kept
            ctx.new_tree.update(changes)
            return result
    before, unreadable = dict(ctx.new_tree.overlay), len(ctx.upstream.unreadable)
    result = _check_parsed(ctx, path, pf, data)
    if complete and len(ctx.upstream.unreadable) == unreadable:
        overlay = ctx.new_tree.overlay
        changes = {p: v for p, v in overlay.items() if p not in before or before[p] is not v}
        facts.put(CHECKED, key, (result, changes))
    return result


def _refused(ctx: PinContext, pf: PatchFile, carried: int) -> str | None:
    """Why the patch is never applied: it is unsafe, with it the pin's patches would carry `carried` bytes of
    binary data, over the cap, or a partial clone lacks a file it touches."""
    unsafe = _unsafe(ctx.new_tree, pf)
    if unsafe:
        return f"Unsafe patch, never applied: {unsafe[0]}."
    if carried > BINARY_BYTES:
        return (
            f"Not applied: with its binary files the pin's patches would carry {size_text(carried)} of binary "
            f"data, over the {size_text(BINARY_BYTES)} they may carry in all."
        )
    unreadable = _unreadable(ctx, pf)
    return f"Cannot be checked: {unreadable}." if unreadable else None


def _unsafe(tree: Tree, pf: PatchFile) -> list[str]:
    """Why applying the patch to `tree` could write where it must not: its unsafe file changes, then its
    paths through upstream's symbolic links."""
    return [p for p in (safety_problem(fp) for fp in pf.files) if p] + _through_symlinks(tree, pf)


def _unreadable(ctx: PinContext, pf: PatchFile) -> str | None:
    """Why the patch cannot be checked when a partial upstream clone lacks a file it touches, at either ref."""
    stacks = [(ctx.new_tree, ctx.new_ref)]
    if ctx.old_tree is not None:
        stacks.append((ctx.old_tree, f"the old ref ({str(ctx.history.old.id)[:12]})"))
    for tree, ref in stacks:
        for path in sorted(pf.paths):
            if path not in tree.overlay and tree.base is not None and tree.base.missing(path):
                return ctx.upstream.missing_note(path, ref)
    return None


def _through_symlinks(tree: Tree, pf: PatchFile) -> list[str]:
    """Paths the patch would write at or below a symbolic link of the upstream tree: git apply refuses them
    ("beyond a symbolic link"), and a link pointing outside would make the patch write anywhere."""
    links = {path: _symlink_over(tree, path) for path in pf.paths}
    return sorted(
        f"{path} is at or below {link}, a symbolic link upstream" for path, link in links.items() if link
    )


def _symlink_over(tree: Tree, path: str) -> str | None:
    """The shortest leading part of `path` (the path itself included) that upstream's tree has as a
    symbolic link, if any."""
    parts = path.split("/")
    for end in range(1, len(parts) + 1):
        prefix = "/".join(parts[:end])
        entry = tree.base.entry(prefix) if tree.base and prefix not in tree.overlay else None
        if entry is not None and entry.filemode == pygit2.GIT_FILEMODE_LINK:
            return prefix
    return None


def _apply_all(tree: Tree, pf: PatchFile) -> None:
    changes = _applied(tree, pf)
    if changes is not None:
        tree.update(changes)


def _applied(tree: Tree, pf: PatchFile) -> dict[str, bytes | None] | None:
    """What the patch as written changes in `tree`, the way `git apply` applies it; None when it does not."""
    changes: dict[str, bytes | None] = {}
    scratch = tree.copy()
    try:
        for fp in pf.files:
            file_changes, _ = apply_exact(scratch, fp)
            scratch.update(file_changes)
            changes.update(file_changes)
    except (NoFit, PatchError):
        return None
    return changes


def _check_parsed(ctx: PinContext, path: str, pf: PatchFile, data: bytes) -> PatchResult:
    """What the new upstream already provides comes first (bot/patches/obsolete.py): all of it makes the patch
    `upstreamed`, part of it is dropped and the rest placed. Names upstream removed or renamed that the
    added lines use (bot/patches/identifiers.py) are renamed one for one or named. Either makes a placed patch
    `fuzzy`: the rebuilt patch is an inference a person should look at. A patch that applies as written keeps
    the status `git apply` gives it; its names upstream removed are doubts, told as findings."""
    assessment = obsolete.assess(pf, _file_sides(ctx, pf))
    if assessment.whole and reverse_applies(ctx.new_tree, pf):
        return place(ctx, path, pf, data)  # upstream has the very change: the plain `upstreamed`
    if assessment.whole:
        return obsolete_report.result(
            path,
            ctx.new_ref,
            assessment,
            _placed_hunks(ctx, assessment),
            lambda p: commits_at(ctx, p.file, p.lines),
        )
    rest = obsolete.without(pf, {(p.file, p.index) for p in assessment.provided})
    rest, uses = identifiers.adapt(rest, _removed_declarations(ctx, rest), _old_files(ctx, rest))
    if not assessment.provided and (not uses or _applied(ctx.new_tree, pf) is not None):
        result = place(ctx, path, pf, data)  # what git does decides the status; a doubt is a finding
        result.doubts = [_doubt(ctx, pf, use) for use in uses]
        return result
    return _amended(ctx, path, pf, data, assessment, rest, uses)


def _doubt(ctx: PinContext, pf: PatchFile, use: identifiers.Use) -> Doubt:
    """A use of a removed name in a patch that applies as it is, with the commits that removed it."""
    c = use.change
    commits = commits_at(ctx, c.path, [c.new_line], [c.old_text.encode()])
    hunks = next((fp.hunks for fp in pf.files if fp.path == use.file), [])
    at = hunks[use.hunk].header_line if use.hunk < len(hunks) else 1
    return Doubt(use.doubt, c.path, c.new_line, at, "high" if c.renamed_to else "medium", tuple(commits))


def _old_files(ctx: PinContext, pf: PatchFile) -> dict[str, bytes | None]:
    """Each changed file as the old stacked tree has it (None without an old tree)."""
    return {
        fp.old_path: ctx.old_tree.read(fp.old_path) if ctx.old_tree else None
        for fp in pf.files
        if fp.old_path
    }


def _amended(
    ctx: PinContext,
    path: str,
    pf: PatchFile,
    data: bytes,
    assessment: obsolete.Assessment,
    rest: PatchFile,
    uses: list[identifiers.Use],
) -> PatchResult:
    """The patch without what upstream provides and with the names it renamed (`rest`) placed, its result
    saying what was dropped and renamed; a fuzzy one's new text made of `rest`'s files."""
    before = {fp.path: ctx.stacked_file(fp) for fp in rest.files}
    result = place(ctx, path, rest, data)
    for use in uses:
        c = use.change
        use.commits = commits_at(ctx, c.path, [c.new_line], [c.old_text.encode()])
    provided = [(p, commits_at(ctx, p.file, p.lines)) for p in assessment.provided]
    amended = obsolete_report.amend(result, ctx.new_ref, [fp.path for fp in pf.files], provided, uses)
    if amended.status == "fuzzy":
        amended.new_text = render(rest, _sections(ctx, pf, rest, amended, before))
    return amended


def _sections(
    ctx: PinContext, pf: PatchFile, rest: PatchFile, amended: PatchResult, before: dict[str, bytes | None]
) -> list[bytes]:
    """`rest`'s file sections: a binary file, or one the amendment left as it was and whose hunks are all
    clean, as written; any other made again from upstream's file (`before`) and the placed one."""
    unchanged = {id(fp) for fp in pf.files}
    return [
        fp.raw
        if fp.is_binary or (id(fp) in unchanged and all_clean(amended, fp))
        else file_section(fp, before[fp.path], ctx.new_tree.read(fp.new_path) if fp.new_path else None)
        for fp in rest.files
    ]


def _file_sides(ctx: PinContext, pf: PatchFile) -> dict[str, obsolete.FileSides]:
    upstream = Tree(ctx.new_tree.base)
    return {
        fp.old_path: obsolete.FileSides(
            ctx.old_tree.read(fp.old_path) if ctx.old_tree else None,
            ctx.new_tree.read(fp.old_path),
            upstream.read(fp.old_path),
        )
        for fp in pf.files
        if fp.old_path
    }


def _removed_declarations(ctx: PinContext, pf: PatchFile) -> dict[str, list[identifiers.UpstreamChange]]:
    """Per file of the patch: the declarations the upstream diff removed from it and from its headers."""
    old, new = GitSnapshot(ctx.upstream.repo, ctx.history.old), ctx.new_tree.base
    out: dict[str, list[identifiers.UpstreamChange]] = {}
    for fp in pf.files:
        if not fp.old_path or new is None:
            continue
        for p in (fp.old_path, *identifiers.headers_of(fp.old_path)):
            out.setdefault(fp.path, []).extend(_removed_from(old, new, p))
    return out


def _removed_from(old: GitSnapshot, new: GitSnapshot, path: str) -> list[identifiers.UpstreamChange]:
    """The declarations the upstream diff removed from one file; none when either ref lacks it."""
    if old.missing(path) or new.missing(path):
        return []
    before, after = old.read(path), new.read(path)
    if before is None or after is None:
        return []
    return identifiers.removed_declarations(path, before, after)


def _placed_hunks(ctx: PinContext, assessment: obsolete.Assessment) -> dict[tuple[str, int], HunkResult]:
    """Where each hunk upstream does not provide would go, by the exact search alone."""
    out = {}
    images: dict[str, Image] = {}
    for left in assessment.leftovers:
        if left.file not in images:
            images[left.file] = Image(lines_of(ctx.new_tree.read(left.file)))
        found = find_exact(images[left.file], left.hunk)
        status = "conflict" if found is None else "clean" if found.offset == 0 else "offset"
        out[(left.file, left.index)] = HunkResult(
            left.file,
            left.hunk.old_start,
            found.start + 1 if found else left.hunk.new_start,
            status,
            patch_line=left.hunk.header_line,
        )
    return out
