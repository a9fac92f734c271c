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

import mmap
import os
import stat
import struct
from pathlib import Path
from typing import Any, Iterator

from ..chunk import read as _chunk
from .. import native
from .b2nd import B2nd
from ..chunk.special import compress_special
from ..formats import b2nd as fb
from ..errors import FormatError
from ..formats import ConstMismatch, enums, parse
from ..formats import chunk as _chunk_rules
from ..formats import frame as ff
from ..formats.rules import OFFSETS, RaiseFirst, Sink, fail

__all__ = ["Frame", "open_frame", "read_header", "read_metalayers", "FrameView"]

_OFFSET = ff.FAST_OFFSET
_LEN_ENTRY = ff.LEN_OFFSET                     # one index entry
_LEN_CHUNK_HEADER = _chunk_rules.LEN_HEADER
_NBYTES_AT = _chunk_rules.HEADER.offset("nbytes")   # in a chunk (the index is one)
_DECODE_GROUP = 32 << 20     # bytes of output per native decode call


class FrameView:
    """The header's fields the rules and the reader use (see formats/frame.py)."""
    __slots__ = ("n", "layout", "sparse", "version", "frame_type", "offsets_size",
                 "header_len", "frame_len", "nbytes", "cbytes", "typesize", "blocksize",
                 "chunksize", "nfilters", "has_vlmetalayers_byte", "codec", "clevel",
                 "udcodec", "filters", "filters_meta", "filter_shuffle")
    n: int                      # bytes available
    layout: int                 # header elements: 14, or 13 / 12 / 11 (older layouts)
    sparse: bool                # the index file of a sparse frame
    version: int
    frame_type: int
    offsets_size: int
    header_len: int
    frame_len: int
    nbytes: int
    cbytes: int
    typesize: int
    blocksize: int
    chunksize: int
    nfilters: int
    has_vlmetalayers_byte: int
    codec: int
    clevel: int
    udcodec: int
    filters: list[int]
    filters_meta: list[int]
    filter_shuffle: int


# Field -> getter over a layout's flat values (None: the layout lacks it).
_GET = {n: {name: (lay.getter(path) if path in lay.index else None)
            for name, path in (
                ("version", "general_flags.version"),
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
                ("filter_shuffle", "filter_flags.shuffle"))}
        for n, lay in ff.FLAT_HEADERS.items()}
_DEFAULTS = {"frame_type": 0, "blocksize": 0, "nfilters": 0, "udcodec": 0, "filters": [],
             "filters_meta": [], "filter_shuffle": 0}


def _view(src) -> memoryview:
    mv = memoryview(src)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def read_header(mv: memoryview, sink: Sink, sparse: bool) -> FrameView:
    """The header's view, read through the flat layout derived from its
    declaration (construct reads it instead where a marker differs or the
    input ends, to name the field); rules run into ``sink``."""
    n = len(mv)
    layout = ff.header_layout(mv[0]) if n else None
    if layout is None:
        fail(ff.F_LAYOUT, 0, None,
             "not a Blosc2 frame: no header fixarray of 11..14 elements"
             if n else "empty input: a frame starts with its header")
    try:
        values = ff.FLAT_HEADERS[layout].read(mv, 0)
    except (ConstMismatch, struct.error):
        # construct raises the FormatError naming the marker or the cut
        parse(ff.FRAME_HEADERS[layout], mv, 0, "frame.header", rule=ff.F_MARKER.id)
        fail(ff.F_MARKER, 0, None, "the header's markers disagree with its layout")
    v = FrameView()
    v.n, v.layout, v.sparse = n, layout, sparse
    for name, get in _GET[layout].items():
        setattr(v, name, get(values) if get is not None else _DEFAULTS[name])
    sink.run(ff.HEADER_RULES, v, mv)
    return v


