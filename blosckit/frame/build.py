"""Building Blosc2 frames: contiguous frames from compressed chunks or from
data (sparse frame directories: :mod:`.sframe`).

The frame is assembled in one pass: each chunk's header is read through the
fast formats (nothing is decoded), special chunks become special offsets,
and header, chunks, offsets index and trailer are joined once, so 10,000
chunks take milliseconds.  Every structure is built through its declaration
in :mod:`blosckit.formats.frame`; the offsets index is compressed as
C-Blosc2 compresses it when it appends chunks (blosclz, level 5, typesize 8,
shuffle, 16 KiB blocks, never split), so python-blosc2's own frames are
reproduced byte for byte where the inputs allow.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ..chunk.encode import compress
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff

__all__ = ["build_frame", "compress_frame", "compress_index"]

FRAME_VERSION = 2            # what C-Blosc2 3.3 writes for regular chunks
FRAME_VERSION_VL = 3         # frames of VL-block chunks
OFFSETS_64BIT = 1
SPLITMODE_CODES = {"always": 0, "never": 1, "auto": 2, "forward_compat": 3}
INDEX_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",),
                     splitmode="never", blocksize=16 * 1024)
# special kind of a chunk header -> the special offset that stands for it
_SPECIAL_OFFSET_CODES = {code: ff.special_offset(name) for code, name in enums.SPECIALS.items()
                         if name in ff.SPECIAL_KIND_BITS}
# vlmetalayer values: C-Blosc2's default compression parameters
_VLMETA_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",))
_MAP_HEAD = ff.FAST_META_HEAD.size - ff.FAST_META_HEAD.offset("map_marker")
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


def _section(items: Mapping[str, bytes], section_start: int, idx_extra: int) -> bytes:
    """The metalayer section starting ``section_start`` bytes after the
    point offsets count from.  ``idx_extra``: C-Blosc2's index size counts
    one byte more in the header than in the trailer."""
    if len(items) > ff.MAX_METALAYERS:
        raise ValueError(f"at most {ff.MAX_METALAYERS} metalayers, got {len(items)}")
    names = []
    for name in items:
        raw = name.encode()
        if not 0 < len(raw) <= 31:
            raise ValueError(f"metalayer name {name!r}: 1..31 bytes (a msgpack fixstr)")
        names.append(raw)
    entry_sizes = [ff.meta_entry_size(len(n)) for n in names]
    values_at = section_start + ff.FAST_META_HEAD.size + sum(entry_sizes) + ff.FAST_VALUES_HEAD.size
    index, values, pos = [], [], values_at
    for raw_name, value in zip(names, items.values()):
        value = bytes(value)
        index.append(dict(name_marker=dict(kind=ff.FIXSTR_KIND, len_name=len(raw_name)),
                          name=raw_name, offset=pos))
        values.append(ff.MetaValue.build(dict(len_content=len(value), content=value)))
        pos += ff.LEN_META_VALUE_HEAD + len(value)
    # idx counts the map's head, the entries and the values' head
    idx = _MAP_HEAD + sum(entry_sizes) + ff.FAST_VALUES_HEAD.size + idx_extra
    section = ff.Metalayers.build(dict(idx=idx,
                                       num_metalayers=len(index), index=index,
                                       num_values=len(values)))
    return section + b"".join(values)


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
                clevel: int = 5, splitmode: str = "auto", layout: int = 14) -> bytes:
    """A current-version contiguous frame holding ``chunks`` (compressed
    Blosc chunks, bytes-like) in order.

    Header parameters (typesize, codec, filters, block size) come from the
    first chunk; ``chunksize`` defaults to its uncompressed size (every chunk
    but the last must be that long; the last one no longer).  Zeros, NaN
    and uninit special chunks are stored as special offsets.  ``metalayers``:
    name -> raw bytes (python-blosc2 decodes them as msgpack);
    ``vlmetalayers``: name -> bytes, each stored as a Blosc chunk of them (as
    python-blosc2 stores its msgpack).  ``clevel`` and ``splitmode`` are
    recorded in the header for writers that append later.  ``layout``
    picks the header layout: 14 elements (current), or 13 / 12 / 11, the
    layouts of the older frame documents, for testing readers against them:
    their header bytes are those C-Blosc2 wrote then (13: frame version 1,
    2.0.0-beta.2 to Jan 2021; 12 with metalayers, 11 without: 2.0.0-beta.1;
    specs/frame.md, "Older layouts"), the chunks and the trailer today's.
    Their codec nibble holds ids 0..5 only (no udcodec byte).
    """
    _check_layout(layout, metalayers)
    views, headers = _read_chunks(chunks)
    if layout != 14 and headers and _codec_id(headers[0]) not in enums.CODEC_FORMAT:
        raise ValueError(f"codec id {_codec_id(headers[0])}: the older layouts have no udcodec "
                         "byte, their codec nibble holds ids 0..5")
    _check_recorded(clevel, splitmode)
    sizes = [h.nbytes for h in headers]
    chunksize = _chunksize(sizes, chunksize)
    offsets, stored, cbytes = _chunks_section(views, headers)
    index = compress_index(offsets)
    meta_section = _meta_section(metalayers or {}, layout)
    trailer_body = _trailer_body(vlmetalayers or {})
    trailer_len = len(trailer_body) + ff.LEN_TRAILER_TAIL
    header_len = ff.LEN_FIXED[layout] + len(meta_section)
    hdr = _header(headers, header_len=header_len,
                  frame_len=header_len + cbytes + len(index) + trailer_len,
                  nbytes=sum(sizes), cbytes=cbytes,
                  chunksize=chunksize, clevel=clevel, splitmode=splitmode,
                  has_vlmetalayers=bool(vlmetalayers))
    if layout != 14:
        _older_layout(hdr, layout, bool(metalayers))
    tail = ff.TrailerTail.build(dict(trailer_len=trailer_len, fingerprint_type=0,
                                     fingerprint=bytes(16)))
    return b"".join([ff.FRAME_HEADERS[layout].build(hdr), meta_section, *stored, index,
                     trailer_body, tail])


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


def _read_chunks(chunks: Iterable) -> tuple[list[bytes], list[fc.RawHeader]]:
    """Each chunk's bytes and header; ValueError for a chunk whose length
    is not the one its header says."""
    views, headers = [], []
    for k, c in enumerate(chunks):
        v = c if isinstance(c, bytes) else bytes(memoryview(c).cast("B"))
        if len(v) < fc.LEN_HEADER:
            raise ValueError(f"chunk {k}: {len(v)} bytes, a chunk has at least "
                             f"{fc.LEN_HEADER}")
        h = fc.raw_header(v)
        if h.cbytes != len(v) or h.nbytes < 0:
            raise ValueError(f"chunk {k}: {len(v)} bytes where its header says {h.cbytes}")
        views.append(v)
        headers.append(h)
    return views, headers


def _chunksize(sizes: list[int], chunksize: int | None) -> int:
    """The frame's chunk size (bytes; default: the first chunk's, -1 with
    no chunk); ValueError when a chunk but the last differs from it or the
    last is longer."""
    if chunksize is None:
        chunksize = sizes[0] if sizes else -1
    for k, n in enumerate(sizes):
        if n > chunksize or (n != chunksize and k != len(sizes) - 1):
            raise ValueError(f"chunk {k} holds {n} bytes; chunks hold {chunksize} "
                             "(only the last may be shorter)")
    return chunksize


def _chunks_section(views: list[bytes], headers: list[fc.RawHeader]
                    ) -> tuple[list[int], list[bytes], int]:
    """The offsets index entries, the chunks stored and their bytes: zeros,
    NaN and uninit chunks become special offsets and are not stored."""
    offsets, stored, pos = [], [], 0
    for v, h in zip(views, headers):
        code = _SPECIAL_OFFSET_CODES.get(h.special)
        if code is not None:
            offsets.append(code)
            continue
        offsets.append(pos)
        stored.append(v)
        pos += len(v)
    return offsets, stored, pos


def _meta_section(metalayers: Mapping[str, bytes], layout: int) -> bytes:
    """The header's metalayer section (none in the 11-element layout)."""
    if layout not in ff.LAYOUT_WITH_METALAYERS:
        return b""
    return _section(metalayers, ff.LEN_FIXED[layout], 1)


