"""Special chunks: a header and, for a repeated value, that value; no data
(specs/chunk.md#special-chunks)."""
from __future__ import annotations

from . import stune
from .header import CODEC_STREAM_VERSION, SPECIAL_KINDS, blosc2_flags
from .plan import LEN_BLOSC2, MAX_BUFFERSIZE, MAX_TYPESIZE_BLOSC2, VERSION_BLOSC2, check_int
from ..formats import chunk as fc

__all__ = ["compress_special"]


def compress_special(kind: str, nbytes: int, *, typesize: int = 1, value=None,
                     blocksize: int | None = None) -> bytes:
    """A chunk holding no data, only a claim: all zeros, all NaN, one repeated
    item (``value``, ``typesize`` bytes) or uninitialized memory -- as
    C-Blosc2's ``blosc2_chunk_zeros/nans/repeatval/uninit`` with its default
    parameters write it.  ``nbytes`` is the size of the data it stands for;
    ``blocksize`` (bytes) the block size recorded, by default the one of
    C-Blosc2's default parameters (an array's chunks record their blocks'
    size, ``prod(blockshape) * typesize``, which its readers rely on)."""
    tail = _checked(kind, nbytes, typesize, value)
    # the block size of C-Blosc2's default parameters (blosclz, level 5, shuffle)
    bsize = stune.blocksize_blosc2(nbytes, typesize, 5, "blosclz", True, "forward_compat") \
        if blocksize is None else check_int("blocksize", blocksize, 0, MAX_BUFFERSIZE)
    hdr = {
        "version": VERSION_BLOSC2, "versionlz": CODEC_STREAM_VERSION,
        "flags": {"compformat": 0, "dont_split": False, "delta": False, "bitshuffle": True,
                  "memcpyed": False, "shuffle": True},
        "typesize": typesize if typesize <= stune.MAX_TYPESIZE else 1,
        "nbytes": nbytes, "blocksize": bsize, "cbytes": LEN_BLOSC2 + len(tail),
        "extended": {"filters": [0] * fc.NUM_FILTER_SLOTS, "udcodec": 0, "compcode_meta": 0,
                     "filters_meta": [0] * fc.NUM_FILTER_SLOTS,
                     "blosc2_flags2": {"reserved": 0, "vl_blocks": False},
                     "blosc2_flags": blosc2_flags(SPECIAL_KINDS[kind])},
    }
    return fc.pack_header(hdr) + tail


def _checked(kind: str, nbytes: int, typesize: int, value) -> bytes:
    """The bytes stored after the header (the value of kind "value", else
    none) once the arguments are checked; ValueError for a bad one."""
    if kind not in SPECIAL_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SPECIAL_KINDS)}, got {kind!r}")
    check_int("typesize", typesize, 1, MAX_TYPESIZE_BLOSC2)
    check_int("nbytes", nbytes, 0, MAX_BUFFERSIZE)
    if nbytes % typesize:
        raise ValueError(f"nbytes {nbytes} is not a multiple of typesize {typesize}")
    tail = _value_bytes(kind, value, typesize)
    if kind == "value" and nbytes == 0:
        # the value's width must divide a positive nbytes (rule H9): no
        # reader, blosckit's included, accepts an empty value chunk
        raise ValueError("kind 'value' needs nbytes > 0")
    if kind == "nan" and typesize not in fc.NAN_WIDTHS:
        raise ValueError("kind 'nan' needs 4- or 8-byte floats")
    return tail


def _value_bytes(kind: str, value, typesize: int) -> bytes:
    """``value`` as the ``typesize`` bytes of kind "value"; the other kinds
    take none."""
    if kind != "value":
        if value is not None:
            raise ValueError(f"kind {kind!r} takes no value")
        return b""
    if value is None:
        raise ValueError("kind 'value' needs value (typesize bytes)")
    tail = memoryview(value).cast("B").tobytes()
    if len(tail) != typesize:
        raise ValueError(f"value has {len(tail)} bytes, typesize is {typesize}")
    return tail
