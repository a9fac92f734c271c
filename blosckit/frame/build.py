"""Building Blosc2 frames: contiguous frames from compressed chunks
(streaming them to a file: :mod:`.writer`; sparse frame directories:
:mod:`.sframe`).

A frame is assembled in one pass by :class:`FrameAssembler`: each chunk's
header is read through the fast formats (nothing is decoded), special chunks
become special offsets, and the fixed header is made last, once the sizes
are known, so 10,000 chunks take milliseconds and a frame far larger than
memory can be written chunk by chunk.  :func:`build_frame` joins the pieces
in memory, :class:`~blosckit.frame.writer.FrameWriter` writes them to a file
as they come: one code path, the same bytes.  Every structure is built
through its declaration in :mod:`blosckit.formats.frame`; the offsets index
is compressed as C-Blosc2 compresses it when it appends chunks (blosclz,
level 5, typesize 8, shuffle, 16 KiB blocks, never split), so python-blosc2's
own frames are reproduced byte for byte where the inputs allow.

Chunk sizes follow C-Blosc2's append rule (specs/frame.md, "Variable-size
chunks"): the first chunk sets the chunk size unless one is given; every
chunk holds that many bytes but the last, which may hold fewer; a chunk
after a shorter one, or longer than the chunk size, makes the frame a
variable-size one for good (header chunksize 0, the variable_chunks general
flag, frame format version 3).
"""
from __future__ import annotations

import operator
from array import array
from itertools import islice
from typing import Any, Iterable, Mapping

from .. import native
from ..chunk.encode import compress
from ..chunk.read import parse_chunk
from ..errors import FormatError
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff

__all__ = ["build_frame", "compress_index", "FrameAssembler", "vlmeta_chunk",
           "stored_trailer_body", "SPECIAL_OFFSET_CODES", "PYTHON_BLOSC2_VLMETA_PARAMS"]

FRAME_VERSION = 2            # what C-Blosc2 3.3 writes for regular chunks
FRAME_VERSION_VL = 3         # frames of VL-block chunks or of variable-size chunks
NO_CHUNKSIZE = -1            # the header's chunksize before any chunk (C-Blosc2's "unset")
OFFSETS_64BIT = 1
SPLITMODE_CODES = {"always": 0, "never": 1, "auto": 2, "forward_compat": 3}
INDEX_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",),
                     splitmode="never", blocksize=16 * 1024)
# special kind of a chunk header -> the special offset that stands for it
SPECIAL_OFFSET_CODES = {code: ff.special_offset(name) for code, name in enums.SPECIALS.items()
                         if name in ff.SPECIAL_KIND_BITS}
# vlmetalayer values: C-Blosc2's default compression parameters
_VLMETA_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",))
# what python-blosc2 compresses a vlmetalayer it sets with: its default
# parameters (zstd, level 5, shuffle) for items of one byte
PYTHON_BLOSC2_VLMETA_PARAMS: dict[str, Any] = dict(typesize=1, codec="zstd", clevel=5,
                                                   filters=(None,) * 5 + ("shuffle",),
                                                   splitmode="auto")
_MAP_HEAD = ff.FAST_META_HEAD.size - ff.FAST_META_HEAD.offset("map_marker")
# the fixstr marker byte of a metalayer name, by its length
_NAME_MARKERS = [bytes([ff.fixstr_marker(n)])
                 for n in range(ff.NAME_MARKER["name_marker.len_name"].mask + 1)]
_FORMAT_TO_CODEC = {f: c for c, f in enums.CODEC_FORMAT.items() if c != 2}   # lz4 for format 1
_CODEC_NIBBLE = ff.HEADER["codec_flags.codec"]
# What C-Blosc2's writers of the older layouts put in the header, whatever
# the data (specs/frame.md, "Older layouts"): general_flags 0x24 in
# 2.0.0-beta.1 (12 and 11 elements), 0x21 from beta.2 to Jan 2021 (13);
# beta.1's filter_flags 0x06 (shuffle, split); one thread each way, the
# default compression and decompression parameters of those releases.
_BETA1_GENERAL_FLAGS = dict(vl_blocks=False, variable_chunks=False, offsets_size=2, version=4)
_OLD_GENERAL_FLAGS = {13: dict(_BETA1_GENERAL_FLAGS, version=1), 12: _BETA1_GENERAL_FLAGS,
                      11: _BETA1_GENERAL_FLAGS}