def _trailer_body(vlmetalayers: Mapping[str, bytes]) -> bytes:
    """The trailer up to its fixed tail: its version and the vlmetalayers,
    each value stored as a chunk."""
    items = {name: compress(bytes(value), **_VLMETA_PARAMS)
             for name, value in vlmetalayers.items()}
    return ff.TrailerHead.build(dict(version=1)) + _section(items, ff.LEN_TRAILER_HEAD, 0)


def _header(headers: list[fc.RawHeader], *, header_len: int, frame_len: int, nbytes: int,
            cbytes: int, chunksize: int, clevel: int, splitmode: str, has_vlmetalayers: bool
            ) -> dict[str, Any]:
    """The current layout's header fields; the parameters of the chunks
    come from the first chunk's header (lengths and sizes in bytes)."""
    first = headers[0] if headers else None
    vl = first is not None and first.vl_blocks
    codec = _codec_id(first) if first is not None else 0
    return dict(
        header_len=header_len, frame_len=frame_len,
        general_flags=dict(vl_blocks=vl, variable_chunks=False, offsets_size=OFFSETS_64BIT,
                           version=FRAME_VERSION_VL if vl else FRAME_VERSION),
        frame_type=0,
        codec_flags=dict(clevel=clevel, codec=codec if codec <= _CODEC_NIBBLE.mask else
                         enums.COMPFORMAT_UDCODEC),
        other_flags=dict(reserved=0, splitmode=SPLITMODE_CODES[splitmode]),
        nbytes=nbytes, cbytes=cbytes,
        typesize=first.typesize if first is not None else 1,
        # C-Blosc2's writer keeps the block size of the chunk appended last
        blocksize=headers[-1].blocksize if headers else 0,
        chunksize=chunksize, nthreads_c=0, nthreads_d=1,
        has_vlmetalayers=0xC3 if has_vlmetalayers else 0xC2,
        filter_pipeline=_pipeline(first),
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


def compress_frame(src, *, chunksize: int, typesize: int | None = None,
                   codec: str = "blosclz", clevel: int = 5, filters=("shuffle",),
                   metalayers: Mapping[str, bytes] | None = None,
                   vlmetalayers: Mapping[str, bytes] | None = None, nthreads: int = 1,
                   progress: Callable[[int], None] | None = None) -> bytes:
    """``src`` (bytes-like) cut into chunks of ``chunksize`` bytes, each
    compressed with :func:`blosckit.compress`, as one contiguous frame.
    ``progress``, when given, is called with the input bytes of each chunk
    once it is compressed."""
    view = memoryview(src)
    if typesize is None:
        typesize = view.itemsize
    view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    if not isinstance(chunksize, int) or chunksize <= 0 or chunksize % typesize:
        raise ValueError(f"chunksize must be a positive multiple of typesize {typesize}, "
                         f"got {chunksize!r}")
    chunks = []
    for i in range(0, len(view), chunksize):
        part = view[i:i + chunksize]
        chunks.append(compress(part, typesize=typesize, codec=codec, clevel=clevel,
                               filters=filters, nthreads=nthreads))
        if progress is not None:
            progress(len(part))
    return build_frame(chunks, metalayers=metalayers, vlmetalayers=vlmetalayers,
                       chunksize=chunksize, clevel=clevel)
