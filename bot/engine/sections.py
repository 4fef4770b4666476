"""A rebuilt patch's text: each file's section made again from the file before and after, in the patch's
own format."""

from __future__ import annotations

import pygit2

from bot.patches.patchfile import FilePatch, PatchFile


def added_lines(before: bytes, after: bytes) -> set[int]:
    patch = pygit2.Patch.create_from(before, after, context_lines=0)
    return {line.new_lineno - 1 for hunk in patch.hunks for line in hunk.lines if line.origin == "+"}


def file_section(fp: FilePatch, before: bytes | None, after: bytes | None) -> bytes:
    """This file's part of a patch, rebuilt against `before`, in the original's header format."""
    diff = pygit2.Patch.create_from(
        before or b"",
        after or b"",
        fp.old_path or fp.path,
        fp.new_path or fp.path,
        context_lines=context_width(fp),
    ).data
    body = diff[diff.find(b"\n@@") + 1 :] if b"\n@@" in diff else b""
    return b"".join(_header_line(line, fp, before, after) for line in fp.header) + body


def _header_line(line: bytes, fp: FilePatch, before: bytes | None, after: bytes | None) -> bytes:
    """A header line of the rebuilt section: an `index` line names the new blobs (abbreviated as the
    original was, zeros for a missing side, its mode kept); any other line as it was."""
    if not line.startswith(b"index ") or fp.index_old is None:
        return line
    width = len(fp.index_old)
    old_id = "0" * width if before is None else str(pygit2.hash(before))[:width]
    new_id = "0" * width if after is None else str(pygit2.hash(after))[:width]
    suffix = line.rstrip(b"\r\n").split(b" ")[2:]
    return b" ".join([b"index", f"{old_id}..{new_id}".encode(), *suffix]) + b"\n"


def context_width(fp: FilePatch) -> int:
    """The context lines the patch was made with (`git diff -U<n>`): the most any hunk has at one end;
    git's default of three for a file without hunks."""
    changed = [h for h in fp.hunks if h.leading < len(h.lines)]
    return max((n for h in changed for n in (h.leading, h.trailing)), default=3)


def render(pf: PatchFile, sections: list[bytes]) -> bytes:
    return pf.preamble + b"".join(sections) + pf.trailer