_BETA1_FILTER_FLAGS = dict(reserved=0, shuffle=enums.lookup(enums.FILTERS, "shuffle"), split=True,
                           memcpyed=False)
_OLD_NTHREADS = 1


def _section(items: Mapping[str, bytes] | Mapping[str | bytes, bytes], section_start: int,
             idx_extra: int, *, idx: int | None = None,
             offsets: Mapping[Any, int | None] | None = None,
             lengths: Mapping[Any, int | None] | None = None, check: bool = True) -> bytes:
    """The metalayer section starting ``section_start`` bytes after the
    point offsets count from.  ``idx_extra``: C-Blosc2's index size counts
    one byte more in the header than in the trailer.  Names are str (UTF-8;
    lone surrogates stand for bytes that are not) or bytes.  ``idx``, and
    per name ``offsets`` (where its bin32 starts) and ``lengths`` (the
    bin32's length, bytes), are written as given where not None (the
    composer's lies: :mod:`.parts`), else where the values lie.
    ``check=False`` also takes names of 0 bytes and more than 16 entries."""
    if check and len(items) > ff.MAX_METALAYERS:
        raise ValueError(f"at most {ff.MAX_METALAYERS} metalayers, got {len(items)}")
    names = []
    for name in items:
        raw = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else bytes(name)
        if not (1 if check else 0) <= len(raw) <= ff.NAME_MARKER["name_marker.len_name"].mask:
            raise ValueError(f"metalayer name {name!r}: 1..31 bytes (a msgpack fixstr)")
        names.append(raw)
    offsets, lengths = offsets or {}, lengths or {}
    entry_sizes = [ff.meta_entry_size(len(n)) for n in names]
    values_at = section_start + ff.FAST_META_HEAD.size + sum(entry_sizes) + ff.FAST_VALUES_HEAD.size
    # the pieces packed through the layouts (tests check them against
    # construct's ``Metalayers`` and ``MetaValue``)
    index, values, pos = [], [], values_at
    for key, raw_name, value in zip(items, names, items.values()):
        value = bytes(value)
        at = offsets.get(key)
        index += [_NAME_MARKERS[len(raw_name)], raw_name,
                  ff.FAST_ENTRY_TAIL.build({"offset": pos if at is None else at})]
        length = lengths.get(key)
        values += [ff.FAST_VALUE_HEAD.build({"len_content": len(value) if length is None
                                             else length}), value]
        pos += ff.LEN_META_VALUE_HEAD + len(value)
    if idx is None:
        # idx counts the map's head, the entries and the values' head
        idx = _MAP_HEAD + sum(entry_sizes) + ff.FAST_VALUES_HEAD.size + idx_extra
    head = ff.FAST_META_HEAD.build({"idx": idx, "num_metalayers": len(items)})
    values_head = ff.FAST_VALUES_HEAD.build({"num_values": len(items)})
    return b"".join([head, *index, values_head, *values])


def compress_index(offsets: list[int]) -> bytes:
    """The offsets index (one int64 entry per chunk) as C-Blosc2 compresses
    it; no chunk, no index."""
    if not offsets:
        return b""
    return compress(ff.pack_entries(offsets), **INDEX_PARAMS)


def _codec_id(h: fc.RawHeader) -> int:
    """The codec id of a chunk: the udcodec byte of a six-slot header holds
    it (telling lz4hc from lz4), else the stored format's codec."""
    if h.six_slots and (h.compformat == enums.COMPFORMAT_UDCODEC
                        or enums.CODEC_FORMAT.get(h.udcodec) == h.compformat):
        return h.udcodec
    return _FORMAT_TO_CODEC.get(h.compformat, 0)


