"""n-dimensional arrays in frames (the ``b2nd`` metalayer): reading an
array's items out of its chunks, and writing an array as a b2nd frame.

specs/frame.md#the-b2nd-metalayer.  Every chunk holds its chunk shape
padded up to whole blocks; the blocks are stored one after another in C
order, each block's items in C order over the block shape.  Reading and
writing walk the same byte runs (:func:`_runs`), in opposite directions;
:func:`compress_b2nd` gathers the blocks from the shapes in C instead
(:func:`encoded_chunks`), each just before it is encoded.
"""
from __future__ import annotations

import functools
import math
import operator
from array import array as array_
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

from .. import native
from ..chunk.encode import compress
from ..chunk.header import SPECIAL_KINDS, header
from ..chunk.plan import get_plan
from ..errors import FormatError, Problem
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats import npy
from ..formats.chunk import MAX_NBYTES, check_output_cap
from ..formats.rules import Collect, RaiseFirst
from ..native.buffers import joined
from .build import build_frame
from .shapes import default_shapes

if TYPE_CHECKING:
    from .read import Frame

__all__ = ["B2nd", "b2nd_meta", "chunk_data", "chunk_items", "iter_chunk_data", "compress_b2nd"]


class B2nd:
    """The ``b2nd`` metalayer of an NDArray frame: ``shape``, ``chunkshape``,
    ``blockshape`` (tuples of items), ``dtype`` (a NumPy dtype string; when
    the metalayer has none, as caterva wrote, ``|S<typesize>`` as
    python-blosc2 reads it, and ``dtype_format`` is None) and the array
    itself (:meth:`read`).  FormatError (rules F-b2nd, F-b2nd-shape) when the value
    is malformed, at its offset ``at`` in the frame."""

    def __init__(self, frame: Frame, raw: bytes, at: int = 0, name: str = "b2nd"):
        self.offset, self.path = at, f"frame.metalayers[{name!r}]"
        try:
            m = fb.B2ndMeta.parse(raw)
        except Exception:            # noqa: BLE001 -- F-b2nd explains which field
            m = None
        try:
            dtype = None if m is None or m.dtype is None else m.dtype.dtype.decode()
            why = None
        except UnicodeDecodeError as e:
            dtype, why = None, e
        self.view = fb.B2ndView(m, why)
        self._check(fb.META_RULES, raw)
        self.fields = m
        self.version, self.ndim = m.version, m.ndim
        self.shape = tuple(e.value for e in m.shape)
        self.chunkshape = tuple(e.value for e in m.chunkshape)
        self.blockshape = tuple(e.value for e in m.blockshape)
        self.dtype_format = None if m.dtype is None else m.dtype.dtype_format
        # no dtype stored (caterva): python-blosc2 reads items as byte strings
        self.dtype: str = dtype if dtype is not None else f"|S{frame.typesize}"
        self.name = name                    # "b2nd", or caterva's name
        self._frame = frame

    def _check(self, rules, raw=b"") -> None:
        """Run ``rules`` on the value's view, raising the first error
        relocated from the value into the frame."""
        try:
            RaiseFirst().run(rules, self.view, raw)
        except FormatError as e:
            raise e.relocated(self.offset, self.path) from None

    @property
    def grid(self) -> list[int]:
        """Chunks along each dimension."""
        return fb.chunk_grid(self.shape, self.chunkshape)

    def grid_problems(self) -> list[Problem]:
        """F-b2nd (for the validator): the chunk grid holds as many chunks as
        the frame (C-Blosc2 writes every chunk of an array, uninit or zeros
        ones as special entries, so a frame without data has an empty grid)."""
        self.view.nchunks = self._frame.nchunks
        sink = Collect()
        sink.run(fb.ARRAY_RULES, self.view, b"")
        return [p.relocated(self.offset, self.path) for p in sink.problems]

    def read(self, *, max_nbytes: int | None = MAX_NBYTES) -> bytes:
        """The array's items in C order (bytes), the chunk and block grid undone.

        FormatError (F-b2nd) when the chunk grid disagrees with the frame's
        chunk count, or a chunk's size with the item size: the output is
        allocated only once the first chunk has shown the item size real;
        (T-max-nbytes) when the array holds more than ``max_nbytes`` bytes
        (default 2**31 - 1; None: no cap; :meth:`iter_read` streams any
        size).  Filled a row of chunks at a time: memory holds the output
        and one row."""
        total = math.prod(self.shape) * self._frame.typesize
        return joined(self.iter_read(max_nbytes=max_nbytes), total)

    def iter_read(self, *, max_nbytes: int | None = None) -> Iterator[bytearray]:
        """:meth:`read` in pieces, one per row of chunks along the first
        dimension (``chunkshape[0]`` rows of the array, in C order; a 0-d
        array is one piece), so memory holds one row of chunks however large
        the array (no cap unless ``max_nbytes`` is given), and the pages of
        a mapped file are given back as they are read."""
        ts = self._frame.typesize
        total = math.prod(self.shape)
        if total == 0:
            return
        # what is wrong with the array first (as validate says it), then its size
        self._check_array()
        check_output_cap(total * ts, max_nbytes, self.offset, f"{self.path}.shape")
        grid = self.grid
        if not self.shape:
            bands = [(0, self.shape)]
        else:
            rows, per = self.chunkshape[0], math.prod(grid[1:])
            bands = [(k * per, (min(rows, self.shape[0] - k * rows), *self.shape[1:]))
                     for k in range(grid[0])]
        layouts: dict[tuple[int, ...], _Layout] = {}
        sub = [1, *grid[1:]] if self.shape else grid
        for first, shape in bands:
            layout = layouts.get(shape)
            if layout is None:
                layout = layouts[shape] = _Layout(shape, self.chunkshape, self.blockshape, ts)
            out: bytearray | None = None
            for k, corner in enumerate(_grid(sub)):
                data = self._chunk(first + k)
                if out is None:         # once a chunk has shown the sizes real
                    out = bytearray(math.prod(shape) * ts)
                layout.copy(corner, data, out, to_chunk=False)
            assert out is not None
            yield out

    def numpy_dtype(self):
        """The stored dtype as a ``numpy.dtype`` (record types with their
        fields, read as python-blosc2 reads them); NumPy needed."""
        try:
            return numpy().dtype(npy.npy_descr(self.dtype))
        except Exception as e:     # noqa: BLE001 -- NumPy parses with ast too (SyntaxError)
            # the fault validate warns of as V21: python-blosc2 (NumPy) cannot
            # make a dtype of the string; read() still gives the items' bytes
            at = self.offset + fb.extent_offset(len(self.shape), "dtype", 0)
            raise FormatError(f"NumPy cannot read the dtype string {self.dtype!r} "
                              f"({type(e).__name__}: {e}); read() gives the items as bytes",
                              at, f"{self.path}.dtype.dtype", rule="V21") from None

    def array(self, *, max_nbytes: int | None = MAX_NBYTES):
        """The whole array as a ``numpy.ndarray`` of the stored dtype (NumPy
        needed); errors and ``max_nbytes`` as :meth:`read`.  Allocated once
        the checks and the first chunk have shown the sizes real; filled a
        row of chunks at a time."""
        dtype = self.numpy_dtype()
        out, flat, at = None, memoryview(b""), 0
        for piece in self.iter_read(max_nbytes=max_nbytes):
            if out is None:
                out = numpy().empty(self.shape, dtype)
                flat = memoryview(out).cast("B")
            flat[at:at + len(piece)] = piece
            at += len(piece)
        return out if out is not None else numpy().empty(self.shape, dtype)

    def __getitem__(self, key):
        """The region ``key`` (NumPy basic indexing: integers, slices with
        any step, ``...``) as a ``numpy.ndarray`` of the stored dtype;
        only the chunks the region touches are decoded.  IndexError for an
        index out of range or too many of them, as NumPy."""
        dtype = self.numpy_dtype()
        ranges, drop = _region(key, self.shape)
        lo = [min(r) if len(r) else 0 for r in ranges]
        hi = [max(r) + 1 if len(r) else 0 for r in ranges]
        box = self._box(lo, hi, dtype)
        # the box spans each range's first to last index: its steps remain
        picked = box[tuple(0 if d in drop else slice(None, None, r.step)
                           for d, r in enumerate(ranges))]
        return picked.copy() if any(abs(r.step) > 1 for r in ranges) else picked

    def _check_array(self) -> None:
        """What every read of the array checks before its chunks: the chunk
        grid against the frame's chunk count (F-b2nd), then the dtype's
        width against the typesize where the dtype can be sized
        (F-b2nd-dtype)."""
        self.view.nchunks = self._frame.nchunks
        self._check(fb.ARRAY_RULES)
        itemsize = npy.b2nd_itemsize(self.dtype)
        if itemsize is not None:
            self._check_itemsize(itemsize, RaiseFirst())

    def _chunk(self, ci: int) -> bytes:
        """Chunk ``ci`` decoded, checked to hold a padded chunk of the
        array's blocks (F-b2nd)."""
        ts = self._frame.typesize
        data = self._frame.decompress_chunk(ci)
        self._check_chunk(ci, len(data), fb.padded_items(self.chunkshape, self.blockshape) * ts,
                          ts, blocksize=self.stored_blocksize(ci))
        return data

    def stored_blocksize(self, ci: int) -> int | None:
        """The block size (bytes) stored chunk ``ci``'s header records; None
        for a special chunk or entry, which stores no block."""
        # one look-up of the entry; the header only, through a view (copying
        # the chunk maps all its pages)
        _, view = self._frame.locate(ci)
        if view is None:
            return None
        stored = fc.stored_chunk(view[:fc.LEN_EXTENDED])
        return None if stored.special else stored.blocksize

    def _check_itemsize(self, itemsize: int, sink) -> None:
        v = self.view
        v.itemsize, v.typesize = itemsize, self._frame.typesize
        try:
            if isinstance(sink, RaiseFirst):
                self._check(fb.DTYPE_RULES)
            else:
                sink.run(fb.DTYPE_RULES, v, b"")
        finally:
            v.itemsize = v.typesize = None

    def dtype_problems(self) -> list[Problem]:
        """F-b2nd-dtype (for the validator), as reading the array checks it."""
        itemsize = npy.b2nd_itemsize(self.dtype)
        if itemsize is None:
            return []                   # not sized here: nothing to compare
        sink = Collect()
        self._check_itemsize(itemsize, sink)
        return [p.relocated(self.offset, self.path) for p in sink.problems]

    def _box(self, lo: Sequence[int], hi: Sequence[int], dtype):
        """The items of the box ``lo``..``hi`` (per dimension), from the
        chunks that hold them; allocated once the checks and the first
        chunk have shown the sizes real (those chunks cover every item)."""
        self._check_array()
        shape = [h - l for l, h in zip(lo, hi)]
        if 0 in shape:
            return numpy().empty(shape, dtype)
        box = None
        first = [l // c for l, c in zip(lo, self.chunkshape)]
        last = [(h - 1) // c for h, c in zip(hi, self.chunkshape)]
        strides = _strides(self.grid)
        for corner in _grid([b - a + 1 for a, b in zip(first, last)]):
            k = [a + c for a, c in zip(first, corner)]
            chunk = chunk_items(self._chunk(sum(x * s for x, s in zip(k, strides))),
                                 self.chunkshape, self.blockshape, dtype)
            if box is None:
                box = numpy().empty(shape, dtype)
            origin = [x * c for x, c in zip(k, self.chunkshape)]
            a = [max(l, o) for l, o in zip(lo, origin)]
            b = [min(h, o + c) for h, o, c in zip(hi, origin, self.chunkshape)]
            box[tuple(slice(x - l, y - l) for x, y, l in zip(a, b, lo))] = \
                chunk[tuple(slice(x - o, y - o) for x, y, o in zip(a, b, origin))]
        return box

    def _check_chunk(self, ci: int, length: int, padded: int, typesize: int,
                     sink: Collect | None = None, *, blocksize: int | None = None) -> None:
        """F-b2nd: chunk ``ci`` decodes to ``length`` bytes, a padded chunk's
        ``padded``, and a stored chunk's ``blocksize`` is the array's block
        (raised, or reported to ``sink`` in the value's coordinates)."""
        v = self.view
        v.chunk, v.chunk_len, v.padded, v.typesize = ci, length, padded, typesize
        v.chunk_blocksize = blocksize
        v.block_bytes = math.prod(self.blockshape) * typesize
        try:
            if sink is None:
                self._check(fb.ARRAY_RULES)
            else:
                sink.run(fb.ARRAY_RULES, v, b"")
        finally:
            v.chunk = v.chunk_len = v.padded = v.typesize = None
            v.chunk_blocksize = v.block_bytes = None

    def chunk_problems(self, ci: int, length: int) -> list[Problem]:
        """F-b2nd (for the validator): chunk ``ci``, of ``length`` decoded
        bytes, holds a padded chunk of the array's blocks, as :meth:`read`
        requires."""
        ts = self._frame.typesize
        sink = Collect()
        self._check_chunk(ci, length, fb.padded_items(self.chunkshape, self.blockshape) * ts,
                          ts, sink, blocksize=self.stored_blocksize(ci))
        return [p.relocated(self.offset, self.path) for p in sink.problems]


def chunk_items(data, cshape: Sequence[int], bshape: Sequence[int], dtype):
    """A decoded chunk as a NumPy array over its padded chunk extents: the
    blocks, stored one after another, put back in their places."""
    np = numpy()
    nd = len(cshape)
    items = np.frombuffer(data, dtype)
    if nd == 0:
        return items.reshape(())
    nblocks = [-(-c // b) if b else 0 for c, b in zip(cshape, bshape)]
    blocks = items.reshape([*nblocks, *bshape])
    order = [x for d in range(nd) for x in (d, nd + d)]
    return blocks.transpose(order).reshape([n * b for n, b in zip(nblocks, bshape)])


def _region(key, shape: Sequence[int]) -> tuple[list[range], set[int]]:
    """NumPy basic indexing ``key`` over ``shape``: the indexes taken along
    each dimension, and the dimensions an integer drops."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in [k for k in key if k is Ellipsis]:
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (slice(None),) * (len(shape) - len(key) + 1) + key[at + 1:]
    if len(key) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {len(key)} were indexed")
    key = key + (slice(None),) * (len(shape) - len(key))
    ranges, drop = [], set()
    for d, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            ranges.append(range(*k.indices(n)))
            continue
        try:
            i = operator.index(k)
        except TypeError:
            raise IndexError("only integers, slices and ellipsis ('...') are valid "
                             f"indices, got {k!r}") from None
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
        ranges.append(range(i % n, i % n + 1))
        drop.add(d)
    return ranges, drop


def numpy():
    """NumPy, which :meth:`B2nd.array` and indexing need: imported on first
    use (it is optional, and every command line would pay its 60 ms)."""
    try:
        import numpy as np
    except ImportError:
        raise ImportError("B2nd.array() and B2nd[...] need NumPy: pip install numpy") from None
    return np


def _grid(counts: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Indexes of an n-d grid in C order (one empty index for 0 dimensions)."""
    idx = [0] * len(counts)
    for _ in range(math.prod(counts)):
        yield tuple(idx)
        for d in range(len(counts) - 1, -1, -1):
            idx[d] += 1
            if idx[d] < counts[d]:
                break
            idx[d] = 0


def _strides(shape: Sequence[int]) -> list[int]:
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= shape[d]
    return st


def _runs(shape, cshape, bshape, origin, ts: int) -> Iterator[tuple[int, int, int, int, int, int]]:
    """The byte runs of the chunk at ``origin`` that lie inside the array, as
    ``(chunk offset, array offset, run length, count, chunk step, array
    step)``: ``count`` runs, each ``step`` further than the one before; the
    padding of edge chunks and blocks is left out.  Trailing dimensions a
    block spans whole, as the array does, merge into one run."""
    if not shape:                       # a 0-d array: one item
        yield 0, 0, ts, 1, 0, 0
        return
    nd = len(shape)
    bgrid = [-(-c // b) for c, b in zip(cshape, bshape)]
    bbytes = math.prod(bshape) * ts
    astr = [x * ts for x in _strides(shape)]
    bstr = [x * ts for x in _strides(bshape)]
    cend = [o + c for o, c in zip(origin, cshape)]
    for bi, bcorner in enumerate(_grid(bgrid)):
        start = [o + k * b for o, k, b in zip(origin, bcorner, bshape)]
        # the part of this block inside both the chunk and the array
        extent = [max(0, min(b, s - st, ce - st))
                  for b, s, st, ce in zip(bshape, shape, start, cend)]
        if 0 in extent:
            continue
        # merge trailing dimensions that are whole in the block and the array
        k = nd - 1
        while k > 0 and extent[k] == bshape[k] == shape[k]:
            k -= 1
        run = math.prod(extent[k:]) * ts
        base_src = bi * bbytes
        base_dst = sum(st * a for st, a in zip(start, astr))
        if k == 0:
            yield base_src, base_dst, run, 1, 0, 0
            continue
        # dimension k - 1 steps by strides; those before it are walked
        for corner in _grid(extent[:k - 1]):
            src = base_src + sum(r * b for r, b in zip(corner, bstr))
            dst = base_dst + sum(r * a for r, a in zip(corner, astr))
            yield src, dst, run, extent[k - 1], bstr[k - 1], astr[k - 1]


class _Layout:
    """The runs of every chunk of one array, for :func:`native.copy_runs`.
    A chunk inside the array has the runs of the chunk at the origin, moved
    by its place in the array: those are computed once; edge chunks, whose
    padding is cut off, each get their own."""

    def __init__(self, shape, cshape, bshape, ts: int):
        self.shape, self.cshape, self.bshape, self.ts = shape, cshape, bshape, ts
        self.astr = [x * ts for x in _strides(shape)]
        self.inner: array_ | None = None

    def copy(self, corner, chunk, array, to_chunk: bool) -> None:
        """Move the chunk at grid cell ``corner`` between its buffer and the
        array buffer (into the chunk with ``to_chunk``)."""
        origin = [k * c for k, c in zip(corner, self.cshape)]
        if all(o + c <= s for o, c, s in zip(origin, self.cshape, self.shape)):
            if self.inner is None:
                self.inner = _flat(_runs(self.shape, self.cshape, self.bshape,
                                         [0] * len(origin), self.ts))
            base = sum(o * a for o, a in zip(origin, self.astr))
            native.copy_runs(chunk, array, self.inner, to_chunk, base)
        else:
            native.copy_runs(chunk, array, _flat(_runs(self.shape, self.cshape, self.bshape,
                                                       origin, self.ts)), to_chunk)


def _flat(runs) -> array_:
    out = array_("q")
    for run in runs:
        out.extend(run)
    return out


def compress_b2nd(src, *, chunkshape: Sequence[int] | None = None,
                  blockshape: Sequence[int] | None = None,
                  shape: Sequence[int] | None = None, dtype: str | None = None,
                  typesize: int | None = None, codec: str = "zstd", clevel: int = 1,
                  filters=("shuffle",), nthreads: int = 1,
                  metalayers: Mapping[str, bytes] | None = None,
                  vlmetalayers: Mapping[str, bytes] | None = None) -> bytes:
    """An n-dimensional array as a b2nd frame (what python-blosc2 opens as an
    NDArray).

    ``src``: the items in C order, a NumPy array of any memory order
    (``shape``, ``dtype`` and ``typesize`` default to its own) or any bytes-like with ``shape`` and
    ``dtype`` (a NumPy type string such as ``"<f8"``) given.  ``chunkshape``
    and ``blockshape`` are in items per dimension; each left None is the one
    python-blosc2 picks for the same array on this machine
    (:func:`~blosckit.frame.shapes.default_shapes`).  Each chunk is stored
    padded with zeros up to whole blocks, and blocks of
    ``prod(blockshape) * typesize`` bytes.  The default codec and level are
    python-blosc2's for arrays."""
    view = memoryview(src)
    if shape is None:
        shape = view.shape if view.shape is not None else (view.nbytes // view.itemsize,)
    if dtype is None:
        dtype = npy.dtype_string(src.dtype) if hasattr(src, "dtype") else None
        if dtype is None:
            raise ValueError("dtype is needed for a source that is not a NumPy array")
    if typesize is None:
        typesize = npy.itemsize(dtype)
    if not view.c_contiguous:
        # Fortran-order or strided: the items in C order, as the array means them
        view = memoryview(view.tobytes())
    if view.nbytes == 0:
        data = memoryview(b"")          # a view with a 0 extent cannot be cast
    else:
        data = view.cast("B") if view.ndim != 1 or view.format != "B" else view
    shape = tuple(shape)
    chunkshape, blockshape = default_shapes(shape, typesize, chunkshape=chunkshape,
                                            blockshape=blockshape)
    meta = b2nd_meta(shape, chunkshape, blockshape, dtype)
    if data.nbytes != math.prod(shape) * typesize:
        raise ValueError(f"{data.nbytes} bytes of data for shape {shape} of {typesize}-byte "
                         f"items ({math.prod(shape) * typesize} bytes)")
    chunks = encoded_chunks(data, shape, chunkshape, blockshape, typesize, codec=codec,
                            clevel=clevel, filters=filters, nthreads=nthreads)
    padded = fb.padded_items(chunkshape, blockshape) * typesize
    # an array without items has no chunk: the header takes the parameters
    # from an empty one, as python-blosc2's context gives them
    empty = None if math.prod(fb.chunk_grid(shape, chunkshape)) else \
        compress(b"", typesize=typesize, codec=codec, clevel=clevel, filters=filters)
    return build_frame(chunks, metalayers={"b2nd": meta, **(metalayers or {})},
                       vlmetalayers=vlmetalayers, chunksize=padded, clevel=clevel,
                       empty_chunk=empty)


def b2nd_meta(shape: Sequence[int], chunkshape: Sequence[int], blockshape: Sequence[int],
              dtype: str) -> bytes:
    """The ``b2nd`` metalayer value of an array (extents in items);
    FormatError naming the extent at fault when the shapes do not fit."""
    return _checked_meta(tuple(shape), tuple(chunkshape), tuple(blockshape), dtype)


# building and checking the value costs more than writing a small array; an
# error raised is not kept, so a bad value is refused every time
@functools.lru_cache(maxsize=64)
def _checked_meta(shape: tuple[int, ...], chunkshape: tuple[int, ...],
                  blockshape: tuple[int, ...], dtype: str) -> bytes:
    meta = fb.build_meta(shape, chunkshape, blockshape, dtype)
    # FormatError names the extent at fault (in the value's coordinates)
    RaiseFirst().run(fb.META_RULES, fb.B2ndView(fb.B2ndMeta.parse(meta)), meta)
    return meta


def chunk_data(data, shape: Sequence[int], chunkshape: Sequence[int],
               blockshape: Sequence[int], typesize: int) -> list[bytes]:
    """The decoded bytes of every chunk of a b2nd array, chunk grid in C
    order: ``data`` (bytes-like, the items in C order) cut into chunks, each
    padded with zeros to whole blocks and stored block after block."""
    return [bytes(c) for c in iter_chunk_data(data, shape, chunkshape, blockshape, typesize)]


def iter_chunk_data(data, shape: Sequence[int], chunkshape: Sequence[int],
                    blockshape: Sequence[int], typesize: int) -> Iterator[bytearray]:
    """:func:`chunk_data` one chunk at a time (a new buffer each): memory
    holds one chunk's data however large the array."""
    src = memoryview(data).cast("B") if len(data) else memoryview(b"")
    padded = fb.padded_items(chunkshape, blockshape) * typesize
    layout = _Layout(shape, chunkshape, blockshape, typesize)
    for corner in _grid(fb.chunk_grid(shape, chunkshape)):
        buf = bytearray(padded)
        layout.copy(corner, buf, src, to_chunk=True)
        yield buf


# chunks encoded per native call: the output slots of a batch take at most
# this many bytes (their untouched pages are never mapped in)
_BATCH_BYTES = 64 << 20
# a batch of fewer bytes of chunks is encoded by the calling thread alone:
# starting a thread (and its codec context) costs more than it would save
_MIN_SHARED_BYTES = 64 << 10


def encoded_chunks(data: memoryview, shape: tuple[int, ...], chunkshape: Sequence[int],
                   blockshape: Sequence[int], typesize: int, *, codec, clevel: int, filters,
                   nthreads: int, batch_bytes: int | None = None) -> Iterator:
    """The compressed chunks of the array ``data`` (bytes in C order), chunk
    grid in C order, each what :func:`compress` makes of its padded chunk.
    Whole chunks are encoded natively, straight from ``data`` (gathered
    block by block, or read in place when a chunk is a contiguous slice of
    it), several per call, spread over ``nthreads`` threads; codecs without
    a native encoder, and grids of too few chunks to share among the
    threads (their blocks are shared instead), go through :func:`compress`
    per chunk.  Memory holds the output of ``batch_bytes`` of chunks (default
    64 MiB; at least ``nthreads`` chunks) at a time."""
    padded = fb.padded_items(chunkshape, blockshape) * typesize
    bsize = math.prod(blockshape) * typesize
    nchunks = math.prod(fb.chunk_grid(shape, chunkshape))
    args = dict(typesize=typesize, codec=codec, clevel=clevel, filters=filters, blocksize=bsize,
                nthreads=nthreads)
    plan = get_plan(padded, typesize, codec, clevel, filters, bsize, "forward_compat", False,
                    "blosc2", nthreads)
    enc = getattr(plan.codec, "native_encoder", None)
    spec = enc(plan.clevel, plan.flavor) if enc is not None and not plan.use_dict else None
    few = nthreads > 1 and nchunks % nthreads and nchunks < 4 * nthreads \
        and nchunks * padded >= _MIN_SHARED_BYTES
    if nchunks == 0:
        return
    if spec is None or few:
        yield from _compressed_each(data, shape, chunkshape, blockshape, typesize, args)
        return
    kind, param, fns = spec
    over = plan.overhead
    headers = _chunk_headers(plan)
    batch = _BATCH_BYTES if batch_bytes is None else batch_bytes
    per = max(nthreads, batch // (padded + over) // nthreads * nthreads)
    for first in range(0, nchunks, per):
        count = min(per, nchunks - first)
        out, cap, sizes = native.encode_array_chunks(
            data, shape=shape, chunkshape=chunkshape, blockshape=blockshape, first=first,
            count=count, headers=headers, overhead=over,
            destsize=plan.destsize,
            raw_only=plan.memcpyed, nbytes=padded, blocksize=plan.blocksize, typesize=typesize,
            version=plan.version, split=plan.split, detect_runs=True,
            pipeline=list(plan.pipeline), codec_kind=kind, clevel=plan.clevel,
            codec_param=param, codec_fns=fns,
            nthreads=nthreads if count * padded >= _MIN_SHARED_BYTES else 1)
        for j, n in enumerate(sizes):
            yield out[j * cap:j * cap + n]


@functools.lru_cache(maxsize=64)
def _chunk_headers(plan) -> bytes:
    """The headers of ``plan``'s regular, raw and zeros special chunks (the
    first two with cbytes still to write)."""
    return b"".join([header(plan, 0, memcpyed=False), header(plan, 0, memcpyed=True),
                     header(plan, plan.overhead, memcpyed=False, special=SPECIAL_KINDS["zeros"])])


def _compressed_each(data: memoryview, shape, cshape, bshape, ts: int,
                     args: dict) -> Iterator[bytes]:
    """:func:`compress` of each padded chunk, chunk grid in C order: memory
    holds one chunk's data (none for a chunk read in place)."""
    # a chunk inside the array is one slice of it when its blocks span all
    # but the first dimension whole, as the array does
    in_place = all(b == c == n for b, c, n in zip(bshape[1:], cshape[1:], shape[1:])) \
        and (not shape or bshape[0] > 0 and cshape[0] % bshape[0] == 0)
    padded = fb.padded_items(cshape, bshape) * ts
    layout = _Layout(shape, cshape, bshape, ts)
    for corner in _grid(fb.chunk_grid(shape, cshape)):
        origin = [k * c for k, c in zip(corner, cshape)]
        if in_place and all(o + c <= n for o, c, n in zip(origin, cshape, shape)):
            at = sum(o * a for o, a in zip(origin, layout.astr))
            yield compress(data[at:at + padded], **args)
            continue
        buf = bytearray(padded)
        layout.copy(corner, buf, data, to_chunk=True)
        yield compress(buf, **args)
