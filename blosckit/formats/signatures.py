"""What an input that is not a Blosc chunk looks like.

People hand a Blosc tool whole files: an HDF5 file whose chunks are Blosc
compressed, a zarr array's metadata, a NumPy file, a Blosc2 frame read as a
chunk.  The first bytes of each are a signature; naming it turns "unknown
chunk version 137" into something a person can act on.  The frame's own
signature is declared here and used by the frame header's declaration
(:mod:`.frame`), which cannot be imported by the chunk rules that name it.
"""
from __future__ import annotations

import json

__all__ = ["FRAME_MAGIC", "FRAME_MAGIC_AT", "HDF5_MAGIC", "looks_like", "is_hdf5", "hdf5_at"]

# The frame signature, after the header's fixarray and str-8 markers (a test
# checks the position against every frame header layout).
FRAME_MAGIC = b"b2frame\x00"
FRAME_MAGIC_AT = 2

# Signature at byte 0 -> what the file is and what to do with it.
_AT_START = (
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file: its datasets' Blosc chunks are inside it "
                           "(name the file to `blosckit validate` or `blosckit scan`)"),
    (b"\x93NUMPY", "a NumPy .npy file (`blosckit compress FILE OUT` makes a frame of it)"),
    (b"\x28\xb5\x2f\xfd", "a zstd frame, not a Blosc chunk (`zstd -d` decodes it)"),
    (b"\x1f\x8b", "a gzip stream, not a Blosc chunk (`gzip -d` decodes it)"),
    (b"\x04\x22\x4d\x18", "an LZ4 frame, not a Blosc chunk (`lz4 -d` decodes it)"),
    (b"PK\x03\x04", "a zip archive (a zipped zarr store?), not a Blosc chunk"),
)
# HDF5 files may start with a user block of 512, 1024, 2048 ... bytes.
_HDF5_USER_BLOCKS = tuple(512 << k for k in range(8))
_SNIFF = 4096            # bytes of a text file looked at
HDF5_MAGIC = _AT_START[0][0]


def hdf5_at(src) -> int | None:
    """Where the HDF5 signature lies in the bytes ``src`` (a whole file, or
    at least its first 64 KiB + 8): byte 0 or after a user block; None."""
    mv = memoryview(src)
    n = len(mv)
    return next((at for at in (0, *_HDF5_USER_BLOCKS) if at + len(HDF5_MAGIC) <= n
                 and bytes(mv[at:at + len(HDF5_MAGIC)]) == HDF5_MAGIC), None)


def is_hdf5(src) -> bool:
    """The bytes ``src`` hold the HDF5 signature (see :func:`hdf5_at`)."""
    return hdf5_at(src) is not None


def looks_like(src) -> str | None:
    """What the bytes ``src`` look like when they are not a Blosc chunk:
    a short description with what to do, or None when nothing is known."""
    head = bytes(memoryview(src)[:_SNIFF])
    if head[FRAME_MAGIC_AT:FRAME_MAGIC_AT + len(FRAME_MAGIC)] == FRAME_MAGIC:
        return ("a Blosc2 frame, not a chunk (open it with blosckit.open_frame, or name "
                "the file to the blosckit CLI)")
    for magic, what in _AT_START:
        if head.startswith(magic):
            return what
    if is_hdf5(src):
        return _AT_START[0][1]
    return _text(head)


def _text(head: bytes) -> str | None:
    """Zarr metadata, other JSON, or text: what a text head holds."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        # a character cut by the end of the sniffed part is no reason to doubt
        if len(head) < _SNIFF or e.start < len(head) - 3:
            return None
        text = head[:e.start].decode("utf-8")
    if not text or any(not (c.isprintable() or c.isspace()) for c in text):
        return None
    stripped = text.lstrip()
    if stripped.startswith("{") and "zarr_format" in text:
        return ("zarr metadata (.zarray, .zattrs or zarr.json): the array's Blosc chunks are "
                "the files beside it, one per chunk")
    if stripped.startswith(("{", "[")):
        try:
            json.loads(text)
            return "a JSON text, not a Blosc chunk"
        except ValueError:
            pass
    return "a text file, not a Blosc chunk"
