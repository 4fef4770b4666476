"""Upstream changes near a carried patch's hunks.

A patch that still applies can still be wrong: upstream may have changed
the code around the hunk (a renamed variable, a new early return) so that
the hunk's intent no longer holds. Every upstream change within WINDOW
lines of a hunk asks for a look.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.model import LocalRef
from bot.patchfile import PatchFile
from bot.review.changes import Draft, FileChange
from bot.review.source import excerpt

WINDOW = 20


def patch_context_drafts(
    patches: list[tuple[str, PatchFile]], changes: Mapping[str, FileChange], window: int = WINDOW
) -> list[Draft]:
    """One finding per patch hunk with significant upstream changes within `window` old-ref lines."""
    drafts = []
    for patch_path, pf in patches:
        name = patch_path.rsplit("/", 1)[-1]
        for fp in pf.files:
            change = changes.get(fp.old_path or "")
            if fp.is_new or fp.is_binary or change is None:
                continue
            for number, hunk in enumerate(fp.hunks, 1):
                low = hunk.old_start - window
                high = hunk.old_start + max(hunk.old_count, 1) - 1 + window
                near = [
                    s
                    for s in change.significant
                    if s.old_start <= high and s.old_start + max(s.old_count, 1) - 1 >= low
                ]
                if not near:
                    continue
                removed = [change.old_lines[n - 1] for s in near for n in s.old_lines][:4]
                added = [change.new_lines[n - 1] for s in near for n in s.new_lines][:4]
                blame = tuple((s.new_start, s.new_start + s.new_count - 1) for s in near if s.new_count)
                first = near[0]
                gone = (
                    None if blame else (change.old_path or change.path, removed[0].strip() if removed else "")
                )
                lines = ", ".join(
                    f"{s.old_start}" + (f"-{s.old_start + s.old_count - 1}" if s.old_count > 1 else "")
                    for s in near
                )
                drafts.append(
                    Draft(
                        "patch-context",
                        "medium",
                        f"Upstream changed {change.path} near hunk {number} of {name}",
                        f"Hunk {number} of `{patch_path}` (old line {hunk.old_start}) sits within {window} lines of "
                        f"upstream changes at old line(s) {lines}. Even if the patch applies, check that its intent "
                        f"still holds.\n\n{excerpt(removed, added)}",
                        change.path,
                        change.where(first),
                        blame,
                        gone,
                        (LocalRef(patch_path, hunk.header_line),),
                    )
                )
    return drafts
