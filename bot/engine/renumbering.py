"""The enum values a placed patch adds, moved past the values upstream now uses: in the placed files, in the
patch's other lines that write them, and never where Ollama's own sources write the old value."""

from __future__ import annotations

import re

from bot.engine.context import FileOutcome, PinContext, note
from bot.engine.sections import added_lines
from bot.markup import code_span
from bot.model import Commit
from bot.patches.enumentries import Renumbered, mentions_value, renumber
from bot.patches.patchfile import lines_of

_Image = tuple[FileOutcome, list[bytes], set[int]]  # a placed file: its outcome, its lines, the added ones


def renumber_added(
    ctx: PinContext, resolved: list[FileOutcome], changes: dict[str, bytes | None]
) -> str | None:
    """Moves each enum value the patch adds that upstream now uses to the next free one
    (enumentries.renumber), in `changes` and in the notes of the hunk it is in. Where the patch writes the
    old value elsewhere, a line naming the entry is renumbered too; any other line, or a line of Ollama's
    compat sources that writes the old value for the entry, is returned as the reason the patch cannot be
    rebuilt."""
    images, moves = _renumbered(ctx, resolved, changes)
    entries = {(p, m.line) for p, m in moves}
    for path, move in moves:
        note(images[path][0], move.line, move.note, _commits_taking(ctx, path, move))
        unmovable = _follow_move(images, entries, path, move) or _local_use(ctx, path, move)
        if unmovable:
            return unmovable
    for path, (o, image, _) in images.items():
        if o.status == "relocated":
            changes[path] = b"".join(image)
    return None


def _renumbered(
    ctx: PinContext, resolved: list[FileOutcome], changes: dict[str, bytes | None]
) -> tuple[dict[str, _Image], list[tuple[str, Renumbered]]]:
    """Each placed text file with its added enum values moved past upstream's, and the moves (path, move)."""
    images: dict[str, _Image] = {}
    moves: list[tuple[str, Renumbered]] = []
    for o in resolved:
        after = o.placed_text(changes)
        if after is None:
            continue
        added = added_lines(ctx.stacked_file(o.fp) or b"", after)
        image, moved = renumber(lines_of(after), added)
        path = o.fp.new_path or ""
        images[path] = (o, image, added)
        moves += [(path, m) for m in moved]
    return images, moves


def _follow_move(
    images: dict[str, _Image], entries: set[tuple[str, int]], path: str, move: Renumbered
) -> str | None:
    """The other added lines that write the moved value, renumbered when they name the entry; the reason
    the patch cannot be rebuilt at the first that does not."""
    for other, (o, image, added) in images.items():
        for j in sorted(added):
            if (other, j) in entries or not mentions_value(image[j], move.old):
                continue
            if move.name.encode() not in image[j]:
                return (
                    f"{path}: {move.clash}, but the patch also writes {move.old} at {other}:{j + 1} "
                    f"({code_span(image[j].strip().decode(errors='replace'))}): renumber them by hand"
                )
            image[j] = re.sub(
                rb"(?<![\w.])" + str(move.old).encode() + rb"(?![\w.])", str(move.new).encode(), image[j]
            )
            note(o, j, f"{move.old} renumbered to {move.new} like {move.name}")
    return None


def _local_use(ctx: PinContext, path: str, move: Renumbered) -> str | None:
    """Why the move breaks Ollama's own sources: a line of them that writes the old value for the entry."""
    for local, data in ctx.local_sources.items():
        for j, line in enumerate(lines_of(data)):
            if move.name.encode() in line and mentions_value(line, move.old):
                return (
                    f"{path}: {move.clash}, but Ollama's {local}:{j + 1} writes {move.old} for {move.name} "
                    f"({code_span(line.strip().decode(errors='replace'))}): renumber them by hand"
                )
    return None


def _commits_taking(ctx: PinContext, path: str, move: Renumbered) -> list[Commit]:
    """The upstream commits that brought the entries whose values made the move."""
    upstream = lines_of(ctx.new_tree.base.read(path) if ctx.new_tree.base else None)
    names = [re.compile(rb"^\s*" + re.escape(name.encode()) + rb"\b") for _, name in move.taken]
    lines = [i + 1 for i, text in enumerate(upstream) if any(n.match(text) for n in names)]
    return list(dict.fromkeys(c for n in lines for c in ctx.history.commits_for_lines(path, n, n)))