def read_metalayers(mv: memoryview, start: int, limit: int, base: int, root: str,
                at: dict[str, int] | None = None,
                odd: list[tuple[int, str, str]] | None = None) -> dict[str, bytes]:
    """The metalayer section at ``start`` (values at offsets from ``base``,
    everything inside ``mv[:limit]``): name -> the value's raw bytes; ``at``
    receives where each value's bytes start, ``odd`` the offset, path and
    kind of each name other readers take otherwise: ``"not-utf8"`` (kept
    with U+FFFD in its place), ``"nul"`` (C-Blosc2 stops at the NUL byte).
    Read through the fast paths derived from the declarations; on any
    mismatch construct reads it again to name the field that is wrong."""
    scope = mv[:limit]
    try:
        entries = _meta_index_fast(scope, start)
    except (ConstMismatch, struct.error, IndexError):
        # construct raises the FormatError naming the field (or, should the
        # two ever disagree, its reading is the declaration's)
        m = parse(ff.Metalayers, scope, start, root, rule=ff.F_META.id)
        entries = [(ff.fixstr_marker(e.name_marker.len_name), e.name, e.offset)
                   for e in m.index]
    if len(entries) > ff.MAX_METALAYERS:
        fail(ff.F_META, start + ff.FAST_META_HEAD.offset("num_metalayers"),
             f"{root}.num_metalayers",
             f"{len(entries)} metalayers, at most {ff.MAX_METALAYERS}")
    out: dict[str, bytes] = {}
    name_at = start + ff.FAST_META_HEAD.size + ff.LEN_NAME_MARKER
    for k, (marker, raw_name, offset) in enumerate(entries):
        if ff.fixstr_len(marker) is None:
            fail(ff.F_META, start, f"{root}.index[{k}].name_marker",
                 f"byte {marker:#04x} where a msgpack fixstr belongs")
        name = raw_name.decode("utf-8", "replace")
        path = f"{root}[{name!r}]"
        if odd is not None:
            if "\ufffd" in name and _not_utf8(raw_name):
                odd.append((name_at, f"{root}.index[{k}].name", "not-utf8"))
            if 0 in raw_name:
                odd.append((name_at + raw_name.index(0), f"{root}.index[{k}].name", "nul"))
        name_at += ff.meta_entry_size(len(raw_name))
        ofs = base + offset
        if not 0 <= ofs < limit:
            fail(ff.F_META, start, path,
                 f"value offset {offset} points outside the section (0..{limit - base})")
        head = _fast_or_parse(ff.FAST_VALUE_HEAD, ff.MetaValue, scope, ofs, path, ff.F_META.id)
        end = ofs + ff.LEN_META_VALUE_HEAD + _LEN_CONTENT(head)
        if end > limit:       # construct says where the value's bytes run out
            parse(ff.MetaValue, scope, ofs, path, rule=ff.F_META.id)
        content = bytes(scope[ofs + ff.LEN_META_VALUE_HEAD:end])
        out[name] = content
        if at is not None:
            at[name] = ofs + ff.LEN_META_VALUE_HEAD
    return out


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _meta_index_fast(scope: memoryview, start: int) -> list[tuple[int, bytes, int]]:
    """``(name marker, name, offset)`` per index entry, through the fast
    parsers of the declaration's fixed parts."""
    head = ff.FAST_META_HEAD.read(scope, start)
    pos = start + ff.FAST_META_HEAD.size
    entries = []
    for _ in range(_NUM_METALAYERS(head)):
        marker = scope[pos]
        n = _LEN_NAME.of(marker)
        name_at = pos + ff.LEN_NAME_MARKER
        name = bytes(scope[name_at:name_at + n])
        if len(name) != n:
            raise struct.error("name runs past the section")
        tail = ff.FAST_ENTRY_TAIL.read(scope, name_at + n)
        entries.append((marker, name, _ENTRY_OFFSET(tail)))
        pos += ff.meta_entry_size(n)
    ff.FAST_VALUES_HEAD.read(scope, pos)
    return entries


_NUM_METALAYERS = ff.FAST_META_HEAD.getter("num_metalayers")
_LEN_NAME = ff.NAME_MARKER["name_marker.len_name"]
_ENTRY_OFFSET = ff.FAST_ENTRY_TAIL.getter("offset")
_LEN_CONTENT = ff.FAST_VALUE_HEAD.getter("len_content")
_TRAILER_LEN = ff.FAST_TRAILER_TAIL.getter("trailer_len")


def _fast_or_parse(flat, con, mv: memoryview, offset: int, path: str, rule: str) -> tuple:
    """``con``'s flat values at ``offset`` through the layout derived from
    it; where that refuses (a constant differs, the input ends) construct
    reads ``con`` to raise the FormatError that names the field."""
    try:
        return flat.read(mv, offset)
    except (ConstMismatch, struct.error):
        parse(con, mv, offset, path, rule=rule)
        fail(rule, offset, path, "the structure disagrees with its declaration")


