"""Writing frames as the data comes: :class:`FrameWriter` streams chunks to
a file and writes the header last; :class:`B2ndWriter` takes an
n-dimensional array chunk by chunk, in any order; :func:`compress_frame` is
a FrameWriter writing into memory.

Both writers hold about two chunks and the offsets index (8 bytes per
chunk), whatever the frame's size, and build through
:class:`~blosckit.frame.build.FrameAssembler`: the bytes equal
:func:`~blosckit.frame.build.build_frame`'s for the same chunks.
"""
from __future__ import annotations

import io
import math
import os
import shutil
import tempfile
from types import TracebackType
from typing import Any, BinaryIO, Callable, Iterable, Mapping, Sequence, TypeVar

from ..chunk.encode import byte_view, compress
from ..chunk.special import compress_special
from ..formats import b2nd as fb
from ..formats import chunk as fc
from ..formats import frame as ff
from ..formats import npy
from .b2nd import b2nd_meta, encoded_chunks
from .build import FrameAssembler, _trailer_body
from .shapes import default_shapes

__all__ = ["FrameWriter", "B2ndWriter", "compress_frame"]

COPY_BYTES = 1 << 20          # piece size when a spooled frame is copied out
_W = TypeVar("_W", bound="_Writer")
# B2ndWriter: compressed chunks made per native call, bytes (memory stays
# flat however large a row of the chunk grid)
_WRITE_BATCH = 4 << 20


class _Writer:
    """A writer as a context manager: leaving the block closes it, or, on
    an exception (or a failing close), aborts it."""

    closed: bool

    def close(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self: _W) -> _W:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self.abort()
        elif not self.closed:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise


