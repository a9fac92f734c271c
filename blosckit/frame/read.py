"""Reading Blosc2 frames: contiguous frames (bytes or a file) and sparse
frames (a directory), every header layout.

``open_frame`` reads the header, the offsets index and the trailer only; a
file is mapped, not read, so opening a 10 GB frame touches a few pages.
Chunks are parsed and decoded when asked for, and every error inside a
chunk is the chunk reader's own error relocated to the frame (offset in the
frame, path ``frame.chunks[i]...``).  Structures come from
:mod:`blosckit.formats.frame`; its rules run here into a sink, as the chunk
rules do in :mod:`blosckit.chunk`.
"""
from __future__ import annotations

import collections
import contextlib
import errno
import functools
import io
import mmap
import operator
import os
import stat
import struct
from itertools import repeat
from pathlib import Path
from typing import Any, Callable, Iterator

from ..chunk import read as _chunk
from .. import native
from ..native.buffers import joined
from .b2nd import B2nd
from ..chunk.special import compress_special
from ..formats import b2nd as fb
from ..errors import FormatError, UnsupportedError
from ..formats import enums
from ..formats import chunk as _chunk_rules
from ..formats import frame as ff
from ..formats.frame import FrameView
from ..formats.layout import ConstMismatch
from ..formats.rules import OFFSETS, RaiseFirst, Sink

__all__ = ["Frame", "open_frame", "read_header", "read_metalayers", "FrameView",
           "special_chunk", "map_file", "mapped_file", "vlmeta_value", "Pages"]

_OFFSET = ff.FAST_OFFSET
_LEN_ENTRY = ff.LEN_OFFSET                     # one index entry
_LEN_CHUNK_HEADER = _chunk_rules.LEN_HEADER
_CHUNK_HEADER = _chunk_rules.FAST_HEADER.unpack_from
_CHUNK_CBYTES = _chunk_rules.HEADER["cbytes"].index
_DECODE_GROUP = 8 << 20      # bytes of output per native decode call
_GIVE_BACK = 16 << 20        # bytes read through a file mapping before its pages are given back
MAX_NBYTES = _chunk.MAX_NBYTES   # the default cap of a whole output held in memory
_O_READ = os.O_RDONLY | getattr(os, "O_BINARY", 0)     # (O_BINARY: Windows only)


# FrameView field -> its path in the header layouts.
_FIELDS = (("version", "general_flags.version"),
           ("offsets_size", "general_flags.offsets_size"),
           ("frame_type", "frame_type"), ("header_len", "header_len"),
           ("frame_len", "frame_len"), ("nbytes", "nbytes"), ("cbytes", "cbytes"),
           ("typesize", "typesize"), ("blocksize", "blocksize"),
           ("chunksize", "chunksize"), ("nfilters", "filter_pipeline.nfilters"),
           ("has_vlmetalayers_byte", "has_vlmetalayers"),
           ("codec", "codec_flags.codec"), ("clevel", "codec_flags.clevel"),
           ("udcodec", "filter_pipeline.udcodec"),
           ("filters", "filter_pipeline.filters"),
           ("filters_meta", "filter_pipeline.filters_meta"),
           ("filter_shuffle", "filter_flags.shuffle"))
_DEFAULTS = {"frame_type": 0, "blocksize": 0, "nfilters": 0, "udcodec": 0, "filters": [],
             "filters_meta": [], "filter_shuffle": 0}


def _fill_plan(lay) -> tuple:
    """How one header layout's flat values fill a FrameView: the plain
    fields by one itemgetter, then bit fields, arrays and the fields the
    layout lacks (their defaults): the header is read on every open."""
    plain, bits, arrays, absent = [], [], [], []
    for name, path in _FIELDS:
        if path not in lay:
            absent.append((name, _DEFAULTS[name]))
            continue
        f = lay[path]
        if f.width:
            bits.append((name, f.index, f.shift, f.mask))
        elif f.count > 1:
            arrays.append((name, f.index, f.index + f.count))
        else:
            plain.append((name, f.index))
    names = tuple(n for n, _ in plain)
    get = operator.itemgetter(*(i for _, i in plain))
    return (names, get, tuple(bits), tuple(arrays), tuple(n for n, _ in absent),
            tuple(d for _, d in absent))


_FILL = {n: _fill_plan(lay) for n, lay in ff.FLAT_HEADERS.items()}
_drain = collections.deque(maxlen=0).extend      # runs an iterator, keeps nothing


