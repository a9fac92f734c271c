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

import struct
from typing import Any, Callable, Iterable, Mapping

from ..chunk.encode import compress
from ..formats import chunk as fc
from ..formats import enums
from ..formats import frame as ff

__all__ = ["build_frame", "compress_frame", "INDEX_PARAMS"]

FRAME_VERSION = 2            # what C-Blosc2 3.3 writes for regular chunks
FRAME_VERSION_VL = 3         # frames of VL-block chunks
OFFSETS_64BIT = 1
SPLITMODE_CODES = {"always": 0, "never": 1, "auto": 2, "forward_compat": 3}
INDEX_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",),
                     splitmode="never", blocksize=16 * 1024)
# special kind of a chunk header -> the special offset that stands for it
_SPECIAL_OFFSET_CODES = {code: -(1 << 63) | (fcode << 56) for code, name in enums.SPECIALS.items()
                         for fcode, fname in ff.SPECIAL_KINDS.items() if name == fname}
# vlmetalayer values: C-Blosc2's default compression parameters
_VLMETA_PARAMS: dict[str, Any] = dict(typesize=8, codec="blosclz", clevel=5, filters=(None,) * 5 + ("shuffle",))
_FORMAT_TO_CODEC = {f: c for c, f in enums.CODEC_FORMAT.items() if c != 2}   # lz4 for format 1


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
    entry_sizes = [1 + len(n) + 1 + 4 for n in names]
    head = 1 + 3 + 3                                   # fixarray, uint16 idx, map16
    values_at = section_start + head + sum(entry_sizes) + 3
    index, values, pos = [], [], values_at
    for raw_name, value in zip(names, items.values()):
        value = bytes(value)
        index.append(dict(name_marker=0xA0 | len(raw_name), name=raw_name, offset=pos))
        values.append(ff.MetaValue.build(dict(len_content=len(value), content=value)))
        pos += 5 + len(value)
    section = ff.Metalayers.build(dict(idx=sum(entry_sizes) + 3 + 3 + idx_extra,
                                       num_metalayers=len(index), index=index,
                                       num_values=len(values)))
    return section + b"".join(values)


def _codec_id(chunk: memoryview) -> int:
    """The codec id of a chunk: the udcodec byte of a six-slot header holds
    it (telling lz4hc from lz4), else the stored format's codec."""
    compformat = chunk[2] >> 5
    if len(chunk) >= 32 and chunk[2] & fc.FLAGS_EXTENDED == fc.FLAGS_EXTENDED and chunk[0] >= 4:
        ud = chunk[fc.OFFSETS["chunk.header.extended.udcodec"]]
        if compformat == enums.COMPFORMAT_UDCODEC or enums.CODEC_FORMAT.get(ud) == compformat:
            return ud
    return _FORMAT_TO_CODEC.get(compformat, 0)