def _pipeline(h: fc.RawHeader | None) -> dict:
    """The frame header's filter pipeline: the first chunk's slots (a
    six-slot header), else empty slots."""
    six = h is not None and h.six_slots
    empty = (0,) * fc.NUM_FILTER_SLOTS
    return dict(nfilters=fc.NUM_FILTER_SLOTS, filters=list(h.filters if six else empty),
                udcodec=h.udcodec if six else 0, compcode_meta=h.compcode_meta if six else 0,
                filters_meta=list(h.filters_meta if six else empty),
                other_flags2=dict(reserved=0, use_dict=False), reserved=0)


def build_frame(chunks: Iterable, *, metalayers: Mapping[str, bytes] | None = None,
                vlmetalayers: Mapping[str, bytes] | None = None, chunksize: int | None = None,
                clevel: int = 5, splitmode: str = "auto", layout: int = 14,
                empty_chunk=None) -> bytes:
    """A current-version contiguous frame holding ``chunks`` (compressed
    Blosc chunks, bytes-like) in order.

    Header parameters (typesize, codec, filters) come from the first chunk,
    the header's block size from the last (as python-blosc2's ``to_cframe``
    after ``append_data``).  ``chunksize`` (bytes) defaults to the first
    chunk's uncompressed size; chunks of other sizes make a variable-size
    frame as C-Blosc2 makes one (module docstring; ``chunksize=0`` asks for
    one whatever the sizes).  Zeros, NaN and uninit special chunks are
    stored as special offsets, except in a variable-size frame, where they
    are stored as chunks (C-Blosc2 cannot read special entries there:
    specs/frame.md, "Variable-size chunks").  ``metalayers``: name -> raw
    bytes (python-blosc2 decodes them as msgpack); ``vlmetalayers``: name ->
    bytes, each stored as a Blosc chunk of them (as python-blosc2 stores its
    msgpack).  ``clevel`` and ``splitmode`` are recorded in the header for
    writers that append later.  ``layout`` picks the header layout: 14
    elements (current), or 13 / 12 / 11, the layouts of the older frame
    documents, for testing readers against them: their header bytes are
    those C-Blosc2 wrote then (13: frame version 1, 2.0.0-beta.2 to Jan
    2021; 12 with metalayers, 11 without: 2.0.0-beta.1; specs/frame.md,
    "Older layouts"), the chunks and the trailer today's.  Their codec
    nibble holds ids 0..5 only (no udcodec byte).  ``empty_chunk``: for a
    frame without chunks, a chunk (an empty one) whose typesize, codec and
    filters the header takes, as C-Blosc2 takes its context's (default:
    typesize 1, blosclz, no filter).
    """
    frame = FrameAssembler(metalayers=metalayers, chunksize=chunksize, clevel=clevel,
                           splitmode=splitmode, layout=layout)
    body = frame.extend(chunks)
    empty = None if empty_chunk is None else fc.raw_header(_chunk_view(0, empty_chunk)[0])
    fixed, tail = frame.finish(vlmetalayers, empty)
    return b"".join([fixed, frame.meta_section, *body, *tail])


