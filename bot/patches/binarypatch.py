"""git's binary patches: the base85 payload of a `GIT binary patch` and the delta format it may hold.

A few kilobytes of base85 inflate to as much as a thousand times more, so the data is inflated only up to
the size its `literal N` / `delta N` line declares, a delta's result only up to the size its header
declares, and a pin's patches together may carry at most BINARY_BYTES of either (`carried_bytes`).
"""

from __future__ import annotations

import base64
import re
import string
import zlib

from bot.patches.patchfile import FilePatch, PatchError, PatchFile
from bot.repos.snapshot import size_text

BINARY_BYTES = 16 << 20  # binary file data a pin's patches may carry in all; Ollama's carry none
_DELTA_HEADER = 20  # bytes that hold a delta's two sizes: two varints of at most ten bytes
_CAP = f"{size_text(BINARY_BYTES)} of binary data a pin's patches may carry"

# the bytes each length letter of a base85 line counts
_LINE_SIZES = {
    letter: size for size, letter in enumerate((string.ascii_uppercase + string.ascii_lowercase).encode(), 1)
}


def binary_payload(fp: FilePatch) -> tuple[str, bytes] | None:
    """The forward (`literal`/`delta`, data) of a `GIT binary patch`, or None for `Binary files differ`;
    its data inflated no further than the size it declares."""
    header = _forward(fp)
    if header is None:
        return None
    kind, size, lines = header
    if size > BINARY_BYTES:
        raise PatchError(f"{fp.path}: its binary data is {size_text(size)}, over the {_CAP}")
    return kind, _inflated(_base85(lines, fp.path), size, fp.path)


def carried_bytes(pf: PatchFile) -> int:
    """The binary data the patch's changes declare, a delta's result included: what applying it holds."""
    total = 0
    for fp in pf.files:
        header = _forward(fp)
        if header is not None:
            kind, size, lines = header
            total += size + (_delta_sizes(_first_bytes(lines, fp.path))[1] if kind == "delta" else 0)
    return total


def _forward(fp: FilePatch) -> tuple[str, int, list[bytes]] | None:
    """A `GIT binary patch`'s forward kind (`literal` or `delta`), declared size and base85 lines; None for
    `Binary files differ`."""
    lines = [line.rstrip(b"\r\n") for line in fp.binary]
    if not lines or lines[0] != b"GIT binary patch":
        return None
    m = re.fullmatch(rb"(literal|delta) (\d{1,20})", lines[1] if len(lines) > 1 else b"")
    if not m:
        raise PatchError(f"{fp.path}: malformed binary patch")
    return m[1].decode(), int(m[2]), lines[2:]


def _inflated(data: bytes, size: int, path: str) -> bytes:
    """The zlib stream `data` inflated, when it holds exactly `size` bytes; never more than one byte past."""
    inflate = zlib.decompressobj()
    try:
        out = inflate.decompress(data, size + 1)  # max_length 0 would mean no limit
    except zlib.error:
        raise PatchError(f"{path}: binary patch data is corrupt") from None
    if len(out) > size:
        raise PatchError(f"{path}: binary patch data inflates past the {size} bytes it declares")
    if not inflate.eof:
        raise PatchError(f"{path}: binary patch data is corrupt")
    if len(out) != size:
        raise PatchError(f"{path}: binary patch size mismatch")
    return out


def _first_bytes(lines: list[bytes], path: str) -> bytes:
    """The first bytes of a delta's data, where its sizes are: nothing past them is inflated."""
    try:
        return zlib.decompressobj().decompress(_base85(lines, path), _DELTA_HEADER)
    except zlib.error:
        raise PatchError(f"{path}: binary patch data is corrupt") from None


def _base85(lines: list[bytes], path: str) -> bytes:
    """The bytes of a binary patch's base85 lines, up to the blank line that ends them: each line's first
    letter says how many of its decoded bytes count (A-Z 1 to 26, a-z 27 to 52)."""
    encoded = bytearray()
    for line in lines:
        if not line:
            break
        size = _LINE_SIZES.get(line[0])
        if size is None:
            raise PatchError(f"{path}: malformed binary patch line")
        try:
            encoded += base64.b85decode(line[1:])[:size]
        except ValueError:
            raise PatchError(f"{path}: malformed binary patch line") from None
    return bytes(encoded)


def _delta_sizes(delta: bytes) -> tuple[int, int, int]:
    """A binary delta's source and result sizes, and where its instructions start."""
    src_size, pos = _varint(delta, 0)
    dst_size, pos = _varint(delta, pos)
    return src_size, dst_size, pos


def _varint(delta: bytes, pos: int) -> tuple[int, int]:
    """The size written at `pos` of a binary delta (seven bits a byte, low first), and the position after."""
    value = shift = 0
    while True:
        if pos >= len(delta) or shift > 63:
            raise PatchError("binary delta is truncated or malformed")
        byte = delta[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _copy_range(delta: bytes, pos: int, op: int) -> tuple[int, int, int]:
    """A copy instruction's offset and size (0 meaning 0x10000), whose bytes the op's low seven bits say are
    present, and the position after them."""
    offset, pos = _sparse_number(delta, pos, op, 4)
    size, pos = _sparse_number(delta, pos, op >> 4, 3)
    return offset, size or 0x10000, pos


def _sparse_number(delta: bytes, pos: int, present: int, width: int) -> tuple[int, int]:
    """A number of `width` bytes, low first, written at `pos` with only the bytes whose bits in `present`
    are set (the others are zero), and the position after them."""
    value = 0
    for byte in range(width):
        if present & (1 << byte):
            if pos >= len(delta):
                raise PatchError("binary delta is truncated")
            value |= delta[pos] << (8 * byte)
            pos += 1
    return value, pos


def apply_delta(source: bytes, delta: bytes) -> bytes:
    """git's binary delta format: copy ranges of `source` and insert literal bytes; never more than the
    result size it declares (itself at most BINARY_BYTES)."""
    src_size, dst_size, pos = _delta_sizes(delta)
    if src_size != len(source):
        raise PatchError("binary delta does not fit the file it is applied to")
    if dst_size > BINARY_BYTES:
        raise PatchError(f"binary delta makes a file of {size_text(dst_size)}, over the {_CAP}")
    out = bytearray()
    while pos < len(delta) and len(out) <= dst_size:
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset, size, pos = _copy_range(delta, pos, op)
            out += source[offset : offset + size]
        elif op:
            out += delta[pos : pos + op]
            pos += op
        else:
            raise PatchError("binary delta has a reserved opcode")
    if len(out) != dst_size:
        raise PatchError("binary delta produced the wrong size")
    return bytes(out)