class FrameWriter(_Writer):
    """A contiguous frame written chunk by chunk to ``path_or_file``.

    ``path_or_file``: a path (the file is created or truncated), or a binary
    file object, written from its current position.  A file object that
    cannot seek (a pipe, standard output) gets the frame at :meth:`close`:
    until then it is spooled to a temporary file on disk, since the header,
    written first, is known only at the end.

    ``chunksize`` (bytes, a multiple of ``typesize``) is what :meth:`write`
    cuts data into; None leaves it to the first chunk appended (and
    :meth:`write` unusable).  Chunks of other sizes make a variable-size
    frame, as in :func:`~blosckit.frame.build.build_frame`.  ``typesize``
    (bytes per item) None takes the item size of the first data written
    (1 for bytes).  ``codec``, ``clevel``, ``filters`` and ``nthreads`` are
    :func:`blosckit.compress`'s, used for the data of :meth:`write` and
    :meth:`append_data` (and for the header of a frame left without a
    chunk, as python-blosc2 writes an empty super-chunk); ``metalayers``:
    name -> raw bytes, fixed at open as in C-Blosc2.

    Memory: the data of one unfinished chunk, one compressed chunk at a
    time and the offsets index, independent of the frame's size.  A context
    manager: leaving the block closes the writer, or, on an exception,
    calls :meth:`abort`.  ValueError for bad parameters, for use after
    :meth:`close` and for a second :meth:`close`.
    """

    def __init__(self, path_or_file: str | os.PathLike | BinaryIO, *, chunksize: int | None,
                 typesize: int | None = None, codec: str = "blosclz", clevel: int = 5,
                 filters: Sequence = ("shuffle",),
                 metalayers: Mapping[str, bytes] | None = None, nthreads: int = 1) -> None:
        if chunksize is not None and (type(chunksize) is not int or chunksize <= 0):
            raise ValueError(f"chunksize must be a positive byte count or None, got {chunksize!r}")
        if typesize is not None and (type(typesize) is not int or typesize <= 0):
            raise ValueError(f"typesize must be a positive byte count or None, got {typesize!r}")
        self.chunksize, self.typesize = chunksize, typesize
        self._params: dict[str, Any] = dict(codec=codec, clevel=clevel, filters=filters,
                                            nthreads=nthreads)
        self._check_sizes()
        self._empty_chunk()                 # ValueError now for a bad codec, filter, ...
        self._frame = FrameAssembler(metalayers=metalayers, chunksize=chunksize, clevel=clevel)
        self._vlmeta: dict[str, bytes] = {}
        self._pending = bytearray()         # data of the chunk being filled
        self.frame_len: int | None = None   # bytes of the frame, once closed
        self.closed = False
        self._open(path_or_file)
        self._put(bytes(ff.LEN_FIXED[self._frame.layout]))     # the header's place
        self._put(self._frame.meta_section)

    # -- the target ----------------------------------------------------------

    def _open(self, target) -> None:
        self._path: str | None = None
        self._sink: BinaryIO | None = None  # a file that cannot seek, written at close
        if isinstance(target, (str, os.PathLike)):
            self._path = os.fspath(target)
            self._out: BinaryIO = open(self._path, "wb")
        elif _seekable(target):
            self._out = target
        else:
            self._sink, self._out = target, tempfile.TemporaryFile()
        self._start = self._out.tell()
        self._written = 0

    def _put(self, piece) -> None:
        self._out.write(piece)
        self._written += len(piece)

    # -- adding data -----------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("the frame writer is closed")

    def _check_sizes(self) -> None:
        if self.chunksize is not None and self.typesize is not None \
                and self.chunksize % self.typesize:
            raise ValueError(f"chunksize {self.chunksize} is not a multiple of the typesize "
                             f"{self.typesize}")

    def _view(self, data) -> memoryview:
        """``data`` as flat bytes; the first data sets an unset typesize."""
        view, itemsize = byte_view(data)
        if self.typesize is None:
            self.typesize = itemsize
            self._check_sizes()
        return view

    def write(self, data) -> None:
        """Append ``data`` (any bytes-like or NumPy array; items in C order),
        compressed in chunks of ``chunksize`` bytes as they fill; the rest
        waits for more data, or for :meth:`close` (a shorter last chunk)."""
        self._check_open()
        if self.chunksize is None:
            raise ValueError("write() cuts data into chunks of chunksize bytes: give chunksize")
        view = self._view(data)
        size, pos = self.chunksize, 0
        if self._pending:
            pos = min(size - len(self._pending), len(view))
            self._pending += view[:pos]
            if len(self._pending) == size:
                self._compressed(self._pending)
                self._pending.clear()
        while len(view) - pos >= size:
            self._compressed(view[pos:pos + size])
            pos += size
        self._pending += view[pos:]

    def append_data(self, data) -> None:
        """Append ``data`` (bytes-like or NumPy array) compressed as one
        chunk of its own size (python-blosc2's ``append_data``); data held
        by :meth:`write` becomes a chunk of its own first."""
        self._check_open()
        view = self._view(data)
        self._flush()
        self._compressed(view)

    def append_chunk(self, chunk, *, index: int | None = None) -> None:
        """Append a compressed chunk (bytes-like) as it is; data held by
        :meth:`write` becomes a chunk of its own first.  ``index``: the
        chunk's place in the frame (default: after the last); chunks may
        come in any order, but every place below the highest needs a chunk
        by :meth:`close`."""
        self._check_open()
        self._flush()
        self._stored(self._frame.append(chunk, index))

    def set_vlmetalayer(self, name: str, value: bytes) -> None:
        """Store ``value`` (bytes; python-blosc2 reads msgpack) as the
        variable-length metalayer ``name``, replacing one of that name; any
        time before :meth:`close`."""
        self._check_open()
        items = {**self._vlmeta, name: bytes(value)}
        _trailer_body(items)                # ValueError now for a bad name or count
        self._vlmeta = items

    def _compressed(self, data) -> None:
        chunk = compress(data, typesize=self.typesize, **self._params)
        self._stored(self._frame.append(chunk))

    def _stored(self, pieces: list) -> None:
        for piece in pieces:
            self._put(piece)

    def _flush(self) -> None:
        if self._pending:
            self._compressed(self._pending)
            self._pending.clear()

    def _empty_chunk(self) -> fc.RawHeader:
        """The header of an empty chunk compressed with the writer's
        parameters: the frame header's parameters when no chunk comes."""
        return fc.raw_header(compress(b"", typesize=self.typesize or 1, **self._params))

    # -- finishing -------------------------------------------------------------

    @property
    def nchunks(self) -> int:
        """Chunks in the frame so far (data held by :meth:`write` not yet)."""
        return self._frame.nchunks

    @property
    def nbytes(self) -> int:
        """Data bytes in the frame's chunks so far."""
        return self._frame.nbytes

    def close(self) -> None:
        """Compress the data :meth:`write` still holds as the last chunk,
        write the offsets index and the trailer, then the header in its
        place at the start.  ValueError when a chunk place below the highest
        is empty (the writer stays open: give it, or :meth:`abort`)."""
        self._check_open()
        self._flush()
        fixed, tail = self._frame.finish(self._vlmeta, empty=self._empty_chunk())
        self._stored(tail)
        end = self._out.tell()
        self._out.seek(self._start)
        self._out.write(fixed)
        self._out.seek(end)
        self.frame_len = self._written
        self.closed = True
        self._release(keep=True)

    def abort(self) -> None:
        """Stop without finishing the frame: a file the writer created is
        removed, a file object is left as it is (a frame without header);
        nothing reaches a spooled target."""
        if not self.closed:
            self.closed = True
            self._release(keep=False)

    def _release(self, keep: bool) -> None:
        out = self._out
        if self._sink is not None:
            if keep:
                out.seek(self._start)
                shutil.copyfileobj(out, self._sink, COPY_BYTES)
                self._sink.flush()
            out.close()
        elif self._path is not None:
            out.close()
            if not keep:
                os.unlink(self._path)
        else:
            out.flush()



