"""The ``b2nd`` metalayer: the shape, chunk shape, block shape and dtype of
an n-dimensional array stored in a frame, and the rules it must satisfy.

specs/frame.md#the-b2nd-metalayer.  The value is msgpack in form only:
every integer has a fixed width (``0xd3`` int64 for the shape, ``0xd2``
int32 for chunk and block extents) and C-Blosc2 reads it by position, not
with a msgpack decoder.  Its array markers are ``0x90 + ndim`` computed as a
byte, so a 16-dimensional array gets ``0xa0`` (a msgpack *string* marker):
a generic msgpack decoder refuses what C-Blosc2 writes there, this
declaration reads it.  The dtype pair is optional (the caterva predecessor
wrote none).
"""
from __future__ import annotations

import math
from typing import Sequence

import construct as cs

from . import build
from .rules import explain, rule

NAMES = ("b2nd", "caterva")     # C-Blosc2 falls back to the predecessor's name
MAX_DIM = 16
VERSION = 0
DTYPE_FORMAT_NUMPY = 0
PATH = "frame.metalayers['b2nd']"   # in the rule registry
LOCAL = "b2nd"                       # paths inside the value, relocated by the frame

Extent64 = cs.Struct(
    "marker" / cs.Const(b"\xd3") * "msgpack int64",
    "value" / cs.Int64sb * "items along this dimension",
)
Extent32 = cs.Struct(
    "marker" / cs.Const(b"\xd2") * "msgpack int32",
    "value" / cs.Int32sb * "items along this dimension",
)


def _more(c) -> bool:
    """Parsing: true while the value has bytes left (the dtype pair is
    optional); building: true when a dtype is given."""
    if not c._parsing:
        return c.dtype is not None
    io = c._io
    pos = io.tell()
    left = bool(io.read(1))
    io.seek(pos)
    return left


B2ndDtype = cs.Struct(
    "dtype_format" / cs.Int8ub * "positive fixint: 0, a NumPy dtype string",
    "dtype_marker" / cs.Const(b"\xdb") * "msgpack str32",
    "dtype_len" / cs.ExprValidator(cs.Int32sb, lambda v, c: v >= 0)
    * "bytes in the dtype string, not negative",
    "dtype" / cs.Bytes(cs.this.dtype_len) * "NumPy type string, e.g. <f8",
)

FIXARRAY = 0x90               # msgpack fixarray marker of 0 items
NUM_FIELDS = 7               # version, ndim, shape, chunkshape, blockshape, dtype pair

B2ndMeta = cs.Struct(
    "marker" / cs.Int8ub * "msgpack fixarray, 0x97 (7 items); not checked by C-Blosc2",
    "version" / cs.Int8ub * "positive fixint: metalayer version, 0",
    "ndim" / cs.ExprValidator(cs.Int8sb, lambda v, c: 0 <= v <= MAX_DIM)
    * "positive fixint: number of dimensions, 0..16",
    "shape_marker" / cs.Int8ub * "0x90 + ndim (a byte: 0xa0 for 16 dimensions)",
    "shape" / cs.Array(cs.this.ndim, Extent64) * "array extents",
    "chunkshape_marker" / cs.Int8ub * "0x90 + ndim",
    "chunkshape" / cs.Array(cs.this.ndim, Extent32) * "chunk extents",
    "blockshape_marker" / cs.Int8ub * "0x90 + ndim",
    "blockshape" / cs.Array(cs.this.ndim, Extent32) * "block extents",
    "dtype" / cs.If(_more, B2ndDtype) * "dtype format and string (absent: caterva)",
)

# ---------------------------------------------------------------------------
# specs/frame.md#rules -- what C-Blosc2 requires before it opens an array
# ---------------------------------------------------------------------------

