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
from ..chunk.read import check_threads, fast_table
from ..errors import FormatError, Problem
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats import npy
from ..formats.chunk import MAX_NBYTES, check_output_cap
from ..formats.rules import Collect, RaiseFirst
from ..native.buffers import finish, joined, new_bytes
from .b2nd_read import Plans, block_runs, touches
from .b2nd_read import grid_indexes as _grid, strides as _strides
from .build import build_frame
from .shapes import default_shapes

if TYPE_CHECKING:
    from .read import Frame

__all__ = ["B2nd", "b2nd_meta", "chunk_data", "chunk_items", "iter_chunk_data", "compress_b2nd"]

_GROUP = 8 << 20            # bytes of chunks per native call of a whole read
_BYTES_PER_THREAD = 256 << 10   # fewer bytes to decode per thread: not worth a thread
# outputs above this many bytes are allocated once the first chunk passed its
# checks (smaller ones cost less than that look)
_CHECK_FIRST = 1 << 20
_ZERO_OFFSET = bytes(8)     # a lone chunk's offset in its own view
# a check of one chunk by the kernel: no plan, nothing written
_ONE_BASE, _ONE_PLAN, _NO_PLANS, _NO_RUNS = (array_("q", [0]), array_("i", [0]), array_("i"),
                                             array_("q"))


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
        self._plans: Plans | None = None        # the whole read's, made on first use
        self._np_dtype = None
        # blocks decoded by the reads so far (the native kernel's count, and
        # every block of a chunk the Python reader reads)
        self.blocks_decoded = 0

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

    def read(self, *, max_nbytes: int | None = MAX_NBYTES, nthreads: int = 1) -> bytes:
        """The array's items in C order (bytes), the chunk and block grid undone.

        FormatError (F-b2nd) when the chunk grid disagrees with the frame's
        chunk count, or a chunk's size with the item size: the output is
        allocated only once the first chunk has shown the item size real;
        (T-max-nbytes) when the array holds more than ``max_nbytes`` bytes
        (default 2**31 - 1; None: no cap; :meth:`iter_read` streams any
        size).  Each block is decoded straight into its place in the output,
        blocks spread over ``nthreads`` threads."""
        check_threads(nthreads)
        total = math.prod(self.shape) * self._frame.typesize
        if not self._native_ready():
            return joined(self.iter_read(max_nbytes=max_nbytes, nthreads=nthreads), total)
        if not self._start_whole(max_nbytes):
            return b""
        self._first_checked(0, total)
        obj, view = new_bytes(total)
        self._read_whole(view, nthreads)
        view.release()
        return finish(obj)

    def iter_read(self, *, max_nbytes: int | None = None,
                  nthreads: int = 1) -> Iterator[bytearray]:
        """:meth:`read` in pieces, one per row of chunks along the first
        dimension (``chunkshape[0]`` rows of the array, in C order; a 0-d
        array is one piece), so memory holds one row of chunks however large
        the array (no cap unless ``max_nbytes`` is given), and the pages of
        a mapped file are given back as they are read."""
        check_threads(nthreads)
        ts = self._frame.typesize
        if not self._start_whole(max_nbytes):
            return
        grid = self.grid
        if not self.shape:
            bands = [(0, self.shape)]
        else:
            rows, per = self.chunkshape[0], math.prod(grid[1:])
            bands = [(k * per, (min(rows, self.shape[0] - k * rows), *self.shape[1:]))
                     for k in range(grid[0])]
        if self._native_ready():
            per = math.prod(grid[1:]) if self.shape else 1
            plans = self._whole_plans()
            for first, shape in bands:
                self._first_checked(first, math.prod(shape) * ts)
                out = bytearray(math.prod(shape) * ts)
                self._read_chunks(plans, range(first, first + per), out, -plans.bases[first],
                                  nthreads, whole=True)
                yield out
            return
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

    # -- reading through the native block kernel (b2nd_read.py)
    def _native_ready(self) -> bool:
        """The native block kernel reads this array: it is on, and the
        frame's chunks are each a padded chunk (what the kernel checks them
        against: any other frame is read, and explained, chunk by chunk)."""
        f = self._frame
        padded = fb.padded_items(self.chunkshape, self.blockshape) * f.typesize
        return (fast_table() is not None and padded > 0 and f.chunksize == padded
                and f.nbytes == padded * f.nchunks)

    def _start_whole(self, max_nbytes: int | None) -> bool:
        """The checks of a whole read, in order (False: no items)."""
        if math.prod(self.shape) == 0:
            return False
        # what is wrong with the array first (as validate says it), then its size
        self._check_array()
        check_output_cap(math.prod(self.shape) * self._frame.typesize, max_nbytes,
                         self.offset, f"{self.path}.shape")
        return True

    def _whole_plans(self) -> Plans:
        """The plans of every chunk for a read of the whole array (made once:
        they depend on the shapes only); bases in the array's bytes.  Along
        each dimension a chunk is whole or the cut last one: chunks alike
        along every dimension share a plan."""
        if self._plans is None:
            ts, shape, cshape, grid = self._frame.typesize, self.shape, self.chunkshape, self.grid
            nd = len(shape)
            astr = [x * ts for x in _strides(shape)]
            # every chunk's base, and its kind: bit nd-1-d set when it is the
            # cut last chunk along d (chunk grid in C order)
            bases, kinds = [0], [0]
            for d in range(nd):
                step, cut = cshape[d] * astr[d], shape[d] % cshape[d] != 0
                along = [0] * grid[d]
                if cut:
                    along[-1] = 1
                bases = [b + k * step for b in bases for k in range(grid[d])]
                kinds = [2 * x + y for x in kinds for y in along]
            plans = Plans(self._nblocks())
            ids = {}
            for kind in sorted(set(kinds)):
                origin = [(grid[d] - 1) * cshape[d] if kind >> (nd - 1 - d) & 1 else 0
                          for d in range(nd)]
                base = sum(o * a for o, a in zip(origin, astr))
                ids[kind] = plans.plan(lambda: block_runs(cshape, self.blockshape, origin,
                                                          [0] * nd, shape, ts, base=base))
            plans.chunk_plan = array_("i", [ids[k] for k in kinds])
            plans.bases = array_("q", bases)
            self._plans = plans
        return self._plans

    def _nblocks(self) -> int:
        return math.prod(-(-c // b) for c, b in zip(self.chunkshape, self.blockshape))

    def _read_whole(self, out, nthreads: int) -> None:
        """Every chunk into ``out`` (the array's bytes), after the first has
        been checked (so a lying array is refused before ``out`` is written)."""
        plans = self._whole_plans()
        n = self._frame.nchunks
        # one row of chunks per call: the pages read are given back in between
        per = max(1, min(n, _GROUP // max(1, self._frame.chunksize)))
        for a in range(0, n, per):
            self._read_chunks(plans, range(a, min(n, a + per)), out, 0, nthreads, whole=True)

    def _first_checked(self, ci: int, nbytes: int) -> None:
        """Chunk ``ci`` checked before an output of ``nbytes`` is allocated
        (one above ``_CHECK_FIRST``: a smaller one costs less than the
        look): the kernel's checks, or the Python reader's (which raise)
        when it does not take it."""
        if nbytes <= _CHECK_FIRST:
            return
        _, view = self._frame.locate(ci)
        if view is not None:
            status, _ = native.b2nd_read(view, _ZERO_OFFSET, _ONE_BASE, _ONE_PLAN, _NO_PLANS,
                                         _NO_RUNS, None, fast_table(), nblocks=self._nblocks(),
                                         block_bytes=self._block_bytes())
            if status[0] == native.CHECK_OK:
                return
        self._chunk(ci)

    def _block_bytes(self) -> int:
        return math.prod(self.blockshape) * self._frame.typesize

    def _read_chunks(self, plans: Plans, chunks: Sequence[int], out, shift: int,
                     nthreads: int, sel: range | None = None, whole: bool = False) -> None:
        """Chunks ``chunks`` (frame indexes) into ``out`` by their plans
        (``plans``' entries ``sel``, by default the same as ``chunks``),
        output offsets moved by ``shift``; the chunks the kernel does not
        take are read, checked and explained by the Python reader, in order.
        ``whole``: every block is decoded, those holding no item (the
        padding of edge chunks) too, so that a damaged one is an error as
        it is to the chunk reader; a region decodes only its blocks."""
        sel = chunks if sel is None else sel
        nb, bb = plans.nblocks, self._block_bytes()
        f = self._frame
        table = fast_table()
        bases = memoryview(plans.bases)[sel.start:sel.stop]
        chosen = memoryview(plans.chunk_plan)[sel.start:sel.stop]
        blocks = len(sel) * nb if whole else plans.blocks_with_runs(sel)
        threads = max(1, min(nthreads, blocks * bb // _BYTES_PER_THREAD))
        batch = f.native_batch() if isinstance(chunks, range) else None
        if batch is not None:
            section, _, table = batch
            offsets = memoryview(f.entries.raw)[8 * chunks.start:8 * chunks.stop]
            status, n = native.b2nd_read(section, offsets, bases, chosen, plans.block_runs,
                                         plans.runs, out, table, nblocks=nb, block_bytes=bb,
                                         base_shift=shift, nthreads=threads, decode_all=whole)
            f.read_through(len(chunks) * f.chunksize)
            self.blocks_decoded += n
            for k in (k for k, s in enumerate(status) if s != native.CHECK_OK):
                self._python_chunk(chunks[k], plans, sel[k], out, bases[k] + shift)
            return
        for k, ci in enumerate(chunks):     # each checked, or explained, in order
            _, view = f.locate(ci)
            if view is not None:
                status, n = native.b2nd_read(view, _ZERO_OFFSET, bases[k:k + 1],
                                             chosen[k:k + 1], plans.block_runs, plans.runs,
                                             out, table, nblocks=nb, block_bytes=bb,
                                             base_shift=shift, nthreads=threads,
                                             decode_all=whole)
                self.blocks_decoded += n
                if status[0] == native.CHECK_OK:
                    continue
            self._python_chunk(ci, plans, sel[k], out, bases[k] + shift)

    def _python_chunk(self, ci: int, plans: Plans, p: int, out, base: int) -> None:
        """Chunk ``ci`` read by the Python reader (which explains what is
        wrong with it) and copied into ``out`` by its plan (entry ``p``)."""
        native.copy_runs(self._chunk(ci), out, plans.runs_of(p), False, base)
        self.blocks_decoded += plans.nblocks

    def numpy_dtype(self):
        """The stored dtype as a ``numpy.dtype`` (record types with their
        fields, read as python-blosc2 reads them); NumPy needed."""
        if self._np_dtype is not None:
            return self._np_dtype
        try:
            self._np_dtype = numpy().dtype(npy.npy_descr(self.dtype))
            return self._np_dtype
        except Exception as e:     # noqa: BLE001 -- NumPy parses with ast too (SyntaxError)
            # the fault validate warns of as V21: python-blosc2 (NumPy) cannot
            # make a dtype of the string; read() still gives the items' bytes
            at = self.offset + fb.extent_offset(len(self.shape), "dtype", 0)
            raise FormatError(f"NumPy cannot read the dtype string {self.dtype!r} "
                              f"({type(e).__name__}: {e}); read() gives the items as bytes",
                              at, f"{self.path}.dtype.dtype", rule="V21") from None

    def array(self, *, max_nbytes: int | None = MAX_NBYTES, nthreads: int = 1):
        """The whole array as a ``numpy.ndarray`` of the stored dtype (NumPy
        needed); errors, ``max_nbytes`` and ``nthreads`` as :meth:`read`.
        Allocated once the checks and the first chunk have shown the sizes
        real; each block decoded straight into its place."""
        check_threads(nthreads)
        dtype = self.numpy_dtype()
        if not self._native_ready():
            out, flat, at = None, memoryview(b""), 0
            for piece in self.iter_read(max_nbytes=max_nbytes):
                if out is None:
                    out = numpy().empty(self.shape, dtype)
                    flat = memoryview(out).cast("B")
                flat[at:at + len(piece)] = piece
                at += len(piece)
            return out if out is not None else numpy().empty(self.shape, dtype)
        if not self._start_whole(max_nbytes):
            return numpy().empty(self.shape, dtype)
        self._first_checked(0, math.prod(self.shape) * self._frame.typesize)
        out = numpy().empty(self.shape, dtype)
        self._read_whole(out.reshape(-1).view("u1"), nthreads)
        return out

    def __getitem__(self, key):
        """The region ``key`` (NumPy basic indexing: integers, slices with
        any step, ``...``) as a ``numpy.ndarray`` of the stored dtype;
        only the chunks the region touches are decoded, and in them only
        the blocks it touches.  IndexError for an index out of range or too
        many of them, as NumPy.  :meth:`region` with threads."""
        return self.region(key)

    def region(self, key, *, nthreads: int = 1):
        """``self[key]`` with the blocks to decode spread over ``nthreads``
        threads (one for regions of less than 256 KiB of blocks)."""
        check_threads(nthreads)
        dtype = self.numpy_dtype()
        ranges, drop = _region(key, self.shape)
        # a range's ends by its first and last index (min() and max() would
        # walk it: a hostile shape claims 10**13 items along a dimension)
        lo = [min(r[0], r[-1]) if r else 0 for r in ranges]
        hi = [max(r[0], r[-1]) + 1 if r else 0 for r in ranges]
        stepped = any(abs(r.step) > 1 for r in ranges)
        box = self._box(lo, hi, dtype, ranges if stepped else None, nthreads)
        # the box spans each range's first to last index: its steps remain
        picked = box[tuple(0 if d in drop else slice(None, None, r.step)
                           for d, r in enumerate(ranges))]
        return picked.copy() if stepped else picked

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

    def _box(self, lo: Sequence[int], hi: Sequence[int], dtype,
             picks: Sequence[range] | None = None, nthreads: int = 1):
        """The items of the box ``lo``..``hi`` (per dimension), from the
        chunks that hold them; allocated once the checks and the first
        chunk have shown the sizes real (those chunks cover every item).
        ``picks``: the indexes wanted along each dimension (steps): blocks
        that hold none of them are not decoded, and their part of the box
        is left as it was allocated."""
        self._check_array()
        shape = [h - l for l, h in zip(lo, hi)]
        if 0 in shape:
            return numpy().empty(shape, dtype)
        if self._native_ready():
            return self._native_box(lo, hi, shape, dtype, picks, nthreads)
        box = None
        for ci, origin in self._chunks_in_box(lo, hi):
            chunk = chunk_items(self._chunk(ci), self.chunkshape, self.blockshape, dtype)
            if box is None:
                box = numpy().empty(shape, dtype)
            a = [max(l, o) for l, o in zip(lo, origin)]
            b = [min(h, o + c) for h, o, c in zip(hi, origin, self.chunkshape)]
            box[tuple(slice(x - l, y - l) for x, y, l in zip(a, b, lo))] = \
                chunk[tuple(slice(x - o, y - o) for x, y, o in zip(a, b, origin))]
        return box

    def _chunks_in_box(self, lo: Sequence[int], hi: Sequence[int]
                       ) -> Iterator[tuple[int, list[int]]]:
        """The chunks holding items of the box ``lo``..``hi``, in C order:
        each chunk's index and its origin in the array (items)."""
        first = [l // c for l, c in zip(lo, self.chunkshape)]
        last = [(h - 1) // c for h, c in zip(hi, self.chunkshape)]
        strides = _strides(self.grid)
        for corner in _grid([b - a + 1 for a, b in zip(first, last)]):
            k = [a + c for a, c in zip(first, corner)]
            yield (sum(x * s for x, s in zip(k, strides)),
                   [x * c for x, c in zip(k, self.chunkshape)])

    def _native_box(self, lo, hi, shape, dtype, picks, nthreads: int):
        """:meth:`_box` by the native kernel: only the blocks holding wanted
        items are decoded, each straight into the box or through one block
        of scratch."""
        ts, cshape, bshape = self._frame.typesize, self.chunkshape, self.blockshape
        plans = Plans(self._nblocks())
        chunks = []
        for ci, origin in self._chunks_in_box(lo, hi):
            if picks is not None and not all(touches(p, o, o + c)
                                             for p, o, c in zip(picks, origin, cshape)):
                continue
            if plans.add(lambda: block_runs(cshape, bshape, origin, lo, hi, ts, picks), 0):
                chunks.append(ci)
        self._first_checked(chunks[0], math.prod(shape) * ts)
        box = numpy().empty(shape, dtype)
        self._read_chunks(plans, chunks, box.reshape(-1).view("u1"), 0, nthreads,
                          sel=range(len(chunks)))
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


def _runs(shape, cshape, bshape, origin, ts: int) -> Iterator[tuple[int, int, int, int, int, int]]:
    """The byte runs of the chunk at ``origin`` that lie inside the array, as
    ``(chunk offset, array offset, run length, count, chunk step, array
    step)``, block after block: :func:`block_runs` with the whole array as
    the box (the padding of edge chunks and blocks is left out)."""
    per_block = block_runs(cshape, bshape, origin, [0] * len(shape), shape, ts)
    for bi in sorted(per_block):
        yield from per_block[bi]


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