class FrameAssembler:
    """A contiguous frame put together one chunk at a time, holding nothing
    of a chunk once it is handed back: the offsets index entries (8 bytes
    per chunk), the headers of the first and the last chunk, and the special
    chunks a variable-size frame may yet have to store (a few dozen bytes
    each, identical ones once).

    The frame is, in order: ``header_len`` bytes of header (the fixed part,
    known only at the end, then :attr:`meta_section`), the pieces each
    :meth:`append` returns, then the pieces :meth:`finish` returns; the
    fixed part :meth:`finish` returns goes first.  ``chunksize`` (bytes) and
    the other parameters are those of :func:`build_frame`."""

    def __init__(self, *, metalayers: Mapping[str, bytes] | None = None,
                 chunksize: int | None = None, clevel: int = 5, splitmode: str = "auto",
                 layout: int = 14) -> None:
        _check_layout(layout, metalayers)
        _check_recorded(clevel, splitmode)
        if chunksize is not None and (type(chunksize) is not int or chunksize < 0):
            raise ValueError(f"chunksize must be a byte count >= 0 or None, got {chunksize!r}")
        self.layout, self.clevel, self.splitmode = layout, clevel, splitmode
        self.has_metalayers = bool(metalayers)
        self.meta_section = _meta_section(metalayers or {}, layout)
        self.header_len = ff.LEN_FIXED[layout] + len(self.meta_section)
        self.chunksize = chunksize          # None until the first chunk sets it
        self.variable = chunksize == 0      # variable-size chunks (for good once set)
        self.nbytes = 0                     # data bytes of the chunks so far
        self.cbytes = 0                     # bytes of the chunks section so far
        self.entries = array("q")           # the offsets index, entry per chunk
        self._given = bytearray()           # 1 where an entry was given
        self._count = 0
        self._first: fc.RawHeader | None = None      # the whole header, read once
        # the first chunk whose filter slots hold known filters: the header's
        # pipeline (a special chunk's slots are read by no one; damaged ones
        # would name a filter C-Blosc2 refuses, V14)
        self._pipe: fc.RawHeader | None = None
        self._last: fc.StoredChunk | None = None
        # special chunks behind special entries, stored should the frame
        # turn variable-size: (index, number of the distinct chunk)
        self._specials: dict[bytes, int] = {}
        self._special_at = array("q")
        self._special_of = array("q")

    @property
    def nchunks(self) -> int:
        """Chunks in the index so far (placed ones count up to the highest)."""
        return len(self.entries)

    def append(self, chunk, index: int | None = None) -> list:
        """Take one compressed chunk (bytes-like); return the byte pieces to
        store next in the chunks section (none for a special chunk, more
        than this one when the frame just turned variable-size).  ``index``:
        its place in the offsets index (default: after the last); places
        may come in any order, and :meth:`finish` wants every place below
        the highest filled.  The size rule sees chunks in the order they
        come.  ValueError, with nothing changed, for a bad chunk or place."""
        k = len(self.entries) if index is None else index
        if type(k) is not int or k < 0:
            raise ValueError(f"a chunk index is an int >= 0, got {index!r}")
        view, h = _chunk_view(k, chunk)
        if k < len(self._given) and self._given[k]:
            raise ValueError(f"chunk {k} is already in the frame")
        if self._first is not None and h.vl_blocks != self._first.vl_blocks:
            raise ValueError(f"chunk {k}: a frame holds VL-block chunks or regular ones, "
                             "not both (C-Blosc2 refuses the mix)")
        turns = self._turns_variable(k, h.nbytes)
        if k >= len(self.entries):
            grow = k + 1 - len(self.entries)
            self.entries.extend([0] * grow)
            self._given.extend(bytes(grow))
        pieces = self._go_variable() if turns else []
        self._given[k] = 1
        code = SPECIAL_OFFSET_CODES.get(h.special)
        ts = (self._first or fc.raw_header(view)).typesize
        if code is not None and not self.variable and h.nbytes % max(ts, 1) == 0:
            # (zeros of partial items stay stored: C-Blosc2 rebuilds no such
            # special entry, V16)
            self.entries[k] = code
            self._special_at.append(k)
            self._special_of.append(self._specials.setdefault(bytes(view), len(self._specials)))
        else:
            pieces.append(self._store(k, view))
        if self._first is None:
            self.chunksize = h.nbytes if self.chunksize is None else self.chunksize
            self._first = fc.raw_header(view)
        if self._pipe is None:
            head = fc.raw_header(view)
            if not any(f in enums.C_UNDEFINED_FILTERS for f in head.filters):
                self._pipe = head
        self._last = h
        self._count += 1
        self.nbytes += h.nbytes
        return pieces

    def extend(self, chunks: Iterable) -> list:
        """:meth:`append` each of ``chunks`` after the last; the pieces to
        store, in order.  Once the frame is fixed-size with a full chunk
        last, chunks of its size that are not special take a short path:
        their headers are read by one native call per batch of chunks
        (frames of many small chunks build at the speed of copying their
        headers); any other chunk goes through :meth:`append`."""
        out: list = []
        it = iter(chunks)
        while batch := list(islice(it, _BATCH)):
            run = _Batch(batch)
            i, n = 0, len(batch)
            while i < n:
                last = self._last
                if last is not None and not self.variable and last.nbytes == self.chunksize:
                    i += self._take_full_chunks(run, i, out)
                    if i == n:
                        break
                out += self.append(batch[i])
                i += 1
        return out

    def _take_full_chunks(self, run: _Batch, start: int, out: list) -> int:
        """Store the chunks of ``run`` from ``start`` on while they are
        plain chunks of the frame's size (bytes or flat memoryviews, sizes
        as their headers say); how many were stored."""
        assert self._first is not None           # extend takes this path after a chunk
        vl = self._first.vl_blocks
        if run.heads is None:                    # chunks of mixed kinds, or short ones
            return self._take_one_by_one(run.chunks, start, out, vl)
        k = native.plain_chunks(run.heads, run.lens, start, self.chunksize, vl,
                                _ODD_VERSIONS, self.cbytes, run.offsets)
        if k:
            end = start + k
            self.entries.extend(run.offsets[start:end])
            self._given.extend(_ONES[:k])       # (k <= _BATCH)
            out.extend(run.chunks[start:end])
            self.cbytes = run.offsets[end - 1] + run.lens[end - 1]
            self._took(k, run.chunks[end - 1])
        return k

    def _take_one_by_one(self, chunks: list, start: int, out: list, vl: bool) -> int:
        """:meth:`_take_full_chunks` a chunk at a time, for a batch the
        native call cannot take whole."""
        plain = fc.plain_chunk_test(self.chunksize, vl)
        put, given, keep = self.entries.append, self._given.append, out.append
        cbytes, count, last = self.cbytes, 0, None
        for k in range(start, len(chunks)):
            chunk = chunks[k]
            n = plain(chunk) if type(chunk) is bytes or _flat_bytes(chunk) else -1
            if n < 0:
                break
            put(cbytes)
            given(1)
            keep(chunk)
            cbytes += n
            count += 1
            last = chunk
        self.cbytes = cbytes
        if last is not None:
            self._took(count, last)
        return count

    def _took(self, count: int, last) -> None:
        """Count ``count`` plain chunks stored, ``last`` the last of them."""
        self.nbytes += count * self.chunksize
        self._count += count
        self._last = fc.stored_chunk(last)

    def _turns_variable(self, k: int, nbytes: int) -> bool:
        """Whether a chunk of ``nbytes`` coming now makes the frame
        variable-size: C-Blosc2's schunk append rule.  ValueError for a
        first chunk longer than a chunk size given (C-Blosc2 refuses it)."""
        if self.variable:
            return False
        size = nbytes if self.chunksize is None else self.chunksize
        if self._last is None:
            if nbytes > size:
                raise ValueError(f"chunk {k} holds {nbytes} bytes, more than the chunk size "
                                 f"{size} (C-Blosc2 refuses that; chunksize=0 asks for a "
                                 "variable-size frame)")
            return size == 0
        return self._last.nbytes < size or nbytes > size

    def _store(self, k: int, view) -> Any:
        self.entries[k] = self.cbytes
        self.cbytes += len(view)
        return view

    def _go_variable(self) -> list[bytes]:
        """Turn the frame variable-size: the special chunks so far become
        stored chunks (C-Blosc2 reads no special entry in such a frame),
        in the order they came; returns them."""
        self.variable = True
        distinct = list(self._specials)
        out = [self._store(k, distinct[i]) for k, i in zip(self._special_at, self._special_of)]
        self._specials.clear()
        self._special_at, self._special_of = array("q"), array("q")
        return out

    def finish(self, vlmetalayers: Mapping[str, bytes] | None = None,
               empty: fc.RawHeader | None = None) -> tuple[bytes, list]:
        """The fixed header (the frame's first ``LEN_FIXED`` bytes) and the
        pieces that end the frame: any chunk still to store, the offsets
        index and the trailer with ``vlmetalayers``.  ``empty``: a chunk
        header to take typesize, codec and filters from when the frame
        has no chunk (else: typesize 1, blosclz, no filter).  ValueError
        when a place below the highest has no chunk."""
        missing = self._given.find(0)
        if missing >= 0:
            raise ValueError(f"chunk {missing} of {len(self.entries)} was never given")
        first = self._first if self._first is not None else empty
        # an empty chunk is stored raw: its udcodec byte names the codec
        codec = _codec_id(self._first) if self._first is not None else \
            (empty.udcodec if empty is not None else 0)
        if self.layout != 14 and codec not in enums.CODEC_FORMAT:
            raise ValueError(f"codec id {codec}: the older layouts have no udcodec "
                             "byte, their codec nibble holds ids 0..5")
        tail = []
        if not self.variable and self._last is not None and self._last.nbytes == 0:
            # a fixed-size frame counts nbytes / chunksize chunks: an empty
            # last chunk would be lost (python-blosc2 writes that frame)
            tail = self._go_variable()
        index = compress_index(self.entries)
        trailer_body = _trailer_body(vlmetalayers or {})
        trailer_len = len(trailer_body) + ff.LEN_TRAILER_TAIL
        pipe = self._pipe if self._first is not None else empty
        hdr = _header(first, self._last, codec=codec, pipe=pipe, header_len=self.header_len,
                      frame_len=self.header_len + self.cbytes + len(index) + trailer_len,
                      nbytes=self.nbytes, cbytes=self.cbytes,
                      chunksize=self._header_chunksize(bool(vlmetalayers)), variable=self.variable,
                      clevel=self.clevel, splitmode=self.splitmode,
                      has_vlmetalayers=bool(vlmetalayers))
        if self.layout != 14:
            _older_layout(hdr, self.layout, self.has_metalayers)
        end = ff.FAST_TRAILER_TAIL.build(dict(trailer_len=trailer_len, fingerprint_type=0,
                                              fingerprint=bytes(16)))
        return ff.FLAT_HEADERS[self.layout].build(hdr), [*tail, index, trailer_body, end]

    def _header_chunksize(self, has_vlmetalayers: bool) -> int:
        """The header's chunksize: 0 for variable-size chunks; with no
        chunk, unset (-1), or the chunk size given when the frame has
        metalayers or vlmetalayers, as python-blosc2's ``to_cframe`` writes
        an empty super-chunk (it sets the size after creating the frame,
        and only a header rewritten since, for a metalayer, shows it)."""
        if self.variable:
            return 0
        if self._last is None:
            shown = self.chunksize is not None and (self.has_metalayers or has_vlmetalayers)
            return self.chunksize if shown else NO_CHUNKSIZE
        return self.chunksize


