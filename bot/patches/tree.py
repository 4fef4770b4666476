"""An upstream tree with patches applied on top, and applying one file change exactly as `git apply` does."""

from __future__ import annotations

import pygit2

from bot.patches.binarypatch import apply_delta, binary_payload
from bot.patches.hunks import Image, Placement, find_exact
from bot.patches.patchfile import FilePatch, Hunk, Line, PatchError, PatchFile, lines_of
from bot.repos.snapshot import GitSnapshot


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
    current = _current(tree, fp)
    changes: dict[str, bytes | None] = {fp.old_path or "": None} if fp.is_renamed else {}
    placements: list[Placement] = []
    if fp.is_binary:
        path, data = _binary_result(fp, current)
    else:
        path, data, placements = _text_result(fp, current)
    changes[path] = data
    return changes, placements


def _current(tree: Tree, fp: FilePatch) -> bytes | None:
    """The file the change applies to (None for a new file); NoFit when a new file exists already or the
    changed one is missing."""
    current = tree.read(fp.old_path) if fp.old_path else None
    if fp.is_new and tree.read(fp.new_path or "") is not None:
        raise NoFit(f"{fp.new_path} already exists upstream")
    if not fp.is_new and current is None:
        raise NoFit(f"{fp.old_path} does not exist upstream")
    return current


def _binary_result(fp: FilePatch, current: bytes | None) -> tuple[str, bytes | None]:
    """The path a binary change writes and its new content (None: deleted); NoFit when the file is not the
    one the patch was made against."""
    payload = binary_payload(fp)
    if payload is None:
        raise PatchError(f"{fp.path}: binary change without data ('Binary files differ')")
    if not _made_against(fp, current):
        raise NoFit(f"binary file {fp.path} is not the one the patch was made against")
    kind, data = payload
    result = data if kind == "literal" else apply_delta(current or b"", data)
    return (fp.new_path, result) if fp.new_path else (fp.old_path or "", None)


def _made_against(fp: FilePatch, current: bytes | None) -> bool:
    """Whether `current` is the file the binary patch was made against: its blob id starts with the `index`
    line's (taken on trust when either is missing)."""
    return not fp.index_old or current is None or str(pygit2.hash(current)).startswith(fp.index_old)


def _text_result(fp: FilePatch, current: bytes | None) -> tuple[str, bytes | None, list[Placement]]:
    """The path a text change writes, its new content (None: deleted) and where its hunks went; NoFit when
    a hunk does not match or a deletion leaves content behind."""
    image = Image(lines_of(current))
    placements = _place_hunks(image, fp)
    if not fp.is_deleted:
        return fp.new_path or "", b"".join(image.lines), placements
    if image.lines:
        raise NoFit(f"{fp.old_path} has content the deletion does not cover")
    return fp.old_path or "", None, placements


def _place_hunks(image: Image, fp: FilePatch) -> list[Placement]:
    """Each hunk placed exactly in turn, the image changed as it goes; NoFit for the first that does not match."""
    placements = []
    for number, hunk in enumerate(fp.hunks, 1):
        placement = find_exact(image, hunk)
        if placement is None:
            raise NoFit(f"hunk {number} of {fp.path} does not match")
        image.splice(placement.start, placement.start + len(hunk.before), hunk.after)
        placements.append(placement)
    return placements


def _reversed(hunk: Hunk) -> Hunk:
    """The hunk that undoes `hunk`."""
    return Hunk(
        hunk.new_start,
        hunk.new_count,
        hunk.old_start,
        hunk.old_count,
        hunk.section,
        [Line({"+": "-", "-": "+"}.get(line.kind, " "), line.text) for line in hunk.lines],
    )


def reverse_applies(tree: Tree, pf: PatchFile) -> bool:
    """Whether the new upstream already has every change of the patch."""
    return all(_has_change(tree, fp) for fp in pf.files)


def _has_change(tree: Tree, fp: FilePatch) -> bool:
    """Whether the tree already has this file's change: the file deleted, or every hunk undoable in turn."""
    if fp.is_binary:
        return False
    if fp.is_deleted:
        return tree.read(fp.old_path or "") is None
    target = tree.read(fp.new_path) if fp.new_path else None
    if target is None:
        return False
    image = Image(lines_of(target))
    for hunk in fp.hunks:
        reverse = _reversed(hunk)
        placement = find_exact(image, reverse)
        if placement is None:
            return False
        image.splice(placement.start, placement.start + len(reverse.before), reverse.after)
    return True