def _trailer_start(mv: memoryview, v: FrameView) -> int:
    """Where the trailer starts, from its length at the end of the frame."""
    n = v.frame_len
    if n < ff.LEN_TRAILER_TAIL + v.header_len:
        fail(ff.F_TRAILER, len(mv), None, "the frame ends before its trailer")
    tail = _fast_or_parse(ff.FAST_TRAILER_TAIL, ff.TrailerTail, mv, n - ff.LEN_TRAILER_TAIL,
                          "frame.trailer", ff.F_TRAILER.id)
    trailer_len = _TRAILER_LEN(tail)
    if not ff.MIN_TRAILER_LEN <= trailer_len <= n - v.header_len:
        fail(ff.F_TRAILER, n - ff.LEN_TRAILER_TAIL + 1, "frame.trailer.trailer_len",
             f"trailer length {trailer_len} is outside {ff.MIN_TRAILER_LEN}.."
             f"{n - v.header_len}")
    start = n - trailer_len
    _fast_or_parse(ff.FAST_TRAILER_HEAD, ff.TrailerHead, mv, start, "frame.trailer",
                   ff.F_TRAILER.id)
    return start


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
        self.directory = directory
        self._closer = closer
        sparse = directory is not None
        self.fields = v = read_header(mv, RaiseFirst(), sparse)
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
        code = v.codec
        if code == enums.COMPFORMAT_UDCODEC and v.layout >= 13:
            code = v.udcodec
        self.codec = enums.codec_name(code)
        self.clevel = v.clevel
        if v.layout >= 13:
            self.filters = [(enums.filter_name(f), m) for f, m in
                            zip(v.filters, v.filters_meta) if f]
        else:       # the older layouts keep one shuffle choice in filter_flags
            self.filters = [(enums.filter_name(v.filter_shuffle), 0)] if v.filter_shuffle else []
        self.metalayers: dict[str, bytes] = {}
        self.metalayer_at: dict[str, int] = {}
        # (offset, path, kind) of metalayer and vlmetalayer names other readers
        # take otherwise (see read_metalayers)
        self.odd_names: list[tuple[int, str, str]] = []
        if v.layout in ff.LAYOUT_WITH_METALAYERS:
            self.metalayers = read_metalayers(mv, ff.LEN_FIXED[v.layout], v.header_len, 0,
                                          "frame.metalayers", self.metalayer_at,
                                          self.odd_names)
        self.trailer_start = _trailer_start(mv, v)
        self._vlraw_read: dict[str, bytes] | None = None
        self.vlmetalayer_at: dict[str, int] = {}
        self.index_span = self._index_span()
        self._offsets_read: _Offsets | None = None
        if v.chunksize == 0 and v.nbytes:
            self.entries             # chunks of varying size: the index counts them
        self._b2nd: B2nd | None = None

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
    def _index_span(self) -> tuple[int, int]:
        """Where the offsets index lies; its header is checked now, its
        entries are decoded on first use."""
        v = self.fields
        start = v.header_len + (0 if self.directory is not None else v.cbytes)
        end = self.trailer_start
        if v.nbytes == 0 and end == start:
            return start, end
        if not v.header_len <= start < end:
            fail(ff.F_INDEX, min(start, len(self.buffer)), None,
                 f"no room for the offsets index between {start} and the trailer at {end}")
        try:
            nbytes, cbytes, _ = _chunk.chunk_sizes(self.buffer[start:end])
        except FormatError as e:
            raise _relocated(e, start, "frame.offsets") from None
        if cbytes != end - start or (v.chunksize > 0 and nbytes != _LEN_ENTRY * self.nchunks):
            fail(ff.F_INDEX, start + _NBYTES_AT, "frame.offsets",
                 f"the index chunk ({cbytes} bytes for {nbytes // _LEN_ENTRY} offsets) does not fill "
                 f"the {end - start} bytes before the trailer with {self.nchunks} offsets")
        return start, end

    @property
    def entries(self) -> _Offsets:
        if self._offsets_read is None:
            self._offsets_read = self._read_offsets()
        return self._offsets_read

    def _read_offsets(self) -> _Offsets:
        v = self.fields
        start, end = self.index_span
        if v.nbytes == 0 and end == start:
            return _Offsets(b"")
        try:
            # the index is offsets of a few bytes each: no real one decodes to
            # more than this (a bound on what a lying header makes us allocate)
            raw = _chunk.decompress(self.buffer[start:end],
                                    max_nbytes=_LEN_ENTRY * (end - start) * 256)
        except FormatError as e:
            raise _relocated(e, start, "frame.offsets") from None
        if v.chunksize == 0 and v.nbytes:
            self.nchunks = len(raw) // _LEN_ENTRY
        if len(raw) != _LEN_ENTRY * self.nchunks:
            fail(ff.F_INDEX, start + _NBYTES_AT, "frame.offsets",
                 f"the index holds {len(raw) // _LEN_ENTRY} offsets for {self.nchunks} chunks")
        return _Offsets(raw)

    @property
    def offsets(self) -> list[int | str]:
        """Each chunk's offset (from the end of the header; for an sframe the
        chunk file number), or "zeros" / "nan" / "uninit" for special chunks."""
        return [self._kind(i) if o < 0 else o for i, o in enumerate(self.entries)]

    def special(self, i: int) -> str | None:
        o = self.entries[i]
        if o >= 0:
            return None
        kind = ff.special_kind(o)
        if kind is None:
            fail(ff.F_SPECIAL, self.entry_offset(i), f"frame.offsets[{i}]",
                 f"special offset {o & (2**64 - 1):#x} names no special kind")
        return kind

    def _kind(self, i: int) -> str:
        """The special kind of chunk ``i``, whose offset is negative."""
        kind = self.special(i)
        assert kind is not None      # _special raises for a negative offset it cannot name
        return kind

    def entry_offset(self, i: int) -> int:
        return self.index_span[0]

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
    def chunk(self, i: int) -> bytes:
        """Chunk ``i`` as stored (a special offset comes back as the
        equivalent special chunk)."""
        i = self.check_index(i)
        kind = self.special(i)
        if kind is not None:
            size = self.special_nbytes(i, kind)
            ts = self.typesize
            # C-Blosc2 caps a typesize above 255 to 1; zeros of partial items
            # (which it cannot build) are the same zeros with typesize 1
            ts = ts if ts <= 255 and size % ts == 0 else 1
            return compress_special(kind, size, typesize=ts)
        base, view = self.chunk_view(i)
        return bytes(view)

    def special_nbytes(self, i: int, kind: str) -> int:
        """The decoded size of special chunk ``i``, once the chunk it stands
        for passes the chunk layer's rules (NaN: typesize 4 or 8, D-nan;
        NaN and uninit: whole items, H10)."""
        size = self.chunk_nbytes(i)
        at, path = self.entry_offset(i), f"frame.offsets[{i}]"
        if size is None:
            fail(ff.F_SPECIAL, at, path, "a special offset in a frame whose chunks vary in size")
        ts = self.typesize
        if kind == "nan" and ts not in _chunk_rules.NAN_WIDTHS:
            fail(ff.F_SPECIAL, at, path, f"a NaN entry needs typesize 4 or 8, the frame's is {ts}")
        if kind != "zeros" and size % ts:
            fail(ff.F_SPECIAL, at, path, f"a {kind} entry of {size} bytes is not a whole number "
                 f"of {ts}-byte items")
        return size

    def chunk_view(self, i: int) -> tuple[int, memoryview]:
        o = self.entries[i]
        if self.directory is not None:
            path = self.directory / ff.chunk_file_name(o)
            try:
                return 0, memoryview(path.read_bytes())
            except OSError as e:
                fail(ff.F_SFRAME, self.entry_offset(i), f"frame.chunks[{i}]",
                     f"chunk file {path.name} cannot be read: {e.strerror}")
        v = self.fields
        start = v.header_len + o
        section_end = v.header_len + v.cbytes
        if not v.header_len <= start <= section_end - _LEN_CHUNK_HEADER:
            fail(ff.F_OFFSET, self.entry_offset(i), f"frame.offsets[{i}]",
                 f"offset {o} is outside the chunks section "
                 f"(0..{v.cbytes - _LEN_CHUNK_HEADER})")
        try:
            cbytes = _chunk.chunk_sizes(self.buffer[start:start + _LEN_CHUNK_HEADER])[1]
        except FormatError as e:
            raise _relocated(e, start, f"frame.chunks[{i}]") from None
        if not _LEN_CHUNK_HEADER <= cbytes <= section_end - start:
            fail(ff.F_CHUNK, start + _chunk_rules.HEADER.offset("cbytes"),
                 f"frame.chunks[{i}].header.cbytes",
                 f"chunk of {cbytes} bytes at {start} runs past the chunks section "
                 f"({section_end})")
        return start, self.buffer[start:start + cbytes]

    def decompress_chunk(self, i: int, *, nthreads: int = 1) -> bytes:
        """The data of chunk ``i`` (bytes)."""
        i = self.check_index(i)
        kind = self.special(i)
        if kind is not None:
            return _special_bytes(kind, self.special_nbytes(i, kind), self.typesize)
        size = self.chunk_nbytes(i)
        base, view = self.chunk_view(i)
        try:
            data = _chunk.decompress(view, nthreads=nthreads,
                                     max_nbytes=_chunk.MAX_NBYTES if size is None else size)
        except FormatError as e:
            raise _relocated(e, base, f"frame.chunks[{i}]") from None
        if size is not None and len(data) != size:
            fail(ff.F_CHUNK, base + _NBYTES_AT, f"frame.chunks[{i}].header.nbytes",
                 f"chunk {i} holds {len(data)} bytes, the frame's chunks hold {size}")
        return data

    def decompress(self, *, nthreads: int = 1, max_nbytes: int | None = None) -> bytes:
        """Every chunk's data in chunk order (what python-blosc2's
        ``schunk[:]`` returns).  ``max_nbytes`` caps the output: a frame
        whose ``nbytes`` is above it raises FormatError (T-max-nbytes) before
        anything is allocated (special chunks stand for data of any size)."""
        _chunk_rules.check_output_cap(self.nbytes, max_nbytes, OFFSETS["frame.header.nbytes"],
                                      "frame.header.nbytes")
        n, size, batch = self.nchunks, self.chunksize, self.native_batch()
        if batch is None:
            return b"".join(self.decompress_chunk(i, nthreads=nthreads) for i in range(n))
        section, last, table = batch
        # One native call per group of chunks; groups bound what a lying
        # header makes us allocate before the first chunk is found wrong.
        raw, per, parts = self.entries.raw, max(1, _DECODE_GROUP // size), []
        for a in range(0, n, per):
            b = min(n, a + per)
            tail = last if b == n else size
            out = bytearray(size * (b - a - 1) + tail)
            status = native.decode_chunks(section, raw[_LEN_ENTRY * a:_LEN_ENTRY * b], b - a,
                                          size, tail, table,
                                          nthreads, out)
            for k in (k for k, s in enumerate(status) if s != native.CHECK_OK):
                data = self.decompress_chunk(a + k, nthreads=nthreads)   # explains errors
                out[k * size:k * size + len(data)] = data
            parts.append(out)
        return b"".join(parts)

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
            self._vlraw_read = read_metalayers(self.buffer, self.trailer_start + ff.LEN_TRAILER_HEAD,
                                           self.fields.frame_len, self.trailer_start,
                                           "frame.trailer.vlmetalayers", self.vlmetalayer_at,
                                           self.odd_names)
        return self._vlraw_read

    @property
    def vlmetalayers(self) -> dict[str, bytes]:
        """Name -> the stored value, decompressed (python-blosc2 stores msgpack)."""
        out = {}
        for name, raw in self.vlmetalayers_raw.items():
            try:
                out[name] = _chunk.decompress(raw)
            except FormatError as e:
                raise e.relocated(self.vlmetalayer_at[name], f"frame.trailer.vlmetalayers[{name!r}]") \
                    from None
        return out

    # -- context manager
    def close(self) -> None:
        """Release the file mapping (nothing to do for bytes)."""
        if self._closer is not None:
            _unmap(self.buffer, self._closer)
            self._closer = None

    def __enter__(self) -> Frame:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<Frame v{self.version} {self.nchunks} chunks, {self.nbytes} bytes, "
                f"codec {self.codec}, typesize {self.typesize}>")


def _unmap(mv: memoryview, close) -> None:
    """Release a file mapping.  Views into it that are still alive (an
    error's traceback holds some) keep it open: it is then released with
    the last of them."""
    try:
        mv.release()
        close()
    except BufferError:
        pass


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
        st = os.stat(src)
        if stat.S_ISDIR(st.st_mode):
            p = Path(src)
            return Frame(_view((p / ff.SFRAME_INDEX).read_bytes()), directory=p)
        if st.st_size == 0:
            return Frame(memoryview(b""))
        fd = os.open(src, os.O_RDONLY)
        try:
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        mv = memoryview(mm)
        try:
            return Frame(mv, closer=mm.close)
        except BaseException:
            _unmap(mv, mm.close)
            raise
    return Frame(_view(src))