def _pipeline(chunk: memoryview) -> dict:
    if len(chunk) >= 32 and chunk[2] & fc.FLAGS_EXTENDED == fc.FLAGS_EXTENDED and chunk[0] >= 4:
        x = fc.FAST_EXTENDED.unpack_from(chunk, fc.LEN_HEADER)
        return dict(nfilters=6, filters=list(x[0:6]), udcodec=x[6], compcode_meta=x[7],
                    filters_meta=list(x[8:14]), other_flags2=dict(reserved=0, use_dict=False),
                    reserved=0)
    return dict(nfilters=6, filters=[0] * 6, udcodec=0, compcode_meta=0, filters_meta=[0] * 6,
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
    layouts of the older frame documents (frame version 1 without a block
    size; 12 and 11 without a filter pipeline, 11 without metalayers), for
    testing readers against them.
    """
    if layout not in ff.FRAME_HEADERS:
        raise ValueError(f"layout must be one of {sorted(ff.FRAME_HEADERS)}, got {layout!r}")
    if layout == 11 and metalayers:
        raise ValueError("the 11-element layout has no metalayers")
    unpack = fc.FAST_HEADER.unpack_from
    views, sizes, blocksizes, kinds = [], [], [], []
    for k, c in enumerate(chunks):
        v = c if isinstance(c, bytes) else bytes(memoryview(c).cast("B"))
        if len(v) < fc.LEN_HEADER:
            raise ValueError(f"chunk {k}: {len(v)} bytes, a chunk has at least 16")
        _, _, flags, _, nbytes, bsize, cbytes = unpack(v, 0)
        if cbytes != len(v) or nbytes < 0:
            raise ValueError(f"chunk {k}: {len(v)} bytes where its header says {cbytes}")
        special = (v[31] >> fc.B2_SPECIAL_SHIFT) & 0x07 \
            if flags & fc.FLAGS_EXTENDED == fc.FLAGS_EXTENDED and len(v) >= 32 else 0
        views.append(v)
        sizes.append(nbytes)
        blocksizes.append(bsize)
        kinds.append(special)
    if splitmode not in SPLITMODE_CODES:
        raise ValueError(f"unknown splitmode {splitmode!r}")
    if not 0 <= clevel <= 9:
        raise ValueError(f"clevel must be 0..9, got {clevel}")
    first = memoryview(views[0]) if views else None
    if chunksize is None:
        chunksize = sizes[0] if sizes else -1
    for k, n in enumerate(sizes):
        if n > chunksize or (n != chunksize and k != len(sizes) - 1):
            raise ValueError(f"chunk {k} holds {n} bytes; chunks hold {chunksize} "
                             "(only the last may be shorter)")
    typesize = first[3] if first is not None else 1
    vl = first is not None and len(first) >= 32 and bool(first[30] & fc.F2_VL_BLOCKS) \
        and first[2] & fc.FLAGS_EXTENDED == fc.FLAGS_EXTENDED

    offsets, stored, pos = [], [], 0
    for v, special in zip(views, kinds):
        code = _SPECIAL_OFFSET_CODES.get(special)
        if code is not None:           # zeros / NaN / uninit: a special offset
            offsets.append(code)
            continue
        offsets.append(pos)
        stored.append(v)
        pos += len(v)
    cbytes_total = pos
    index = compress(struct.pack(f"<{len(offsets)}q", *offsets), **INDEX_PARAMS) \
        if offsets else b""

    fixed = ff.LEN_FIXED[layout]
    meta_section = _section(metalayers or {}, fixed, 1) \
        if layout in ff.LAYOUT_WITH_METALAYERS else b""
    header_len = fixed + len(meta_section)
    vl_items = {name: compress(bytes(value), **_VLMETA_PARAMS)
                for name, value in (vlmetalayers or {}).items()}
    trailer_body = ff.TrailerHead.build(dict(version=1)) + _section(vl_items, 2, 0)
    trailer_len = len(trailer_body) + ff.LEN_TRAILER_TAIL
    frame_len = header_len + cbytes_total + len(index) + trailer_len
    codec = _codec_id(first) if first is not None else 0
    pipe = _pipeline(first) if first is not None else _pipeline(memoryview(b""))
    hdr: dict[str, Any] = dict(
        header_len=header_len, frame_len=frame_len,
        general_flags=dict(vl_blocks=vl, variable_chunks=False, offsets_size=OFFSETS_64BIT,
                           version=FRAME_VERSION_VL if vl else FRAME_VERSION),
        frame_type=0,
        codec_flags=dict(clevel=clevel, codec=codec if codec < 16 else
                         enums.COMPFORMAT_UDCODEC),
        other_flags=dict(reserved=0, splitmode=SPLITMODE_CODES[splitmode]),
        nbytes=sum(sizes), cbytes=cbytes_total, typesize=typesize,
        # C-Blosc2's writer keeps the block size of the chunk appended last
        blocksize=blocksizes[-1] if blocksizes else 0,
        chunksize=chunksize, nthreads_c=0, nthreads_d=1,
        has_vlmetalayers=0xC3 if vlmetalayers else 0xC2,
        filter_pipeline=pipe,
    )
    if layout != 14:
        _older_layout(hdr, layout, first)
    tail = ff.TrailerTail.build(dict(trailer_len=trailer_len, fingerprint_type=0,
                                     fingerprint=bytes(16)))
    return b"".join([ff.FRAME_HEADERS[layout].build(hdr), meta_section, *stored, index,
                     trailer_body, tail])


def _older_layout(hdr: dict[str, Any], layout: int, first: memoryview | None) -> None:
    """Turn current header fields into those of an older layout: frame
    version 1 (64-bit offsets were code 2 then) without a block size; the
    12- and 11-element layouts keep one shuffle choice in filter_flags
    instead of frame_type and the filter pipeline."""
    del hdr["blocksize"]
    hdr["general_flags"].update(version=1, offsets_size=2)
    if layout == 13:
        return
    slots = hdr.pop("filter_pipeline")["filters"]
    del hdr["frame_type"]
    shuffle = 2 if 2 in slots else 1 if 1 in slots else 0
    flags = first[2] if first is not None else 0
    hdr["filter_flags"] = dict(reserved=0, shuffle=shuffle,
                               split=not flags & fc.FLAG_DONT_SPLIT,
                               memcpyed=bool(flags & fc.FLAG_MEMCPYED))
    hdr["general_flags"].update(version=0)


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