def _seekable(f) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


class B2ndWriter(_Writer):
    """An n-dimensional array written as a b2nd frame (what python-blosc2
    opens as an NDArray) one chunk at a time, for arrays larger than memory.

    ``shape``, ``chunkshape`` and ``blockshape`` are in items per dimension
    (a shape left None is python-blosc2's choice, as in
    :func:`~blosckit.frame.b2nd.compress_b2nd`), ``dtype`` a NumPy type (or
    its string, e.g. ``"<f8"``); the chunk grid is ``ceil(shape /
    chunkshape)`` per dimension.  :meth:`write_chunk`
    takes chunks in any order: each is stored where the file has got to,
    and the offsets index says where each landed; :meth:`write` takes the
    array's items in C order instead, a row of chunks at a time (a row
    that :meth:`write_chunk` has begun is refused).  Chunks never written
    are, at :meth:`close`, an error (``fill=None``, the default) or special
    chunks of ``fill``: ``"zeros"``, ``"nan"`` (4- or 8-byte floats) or
    ``"uninit"`` (as python-blosc2's ``zeros``, ``nans`` and ``empty``
    arrays hold them).  ``codec``, ``clevel``, ``filters`` and ``nthreads``
    as in :func:`~blosckit.frame.b2nd.compress_b2nd` (python-blosc2's
    defaults for arrays), whose bytes the writer repeats when the chunks
    come in C order.  ``metalayers`` go after ``"b2nd"``.  Memory: the
    compressed chunks of a few MiB (at least ``nthreads`` chunks) and the
    index.  A context manager, as
    :class:`FrameWriter`.
    """

    def __init__(self, path_or_file: str | os.PathLike | BinaryIO, *, shape: Sequence[int],
                 dtype, chunkshape: Sequence[int] | None = None,
                 blockshape: Sequence[int] | None = None,
                 codec: str = "zstd", clevel: int = 1, filters: Sequence = ("shuffle",),
                 nthreads: int = 1, metalayers: Mapping[str, bytes] | None = None,
                 fill: str | None = None) -> None:
        self.dtype: str = npy.dtype_string(dtype)
        self.shape = tuple(shape)
        self.typesize = npy.itemsize(self.dtype)
        self.chunkshape, self.blockshape = default_shapes(
            self.shape, self.typesize, chunkshape=chunkshape, blockshape=blockshape)
        meta = b2nd_meta(self.shape, self.chunkshape, self.blockshape, self.dtype)
        self.grid = tuple(fb.chunk_grid(self.shape, self.chunkshape))
        padded = fb.padded_items(self.chunkshape, self.blockshape) * self.typesize
        bsize = math.prod(self.blockshape) * self.typesize
        self._fill: bytearray | None = None
        if fill is not None:
            self._fill = bytearray(compress_special(fill, padded, typesize=self.typesize))
            # C-Blosc2 makes a special entry's chunk with the frame header's
            # block size, the last chunk's here, and its array reader wants
            # the array's blocks
            fc.HEADER.put(self._fill, "blocksize", bsize, 0)
        self._params: dict[str, Any] = dict(
            typesize=self.typesize, codec=codec, clevel=clevel, filters=filters,
            blocksize=bsize, nthreads=nthreads)
        self._written = bytearray(math.prod(self.grid))
        # write(): the bytes the array holds and those given so far, the next
        # row of chunks to fill and the items held for it
        self._nbytes, self._taken = math.prod(self.shape) * self.typesize, 0
        self._band = 0
        self._held = bytearray()
        self._frame = FrameWriter(path_or_file, chunksize=padded, typesize=self.typesize,
                                  codec=codec, clevel=clevel, filters=filters,
                                  metalayers={"b2nd": meta, **(metalayers or {})},
                                  nthreads=nthreads)

    def write_chunk(self, coords: Sequence[int], array) -> None:
        """Store the chunk at ``coords`` (its index in the chunk grid, one
        per dimension): ``array`` holds its items in C order, a NumPy array
        of the chunk's shape (cut at the array's edge: ``min(chunkshape,
        shape - coords * chunkshape)``) or any bytes-like of that many
        items.  ValueError for coordinates off the grid, a chunk already
        written, or data of another size."""
        self._frame._check_open()
        index, extent = self._place(coords)
        shape = tuple(getattr(array, "shape", ())) if hasattr(array, "dtype") else None
        if shape is not None and shape != extent:
            raise ValueError(f"chunk {tuple(coords)} has shape {extent}, the array given "
                             f"{shape}")
        view, _ = byte_view(array)
        want = math.prod(extent) * self.typesize
        if len(view) != want:
            raise ValueError(f"chunk {tuple(coords)} holds {math.prod(extent)} items of "
                             f"{self.typesize} bytes ({want} bytes), {len(view)} given")
        # the chunk is the one chunk of an array of its extent
        for chunk in self._encoded(view, extent):
            self._frame.append_chunk(chunk, index=index)
        self._written[index] = 1

    def write(self, data) -> None:
        """Append the array's next items in C order (any bytes-like or NumPy
        array, of any length): each row of chunks along the first dimension
        (``chunkshape[0]`` rows of the array; a 0-d array's one item) is
        compressed and stored as soon as its items are in, the rest held
        until more come.  A row given whole is not copied, so memory holds
        one chunk at a time whatever the array's size.  ValueError for more
        items than the array holds, or a row whose chunks
        :meth:`write_chunk` has already written."""
        self._frame._check_open()
        view, _ = byte_view(data)
        if self._taken + len(view) > self._nbytes:
            raise ValueError(f"{self._taken + len(view)} bytes written to an array of "
                             f"{self._nbytes} bytes (shape {self.shape})")
        self._taken += len(view)
        pos = 0
        while pos < len(view):
            band = self._band_shape()
            want = math.prod(band) * self.typesize
            if not self._held and len(view) - pos >= want:
                self._write_band(view[pos:pos + want], band)
                pos += want
                continue
            take = min(want - len(self._held), len(view) - pos)
            self._held += view[pos:pos + take]
            pos += take
            if len(self._held) == want:
                self._write_band(self._held, band)
                self._held = bytearray()

    def _band_shape(self) -> tuple[int, ...]:
        """The shape of the row of chunks :meth:`write` fills next."""
        if not self.shape:
            return ()
        rows = min(self.chunkshape[0], self.shape[0] - self._band * self.chunkshape[0])
        return (rows, *self.shape[1:])

    def _write_band(self, items, shape: tuple[int, ...]) -> None:
        """Store the chunks of the next row of the chunk grid, of ``shape``,
        from its ``items``."""
        per = math.prod(self.grid[1:])
        first = self._band * per
        if any(self._written[first:first + per]):
            raise ValueError(f"row {self._band} of the chunk grid holds chunks already "
                             "written by write_chunk")
        for k, chunk in enumerate(self._encoded(items, shape)):
            self._frame.append_chunk(chunk, index=first + k)
            self._written[first + k] = 1
        self._band += 1

    def _encoded(self, items, shape: tuple[int, ...]):
        """The compressed chunks of an array of ``shape`` (a row of the chunk
        grid, or one chunk) from its ``items``, a few MiB of them at a time."""
        p = self._params
        view = memoryview(items).cast("B") if len(items) else memoryview(b"")
        return encoded_chunks(view, shape, self.chunkshape, self.blockshape, self.typesize,
                              codec=p["codec"], clevel=p["clevel"], filters=p["filters"],
                              nthreads=p["nthreads"], batch_bytes=_WRITE_BATCH)

    @property
    def frame_len(self) -> int | None:
        """Bytes of the frame, once closed."""
        return self._frame.frame_len

    def _place(self, coords: Sequence[int]) -> tuple[int, tuple[int, ...]]:
        """The chunk's place in the frame (C order over the grid) and its
        shape inside the array."""
        coords = tuple(coords)
        if len(coords) != len(self.grid) or not all(
                type(c) is int and 0 <= c < g for c, g in zip(coords, self.grid)):
            raise ValueError(f"chunk coordinates {coords} are not in the chunk grid {self.grid}")
        index = 0
        for c, g in zip(coords, self.grid):
            index = index * g + c
        if self._written[index]:
            raise ValueError(f"chunk {coords} is already written")
        extent = tuple(min(c, s - k * c) for k, c, s in zip(coords, self.chunkshape, self.shape))
        return index, extent

    def set_vlmetalayer(self, name: str, value: bytes) -> None:
        """As :meth:`FrameWriter.set_vlmetalayer`."""
        self._frame.set_vlmetalayer(name, value)

    @property
    def closed(self) -> bool:
        return self._frame.closed

    def missing(self) -> list[tuple[int, ...]]:
        """Grid coordinates of the chunks not written yet, in C order."""
        out, at = [], self._written.find(0)
        while at >= 0:
            out.append(tuple(_unravel(at, self.grid)))
            at = self._written.find(0, at + 1)
        return out

    def close(self) -> None:
        """Fill the chunks never written (see ``fill``) and close the frame.
        ValueError naming the first missing chunk when ``fill`` is None
        (the writer stays open: write them, or :meth:`abort`)."""
        self._frame._check_open()
        if self._held:
            raise ValueError(f"write() holds {len(self._held)} bytes of an unfinished row of "
                             f"chunks of shape {self._band_shape()}; write the rest, or abort()")
        at = self._written.find(0)
        if at >= 0 and self._fill is None:
            n = self._written.count(0)
            raise ValueError(f"{n} chunk(s) never written, the first at "
                             f"{tuple(_unravel(at, self.grid))} (grid {self.grid}); write "
                             "them, or give fill='zeros', 'nan' or 'uninit'")
        while at >= 0:
            self._frame.append_chunk(self._fill, index=at)
            self._written[at] = 1
            at = self._written.find(0, at + 1)
        self._frame.close()

    def abort(self) -> None:
        """As :meth:`FrameWriter.abort`."""
        self._frame.abort()



