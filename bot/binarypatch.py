"""git's binary patches: the base85 payload of a `GIT binary patch` and the delta format it may hold."""

from __future__ import annotations

import base64
import re
import string
import zlib

from bot.patchfile import FilePatch, PatchError

# the bytes each length letter of a base85 line counts
_LINE_SIZES = {
    letter: size for size, letter in enumerate((string.ascii_uppercase + string.ascii_lowercase).encode(), 1)
}


def binary_payload(fp: FilePatch) -> tuple[str, bytes] | None:
    """The forward (`literal`/`delta`, data) of a `GIT binary patch`, or None for `Binary files differ`."""
    lines = [line.rstrip(b"\r\n") for line in fp.binary]
    if not lines or lines[0] != b"GIT binary patch":
        return None
    m = re.fullmatch(rb"(literal|delta) (\d+)", lines[1] if len(lines) > 1 else b"")
    if not m:
        raise PatchError(f"{fp.path}: malformed binary patch")
    try:
        data = zlib.decompress(_base85(lines[2:], fp.path))
    except zlib.error:
        raise PatchError(f"{fp.path}: binary patch data is corrupt") from None
    if len(data) != int(m[2]):
        raise PatchError(f"{fp.path}: binary patch size mismatch")
    return m[1].decode(), data


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
        encoded += base64.b85decode(line[1:])[:size]
    return bytes(encoded)


def _varint(delta: bytes, pos: int) -> tuple[int, int]:
    """The size written at `pos` of a binary delta (seven bits a byte, low first), and the position after."""
    value = shift = 0
    while True:
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
            value |= delta[pos] << (8 * byte)
            pos += 1
    return value, pos


def apply_delta(source: bytes, delta: bytes) -> bytes:
    """git's binary delta format: copy ranges of `source` and insert literal bytes."""
    src_size, pos = _varint(delta, 0)
    dst_size, pos = _varint(delta, pos)
    if src_size != len(source):
        raise PatchError("binary delta does not fit the file it is applied to")
    out = bytearray()
    while pos < len(delta):
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
