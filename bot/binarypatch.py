"""git's binary patches: the base85 payload of a `GIT binary patch` and the delta format it may hold."""

from __future__ import annotations

import base64
import re
import zlib

from bot.patchfile import FilePatch, PatchError


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
        c = line[0]
        size = c - 64 if 65 <= c <= 90 else c - 96 + 26 if 97 <= c <= 122 else -1
        if size < 0:
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
    offset = size = 0
    for bit in range(4):
        if op & (1 << bit):
            offset |= delta[pos] << (8 * bit)
            pos += 1
    for bit in range(3):
        if op & (1 << (4 + bit)):
            size |= delta[pos] << (8 * bit)
            pos += 1
    return offset, size or 0x10000, pos


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