def _unravel(index: int, grid: Sequence[int]) -> list[int]:
    out = []
    for g in reversed(grid):
        index, c = divmod(index, g)
        out.append(c)
    return out[::-1]


def compress_frame(src, *, chunksize: int | None = None, typesize: int | None = None,
                   codec: str = "blosclz", clevel: int = 5, filters=("shuffle",),
                   metalayers: Mapping[str, bytes] | None = None,
                   vlmetalayers: Mapping[str, bytes] | None = None, nthreads: int = 1,
                   progress: Callable[[int], None] | None = None) -> bytes:
    """A contiguous frame (bytes) of data compressed with
    :func:`blosckit.compress`.  ``src``: one bytes-like or NumPy array, cut
    into chunks of ``chunksize`` bytes (needed; the last chunk may be
    shorter), or any other iterable of such pieces, each compressed as one
    chunk of its own size (pieces of different sizes make a variable-size
    frame, as python-blosc2's ``append_data`` does; ``chunksize`` then
    defaults to the first piece's size).  ``typesize`` (bytes) defaults to
    the item size of the data.  ``progress``, when given, is called with the
    input bytes of each chunk once it is compressed."""
    pieces = _pieces(src, chunksize)
    if typesize is None and isinstance(pieces, _Cut):
        typesize = pieces.itemsize
    out = io.BytesIO()
    with FrameWriter(out, chunksize=chunksize, typesize=typesize, codec=codec, clevel=clevel,
                     filters=filters, metalayers=metalayers, nthreads=nthreads) as w:
        for name, value in (vlmetalayers or {}).items():
            w.set_vlmetalayer(name, value)
        for piece in pieces:
            w.append_data(piece)
            if progress is not None:
                progress(memoryview(piece).nbytes)
    return out.getvalue()


class _Cut:
    """A buffer as pieces of ``size`` bytes (the last one shorter)."""

    def __init__(self, view: memoryview, itemsize: int, size: int) -> None:
        self.view, self.itemsize, self.size = view, itemsize, size

    def __iter__(self):
        for i in range(0, len(self.view), self.size):
            yield self.view[i:i + self.size]


def _pieces(src, chunksize: int | None) -> Iterable:
    """``src`` as the data of each chunk: a buffer cut into ``chunksize``
    pieces, or the iterable given."""
    try:
        view, itemsize = byte_view(src)
    except TypeError:
        if isinstance(src, (str, Mapping)):
            raise TypeError(f"src must be bytes-like or an iterable of them, not "
                            f"{type(src).__name__}") from None
        return src
    if type(chunksize) is not int or chunksize <= 0:
        raise ValueError(f"chunksize must be a positive byte count, got {chunksize!r}")
    return _Cut(view, itemsize, chunksize)