def _view(src) -> memoryview:
    mv = memoryview(src)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def read_header(mv: memoryview, sink: Sink, sparse: bool,
                n: int | None = None) -> FrameView | None:
    """The header's view, read through the flat layout derived from its
    declaration; rules run into ``sink``.  None when the header's layout or
    markers are wrong (F-layout, F-marker: nothing else can be located).
    ``n``: the input's length (bytes) when ``mv`` holds only its start."""
    v = FrameView()
    v.n = n = len(mv) if n is None else n
    v.sparse = sparse
    v.layout = layout = ff.header_layout(mv[0]) if n else None
    values = None if layout is None else ff.read_or_none(ff.FLAT_HEADERS[layout], mv, 0)
    v.markers_ok = values is not None
    sink.run(ff.INPUT_RULES, ff.start_extent(n), mv)
    sink.run(ff.LAYOUT_RULES, v, mv)
    if values is None:
        return None
    names, get, bits, arrays, absent, defaults = _FILL[layout]
    # setattr over the names in one C loop (the header is read on every open)
    _drain(map(setattr, repeat(v), names, get(values)))
    _drain(map(setattr, repeat(v), absent, defaults))
    for name, pos, shift, mask in bits:
        setattr(v, name, (values[pos] >> shift) & mask)
    for name, a, b in arrays:
        setattr(v, name, list(values[a:b]))
    sink.run(ff.INPUT_RULES, ff.frame_extent(v, mv), mv)
    sink.run(ff.HEADER_RULES, v, mv)
    return v


def read_metalayers(mv: memoryview, start: int, limit: int, base: int, root: str,
                    at: dict[str, int] | None = None,
                    odd: list[tuple[int, str, str]] | None = None,
                    sink: Sink | None = None) -> dict[str, bytes]:
    """The metalayer section at ``start`` (values at offsets from ``base``,
    everything inside ``mv[:limit]``): name -> the value's raw bytes; ``at``
    receives where each value's bytes start, ``odd`` the offset, path and
    kind of each name other readers take otherwise: ``"not-utf8"`` (kept
    with U+FFFD in its place), ``"nul"`` (C-Blosc2 stops at the NUL byte).
    Read through the fast paths derived from the declarations; F-meta
    explains what does not read (raised, or reported to ``sink``, which
    must raise)."""
    scope = mv[:limit]
    entries = _meta_entries(scope, start, base, limit)
    (sink or RaiseFirst()).run(ff.META_RULES, _new(ff.MetaView, (start, limit, base, root,
                                                                 entries)), mv)
    assert entries is not None
    out: dict[str, bytes] = {}
    name_at = start + _META_HEAD_SIZE + ff.LEN_NAME_MARKER
    for k, e in enumerate(entries):
        raw_name = e.name
        name = raw_name.decode("utf-8", "replace")
        if odd is not None:
            if "\ufffd" in name and _not_utf8(raw_name):
                odd.append((name_at, f"{root}.index[{k}].name", "not-utf8"))
            if 0 in raw_name:
                odd.append((name_at + raw_name.index(0), f"{root}.index[{k}].name", "nul"))
        name_at += _ENTRY_FIXED + len(raw_name)
        content_at = e.at + ff.LEN_META_VALUE_HEAD
        out[name] = bytes(scope[content_at:content_at + (e.len_content or 0)])
        if at is not None:
            at[name] = content_at
    return out


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _meta_entries(scope: memoryview, start: int, base: int,
                  limit: int) -> list[ff.MetaEntryView] | None:
    """Each index entry of the section at ``start`` with its value's head,
    through the fast parsers of the declaration's fixed parts; None when
    the index does not read (F-meta explains)."""
    try:
        head = _READ_META_HEAD(scope, start)
        pos = start + _META_HEAD_SIZE
        entries = []
        for _ in range(_NUM_METALAYERS(head)):
            marker = scope[pos]
            n = (marker >> _LEN_NAME_SHIFT) & _LEN_NAME_MASK
            name_at = pos + ff.LEN_NAME_MARKER
            name = bytes(scope[name_at:name_at + n])
            if len(name) != n:
                return None           # the name runs past the section
            offset = _ENTRY_OFFSET(_READ_ENTRY_TAIL(scope, name_at + n))
            ofs = base + offset
            value = ff.read_or_none(ff.FAST_VALUE_HEAD, scope, ofs) if 0 <= ofs < limit else None
            entries.append(_new(ff.MetaEntryView, (
                marker, name, offset, ofs, None if value is None else _LEN_CONTENT(value))))
            pos += _ENTRY_FIXED + n
        _READ_VALUES_HEAD(scope, pos)
    except (ConstMismatch, struct.error, IndexError):
        return None
    return entries


_new = tuple.__new__        # a NamedTuple made without its Python-level __new__
_NUM_METALAYERS = ff.FAST_META_HEAD.getter("num_metalayers")
_LEN_NAME = ff.NAME_MARKER["name_marker.len_name"]
_LEN_NAME_SHIFT, _LEN_NAME_MASK = _LEN_NAME.shift, _LEN_NAME.mask
_ENTRY_OFFSET = ff.FAST_ENTRY_TAIL.getter("offset")
_LEN_CONTENT = ff.FAST_VALUE_HEAD.getter("len_content")
_READ_META_HEAD, _READ_ENTRY_TAIL = ff.FAST_META_HEAD.read, ff.FAST_ENTRY_TAIL.read
_READ_VALUES_HEAD = ff.FAST_VALUES_HEAD.read
_META_HEAD_SIZE = ff.FAST_META_HEAD.size
_ENTRY_FIXED = ff.meta_entry_size(0)         # an index entry's bytes besides its name


