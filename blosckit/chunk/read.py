"""Reading Blosc chunks of every format version (1 to 6).

``parse_chunk`` describes a chunk without decoding it; ``decompress``,
``decompress_into`` and ``getitem`` decode it.  Every check is a rule
declared beside its structure in :mod:`blosckit.formats.chunk`; this module
reads the chunk stage by stage and runs the rules into a sink: the reader's
sink raises at the first error, the validator's (:func:`check_chunk`)
collects them all.  Structures are read through the fast formats derived
from the declarations.
"""
from __future__ import annotations

import operator
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple

from ..native import buffers as _buffers
from .. import native
from ..codecs import libs
from ..codecs import filters as _filters
from ..codecs.registry import CODECS_BY_CODE, CODECS_BY_FORMAT
from ..errors import FormatError, Problem
from ..formats import chunk as fc
from ..formats import enums
from ..formats.chunk import ChunkView
from ..formats.rules import Collect, RaiseFirst, Sink
from .plan import MAX_THREADS

__all__ = ["Chunk", "parse_chunk", "decompress", "decompress_into", "getitem", "chunk_sizes",
           "check_chunk", "check_threads", "MAX_NBYTES"]

MAX_NBYTES = fc.MAX_NBYTES
_NAN = {w: struct.pack("<f" if w == 4 else "<d", float("nan")) for w in fc.NAN_WIDTHS}
ROOT = "chunk"                    # the root of every path this module reports

# The one-call native decoder's codec table (fast_table()).  On the good path decompress is
# one C call (header, checks and blocks); the Python reader below runs only
# for what it declines, and re-reads a chunk it rejects to explain why.
_FAST = [native.make_codec_table(libs.NATIVE_DECODERS)]

# Header errors after which nothing below the header can be located (a
# truncation included: the rest is not there).
_CBYTES = "chunk.header.cbytes"
_STRUCTURAL = (fc.INPUT, "chunk.header.version", _CBYTES, "chunk.header.nbytes",
               "chunk.header.blocksize", "chunk.header.flags", "chunk.header.extended",
               "chunk.header.extended.blosc2_flags",
               "chunk.header.extended.blosc2_flags.special")


# ---------------------------------------------------------------------------
# Reading: header, bstarts and dictionary, rule by rule
# ---------------------------------------------------------------------------

def _read_extended(v: ChunkView, mv: memoryview) -> None:
    if v.extended:
        # all 0 when the input ends inside the extended header (H7 says so)
        r = fc.raw_header(mv)
        v.slots, v.metas = list(r.filters), list(r.filters_meta)
        v.udcodec, v.compcode_meta = r.udcodec, r.compcode_meta
        v.flags2, v.b2flags = r.blosc2_flags2, r.blosc2_flags
    else:
        v.slots, v.metas = fc.blosc1_slots(v.flags), [0] * fc.NUM_FILTER_SLOTS
        v.udcodec = v.compcode_meta = v.flags2 = v.b2flags = 0
    b2 = v.b2flags
    v.use_dict = bool(b2 & fc.B2_DICT)
    v.lazy = bool(b2 & fc.B2_LAZY)
    v.instr = bool(b2 & fc.B2_INSTR)
    v.special = fc.special_kind(b2)
    v.vl = bool(v.flags2 & fc.F2_VL_BLOCKS)