class B2ndView:
    """The b2nd metalayer value as read, in the value's own coordinates
    (offsets from its first byte, paths under ``b2nd``; the frame relocates
    them): ``fields`` the parsed value (None when it does not parse),
    ``dtype_error`` the UnicodeDecodeError of a dtype string that is not
    UTF-8.  Reading the array adds the frame's chunk count ``nchunks`` and,
    chunk by chunk, ``chunk`` and its decoded length ``chunk_len`` against
    ``padded`` bytes of ``typesize``-byte items, and the block size a
    stored chunk's header records (``chunk_blocksize``; None for a special
    chunk, which stores no block) against the array's (``block_bytes``);
    sizing the dtype adds its ``itemsize`` (against ``typesize``)."""
    __slots__ = ("fields", "dtype_error", "nchunks", "chunk", "chunk_len", "padded",
                 "typesize", "chunk_blocksize", "block_bytes", "itemsize", "_grid")

    def __init__(self, fields, dtype_error: UnicodeDecodeError | None = None):
        self.fields, self.dtype_error = fields, dtype_error
        self.nchunks = self.chunk = self.chunk_len = self.padded = self.typesize = None
        self.chunk_blocksize: int | None = None
        self.block_bytes: int | None = None
        self.itemsize: int | None = None
        self._grid: list[int] | None = None

    @property
    def grid(self) -> list[int]:
        """Chunks per dimension (computed once: the rules ask for every chunk)."""
        if self._grid is None:
            shape, cshape, _ = _extents(self.fields)
            self._grid = chunk_grid(shape, cshape)
        return self._grid


@rule("F-b2nd", "error", PATH, "frame.md#b2nd",
      "the b2nd metalayer value holds every field it declares, 0..16 dimensions; its chunk "
      "grid and chunk sizes agree with the frame")
def value_readable(v, src, sink):
    m = v.fields
    if m is None:
        if not explain(B2ndMeta, src, 0, LOCAL, sink,
                       bound="the metalayer value (its bin32 length)"):
            sink("the value disagrees with its declaration", 0, LOCAL)
    elif v.dtype_error is not None:
        sink(f"the dtype is not UTF-8: {v.dtype_error}",
             extent_offset(m.ndim, "dtype", 0) + v.dtype_error.start, f"{LOCAL}.dtype.dtype")
    elif v.nchunks is not None and math.prod(v.grid) != v.nchunks:
        sink(f"the b2nd chunk grid {v.grid} holds {math.prod(v.grid)} chunks, the frame "
             f"{v.nchunks}", 0, LOCAL)
    elif v.chunk_len is not None and v.chunk_len != v.padded:
        ts = v.typesize
        sink(f"chunk {v.chunk} holds {v.chunk_len} bytes, a b2nd chunk of "
             f"{v.padded // ts} items of {ts} bytes {v.padded}", 0, LOCAL)
    elif v.chunk_blocksize is not None and v.chunk_blocksize != v.block_bytes:
        # the items of a chunk are laid out block by block: C-Blosc2's array
        # reader goes by the chunk's own blocks and refuses other ones
        sink(f"chunk {v.chunk}'s blocks are {v.chunk_blocksize} bytes, the array's "
             f"{v.block_bytes} (its block shape of {v.block_bytes // v.typesize} items of "
             f"{v.typesize} bytes)", 0, LOCAL)


def _extents(m) -> tuple[list[int], list[int], list[int]]:
    return ([e.value for e in m.shape], [e.value for e in m.chunkshape],
            [e.value for e in m.blockshape])


@rule("F-b2nd-shape", "error", PATH + ".shape", "frame.md#b2nd",
      "no extent is negative; a block extent is 0 only with a chunk extent of 0; a "
      "non-empty dimension has chunk and block extents; no item count overflows int64")
def extents_agree(v, src, sink):
    m = v.fields
    if m is None or v.dtype_error is not None:
        return
    shape, cshape, bshape = _extents(m)
    for d, (s, c, b) in enumerate(zip(shape, cshape, bshape)):
        if s < 0 or c < 0 or b < 0:
            sink(f"dimension {d}: negative extent (shape {s}, chunk {c}, block {b})",
                 extent_offset(m.ndim, "shape", d), f"{LOCAL}.shape[{d}]")
            return
        if b == 0 and c != 0:
            sink(f"dimension {d}: block extent 0 with chunk extent {c}",
                 extent_offset(m.ndim, "blockshape", d), f"{LOCAL}.blockshape[{d}]")
            return
        if s > 0 and c == 0:
            sink(f"dimension {d}: {s} items but chunk extent 0",
                 extent_offset(m.ndim, "chunkshape", d), f"{LOCAL}.chunkshape[{d}]")
            return
    for what, ext in (("shape", shape), ("padded chunk", _padded(cshape, bshape))):
        if math.prod(ext) >= 1 << 63:
            sink(f"the {what} {ext} holds 2**63 items or more",
                 extent_offset(m.ndim, "shape", 0), f"{LOCAL}.shape")
            return