def _relocated(e: FormatError, base: int, root: str) -> FormatError:
    return e.relocated(base, root)


class _Offsets:
    """The decoded offsets index, read entry by entry (a 10,000-chunk frame
    opens without building a 10,000-item list)."""
    __slots__ = ("raw",)

    def __init__(self, raw: bytes):
        self.raw = raw

    def __len__(self) -> int:
        return len(self.raw) // _OFFSET.size

    def __getitem__(self, i: int) -> int:
        return _OFFSET.unpack_from(self.raw, i * _OFFSET.size)[0]

    def __iter__(self) -> Iterator[int]:
        return (x[0] for x in _OFFSET.iter_unpack(self.raw))


class Frame:
    """An open Blosc2 frame (see :func:`open_frame`).  A context manager."""

    def __init__(self, mv: memoryview, *, directory: Path | None = None,
                 closer: Any = None):
        self.buffer = mv
        self._file = None
        self._read_parts(mv, mv, 0, len(mv), directory, closer)

    def _read_parts(self, head: memoryview, tail: memoryview, base: int, n: int,
                    directory: Path | None, closer: Any) -> None:
        """Read the header, the trailer and the index's header of a frame of
        ``n`` bytes: ``head`` holds its first bytes (the whole header at
        least), ``tail`` its bytes from ``base`` on (the index's header and
        the trailer at least); both are the whole frame but for
        :func:`_open_unmapped`, which checks the parts lie there."""
        self.directory = directory
        self._closer = closer
        self._pages: Pages | None = None       # made on the first read through the frame
        self._tail = (tail, base)
        sparse = directory is not None
        sink = RaiseFirst()
        v = read_header(head, sink, sparse, n)
        assert v is not None           # RaiseFirst raised otherwise
        self.fields = v
        self._header = None
        self.layout = v.layout
        self.version = v.version
        self.typesize = v.typesize
        self.chunksize = v.chunksize
        self.blocksize = v.blocksize
        self.nbytes = v.nbytes
        self.cbytes = v.cbytes
        self.header_len = v.header_len
        # a fixed chunk size gives the count; 0 (chunks of varying size):
        # the offsets index does
        self.nchunks = -(-v.nbytes // v.chunksize) if v.chunksize > 0 and v.nbytes else 0
        self.clevel = v.clevel
        self.metalayers: dict[str, bytes] = {}
        self.metalayer_at: dict[str, int] = {}
        # (offset, path, kind) of metalayer and vlmetalayer names other readers
        # take otherwise (see read_metalayers)
        self.odd_names: list[tuple[int, str, str]] = []
        if v.layout in ff.LAYOUT_WITH_METALAYERS:
            self.metalayers = read_metalayers(head, ff.LEN_FIXED[v.layout], v.header_len, 0,
                                              "frame.metalayers", self.metalayer_at,
                                              self.odd_names, sink)
        if base:
            # the tail from base on: offsets in it are the frame's less base;
            # every rule reading the input finds none (an error: the whole
            # frame is then read again, mapped)
            t = ff.trailer_view(n - base, v.frame_len - base, v.header_len - base, tail)
            if t.start is None or t.start < 0 or t.tail_at < 0:
                raise _Unmapped
            self.trailer = _new(ff.TrailerView, (n, v.frame_len, v.header_len, t.tail_at + base,
                                                 t.tail, t.trailer_len, t.length_sane,
                                                 t.start + base, t.head))
            sink.run(ff.TRAILER_RULES, self.trailer, None)
        else:
            self.trailer = ff.trailer_view(n, v.frame_len, v.header_len, tail)
            sink.run(ff.TRAILER_RULES, self.trailer, tail)
        self.trailer_start: int = self.trailer.start
        self._vlraw_read: dict[str, bytes] | None = None
        self.vlmetalayer_at: dict[str, int] = {}
        self.index_span = self._index_span(sink, n, tail, base)
        self._offsets_read: _Offsets | None = None
        self._entries_at: int | None = None     # where a raw (memcpyed) index stores them
        if v.chunksize == 0 and v.nbytes:
            self.entries             # chunks of varying size: the index counts them
        self._b2nd: B2nd | None = None

    @functools.cached_property
    def codec(self) -> str:
        """The codec's name (the header's codec, or its udcodec byte)."""
        v = self.fields
        code = v.codec
        if code == enums.COMPFORMAT_UDCODEC and v.layout >= 13:
            code = v.udcodec
        return enums.codec_name(code)

    @functools.cached_property
    def filters(self) -> list[tuple[str, int]]:
        """The header's filter pipeline: (name, meta) of each slot in use."""
        v = self.fields
        if v.layout >= 13:
            return [(enums.filter_name(f), m) for f, m in zip(v.filters, v.filters_meta) if f]
        # the older layouts keep one shuffle choice in filter_flags
        return [(enums.filter_name(v.filter_shuffle), 0)] if v.filter_shuffle else []

    @property
    def header(self):
        """The fixed header as a construct Container (parsed on first use)."""
        if self._header is None:
            self._header = ff.FAST_HEADERS[self.layout](self.buffer, 0)
        return self._header

    @property
    def b2nd(self) -> B2nd | None:
        """The ``b2nd`` metalayer read (None for a frame without one);
        FormatError (rule F-b2nd) when it is malformed."""
        if self._b2nd is None:
            name = next((n for n in fb.NAMES if n in self.metalayers), None)
            if name is not None:
                self._b2nd = B2nd(self, self.metalayers[name], self.metalayer_at[name], name)
        return self._b2nd

    # -- the offsets index
    def _index_span(self, sink: Sink, n: int, src: memoryview, base: int) -> tuple[int, int]:
        """Where the offsets index lies; its header is checked now (F-index,
        into ``sink``, which raises), its entries are decoded on first use.
        ``src`` holds the frame's ``n`` bytes from ``base`` on (see
        :meth:`_read_parts`)."""
        v = self.fields
        start = v.header_len + (0 if self.directory is not None else v.cbytes)
        end = self.trailer_start
        counted = not (v.chunksize == 0 and v.nbytes)
        nchunks = self.nchunks if counted else None
        counted_at = ff.FLAT_HEADERS[v.layout].offset("nbytes") if counted else None
        if base:
            if start < base:
                raise _Unmapped
            iv = ff.index_view(n - base, v.header_len - base, v.nbytes, start - base,
                               end - base, True, nchunks, src, counted_at)
            self.index = iv = _new(ff.IndexView, (
                n, v.header_len, start, end, iv.fills, iv.nchunks, iv.absent, iv.chunk_nbytes,
                iv.chunk_cbytes, iv.decoded, iv.counted_at, iv.refused))
            sink.run(ff.INDEX_RULES, iv, None)
        else:
            self.index = iv = ff.index_view(n, v.header_len, v.nbytes, start, end, True,
                                            nchunks, src, counted_at)
            sink.run(ff.INDEX_RULES, iv, src)
        if not iv.absent and iv.chunk_cbytes is None:
            try:                     # no room for a chunk header: the chunk's own H1
                _chunk.chunk_sizes(self.buffer[start:end])
            except FormatError as e:
                raise _relocated(e, start, "frame.offsets") from None
        return start, end

    @property
    def entries(self) -> _Offsets:
        if self._offsets_read is None:
            self._offsets_read = self._read_offsets()
        return self._offsets_read

    def _read_offsets(self) -> _Offsets:
        v = self.fields
        start, end = self.index_span
        if self.index.absent:
            return _Offsets(b"")
        try:
            # the index is offsets of a few bytes each: no real one decodes to
            # more than this (a bound on what a lying header makes us allocate)
            raw = _chunk.decompress(self.buffer[start:end],
                                    max_nbytes=_LEN_ENTRY * (end - start) * 256)
        except UnsupportedError as e:      # F-index: never so written, damage
            self.index = self.index._replace(refused=_relocated(e, start, "frame.offsets"))
            RaiseFirst().run(ff.INDEX_RULES, self.index, self.buffer)
            raise AssertionError("F-index refuses an index it cannot decode") from e
        except FormatError as e:
            raise _relocated(e, start, "frame.offsets") from None
        self.index = self.index._replace(decoded=len(raw))
        RaiseFirst().run(ff.INDEX_RULES, self.index, self.buffer)
        if v.chunksize == 0 and v.nbytes:
            self.nchunks = len(raw) // _LEN_ENTRY
        at = _chunk_rules.raw_data_offset(_chunk_rules.raw_header(self.buffer, start))
        self._entries_at = None if at is None else start + at
        return _Offsets(raw)

    @property
    def offsets(self) -> list[int | str]:
        """Each chunk's offset (from the end of the header; for an sframe the
        chunk file number), or "zeros" / "nan" / "uninit" for special chunks."""
        return [self._kind(i) if o < 0 else o for i, o in enumerate(self.entries)]

    def special(self, i: int) -> str | None:
        """The special kind of chunk ``i`` (None for a chunk stored as
        bytes), once its entry passes F-special-bits and F-special."""
        if self.entries[i] >= 0:
            return None
        e = self.entry_view(i)
        RaiseFirst().run(ff.SPECIAL_RULES, e, self.buffer)
        return e.kind

    def _kind(self, i: int) -> str:
        """The special kind of chunk ``i``, whose offset is negative."""
        kind = self.special(i)
        assert kind is not None      # F-special raises for a negative offset it cannot name
        return kind

    def entry_offset(self, i: int) -> int:
        """The byte offset of index entry ``i``: its own bytes in a raw
        (memcpyed) index, else the index chunk's start (a compressed entry
        has no offset of its own)."""
        self.entries
        if self._entries_at is not None:
            return self._entries_at + _LEN_ENTRY * i
        return self.index_span[0]

    @property
    def entries_stored_raw(self) -> bool:
        """The index stores its entries as they are (memcpyed)."""
        self.entries
        return self._entries_at is not None

    def entry_view(self, i: int) -> ff.EntryView:
        """Entry ``i`` with the frame's facts its rules read."""
        v = self.fields
        return ff.EntryView(i, self.entries[i], self.entry_offset(i), v.header_len,
                            v.header_len + v.cbytes, self.chunk_nbytes(i), v.typesize,
                            self.directory is not None)

    def chunk_nbytes(self, i: int) -> int | None:
        """Chunk ``i``'s uncompressed size, None when chunks vary in size."""
        if self.chunksize <= 0:
            return None
        if i == self.nchunks - 1 and self.nbytes % self.chunksize:
            return self.nbytes % self.chunksize
        return self.chunksize

    def check_index(self, i: int) -> int:
        i = _chunk.index_arg("chunk index", i)
        if not 0 <= i < self.nchunks:
            raise IndexError(f"chunk {i} of a frame with {self.nchunks} chunks")
        return i

    # -- chunks
    def locate(self, i: int) -> tuple[ff.EntryView, memoryview | None]:
        """Entry ``i`` checked, and the bytes of the chunk it points at (None
        for a special entry, whose kind and size the view holds): every
        rule of the entry and of where its chunk lies (F-special-bits,
        F-special, F-offset, F-sframe, F-chunk); ``view.start`` is where the
        chunk starts (in a sparse frame: in its own file)."""
        e = self.entry_view(i)
        sink = RaiseFirst()
        if e.entry < 0:
            sink.run(ff.SPECIAL_RULES, e, self.buffer)
            return e, None
        if self.directory is not None:
            path = self.directory / ff.chunk_file_name(e.entry)
            try:
                data = memoryview(path.read_bytes())
            except OSError as err:
                e.file_error = err.strerror
            sink.run(ff.LOCATION_RULES, e, self.buffer)
            e.start = 0
            e.lazy = _chunk_rules.marked_lazy(data)
            sink.run(ff.CHUNK_RULES, e, self.buffer)
            return e, data
        sink.run(ff.LOCATION_RULES, e, self.buffer)
        e.start = start = e.header_len + e.entry
        if start + _LEN_CHUNK_HEADER <= len(self.buffer):
            e.cbytes = _CHUNK_HEADER(self.buffer, start)[_CHUNK_CBYTES]
        else:        # the chunk's own rules say what is missing
            try:
                e.cbytes = _chunk.chunk_sizes(self.buffer[start:start + _LEN_CHUNK_HEADER])[1]
            except FormatError as err:
                raise _relocated(err, start, e.chunk_path) from None
        e.lazy = _chunk_rules.marked_lazy(
            self.buffer[start:max(start, min(start + e.cbytes, e.section_end))])
        sink.run(ff.CHUNK_RULES, e, self.buffer)
        return e, self.buffer[start:start + e.cbytes]

    @property
    def variable_size(self) -> bool:
        """The chunks vary in size (chunksize 0): the offsets index counts them."""
        return self.chunksize == 0 and self.nbytes > 0

    def check_total(self, total: int, sink: Sink | None = None) -> None:
        """F-nbytes: the chunks of a variable-size frame hold ``total``
        bytes, the header's nbytes."""
        view = ff.TotalView(self.fields.layout, self.nbytes, total)
        (sink or RaiseFirst()).run(ff.TOTAL_RULES, view, self.buffer)

    def chunk_cap(self, e: ff.EntryView) -> int:
        """The most bytes the chunk of entry ``e`` may decode to: the frame's
        chunk size, or in a variable-size frame its nbytes (a chunk claiming
        more is refused by its own T-max-nbytes before anything is
        allocated; the chunks together are checked by F-nbytes)."""
        if e.size is not None:
            return e.size
        return min(_chunk.MAX_NBYTES, max(self.nbytes, 0))

    def check_nbytes(self, e: ff.EntryView, nbytes: int, sink: Sink | None = None) -> None:
        """F-chunk: the chunk of entry ``e`` holds ``nbytes`` bytes, the
        frame's chunk size (the last chunk may hold fewer)."""
        e.nbytes = nbytes
        (sink or RaiseFirst()).run(ff.CHUNK_RULES, e, self.buffer)

    def chunk(self, i: int) -> bytes:
        """Chunk ``i`` as stored (a special offset comes back as the
        equivalent special chunk)."""
        i = self.check_index(i)
        e, view = self.locate(i)
        if view is None:
            return special_chunk(e.kind, e.size, self.typesize)
        return bytes(view)

    def special_nbytes(self, i: int, kind: str) -> int:
        """The decoded size of special chunk ``i`` (its entry passed F-special
        in :meth:`special`)."""
        size = self.chunk_nbytes(i)
        assert size is not None
        return size

    def chunk_view(self, i: int) -> tuple[int, memoryview]:
        """``(where chunk i starts, its bytes)`` for an entry that is no
        special offset (see :meth:`locate`)."""
        e, view = self.locate(i)
        assert view is not None, "a special entry has no bytes"
        return e.start, view

    def decompress_chunk(self, i: int, *, nthreads: int = 1) -> bytes:
        """The data of chunk ``i`` (bytes)."""
        i = self.check_index(i)
        e, view = self.locate(i)
        if view is None:
            return _special_bytes(e.kind, e.size, self.typesize)
        try:
            data = _chunk.decompress(view, nthreads=nthreads,
                                     max_nbytes=self.chunk_cap(e))
        except FormatError as err:
            raise _relocated(err, e.start, e.chunk_path) from None
        self.read_through(len(view))
        self.check_nbytes(e, len(data))
        return data

    def decompress(self, *, nthreads: int = 1, max_nbytes: int | None = MAX_NBYTES) -> bytes:
        """Every chunk's data in chunk order (what python-blosc2's
        ``schunk[:]`` returns).  ``max_nbytes`` (bytes; None: no cap) caps
        the output: a frame whose ``nbytes`` is above it raises FormatError
        (T-max-nbytes) before anything is allocated (special chunks stand for
        data of any size; :meth:`iter_decompress` streams any size).  The
        output is allocated once the first piece has decoded, and filled
        piece by piece: memory holds it and one piece."""
        return joined(self.iter_decompress(nthreads=nthreads, max_nbytes=max_nbytes),
                      self.nbytes)

    def iter_decompress(self, *, nthreads: int = 1, max_nbytes: int | None = None
                        ) -> Iterator[bytes | bytearray]:
        """The data of :meth:`decompress` in pieces of whole chunks, at most
        about 8 MiB each (one chunk when chunks are larger): memory holds
        one piece, whatever the frame's size (no cap unless ``max_nbytes``
        is given), and the pages of a mapped file are given back as they
        are read.  Errors as :meth:`decompress`, raised when the piece that
        holds them is reached."""
        _chunk_rules.check_output_cap(self.nbytes, max_nbytes, OFFSETS["frame.header.nbytes"],
                                      "frame.header.nbytes")
        n, size, batch = self.nchunks, self.chunksize, self.native_batch()
        if batch is None:
            total = 0
            for i in range(n):
                data = self.decompress_chunk(i, nthreads=nthreads)
                total += len(data)
                if self.variable_size and total > self.nbytes:
                    self.check_total(total)         # F-nbytes now: more than announced
                yield data
            if self.variable_size:
                self.check_total(total)
            return
        section, last, table = batch
        raw = self.entries.raw
        # One native call per group of chunks; groups bound what a lying
        # header makes us allocate before the first chunk is found wrong.
        for a, b, tail in self.native_groups():
            out = bytearray(size * (b - a - 1) + tail)
            status = native.decode_chunks(section, raw[_LEN_ENTRY * a:_LEN_ENTRY * b], b - a,
                                          size, tail, table,
                                          nthreads, out)
            for k in (k for k, s in enumerate(status) if s != native.CHECK_OK):
                data = self.decompress_chunk(a + k, nthreads=nthreads)   # explains errors
                out[k * size:k * size + len(data)] = data
            yield out
            del out                  # the caller holds it: one piece, not two

    def native_groups(self) -> Iterator[tuple[int, int, int]]:
        """Runs of chunks for the native calls over many chunks (see
        :meth:`native_batch`): ``(a, b, tail)`` for chunks ``a`` to ``b``
        (exclusive) and the size of the run's last chunk, about 8 MiB of
        output each (one chunk when chunks are larger).  Once the caller
        asks for the next run, the pages of a mapped file read so far are
        given back."""
        n, size = self.nchunks, self.chunksize
        last = self.nbytes - size * (n - 1)
        per = max(1, _DECODE_GROUP // size)
        for a in range(0, n, per):
            b = min(n, a + per)
            yield a, b, last if b == n else size
            self.read_through(size * (b - a))

    def read_through(self, nbytes: int) -> None:
        """Say that ``nbytes`` more bytes of the frame have been read: a
        mapped file's pages are given back every 16 MiB or so (see
        :class:`Pages`)."""
        if self._pages is None:
            self._pages = Pages(self.buffer)
        self._pages.read(nbytes)

    def native_batch(self):
        """(chunks section, last chunk's nbytes, codec table) when the
        native calls over many chunks apply: a contiguous frame of fixed
        chunk size whose sizes agree, with the native reader built; else None."""
        table, n, size = _chunk.fast_table(), self.nchunks, self.chunksize
        last = self.nbytes - size * (n - 1)
        if table is None or self.directory is not None or size <= 0 or not n or not 0 < last <= size:
            return None
        return self.buffer[self.header_len:self.header_len + self.cbytes], last, table

    @property
    def vlmetalayers_raw(self) -> dict[str, bytes]:
        """The trailer's vlmetalayer values as stored (read on first use)."""
        if self._vlraw_read is None:
            tail, base = self._tail
            start, end = self.trailer_start + ff.LEN_TRAILER_HEAD, self.fields.frame_len
            root = "frame.trailer.vlmetalayers"
            if base:
                # read in the tail (offsets less base); anything it finds
                # wrong is looked at again in the whole frame, mapped
                at: dict[str, int] = {}
                odd: list[tuple[int, str, str]] = []
                try:
                    raw = read_metalayers(tail, start - base, end - base,
                                          self.trailer_start - base, root, at, odd)
                except FormatError:
                    self._tail = (self.buffer, 0)
                    return self.vlmetalayers_raw
                for k, a in at.items():
                    self.vlmetalayer_at[k] = a + base
                if odd:                  # (rare: no list built on the usual open)
                    self.odd_names += [(a + base, path, kind) for a, path, kind in odd]
                self._vlraw_read = raw
            else:
                self._vlraw_read = read_metalayers(tail, start, end, self.trailer_start, root,
                                                   self.vlmetalayer_at, self.odd_names)
        return self._vlraw_read

    @property
    def vlmetalayers(self) -> dict[str, bytes]:
        """Name -> the stored value, decompressed (python-blosc2 stores msgpack)."""
        return {name: vlmeta_value(raw, self.vlmetalayer_at[name],
                                   f"frame.trailer.vlmetalayers[{name!r}]")
                for name, raw in self.vlmetalayers_raw.items()}

    # -- context manager
    def close(self) -> None:
        """Release the file mapping (nothing to do for bytes)."""
        if self._closer is not None:
            _unmap(self.buffer, self._closer)
            self._closer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Frame:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<Frame v{self.version} {self.nchunks} chunks, {self.nbytes} bytes, "
                f"codec {self.codec}, typesize {self.typesize}>")


class Pages:
    """The pages of a read-only file mapping, given back once about
    ``_GIVE_BACK`` bytes have been read through it.  Every page of a mapped
    file that has been read counts in the process's resident memory (RSS)
    until the mapping is closed, though it is the file's own page cache,
    which the kernel can drop and read again: without this, reading a
    frame file through once makes the process look as large as the file.
    Given back (``MADV_DONTNEED``), a page is read again from the page
    cache if needed.  Only a view of a whole read-only ``mmap`` qualifies
    (as :func:`open_frame` maps a path, and the command line its inputs):
    a private (copy-on-write) mapping would lose its writes."""
    __slots__ = ("mapping", "since")

    def __init__(self, mv: memoryview):
        obj = mv.obj
        whole = isinstance(obj, mmap.mmap) and mv.readonly and mv.nbytes == len(obj)
        self.mapping = obj if whole and hasattr(mmap, "MADV_DONTNEED") else None
        self.since = 0

    def read(self, nbytes: int) -> None:
        """``nbytes`` more bytes have been read through the mapping."""
        if self.mapping is None:
            return
        self.since += nbytes
        if self.since >= _GIVE_BACK and not self.mapping.closed:
            self.mapping.madvise(mmap.MADV_DONTNEED)
            self.since = 0


def _unmap(mv: memoryview, close) -> None:
    """Release a file mapping.  Views into it that are still alive (an
    error's traceback holds some) keep it open: it is then released with
    the last of them."""
    try:
        mv.release()
        close()
    except BufferError:
        pass


def vlmeta_value(raw, at: int, path: str) -> bytes:
    """The decoded value of the vlmetalayer stored as ``raw`` (the bin32's
    bytes, at frame offset ``at``, path ``path``): F-vlmeta and F-lazy,
    then the chunk's own rules, relocated."""
    RaiseFirst().run(ff.VALUE_RULES, ff.value_chunk_view(at, path, raw), raw)
    try:
        return _chunk.decompress(raw)
    except FormatError as e:
        raise e.relocated(at, path) from None


def special_chunk(kind: str, size: int, typesize: int, blocksize: int | None = None) -> bytes:
    """The special chunk a special entry of the frame stands for (``size``
    bytes of ``kind``, items of the frame's ``typesize``; F-special passed),
    recording ``blocksize`` (bytes; default: C-Blosc2's default parameters'),
    as an array's chunks record their blocks' size."""
    # C-Blosc2 caps a typesize above 255 to 1; zeros of partial items
    # (which it cannot build) are the same zeros with typesize 1
    ts = typesize if typesize <= 255 and size % typesize == 0 else 1
    return compress_special(kind, size, typesize=ts,
                            blocksize=None if blocksize is None else min(blocksize, size))


def _special_bytes(kind: str, size: int, typesize: int) -> bytes:
    """The data of a special entry (checked by ``Frame.special_nbytes``)."""
    if kind == "nan":
        unit = struct.pack("<f" if typesize == 4 else "<d", float("nan"))
        return unit * (size // typesize)
    return bytes(size)          # zeros, and uninit (zero-filled: deterministic)


def open_frame(src) -> Frame:
    """Open a Blosc2 frame: ``src`` is bytes-like (a cframe), a path to a
    contiguous frame file (mapped, not read), or a path to a sparse frame
    directory.  Only the header, the offsets index and the trailer are read
    now.  FormatError (with a frame offset and a ``frame...`` path) for a
    malformed frame."""
    if isinstance(src, (str, os.PathLike)):
        frame = _open_unmapped(src)
        if frame is not None:
            return frame
        try:
            mv, close = map_file(src)
        except OSError:
            if not os.path.isdir(src):
                raise
            p = Path(src)
            return Frame(_view((p / ff.SFRAME_INDEX).read_bytes()), directory=p)
        try:
            return Frame(mv, closer=close)
        except BaseException:
            if close is not None:
                _unmap(mv, close)
            raise
    return Frame(_view(src))


class _FileFrame(Frame):
    """A frame opened by :func:`_open_unmapped`: its file is mapped when
    its bytes are first asked for."""

    # (a class-level __getattr__ would slow every attribute of every Frame)
    @functools.cached_property
    def buffer(self) -> memoryview:               # type: ignore[override]
        """The frame's bytes: its file, mapped on first use."""
        mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        self._closer = mm.close
        return memoryview(mm)


class _Unmapped(Exception):
    """The parts :func:`_open_unmapped` read do not hold what the frame's
    header and trailer locate: the frame is opened mapped."""


_HEAD_BYTES = 4096           # read first: the fixed header and a few metalayers
_TAIL_MAX = 256 << 10        # an index and a trailer longer than this: opened mapped


def _sizes_reader(lay) -> Callable[[Any], tuple[int, int]]:
    """(header_len, cbytes) as a header of layout ``lay`` says, read with
    no check (struct.error when the buffer is too short)."""
    unpack = lay.struct.unpack_from
    get = operator.itemgetter(lay["header_len"].index, lay["cbytes"].index)
    return lambda buf: get(unpack(buf))


_HEADER_LEN_CBYTES = {n: _sizes_reader(lay) for n, lay in ff.FLAT_HEADERS.items()}


def _open_unmapped(path) -> Frame | None:
    """A contiguous frame file opened by reading its header, its index's
    header and its trailer (two or three reads, each of a few KiB): a file
    mapping costs more than all the rest of opening, and many opens read
    no chunk.  The file is mapped when the frame's bytes are first asked
    for (``Frame.buffer``).  None for anything else (a directory, a file
    that is no such frame, one that cannot be read, a long index): the
    mapped path opens it and raises its errors."""
    try:
        fh = io.FileIO(path, "r")
    except OSError:
        return None
    try:
        fd = fh.fileno()
        n = os.lseek(fd, 0, os.SEEK_END)       # the size, a cheaper call than fstat
        head = os.pread(fd, min(n, _HEAD_BYTES), 0)
        layout = ff.header_layout(head[0]) if head else None
        if layout is None:
            raise _Unmapped
        header_len, cbytes = _HEADER_LEN_CBYTES[layout](head)
        if len(head) < header_len <= n:
            head = os.pread(fd, header_len, 0)
        base = header_len + cbytes         # where the index lies
        if not 0 < base < n or n - base > _TAIL_MAX or len(head) < header_len:
            raise _Unmapped
        frame = _FileFrame.__new__(_FileFrame)
        frame._file = fh
        frame._read_parts(memoryview(head), memoryview(os.pread(fd, n - base, base)), base, n,
                          None, None)
        return frame
    except Exception:        # read again, mapped: the same errors as ever
        fh.close()
        return None


def map_file(path) -> tuple[memoryview, Callable[[], None] | None]:
    """The bytes of the file at ``path``, mapped read-only (not read: pages
    come in as they are touched, and readers give them back as they go, see
    :class:`Pages`), and what closes the mapping (None for an empty file or
    one that cannot be mapped, a pipe: read whole).  OSError when the file
    cannot be read (a directory included)."""
    # os.open, not open(): no file object is made (opening is on the path
    # of every open_frame)
    fd = os.open(path, _O_READ)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            with open(fd, "rb", closefd=False) as fh:
                return memoryview(fh.read()), None
        if st.st_size == 0:
            return memoryview(b""), None
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    return memoryview(mm), mm.close


@contextlib.contextmanager
def mapped_file(path) -> Iterator[memoryview]:
    """:func:`map_file` for the length of a ``with`` block."""
    mv, close = map_file(path)
    try:
        yield mv
    finally:
        if close is not None:
            _unmap(mv, close)