def _derive_split(v: ChunkView) -> None:
    dont_split = bool(v.flags & fc.FLAG_DONT_SPLIT)
    if v.legacy:
        # C-Blosc 1.x: written before the dont-split flag existed, splitting
        # was implied by typesize and block size, and 1.x readers still use it.
        v.split = (not dont_split and 0 < v.typesize <= fc.MAX_SPLITS
                   and v.blocksize // v.typesize >= fc.LEGACY_MIN_SPLIT)
    else:
        v.split = not dont_split


def _scan(mv: memoryview, sink: Sink, max_nbytes: int = MAX_NBYTES) -> ChunkView | None:
    """Read and check header, bstarts and dictionary (nothing is decoded).

    Returns the view, or None when a problem (reported to ``sink``) leaves
    the rest of the chunk impossible to locate.
    """
    n = len(mv)
    v = ChunkView()
    v.n, v.max_nbytes = n, max_nbytes
    if n < fc.LEN_HEADER:               # no header to read (T-truncated)
        sink.run(fc.INPUT_RULES, fc.header_extent(n), mv)
        return None
    (v.version, v.versionlz, v.flags, v.typesize, v.nbytes, v.hdr_blocksize,
     v.cbytes) = fc.FAST_HEADER.unpack_from(mv, 0)
    v.extended = fc.extended_flags(v.flags)
    v.overhead = fc.LEN_EXTENDED if v.extended else fc.LEN_HEADER
    v.compformat = fc.compformat(v.flags)
    v.memcpyed = bool(v.flags & fc.FLAG_MEMCPYED)
    v.legacy = v.version <= 2
    v.blocksize = v.hdr_blocksize
    v.nblocks = 0
    v.bstarts = []
    v.dict = None
    v.split = False
    v.ofs_dict = v.ofs_streams = v.overhead
    sink.run(fc.VERSION_RULES, v, mv)
    if not sink.ok(fc.VERSION_RULES[0].path):
        return None
    sink.run(fc.HEADER_RULES, v, mv)
    if v.extended and n < fc.LEN_EXTENDED:
        # the flags announce header bytes that are not there (a cbytes
        # below them is H6's: then the chunk, not the input, is short)
        if sink.ok(_CBYTES):
            sink.run(fc.INPUT_RULES, fc.extended_extent(v), mv)
        sink.run(fc.BASIC_FIELD_RULES, v, mv)
        return None
    _read_extended(v, mv)
    sink.run(fc.FIELD_RULES, v, mv)
    if sink.ok(_CBYTES):
        sink.run(fc.INPUT_RULES, fc.cbytes_extent(v), mv)
    sink.run(fc.CODEC_FIELD_RULES, v, mv)
    if not sink.ok(*_STRUCTURAL):
        return None
    if v.special:
        sink.run(fc.SPECIAL_RULES, v, mv)
        v.nblocks = 0 if v.nbytes == 0 else -(-v.nbytes // min(v.blocksize, v.nbytes))
        v.ofs_dict = v.ofs_streams = fc.LEN_EXTENDED
        return v
    if v.vl:
        v.nblocks = v.hdr_blocksize
    elif v.nbytes:
        v.blocksize = min(v.hdr_blocksize, v.nbytes)       # C-Blosc2 clamps it
        v.nblocks = -(-v.nbytes // v.blocksize)
    sink.run(fc.BODY_SIZE_RULES, v, mv)
    if v.memcpyed or (v.nbytes == 0 and not v.vl):
        return v
    sink.run(fc.BSTARTS_FIT_RULES, v, mv)
    if not sink.ok("chunk.bstarts"):
        return None
    v.bstarts = list(fc.fast_bstarts(v.nblocks).unpack_from(mv, v.overhead))
    v.ofs_dict = v.ofs_streams = v.overhead + fc.LEN_BSTART * v.nblocks
    if not v.vl:
        _derive_split(v)
    if v.lazy:
        return v                       # bstarts point into a frame, not here
    if v.use_dict:
        sink.run(fc.DICT_RULES, v, mv)
        if not sink.ok("chunk.dict.dsize", "chunk.dict.dict"):
            return None
        dsize = fc.FAST_DSIZE.unpack_from(mv, v.ofs_dict)[0]
        start = v.ofs_dict + fc.FAST_DSIZE.size
        v.dict = bytes(mv[start:start + dsize])
        v.ofs_streams = start + dsize
    sink.run(fc.BSTART_RULES, v, mv)
    if not v.vl:
        sink.run(fc.SPLIT_RULES, v, mv)
    return v


def _read(mv: memoryview, max_nbytes: int = MAX_NBYTES) -> ChunkView:
    """``_scan`` in the reader's mode: the first error raises."""
    v = _scan(mv, RaiseFirst(), max_nbytes)
    assert v is not None       # RaiseFirst raised otherwise
    return v


# ---------------------------------------------------------------------------
# Public description
# ---------------------------------------------------------------------------

@dataclass
class Chunk:
    """A parsed chunk: the header as stored plus what a decoder derives."""
    header: Any
    version: int
    typesize: int
    nbytes: int
    cbytes: int
    blocksize: int
    nblocks: int
    codec: str
    filters: list[tuple[str, int]]
    special: str | None
    memcpyed: bool
    split: bool
    dict: bytes | None
    bstarts: list[int]
    lazy: bool
    vlblocks: bool
    versionlz: int = 0
    instrumented: bool = False
    value: bytes | None = None
    ofs_streams: int = 0
    slots: list[int] = field(default_factory=list)
    filters_meta: list[int] = field(default_factory=list)
    extended: bool = True
    compformat: int = 0


def _codec_label(v: ChunkView) -> str:
    """The stored format's codec name; for codec format 6 the udcodec byte
    names it, which only the six-slot extended header has."""
    if v.compformat == enums.COMPFORMAT_UDCODEC:
        if not v.has_udcodec():
            return enums.COMPFORMATS[v.compformat]    # no udcodec byte to name it
        return enums.codec_name(v.udcodec)
    return enums.COMPFORMATS[v.compformat]


def parse_chunk(src, *, max_nbytes: int = MAX_NBYTES) -> Chunk:
    """Describe the chunk in ``src`` (bytes-like) without decompressing it.

    Raises FormatError (offset, path and rule set) for a malformed chunk;
    ``max_nbytes`` caps the uncompressed size (bytes) the header may claim,
    as :func:`decompress`'s does.
    """
    mv = as_view(src)
    v = _read(mv, max_nbytes)
    header = fc.parse_header(mv)
    value = bytes(mv[fc.LEN_EXTENDED:v.cbytes]) if v.special == 3 else None
    flist = [(enums.filter_name(f), m) for f, m in zip(v.slots, v.metas) if f]
    return Chunk(
        header=header, version=v.version, typesize=v.typesize, nbytes=v.nbytes,
        cbytes=v.cbytes, blocksize=v.hdr_blocksize, nblocks=v.nblocks,
        codec=_codec_label(v), filters=flist, special=enums.SPECIALS[v.special],
        memcpyed=v.memcpyed and not v.special, split=v.split, dict=v.dict,
        bstarts=v.bstarts, lazy=v.lazy, vlblocks=v.vl, versionlz=v.versionlz,
        instrumented=v.instr, value=value, ofs_streams=v.ofs_streams,
        slots=list(v.slots), filters_meta=list(v.metas), extended=v.extended,
        compformat=v.compformat)


def chunk_sizes(src) -> tuple[int, int, int]:
    """``(nbytes, cbytes, blocksize)`` from the 16-byte header alone."""
    mv = as_view(src)
    if len(mv) < fc.LEN_HEADER:
        RaiseFirst().run(fc.INPUT_RULES, fc.header_extent(len(mv)), mv)
    _, _, _, _, nbytes, blocksize, cbytes = fc.FAST_HEADER.unpack_from(mv, 0)
    return nbytes, cbytes, blocksize


def fast_table():
    """The one-call native decoder's codec table, None when it is off (the
    frame reader and the validator hand it to the native calls over many
    chunks)."""
    return _FAST[0]


def as_view(src) -> memoryview:
    """``src`` (bytes-like) as a flat, contiguous memoryview of bytes;
    TypeError for str and objects without the buffer protocol."""
    if isinstance(src, str):
        raise TypeError("a chunk is bytes-like, not str")
    try:
        mv = memoryview(src)
    except TypeError:
        raise TypeError(f"a chunk is bytes-like, not {type(src).__name__}") from None
    if mv.ndim != 1 or mv.itemsize != 1 or not mv.c_contiguous:
        mv = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())
    return mv


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------

def _pipeline_view(v: ChunkView) -> fc.PipelineView:
    """The chunk's codec and filters as this build has them (T-codec, T-filter)."""
    if v.compformat == enums.COMPFORMAT_UDCODEC:
        decoder = CODECS_BY_CODE.get(v.udcodec) if v.has_udcodec() else None
    else:
        decoder = CODECS_BY_FORMAT.get(v.compformat)
    return fc.PipelineView(v, decoder, _filters.DECODERS)


def _pipeline(v: ChunkView) -> list[tuple[Any, int, int]]:
    """``(decoder, meta, filter id)`` in decode order (T-filter has passed)."""
    pipeline = []
    for slot in reversed(range(fc.NUM_FILTER_SLOTS)):
        fid = v.slots[slot]
        fn = _filters.DECODERS.get(fid)
        if fn is None:
            continue
        if fid == _filters.SHUFFLE and not v.extended and v.typesize <= 1:
            continue     # a Blosc1 shuffle of 1-byte items is a copy
        pipeline.append((fn, v.metas[slot], fid))
    return pipeline


def _decodable(v: ChunkView, mv: memoryview, sink: Sink) -> None:
    """The checks every decode starts with (lazy, instrumented, codec format 7)."""
    sink.run(fc.DECODABLE_RULES, v, mv)
    sink.run(fc.CODEC_RULES, _pipeline_view(v), mv)


class _Decoder:
    """Decodes the blocks of one regular or VL-block chunk, reporting every
    problem of a block's streams to a sink (the reader's raises)."""

    def __init__(self, v: ChunkView, src: memoryview, sink: Sink):
        self.v = v
        self.src = src
        need = _pipeline_view(v)
        sink.run(fc.FILTER_RULES, need, src)
        need.needed = True
        self.codec, self.need = need.decoder, need
        self.pipeline = _pipeline(v)
        self.uses_delta = any(fid == _filters.DELTA for _, _, fid in self.pipeline)
        self.local = threading.local()

    # -- scratch buffers, one pair per thread
    def scratch(self, size: int):
        bufs = getattr(self.local, "bufs", None)
        if bufs is None or len(bufs[0]) < size:
            bufs = (memoryview(bytearray(size)), memoryview(bytearray(size)))
            self.local.bufs = bufs
        return bufs[0][:size], bufs[1][:size]

    def decode_native(self, out: memoryview, nthreads: int, first: int = 0,
                      count: int = 0) -> bool:
        """Decode blocks ``[first, first + count)`` (``count`` 0: all) into
        ``out`` in C when the codec has a native entry; False when it has
        none.  A failing block is decoded again by the Python path, which
        raises the precise FormatError."""
        v = self.v
        entry = libs.NATIVE_DECODERS.get(self.codec.code) if self.codec is not None else None
        if entry is None or (first and self.uses_delta):
            return False
        pipeline = [(fid, meta) for _fn, meta, fid in self.pipeline]
        failed = native.decode_chunk(
            self.src, out, cbytes=v.cbytes, bstarts=v.bstarts, nbytes=v.nbytes,
            blocksize=v.blocksize, typesize=v.typesize, version=v.version, split=v.split,
            token_follows=v.version >= 4, pipeline=pipeline, codec_kind=entry[0],
            codec_fns=entry[1], dict=v.dict, nthreads=nthreads, first=first, count=count)
        if failed < 0:
            return True
        block0 = out[:self.block_size(0)] if self.uses_delta else None
        j = failed
        size = self.block_size(j)
        self.decode_block(j, memoryview(bytearray(size)), block0, RaiseFirst())
        # the Python decoder reads the block the native one refused: B7 all the same
        RaiseFirst().run(fc.DECODED_RULES,
                         fc.BlockView(j, v.bstarts[j], size, -1, _native_failure), self.src)
        return True

    def block_size(self, j: int) -> int:
        v = self.v
        if j == v.nblocks - 1 and v.nbytes % v.blocksize:
            return v.nbytes % v.blocksize
        return v.blocksize

    def decode_block(self, j: int, dst: memoryview, block0: memoryview | None,
                     sink: Sink) -> bool:
        """Decode block ``j`` into ``dst`` (exactly the block's size); False
        when a problem was reported (only a collecting sink returns)."""
        bsize = len(dst)
        if self.pipeline:
            a, b = self.scratch(bsize)
            target = a
        else:
            target = dst
        if not self.read_streams(j, target, bsize, sink):
            return False
        if self.pipeline:
            self.unfilter(a, b, dst, _filters.BlockContext(self.v.version, self.v.typesize,
                                                           j, block0))
        return True

    def unfilter(self, a: memoryview, b: memoryview, dst: memoryview, ctx) -> None:
        """Undo the pipeline on the streams decoded into ``a``, ping-ponging
        through ``b`` and ending in ``dst``."""
        cur = a
        last = len(self.pipeline) - 1
        for k, (fn, meta, _fid) in enumerate(self.pipeline):
            nxt = dst if k == last else (b if cur is a else a)
            fn(cur, nxt, meta, ctx)
            cur = nxt

    def read_streams(self, j: int, out: memoryview, bsize: int, sink: Sink,
                     visit=None) -> bool:
        """Walk and decode the streams of block ``j`` into ``out``; False after
        the first problem of the block (reported to ``sink``).  ``visit``,
        when given, is called with each stream's view once it is read."""
        v, src = self.v, self.src
        nstreams = fc.streams_in_block(v.split, v.typesize, bsize, v.blocksize)
        neblock = bsize // nstreams
        end = v.cbytes
        sv = fc.StreamView(j, end, fc.token_follows(v.version), neblock)
        pos = v.bstarts[j]
        for k in range(nstreams):
            sv.k, sv.pos = k, pos
            csize = sv.csize = (fc.FAST_CSIZE.unpack_from(src, pos)[0]
                                if pos + fc.LEN_CSIZE <= end else None)
            if csize is not None and csize < 0 and sv.token_follows:
                at = pos + fc.LEN_CSIZE
                sv.token = src[at] if at < end else None
            else:
                sv.token = None
            errors = sink.errors
            sink.run(fc.STREAM_RULES, sv, src)
            if sink.errors != errors:
                return False
            seg = out[k * neblock:(k + 1) * neblock]
            if csize == 0:
                _zero_fill(seg)
            elif csize < 0:
                _fill(seg, -csize)
            elif not self.payload(src[sv.payload_at:sv.payload_at + csize], seg, sv, sink):
                return False
            if visit is not None:
                visit(sv)
            pos += sv.size
        return True

    def payload(self, payload: memoryview, out: memoryview, pv, sink: Sink) -> bool:
        """One payload (of the stream or VL block ``pv``) into ``out``: raw
        when it is exactly as long, else through the codec, which must fill
        ``out`` exactly (B7); False after a problem."""
        if len(payload) == len(out):
            out[:] = payload
            return True
        codec = self.codec
        if codec is None:
            sink.run(fc.CODEC_RULES, self.need, self.src)
            return False
        pv.got = codec.decompress_into(payload, out, self.v.dict)
        pv.want = len(out)
        pv.why = codec.describe_failure
        sink.run(fc.DECODED_RULES, pv, self.src)
        return pv.got == pv.want

    def vl_spans(self, sink: Sink) -> list[tuple[int, int]] | None:
        """``(output offset, size)`` of every VL block, its sizes checked
        (VL3, VL4, VL7); None after a problem."""
        v, src = self.v, self.src
        bv = fc.VLBlockView(v)
        spans = []
        for j, b in enumerate(v.bstarts):
            bv.j, bv.start = j, b
            bv.stop = v.bstarts[j + 1] if j + 1 < v.nblocks else v.cbytes
            bv.size = fc.FAST_VLSIZE.unpack_from(src, b)[0]
            errors = sink.errors
            sink.run(fc.VL_SPAN_RULES, bv, src)
            if sink.errors != errors:
                return None
            spans.append((bv.total, bv.size))
            bv.total += bv.size
        bv.final = True
        errors = sink.errors
        sink.run(fc.VL_SPAN_RULES, bv, src)
        if sink.errors != errors:
            return None
        return spans

    def decode_vl_block(self, j: int, dst: memoryview, sink: Sink, visit=None) -> bool:
        v, src = self.v, self.src
        bv = fc.VLBlockView(v)
        bv.j, bv.start = j, v.bstarts[j]
        bv.stop = v.bstarts[j + 1] if j + 1 < v.nblocks else v.cbytes
        bv.size = fc.FAST_VLSIZE.unpack_from(src, bv.start)[0]
        bv.want = len(dst)
        errors = sink.errors
        sink.run(fc.VL_BLOCK_RULES, bv, src)
        if sink.errors != errors:
            return False
        target = dst
        if self.pipeline:
            a, b = self.scratch(bv.size)
            target = a
        if not self.payload(src[bv.payload_at:bv.stop], target, bv, sink):
            return False
        if visit is not None:
            visit(bv)
        if self.pipeline:
            # VL blocks are delta-encoded against themselves (offset 0).
            self.unfilter(a, b, dst, _filters.BlockContext(v.version, v.typesize, 0, None))
        return True


def _native_failure(got: int, want: int) -> str:
    return "the block does not decode (native decoder)"


# Zero runs are filled from one shared zero buffer; its size is bounded so
# that hostile chunks claiming huge blocks cannot make it hold memory.
_ZEROS = bytes(1 << 16)


def _zero_fill(out: memoryview) -> None:
    step = len(_ZEROS)
    n = len(out)
    if n <= step:
        out[:] = _ZEROS[:n]
        return
    out[:step] = _ZEROS
    filled = step
    while filled < n:       # doubling copies from the part already zeroed
        k = min(filled, n - filled)
        out[filled:filled + k] = out[:k]
        filled += k


def _fill(seg: memoryview, value: int) -> None:
    if len(seg):
        seg[0] = value
        _repeat_from(seg, 1)


def _repeat_from(out: memoryview, filled: int) -> None:
    """Repeat ``out[:filled]`` over the rest of ``out`` (log2 slice copies)."""
    n = len(out)
    while filled < n:
        k = min(filled, n - filled)
        out[filled:filled + k] = out[:k]
        filled += k


class _Checked(NamedTuple):
    """What a decode checks before it writes a byte: the decoder of a chunk
    with blocks (None for special, raw and empty chunks) and a VL-block
    chunk's ``(output offset, size)`` spans."""
    dec: _Decoder | None
    spans: list[tuple[int, int]] | None


def _check_decode(v: ChunkView, src: memoryview) -> _Checked:
    """The checks every decode makes before writing (lazy, instrumented,
    the codec format, unknown filters, and a VL-block chunk's block sizes,
    VL7 included), in the reader's order: raised before the output is
    allocated, so a header's nbytes is not allocated for a chunk they refuse."""
    sink = RaiseFirst()
    _decodable(v, src, sink)
    if v.special or v.memcpyed or (v.nbytes == 0 and not v.vl):
        return _Checked(None, None)
    dec = _Decoder(v, src, sink)
    return _Checked(dec, dec.vl_spans(sink) if v.vl else None)


def _decode_all(v: ChunkView, src: memoryview, out: memoryview, nthreads: int,
                checked: _Checked) -> None:
    """Decode the whole chunk described by ``v`` into ``out`` (nbytes long),
    ``checked`` by :func:`_check_decode`."""
    if v.nbytes == 0 and not v.vl:      # VL blocks must still add up to nbytes (VL7)
        return
    if v.special:
        _fill_special(v, src, out)
        return
    if v.memcpyed:
        out[:] = src[v.overhead:v.overhead + v.nbytes]
        return
    dec, spans = checked
    assert dec is not None
    if v.vl:
        assert spans is not None
        _run(nthreads, len(spans),
             lambda j: dec.decode_vl_block(j, out[spans[j][0]:spans[j][0] + spans[j][1]],
                                           RaiseFirst()))
        return
    if dec.decode_native(out, nthreads):
        return
    bs = v.blocksize
    block0 = out[:dec.block_size(0)] if dec.uses_delta else None

    def one(j: int) -> None:
        dec.decode_block(j, out[j * bs:j * bs + dec.block_size(j)], block0, RaiseFirst())

    if dec.uses_delta:
        one(0)                       # every other block is XORed against block 0
        _run(nthreads, v.nblocks - 1, lambda j: one(j + 1))
    else:
        _run(nthreads, v.nblocks, one)


def _run(nthreads: int, count: int, fn) -> None:
    if nthreads <= 1 or count <= 1:
        for j in range(count):
            fn(j)
        return
    with ThreadPoolExecutor(max_workers=min(nthreads, count)) as pool:
        # list() re-raises the first error of any block
        list(pool.map(fn, range(count)))


def _special_unit(v: ChunkView, src: memoryview) -> bytes:
    """The bytes a special chunk repeats (uninit is zero-filled: stricter than C)."""
    if v.special in (1, 4):
        return b"\0"
    if v.special == 2:
        return _NAN[v.typesize]
    return bytes(src[fc.LEN_EXTENDED:v.cbytes])


def _fill_special(v: ChunkView, src: memoryview, out: memoryview) -> None:
    if v.special in (1, 4):
        _zero_fill(out)
    else:
        _repeat(out, _special_unit(v, src))


def _repeat(out: memoryview, unit: bytes) -> None:
    filled = min(len(unit), len(out))
    out[:filled] = unit[:filled]
    _repeat_from(out, filled)


def check_threads(nthreads: int) -> int:
    """``nthreads`` when it is an int in 1..MAX_THREADS (the native block
    loop's cap); TypeError or ValueError otherwise."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int):
        raise TypeError(f"nthreads must be an int, not {type(nthreads).__name__}")
    if not 1 <= nthreads <= MAX_THREADS:
        raise ValueError(f"nthreads must be in 1..{MAX_THREADS}, got {nthreads}")
    return nthreads


def _decompress(src, nthreads: int, max_nbytes: int) -> bytes:
    """The Python reader's decompress (what the native fast path declines)."""
    check_threads(nthreads)
    mv = as_view(src)
    v = _read(mv, max_nbytes)
    checked = _check_decode(v, mv)
    obj, out = _buffers.new_bytes(v.nbytes)
    _decode_all(v, mv, out, nthreads, checked)
    out.release()
    return _buffers.finish(obj)


_decompress_new = native.fast_decompressor(_FAST, _decompress)


def decompress(src, *, nthreads: int = 1, max_nbytes: int = MAX_NBYTES, dst=None):
    """Decode a whole chunk of any format version.

    ``nthreads`` (1..64) decodes blocks in parallel threads.  ``max_nbytes``
    caps the uncompressed size (bytes) a header may claim.  Raises
    FormatError / UnsupportedError for bad or undecodable input.  Common
    Blosc2 chunks are decoded by one native call; the Python reader handles
    the rest and explains every rejection.  ``dst``: a writable bytes-like
    object (at least nbytes long, else ValueError) that receives the data
    instead of a new bytes object; None is returned then, as python-blosc2's
    ``decompress2(src, dst)`` does.
    """
    if dst is None:
        return _decompress_new(src, nthreads=nthreads, max_nbytes=max_nbytes)
    if max_nbytes != MAX_NBYTES:
        _read(as_view(src), max_nbytes)     # a claim over max_nbytes: its FormatError
    decompress_into(src, dst, nthreads=nthreads)
    return None


def decompress_into(src, dst, *, nthreads: int = 1) -> int:
    """Decode a chunk into the writable bytes-like ``dst`` (at least nbytes
    long, else ValueError) and return nbytes."""
    check_threads(nthreads)
    if _FAST[0] is not None:
        n = native.decompress_fast_into(src, dst, _FAST[0], nthreads)
        if n is not None:
            return n
    mv = as_view(src)
    try:
        out = memoryview(dst)
    except TypeError:
        raise TypeError("dst must be a writable bytes-like object") from None
    if out.readonly:
        raise TypeError("dst must be writable")
    out = out.cast("B") if out.format != "B" or out.ndim != 1 else out
    v = _read(mv, MAX_NBYTES)
    if len(out) < v.nbytes:
        raise ValueError(f"dst holds {len(out)} bytes, the chunk needs {v.nbytes}")
    _decode_all(v, mv, out[:v.nbytes], nthreads, _check_decode(v, mv))
    return v.nbytes


def index_arg(name: str, value) -> int:
    """``value`` as an int (anything with ``__index__``); TypeError naming
    the argument ``name`` otherwise."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None


def getitem(src, start: int, nitems: int) -> bytes:
    """Items ``[start, start + nitems)`` of the chunk's typesize, decoding only
    the blocks that hold them (plus block 0 when the delta filter needs it).

    Memory: the result plus at most two blocks of scratch (the partial
    blocks at either end of the range).
    """
    start, nitems = index_arg("start", start), index_arg("nitems", nitems)
    mv = as_view(src)
    v = _read(mv)
    _decodable(v, mv, RaiseFirst())
    ts = v.typesize
    if start < 0 or nitems < 0 or (start + nitems) * ts > v.nbytes:
        raise ValueError(f"items [{start}, {start + nitems}) of {ts} bytes are outside "
                         f"the chunk's {v.nbytes} bytes")
    lo, hi = start * ts, (start + nitems) * ts
    if hi == lo:
        return b""
    if v.memcpyed and not v.special:
        return bytes(mv[v.overhead + lo:v.overhead + hi])
    obj, out = _buffers.new_bytes(hi - lo)
    if v.special:
        unit = _special_unit(v, mv)
        skip = lo % len(unit)          # the range starts inside a repeated unit
        _repeat(out, (unit[skip:] + unit[:skip]))
    elif v.vl:
        _decode_vl_range(v, mv, out, lo, hi)
    else:
        _decode_range(v, mv, out, lo, hi)
    out.release()
    return _buffers.finish(obj)


def _decode_range(v: ChunkView, mv: memoryview, out: memoryview, lo: int, hi: int) -> None:
    """Bytes ``[lo, hi)`` of a regular chunk into ``out``: whole blocks
    straight into place, the partial ones at either end through scratch."""
    dec = _Decoder(v, mv, RaiseFirst())
    bs = v.blocksize
    first, last = lo // bs, (hi - 1) // bs
    block0 = None
    if dec.uses_delta:
        block0 = memoryview(bytearray(dec.block_size(0)))
        if not dec.decode_native(block0, 1, 0, 1):
            dec.decode_block(0, block0, None, RaiseFirst())
    for j in range(first, last + 1):
        b_lo, size = j * bs, dec.block_size(j)
        a, b = max(lo, b_lo), min(hi, b_lo + size)
        if j == 0 and block0 is not None:
            out[a - lo:b - lo] = block0[a - b_lo:b - b_lo]
            continue
        # a whole full block decodes in place; the native decoder wants room
        # for a full block, so a short last block goes through scratch too
        direct = a == b_lo and b == b_lo + size == b_lo + bs
        buf = out[a - lo:b - lo] if direct else memoryview(bytearray(bs))
        if dec.uses_delta or not dec.decode_native(buf, 1, j, 1):
            dec.decode_block(j, buf[:size], block0, RaiseFirst())
        if not direct:
            out[a - lo:b - lo] = buf[a - b_lo:b - b_lo]


def _decode_vl_range(v: ChunkView, mv: memoryview, out: memoryview, lo: int, hi: int) -> None:
    sink = RaiseFirst()
    dec = _Decoder(v, mv, sink)
    spans = dec.vl_spans(sink)
    assert spans is not None
    for j, (ofs, size) in enumerate(spans):
        a, b = max(lo, ofs), min(hi, ofs + size)
        if a >= b:
            continue
        whole = a == ofs and b == ofs + size
        dst = out[a - lo:b - lo] if whole else memoryview(bytearray(size))
        dec.decode_vl_block(j, dst, sink)
        if not whole:
            out[a - lo:b - lo] = dst[a - ofs:b - ofs]


# ---------------------------------------------------------------------------
# The reader's walk, shown (the inspector)
# ---------------------------------------------------------------------------

class WalkedBlock(NamedTuple):
    """Block ``j`` of a regular chunk: its bstart, uncompressed size (bytes)
    and number of streams."""
    j: int
    start: int
    size: int
    nstreams: int


class WalkedStream(NamedTuple):
    """Stream ``k`` of block ``j``, read and decoded: where it starts, its
    length in bytes (csize field, token, payload), csize, and whether its
    payload is stored raw (as long as its uncompressed size)."""
    j: int
    k: int
    start: int
    size: int
    csize: int
    raw: bool


class WalkedVLBlock(NamedTuple):
    """VL block ``j``, read and decoded: from ``start`` to ``stop`` (bytes of
    the chunk), holding ``size`` uncompressed bytes."""
    j: int
    start: int
    stop: int
    size: int


Walked = WalkedBlock | WalkedStream | WalkedVLBlock


def walk_chunk(src, *, max_nbytes: int = MAX_NBYTES) -> Iterator[Walked]:
    """The reader's walk of the chunk in ``src``, for tools that show it:
    the checks :func:`decompress` makes, in its order, with each block and
    stream (regular chunks) or VL block yielded once it is read and its
    payloads decoded.  Raises decompress's FormatError where decompress
    would, after yielding what came before it."""
    mv = as_view(src)
    sink = RaiseFirst()
    v = _read(mv, max_nbytes)
    _decodable(v, mv, sink)
    if v.special or v.memcpyed or (v.nbytes == 0 and not v.vl):
        return
    dec = _Decoder(v, mv, sink)
    if v.vl:
        spans = dec.vl_spans(sink)
        assert spans is not None
        for j, (_ofs, size) in enumerate(spans):
            done: list[Walked] = []
            dec.decode_vl_block(j, memoryview(bytearray(size)), sink, lambda bv: done.append(
                WalkedVLBlock(bv.j, bv.start, bv.stop, bv.size)))
            yield from done
        return
    scratch = memoryview(bytearray(v.blocksize))
    for j in range(v.nblocks):
        size = dec.block_size(j)
        nstreams = fc.streams_in_block(v.split, v.typesize, size, v.blocksize)
        yield WalkedBlock(j, v.bstarts[j], size, nstreams)
        streams: list[Walked] = []
        try:
            dec.read_streams(j, scratch[:size], size, sink, lambda sv: streams.append(
                WalkedStream(sv.j, sv.k, sv.pos, sv.size, sv.csize, sv.csize == sv.want)))
        except FormatError:
            yield from streams            # the streams before the one at fault
            raise
        yield from streams


# ---------------------------------------------------------------------------
# Every problem at once (the validator's chunk check)
# ---------------------------------------------------------------------------

def check_chunk(src, *, deep: bool = True, max_nbytes: int = MAX_NBYTES) -> list[Problem]:
    """Every problem of the chunk in ``src``, in the order found: the same
    rules as the reader, run into a collecting sink.  ``deep`` walks and
    decodes every block (block by block: memory stays at one block of
    scratch); without it only the header, bstarts and dictionary are checked.
    ``max_nbytes`` caps nbytes as the reader's does.  Never raises for bytes
    input."""
    mv = as_view(src)
    sink = Collect()
    v = _scan(mv, sink, max_nbytes)
    if v is None:
        return sink.problems
    _decodable(v, mv, sink)
    if v.special or v.memcpyed or (v.nbytes == 0 and not v.vl) or v.lazy or \
            not sink.ok(*_DECODE_NEEDS):
        return sink.problems
    dec = _Decoder(v, mv, sink)        # reports unknown filters (T-filter)
    if deep and sink.ok(fc.filters_decodable.path):
        _check_blocks(v, dec, sink)
    return sink.problems


def check_trailing(src) -> list[Problem]:
    """The warning for bytes after the chunk (T-trailing), for the validator
    on a bare chunk whose rules passed."""
    mv = as_view(src)
    v = ChunkView()
    v.n, v.cbytes = len(mv), chunk_sizes(mv)[1]
    sink = Collect()
    sink.run(fc.TRAILING_RULES, v, mv)
    return sink.problems


# Errors after which blocks cannot be walked.
_DECODE_NEEDS = ("chunk.bstarts", "chunk.dict.dsize", "chunk.dict.dict",
                 "chunk.header.blocksize", "chunk.header.typesize",
                 "chunk.header.extended.blosc2_flags.lazy",
                 "chunk.header.extended.blosc2_flags.instrumented",
                 "chunk.header.flags.compformat")


def _check_blocks(v: ChunkView, dec: _Decoder, sink: Collect) -> None:
    """Walk and decode every block whose bstart is sound, one at a time,
    until the codec turns out to be missing (T-codec, reported once)."""
    def go_on() -> bool:
        return sink.ok(fc.codec_decodable.path)

    if v.vl:
        if not sink.ok("chunk.bstarts[]"):
            return                   # VL blocks are delimited by their neighbours
        spans = dec.vl_spans(sink)
        for j, (_ofs, size) in enumerate(spans or ()):
            if not go_on():
                return
            dec.decode_vl_block(j, memoryview(bytearray(size)), sink)
        return

    def sound(j: int) -> bool:
        return sink.ok(f"chunk.bstarts[{j}]")

    block0 = None
    if dec.uses_delta and sound(0):
        block0 = memoryview(bytearray(dec.block_size(0)))
        if not dec.decode_block(0, block0, None, sink):
            block0 = None
    scratch = memoryview(bytearray(v.blocksize))
    for j in range(1 if dec.uses_delta else 0, v.nblocks):
        if not go_on():
            return
        if not sound(j):
            continue
        size = dec.block_size(j)
        if dec.uses_delta and block0 is None:
            dec.read_streams(j, scratch[:size], size, sink)     # structure only
            continue
        dec.decode_block(j, scratch[:size], block0, sink)