# The value as read, then its extents; F-b2nd again for the grid and each
# chunk when the array is read.
META_RULES = (value_readable, extents_agree)
ARRAY_RULES = (value_readable,)


@rule("F-b2nd-dtype", "error", PATH + ".dtype.dtype", "frame.md#b2nd",
      "the dtype's items are as wide as the frame's typesize")
def dtype_fits_typesize(v, src, sink):
    # C-Blosc2 keeps the dtype as an opaque string; NumPy readers then cut
    # the chunks' bytes into items of the wrong width
    m = v.fields
    if m is not None and v.itemsize is not None and v.itemsize != v.typesize:
        sink(f"the dtype's items are {v.itemsize} bytes, the frame's typesize is "
             f"{v.typesize}", extent_offset(m.ndim, "dtype", 0), f"{LOCAL}.dtype.dtype")


# Once the dtype is sized (NumPy, or the simple type strings without it).
DTYPE_RULES = (dtype_fits_typesize,)


def array_marker(ndim: int) -> int:
    """The byte C-Blosc2 writes before each extent array: a msgpack fixarray
    marker, 0x90 + ndim, written as a byte (0xa0, a str marker, for 16)."""
    return (FIXARRAY + ndim) & 0xFF


def extent_offset(ndim: int, field: str, d: int) -> int:
    """Offset of the integer of extent ``d`` of ``field`` (past its msgpack
    marker) inside the value, from the declaration's fixed widths;
    ``field="dtype_format"`` / ``"dtype"``: where that byte / the dtype
    string starts."""
    pos = B2ndMeta.marker.sizeof() + B2ndMeta.version.sizeof() + 1
    for name, item in (("shape", Extent64), ("chunkshape", Extent32), ("blockshape", Extent32)):
        pos += 1                                    # the array marker
        if name == field:
            return pos + d * item.sizeof() + item.marker.sizeof()
        pos += ndim * item.sizeof()
    if field == "dtype_format":
        return pos
    if field == "dtype":
        return pos + B2ndDtype.dtype_format.sizeof() + B2ndDtype.dtype_marker.sizeof() \
            + B2ndDtype.dtype_len.sizeof()
    raise KeyError(field)


def _padded(cshape: Sequence[int], bshape: Sequence[int]) -> list[int]:
    """Chunk extents rounded up to whole blocks (a chunk's stored shape)."""
    return [-(-c // b) * b if b else c for c, b in zip(cshape, bshape)]


def padded_items(cshape: Sequence[int], bshape: Sequence[int]) -> int:
    """Items in one stored chunk: every chunk holds its shape padded up to
    whole blocks, edge chunks too."""
    return math.prod(_padded(cshape, bshape))


def chunk_grid(shape: Sequence[int], cshape: Sequence[int]) -> list[int]:
    """Chunks along each dimension: ceil(shape / chunkshape)."""
    return [-(-s // c) if c else 0 for s, c in zip(shape, cshape)]


def build_meta(shape: Sequence[int], chunkshape: Sequence[int], blockshape: Sequence[int],
               dtype: str | None = "|u1", *, dtype_format: int = DTYPE_FORMAT_NUMPY,
               version: int = VERSION) -> bytes:
    """The metalayer value C-Blosc2 writes for these extents (``dtype`` None:
    no dtype pair, as caterva wrote).  ValueError when a value does not fit
    its field."""
    ndim = len(shape)
    if not len(chunkshape) == len(blockshape) == ndim:
        raise ValueError(f"{ndim}-d shape with {len(chunkshape)}-d chunks and "
                         f"{len(blockshape)}-d blocks")
    marker = array_marker(ndim)
    value = {
        "marker": FIXARRAY + NUM_FIELDS, "version": version, "ndim": ndim,
        "shape_marker": marker, "shape": [{"value": s} for s in shape],
        "chunkshape_marker": marker, "chunkshape": [{"value": c} for c in chunkshape],
        "blockshape_marker": marker, "blockshape": [{"value": b} for b in blockshape],
        "dtype": None if dtype is None else {
            "dtype_format": dtype_format, "dtype_len": len(dtype.encode()),
            "dtype": dtype.encode()},
    }
    return build(B2ndMeta, value, LOCAL)