def _check_layout(layout: int, metalayers: Mapping[str, bytes] | None) -> None:
    if layout not in ff.FRAME_HEADERS:
        raise ValueError(f"layout must be one of {sorted(ff.FRAME_HEADERS)}, got {layout!r}")
    # 2.0.0-beta.1 wrote 12 elements when the frame had metalayers, else 11
    if layout == 11 and metalayers:
        raise ValueError("the 11-element layout has no metalayers")
    if layout == 12 and not metalayers:
        raise ValueError("the 12-element layout has metalayers (without: 11 elements)")


def _check_recorded(clevel: int, splitmode: str) -> None:
    """The parameters the header records for writers that append later."""
    if splitmode not in SPLITMODE_CODES:
        raise ValueError(f"unknown splitmode {splitmode!r}")
    if not 0 <= clevel <= 9:
        raise ValueError(f"clevel must be 0..9, got {clevel}")


_BATCH = 1 << 14             # chunks whose headers one native call reads
_ONES = b"\x01" * _BATCH
# chunk versions whose extended header has another layout (never plain chunks)
_ODD_VERSIONS = bytes(1 if v in fc.EXTENDED_LAYOUTS else 0 for v in range(256))
_HEAD = operator.itemgetter(slice(0, fc.LEN_EXTENDED))
_NDIM, _ITEMSIZE = operator.attrgetter("ndim"), operator.attrgetter("itemsize")
_CONTIGUOUS = operator.attrgetter("c_contiguous")


class _Batch:
    """Chunks :meth:`FrameAssembler.extend` takes together.  When they are
    all bytes, or all flat contiguous byte memoryviews, of ``LEN_EXTENDED``
    bytes or more each, :attr:`heads` holds the first ``LEN_EXTENDED``
    bytes of each end to end and ``lens`` their lengths, read with no
    Python step per chunk (else None: the chunks go one by one);
    ``offsets`` receives their index entries.  Read when first needed."""
    __slots__ = ("chunks", "lens", "offsets", "_heads", "_read")

    def __init__(self, chunks: list):
        self.chunks = chunks
        self.lens = self.offsets = self._heads = None
        self._read = False

    @property
    def heads(self) -> bytes | None:
        if not self._read:
            self._read = True
            chunks = self.chunks
            kinds = set(map(type, chunks))
            if kinds != {bytes} and not (kinds == {memoryview}
                                         and set(map(_NDIM, chunks)) == {1}
                                         and set(map(_ITEMSIZE, chunks)) == {1}
                                         and all(map(_CONTIGUOUS, chunks))):
                return None
            heads = b"".join(map(_HEAD, chunks))
            if len(heads) != fc.LEN_EXTENDED * len(chunks):
                return None                  # a chunk shorter than an extended header
            self._heads = heads
            self.lens = array("q", list(map(len, chunks)))
            self.offsets = array("q", bytes(len(heads) // fc.LEN_EXTENDED * self.lens.itemsize))
        return self._heads


def _flat_bytes(chunk) -> bool:
    """A memoryview whose length is its byte count (a frame's chunk views)."""
    return type(chunk) is memoryview and chunk.ndim == 1 and chunk.itemsize == 1


def _chunk_view(k: int, chunk) -> tuple[Any, fc.StoredChunk]:
    """Chunk ``k``'s bytes (not copied) and sizes.  A chunk shorter than
    its header says, or with sizes no reader takes, is the chunk reader's
    FormatError (path under ``chunks[k]``, offset in the chunk); bytes after
    its cbytes are not part of it (T-trailing) and are left out."""
    v = chunk if isinstance(chunk, bytes) else memoryview(chunk).cast("B")
    if len(v) >= fc.LEN_HEADER:
        h = fc.stored_chunk(v)
        if h.cbytes == len(v) and h.nbytes >= 0:
            return v, h
    try:
        parse_chunk(v)          # the reader says what is wrong with it
    except FormatError as e:
        raise e.relocated(0, f"chunks[{k}]") from None
    h = fc.stored_chunk(v)      # the reader took it: bytes past its cbytes
    return v[:h.cbytes], h


def _meta_section(metalayers: Mapping[str, bytes], layout: int) -> bytes:
    """The header's metalayer section (none in the 11-element layout)."""
    if layout not in ff.LAYOUT_WITH_METALAYERS:
        return b""
    return _section(metalayers, ff.LEN_FIXED[layout], 1)


def _trailer_body(vlmetalayers: Mapping[str, bytes]) -> bytes:
    """The trailer up to its fixed tail: its version and the vlmetalayers,
    each value stored as a chunk."""
    return stored_trailer_body({name: vlmeta_chunk(value)
                                for name, value in vlmetalayers.items()})


def vlmeta_chunk(value, params: Mapping[str, Any] = _VLMETA_PARAMS) -> bytes:
    """A vlmetalayer's value (bytes) stored as a chunk: compressed with
    ``params`` (default: C-Blosc2's default parameters; an edit passes
    :data:`PYTHON_BLOSC2_VLMETA_PARAMS`)."""
    return compress(bytes(value), **params)


def stored_trailer_body(stored: Mapping[Any, bytes], version: int = 1, **section: Any) -> bytes:
    """The trailer up to its fixed tail, the vlmetalayer values ``stored``
    as given (chunks, name -> chunk); ``section``: :func:`_section`'s
    overrides (the frame composer's)."""
    return ff.FAST_TRAILER_HEAD.build(dict(version=version)) + \
        _section(stored, ff.LEN_TRAILER_HEAD, 0, **section)


def _header(first: fc.RawHeader | None, last: fc.StoredChunk | None, *, codec: int,
            pipe: fc.RawHeader | None,
            header_len: int, frame_len: int, nbytes: int, cbytes: int, chunksize: int,
            variable: bool, clevel: int, splitmode: str, has_vlmetalayers: bool
            ) -> dict[str, Any]:
    """The current layout's header fields (lengths and sizes in bytes):
    typesize from ``first``'s header, filters from ``pipe``'s, the block
    size from ``last``'s (None: no chunk)."""
    vl = first is not None and first.vl_blocks
    return dict(
        header_len=header_len, frame_len=frame_len,
        general_flags=dict(vl_blocks=vl, variable_chunks=variable, offsets_size=OFFSETS_64BIT,
                           version=FRAME_VERSION_VL if vl or variable else FRAME_VERSION),
        frame_type=0,
        codec_flags=dict(clevel=clevel, codec=codec if codec <= _CODEC_NIBBLE.mask else
                         enums.COMPFORMAT_UDCODEC),
        other_flags=dict(reserved=0, splitmode=SPLITMODE_CODES[splitmode]),
        nbytes=nbytes, cbytes=cbytes,
        typesize=first.typesize if first is not None else 1,
        # python-blosc2's to_cframe keeps the block size its context used
        # last: that of the chunk appended last when it compressed them
        blocksize=last.blocksize if last is not None else 0,
        chunksize=chunksize, nthreads_c=0, nthreads_d=1,
        has_vlmetalayers=0xC3 if has_vlmetalayers else 0xC2,
        filter_pipeline=_pipeline(pipe),
    )


def _older_layout(hdr: dict[str, Any], layout: int, has_metalayers: bool) -> None:
    """Turn current header fields into those C-Blosc2's writers of an older
    layout wrote: no block size, byte 0x1C reserved (0), fixed general flags
    and thread counts.  13 elements (frame version 1): the filters in use
    packed at the front of the pipeline and counted by its type byte.  12
    and 11 (2.0.0-beta.1): fixed filter_flags instead of frame_type and the
    pipeline, and the bool at 0x3F says whether metalayers follow."""
    del hdr["blocksize"]
    hdr.update(general_flags=_OLD_GENERAL_FLAGS[layout],
               other_flags=dict(reserved=0, splitmode=0),
               nthreads_c=_OLD_NTHREADS, nthreads_d=_OLD_NTHREADS)
    if layout == 13:
        hdr["filter_pipeline"] = _packed_pipeline(hdr["filter_pipeline"])
        return
    del hdr["filter_pipeline"], hdr["frame_type"]
    hdr.update(filter_flags=_BETA1_FILTER_FLAGS, has_vlmetalayers=0xC3 if has_metalayers else 0xC2)


def _packed_pipeline(pipeline: dict) -> dict:
    """The 13-element layout's pipeline: the filters in use (with their
    metas) in slots 0.., the rest zero, the type byte their count.  The
    bytes today's layout calls udcodec, compcode_meta, other_flags2 and
    reserved were filter slots 6-7 and meta slots 6-7 then (always 0)."""
    used = [(f, m) for f, m in zip(pipeline["filters"], pipeline["filters_meta"]) if f]
    empty = [(0, 0)] * (fc.NUM_FILTER_SLOTS - len(used))
    return dict(pipeline, nfilters=len(used), filters=[f for f, _ in used + empty],
                filters_meta=[m for _, m in used + empty], udcodec=0, compcode_meta=0,
                other_flags2=dict(reserved=0, use_dict=False), reserved=0)
