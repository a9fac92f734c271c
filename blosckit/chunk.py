"""Reading Blosc chunks of every format version (1 to 6).

``parse_chunk`` describes a chunk without decoding it; ``decompress``,
``decompress_into`` and ``getitem`` decode it.  Structure comes from the
declarations in :mod:`blosckit.formats.chunk`; the per-chunk hot path reads
the same fields through the ``struct`` formats derived from them.  Every
check is a rule of :mod:`blosckit.formats.rules` and names its id.
"""
from __future__ import annotations

import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from . import _buffers, native
from .codecs import _dl
from .codecs import filters as _filters
from .codecs.registry import Codec, decoder_for
from .errors import UnsupportedError
from .formats import chunk as fc
from .formats import enums, parse
from .formats.rules import fail

__all__ = ["Chunk", "parse_chunk", "decompress", "decompress_into", "getitem", "chunk_sizes"]

MAX_NBYTES = 2**31 - 1
MAX_BLOCKSIZE = 536866816          # BLOSC2_MAXBLOCKSIZE
MAX_DICTSIZE = 32768
LEGACY_MIN_SPLIT = 128             # C-Blosc 1.x MIN_BUFFERSIZE in its split rule
MAX_SPLITS = 16

_I32 = struct.Struct("<i")
_NAN = {4: struct.pack("<f", float("nan")), 8: struct.pack("<d", float("nan"))}


class _Info:
    """Everything a decoder needs, read through the fast struct formats."""
    __slots__ = (
        "version", "versionlz", "flags", "typesize", "nbytes", "blocksize", "cbytes",
        "extended", "overhead", "slots", "metas", "udcodec", "compcode_meta", "flags2",
        "b2flags", "special", "memcpyed", "vl", "lazy", "instr", "use_dict", "compformat",
        "nblocks", "bstarts", "ofs_streams", "dict", "value", "split", "legacy",
    )
    version: int
    versionlz: int
    flags: int              # the raw flags byte
    typesize: int
    nbytes: int
    blocksize: int          # clamped to nbytes as C-Blosc2 does (rule H13)
    cbytes: int
    extended: bool
    overhead: int           # 16 or 32: the header length
    slots: list[int]        # filter id per slot (Blosc1 flags mapped to slots)
    metas: list[int]
    udcodec: int
    compcode_meta: int
    flags2: int
    b2flags: int
    special: int            # 0..4 (formats.enums.SPECIALS)
    memcpyed: bool
    vl: bool
    lazy: bool
    instr: bool
    use_dict: bool
    compformat: int
    nblocks: int
    bstarts: list[int]
    ofs_streams: int        # where the streams section starts
    dict: bytes | None
    value: bytes | None
    split: bool             # full blocks are split into typesize streams
    legacy: bool            # version <= 2: C-Blosc 1.x rules


def _flags_to_slots(flags: int) -> tuple[list[int], list[int]]:
    """Blosc1 flag-style filters placed in slots the way C-Blosc2 does."""
    slots = [0] * 6
    if flags & 0x01:
        slots[5] = 1
    if flags & 0x04:
        slots[5] = 2
    if flags & 0x08:
        slots[4] = 3
    return slots, [0] * 6


def _read_info(src, max_nbytes: int = MAX_NBYTES) -> _Info:
    """Read and check header, bstarts and dictionary (nothing is decoded)."""
    n = len(src)
    if n < fc.LEN_HEADER:
        fail("H1", n, "chunk.header", f"a chunk needs at least 16 bytes, got {n}")
    i = _Info()
    (i.version, i.versionlz, i.flags, i.typesize, i.nbytes, i.blocksize,
     i.cbytes) = fc.FAST_HEADER.unpack_from(src, 0)
    i.extended = (i.flags & 0x05) == 0x05
    i.overhead = fc.LEN_EXTENDED if i.extended else fc.LEN_HEADER
    i.compformat = i.flags >> 5
    i.memcpyed = bool(i.flags & 0x02)
    if i.version == 0:
        fail("T-version", 0, "chunk.header.version", "version 0 was never written")
    if i.version > 6:
        fail("T-version", 0, "chunk.header.version", f"unknown chunk version {i.version}")
    if i.cbytes < fc.LEN_HEADER:
        fail("H2", 12, "chunk.header.cbytes", f"cbytes {i.cbytes} is below the 16-byte header")
    if i.typesize == 0:
        fail("H5", 3, "chunk.header.typesize", "typesize is 0")
    if i.nbytes < 0:
        fail("T-nbytes", 4, "chunk.header.nbytes", f"negative nbytes {i.nbytes}")
    if i.nbytes > max_nbytes:
        fail("T-max-nbytes", 4, "chunk.header.nbytes",
             f"nbytes {i.nbytes} exceeds the limit of {max_nbytes}")
    if i.extended:
        if i.cbytes < fc.LEN_EXTENDED:
            fail("H6", 12, "chunk.header.cbytes",
                 f"cbytes {i.cbytes} is below the 32-byte extended header")
        if n < fc.LEN_EXTENDED:
            fail("H7", n, "chunk.header.extended", f"the extended header needs 32 bytes, got {n}")
        if i.version == 3:
            v = fc.FAST_EXTENDED_ALPHA.unpack_from(src, fc.LEN_HEADER)
            i.slots, i.metas = list(v[0:5]) + [0], list(v[6:11]) + [0]
            i.udcodec = i.compcode_meta = i.flags2 = 0
            i.b2flags = v[12]
        else:
            v = fc.FAST_EXTENDED.unpack_from(src, fc.LEN_HEADER)
            i.slots, i.udcodec, i.compcode_meta = list(v[0:6]), v[6], v[7]
            i.metas, i.flags2, i.b2flags = list(v[8:14]), v[14], v[15]
    else:
        i.slots, i.metas = _flags_to_slots(i.flags)
        i.udcodec = i.compcode_meta = i.flags2 = i.b2flags = 0
    b2 = i.b2flags
    i.use_dict = bool(b2 & 0x01)
    i.lazy = bool(b2 & 0x08)
    i.special = (b2 >> 4) & 0x07
    i.instr = bool(b2 & 0x80)
    i.vl = bool(i.flags2 & 0x01)
    i.legacy = i.version <= 2
    if i.flags2 & 0xFE:
        fail("T-flags2", 30, "chunk.header.extended.blosc2_flags2",
             f"reserved bits set in blosc2_flags2 ({i.flags2:#04x})")
    if i.blocksize <= 0:
        fail("H3", 8, "chunk.header.blocksize", f"blocksize {i.blocksize} is not positive")
    if i.blocksize > MAX_BLOCKSIZE:
        fail("H4", 8, "chunk.header.blocksize",
             f"blocksize {i.blocksize} exceeds the maximum {MAX_BLOCKSIZE}")
    if i.vl and i.special:
        fail("H8", 31, "chunk.header.extended.blosc2_flags",
             "a VL-block chunk cannot be special")
    if i.vl and i.memcpyed:
        fail("H12", 2, "chunk.header.flags", "a VL-block chunk cannot be memcpyed")
    if i.special > 4:
        fail("D2", 31, "chunk.header.extended.blosc2_flags",
             f"unknown special kind {i.special}")
    # a lazy chunk's cbytes counts data left in the frame; special chunks are
    # never lazy, whatever the bit says (C-Blosc2 misses that: V1)
    if i.cbytes > n and not (i.lazy and not i.special):
        fail("H14", n, "chunk.header.cbytes",
             f"cbytes {i.cbytes} claims more than the {n} bytes given")
    i.dict = i.value = None
    i.bstarts = []
    i.split = False
    if i.special:
        _check_special(i, n)
        i.nblocks = 0 if i.nbytes == 0 else -(-i.nbytes // min(i.blocksize, i.nbytes))
        i.ofs_streams = fc.LEN_EXTENDED
        return i
    if i.vl:
        i.nblocks = i.blocksize
    elif i.nbytes == 0:
        i.nblocks = 0
    else:
        if i.blocksize > i.nbytes:
            i.blocksize = i.nbytes          # C-Blosc2 clamps it (rule H13)
        i.nblocks = -(-i.nbytes // i.blocksize)
    if i.memcpyed:
        if i.cbytes != i.nbytes + i.overhead:
            fail("D3", 12, "chunk.header.cbytes",
                 f"a memcpyed chunk must have cbytes = nbytes + {i.overhead}, "
                 f"got {i.cbytes} for nbytes {i.nbytes}")
        i.ofs_streams = i.overhead
        return i
    if i.nbytes == 0 and not i.vl:
        i.ofs_streams = i.overhead
        if i.cbytes != i.overhead and not i.lazy:
            fail("D4", 12, "chunk.header.cbytes",
                 f"an empty chunk must have cbytes {i.overhead}, got {i.cbytes}")
        return i
    end = i.overhead + 4 * i.nblocks
    limit = min(i.cbytes, n)
    if end > limit:
        fail("D6", limit, "chunk.bstarts",
             f"{i.nblocks} block starts need {end} bytes, the chunk has {limit}")
    i.bstarts = list(struct.unpack_from(f"<{i.nblocks}i", src, i.overhead))
    i.ofs_streams = end
    if i.lazy:
        return i                       # bstarts point into a frame, not here
    if i.use_dict:
        if end + 4 > i.cbytes:
            fail("D7", i.cbytes, "chunk.dict.dsize", "no room for the dictionary size")
        dsize = _I32.unpack_from(src, end)[0]
        if not 0 < dsize <= MAX_DICTSIZE:
            fail("D8", end, "chunk.dict.dsize",
                 f"dictionary size {dsize} is outside 1..{MAX_DICTSIZE}")
        if end + 4 + dsize > i.cbytes:
            fail("D9", i.cbytes, "chunk.dict.dict",
                 f"the {dsize}-byte dictionary runs past the chunk end ({i.cbytes})")
        i.dict = bytes(src[end + 4:end + 4 + dsize])
        i.ofs_streams = end + 4 + dsize
    _check_bstarts(i)
    if not i.vl:
        _derive_split(i)
    return i


def _check_special(i: _Info, n: int) -> None:
    if not i.extended:
        return
    if i.special == 3:
        w = i.cbytes - fc.LEN_EXTENDED
        if not (0 < w <= MAX_BLOCKSIZE and w <= i.nbytes and i.nbytes % w == 0):
            fail("H9", 12, "chunk.header.cbytes",
                 f"a value chunk's value is cbytes - 32 = {w} bytes, which must be > 0 "
                 f"and divide nbytes {i.nbytes}")
        i.value = None     # filled by the caller that holds the buffer
    elif i.special in (2, 4) and i.nbytes % i.typesize:
        fail("H10", 4, "chunk.header.nbytes",
             f"nbytes {i.nbytes} is not a multiple of typesize {i.typesize}")
    elif i.cbytes != fc.LEN_EXTENDED:
        fail("T-special-cbytes", 12, "chunk.header.cbytes",
             f"a {enums.SPECIALS[i.special]} chunk has cbytes 32, got {i.cbytes}")
    if i.special == 2 and i.typesize not in _NAN and i.nbytes:
        fail("D-nan", 3, "chunk.header.typesize",
             f"a NaN chunk needs typesize 4 or 8, got {i.typesize}")


def _check_bstarts(i: _Info) -> None:
    lo, hi = i.ofs_streams, i.cbytes - 4
    if i.bstarts and lo <= min(i.bstarts) and max(i.bstarts) <= hi:
        pass                      # the common case, without a Python loop
    else:
        for j, b in enumerate(i.bstarts):
            if not lo <= b <= hi:
                fail("B1", i.overhead + 4 * j, f"chunk.bstarts[{j}]",
                     f"block start {b} is outside the streams section {lo}..{hi}")
    if i.vl:
        prev = -1
        for j, b in enumerate(i.bstarts):
            if b <= prev:
                fail("VL2", i.overhead + 4 * j, f"chunk.bstarts[{j}]",
                     "VL-block starts must be strictly increasing")
            prev = b


def _derive_split(i: _Info) -> None:
    dont_split = bool(i.flags & 0x10)
    if i.legacy:
        # C-Blosc 1.x: written before the dont-split flag existed, splitting
        # was implied by typesize and block size, and 1.x readers still use it.
        i.split = (not dont_split and i.typesize <= MAX_SPLITS
                   and i.blocksize // i.typesize >= LEGACY_MIN_SPLIT)
    else:
        i.split = not dont_split
    full_blocks = i.nbytes // i.blocksize
    if i.split and full_blocks and i.typesize > 1:
        if i.blocksize < i.typesize:
            fail("B2", 8, "chunk.header.blocksize",
                 f"blocksize {i.blocksize} is smaller than typesize {i.typesize} "
                 "in a split chunk")
        if i.blocksize % i.typesize:
            fail("B3", 8, "chunk.header.blocksize",
                 f"blocksize {i.blocksize} is not a multiple of typesize {i.typesize} "
                 "in a split chunk: the last bytes of each block are never written")


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


def _codec_label(i: _Info) -> str:
    if i.compformat == enums.COMPFORMAT_UDCODEC:
        return enums.codec_name(i.udcodec)
    return enums.COMPFORMATS[i.compformat]


def parse_chunk(src) -> Chunk:
    """Describe the chunk in ``src`` (bytes-like) without decompressing it.

    Raises FormatError (offset and path set) for a malformed chunk.
    """
    mv = _view(src)
    i = _read_info(mv)
    header = parse(fc.Header, mv, 0, "chunk.header")
    if i.special == 3:
        i.value = bytes(mv[fc.LEN_EXTENDED:i.cbytes])
    flist = [(enums.filter_name(f), m) for f, m in zip(i.slots, i.metas) if f]
    return Chunk(
        header=header, version=i.version, typesize=i.typesize, nbytes=i.nbytes,
        cbytes=i.cbytes, blocksize=header.blocksize, nblocks=i.nblocks,
        codec=_codec_label(i), filters=flist, special=enums.SPECIALS[i.special],
        memcpyed=i.memcpyed and not i.special, split=i.split, dict=i.dict,
        bstarts=i.bstarts, lazy=i.lazy, vlblocks=i.vl, versionlz=i.versionlz,
        instrumented=i.instr, value=i.value, ofs_streams=i.ofs_streams,
        slots=list(i.slots), filters_meta=list(i.metas))


def chunk_sizes(src) -> tuple[int, int, int]:
    """``(nbytes, cbytes, blocksize)`` from the 16-byte header alone."""
    mv = _view(src)
    if len(mv) < fc.LEN_HEADER:
        fail("H1", len(mv), "chunk.header", f"a chunk needs at least 16 bytes, got {len(mv)}")
    _, _, _, _, nbytes, blocksize, cbytes = fc.FAST_HEADER.unpack_from(mv, 0)
    return nbytes, cbytes, blocksize


def _view(src) -> memoryview:
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

class _Decoder:
    """Decodes the blocks of one regular or VL-block chunk."""

    def __init__(self, i: _Info, src: memoryview):
        self.i = i
        self.src = src
        self.codec = None
        self.codec_error: UnsupportedError | None = None
        if not i.special and not i.memcpyed:
            try:
                # only the 6-slot extended header (versions >= 4) has udcodec
                has_ud = i.extended and i.version != 3
                self.codec = decoder_for(i.compformat, i.udcodec if has_ud else None,
                                         2 if i.compformat != 6 else 22,
                                         "chunk.header.flags.compformat"
                                         if i.compformat != 6 else "chunk.header.extended.udcodec")
            except UnsupportedError as e:
                self.codec_error = e
        pipeline = []
        for slot in range(5, -1, -1):
            fid = i.slots[slot]
            if fid not in _filters.DECODERS:
                ofs = fc.LEN_HEADER + slot if i.extended else 2
                path = f"chunk.header.extended.filters[{slot}]" if i.extended \
                    else "chunk.header.flags"
                raise UnsupportedError(f"filter {enums.filter_name(fid)} (id {fid}) cannot be "
                                       "decoded by this build", ofs, path)
            fn = _filters.DECODERS[fid]
            if fn is None:
                continue
            if fid == _filters.SHUFFLE and not i.extended and i.typesize <= 1:
                continue     # a Blosc1 shuffle of 1-byte items is a copy
            pipeline.append((fn, i.metas[slot], fid))
        self.pipeline = pipeline
        self.uses_delta = any(fid == _filters.DELTA for _, _, fid in pipeline)
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
        i = self.i
        entry = _dl.NATIVE_DECODERS.get(self.codec.code) if self.codec is not None else None
        if entry is None or (first and self.uses_delta):
            return False
        pipeline = [(fid, meta) for _fn, meta, fid in self.pipeline]
        failed = native.decode_chunk(
            self.src, out, cbytes=i.cbytes, bstarts=i.bstarts, nbytes=i.nbytes,
            blocksize=i.blocksize, typesize=i.typesize, version=i.version, split=i.split,
            token_follows=i.version >= 4, pipeline=pipeline, codec_kind=entry[0],
            codec_fns=entry[1], dict=i.dict, nthreads=nthreads, first=first, count=count)
        if failed < 0:
            return True
        block0 = out[:self.block_size(0)] if self.uses_delta else None
        j = failed
        self.decode_block(j, memoryview(bytearray(self.block_size(j))), block0)
        fail("B7", i.bstarts[j], f"chunk.blocks[{j}]",
             "the block does not decode (native decoder)")

    def need_codec(self) -> Codec:
        """The stream decoder, or the UnsupportedError saved when it was looked up."""
        if self.codec is None:
            assert self.codec_error is not None
            raise self.codec_error
        return self.codec

    def block_size(self, j: int) -> int:
        i = self.i
        if j == i.nblocks - 1 and i.nbytes % i.blocksize:
            return i.nbytes % i.blocksize
        return i.blocksize

    def decode_block(self, j: int, dst: memoryview, block0: memoryview | None) -> None:
        """Decode block ``j`` into ``dst`` (exactly the block's size)."""
        bsize = len(dst)
        if self.pipeline:
            a, b = self.scratch(bsize)
            target = a
        else:
            target = dst
        self.read_streams(j, target, bsize)
        if self.pipeline:
            self.unfilter(a, b, dst, _filters.BlockContext(self.i.version, self.i.typesize,
                                                           j, block0))

    def unfilter(self, a: memoryview, b: memoryview, dst: memoryview, ctx) -> None:
        """Undo the pipeline on the streams decoded into ``a``, ping-ponging
        through ``b`` and ending in ``dst``."""
        cur = a
        last = len(self.pipeline) - 1
        for k, (fn, meta, _fid) in enumerate(self.pipeline):
            nxt = dst if k == last else (b if cur is a else a)
            fn(cur, nxt, meta, ctx)
            cur = nxt

    def read_streams(self, j: int, out: memoryview, bsize: int) -> None:
        i, src = self.i, self.src
        leftover = bsize != i.blocksize
        nstreams = i.typesize if (i.split and not leftover) else 1
        neblock = bsize // nstreams
        pos = i.bstarts[j]
        end = i.cbytes
        token_follows = i.version >= 4
        for k in range(nstreams):
            path = f"chunk.blocks[{j}].streams[{k}]"
            if pos + 4 > end:
                fail("B4", end, path + ".csize", "the chunk ends before this stream's size")
            csize = _I32.unpack_from(src, pos)[0]
            pos += 4
            seg = out[k * neblock:(k + 1) * neblock]
            if csize == 0:
                seg[:] = bytes(neblock) if neblock < 4096 else _zeros(neblock)
            elif csize < 0:
                if token_follows:
                    if pos >= end:
                        fail("B5", end, path + ".token", "the chunk ends before the run token")
                    token = src[pos]
                    if not token & 1:
                        raise UnsupportedError(f"stream token {token:#04x} is not a run "
                                               "(other encodings are reserved)",
                                               pos, path + ".token")
                    pos += 1
                if csize < -255:
                    fail("B6", pos - 4 - token_follows, path + ".csize",
                         f"a run stream encodes one byte, csize {csize} is below -255")
                _fill(seg, -csize)
            else:
                if csize > end - pos:
                    fail("B4", pos - 4, path + ".csize",
                         f"stream of {csize} bytes runs past the chunk end ({end})")
                payload = src[pos:pos + csize]
                if csize == neblock:
                    seg[:] = payload
                else:
                    codec = self.need_codec()
                    got = codec.decompress_into(payload, seg, i.dict)
                    if got != neblock:
                        fail("B7", pos, path + ".cdata",
                             f"{codec.name} stream decoded to {got} bytes, expected {neblock}")
                pos += csize

    def decode_vl_block(self, j: int, dst: memoryview) -> None:
        i, src = self.i, self.src
        start = i.bstarts[j]
        stop = i.bstarts[j + 1] if j + 1 < i.nblocks else i.cbytes
        size = _I32.unpack_from(src, start)[0]
        plen = stop - start - 4
        path = f"chunk.blocks[{j}]"
        if size != len(dst):
            fail("VL5", start, path + ".size", f"block size {size} disagrees with {len(dst)}")
        if plen <= 0:
            fail("VL6", start + 4, path + ".payload", "empty VL-block payload")
        payload = src[start + 4:stop]
        target = dst
        if self.pipeline:
            a, b = self.scratch(size)
            target = a
        if plen == size:
            target[:] = payload
        else:
            codec = self.need_codec()
            got = codec.decompress_into(payload, target, i.dict)
            if got != size:
                fail("B7", start + 4, path + ".payload",
                     f"{codec.name} stream decoded to {got} bytes, expected {size}")
        if self.pipeline:
            # VL blocks are delta-encoded against themselves (offset 0).
            self.unfilter(a, b, dst, _filters.BlockContext(i.version, i.typesize, 0, None))


_ZERO_CACHE: dict[int, bytes] = {}


def _zeros(n: int) -> bytes:
    z = _ZERO_CACHE.get(n)
    if z is None:
        z = bytes(n)
        if len(_ZERO_CACHE) < 16:
            _ZERO_CACHE[n] = z
    return z


def _fill(seg: memoryview, value: int) -> None:
    seg[:] = bytes([value]) * len(seg)


def _vl_sizes(i: _Info, src: memoryview) -> list[int]:
    sizes = []
    total = 0
    for j, b in enumerate(i.bstarts):
        nxt = i.bstarts[j + 1] if j + 1 < i.nblocks else i.cbytes
        if nxt > i.cbytes:
            fail("VL3", i.overhead + 4 * j, f"chunk.bstarts[{j + 1}]", "block runs past cbytes")
        size = _I32.unpack_from(src, b)[0]
        if size <= 0:
            fail("VL4", b, f"chunk.blocks[{j}].size", f"VL-block size {size} is not positive")
        total += size
        if total > i.nbytes:
            fail("VL7", b, f"chunk.blocks[{j}].size",
                 f"VL-block sizes add up past nbytes ({i.nbytes})")
        sizes.append(size)
    if total != i.nbytes:
        fail("VL7", 4, "chunk.header.nbytes",
             f"VL-block sizes add up to {total}, nbytes is {i.nbytes}")
    return sizes


def _check_decodable(i: _Info) -> None:
    if i.lazy:
        raise UnsupportedError("lazy chunks exist only inside C-Blosc2's memory; "
                               "their data is not in the chunk", 31,
                               "chunk.header.extended.blosc2_flags.lazy", rule="T-lazy")
    if i.instr:
        raise UnsupportedError("instrumented chunks hold codec statistics, not data", 31,
                               "chunk.header.extended.blosc2_flags.instrumented",
                               rule="T-instr")
    if i.compformat == 7 and not i.memcpyed and not i.special:
        raise UnsupportedError("codec format 7 is defined by a super-chunk", 2,
                               "chunk.header.flags.compformat")


def _decode_all(i: _Info, src: memoryview, out: memoryview, nthreads: int) -> None:
    """Decode the whole chunk described by ``i`` into ``out`` (nbytes long)."""
    _check_decodable(i)
    if i.nbytes == 0:
        return
    if i.special:
        _fill_special(i, src, out)
        return
    if i.memcpyed:
        out[:] = src[i.overhead:i.overhead + i.nbytes]
        return
    dec = _Decoder(i, src)
    if i.vl:
        sizes = _vl_sizes(i, src)
        pos = 0
        spans = []
        for s in sizes:
            spans.append((pos, s))
            pos += s
        _run(nthreads, len(spans),
             lambda j: dec.decode_vl_block(j, out[spans[j][0]:spans[j][0] + spans[j][1]]))
        return
    if dec.decode_native(out, nthreads):
        return
    bs = i.blocksize
    block0 = out[:dec.block_size(0)] if dec.uses_delta else None

    def one(j: int) -> None:
        dec.decode_block(j, out[j * bs:j * bs + dec.block_size(j)], block0)

    if dec.uses_delta:
        one(0)                       # every other block is XORed against block 0
        _run(nthreads, i.nblocks - 1, lambda j: one(j + 1))
    else:
        _run(nthreads, i.nblocks, one)


def _run(nthreads: int, count: int, fn) -> None:
    if nthreads <= 1 or count <= 1:
        for j in range(count):
            fn(j)
        return
    with ThreadPoolExecutor(max_workers=min(nthreads, count)) as pool:
        # list() re-raises the first error of any block
        list(pool.map(fn, range(count)))


def _special_unit(i: _Info, src: memoryview) -> bytes:
    """The bytes a special chunk repeats (uninit is zero-filled: stricter than C)."""
    if i.special in (1, 4):
        return b"\0"
    if i.special == 2:
        return _NAN[i.typesize]
    return bytes(src[fc.LEN_EXTENDED:i.cbytes])


def _fill_special(i: _Info, src: memoryview, out: memoryview) -> None:
    if i.special in (1, 4):
        _zero_fill(out)
    else:
        _repeat(out, _special_unit(i, src))


def _zero_fill(out: memoryview) -> None:
    step = 1 << 20
    z = _zeros(min(step, len(out)))
    for p in range(0, len(out), step):
        q = min(p + step, len(out))
        out[p:q] = z[:q - p]


def _repeat(out: memoryview, unit: bytes) -> None:
    n = len(out)
    if n == 0:
        return
    filled = min(len(unit), n)
    out[:filled] = unit[:filled]
    while filled < n:       # doubling copies: log2(n) slice assignments
        k = min(filled, n - filled)
        out[filled:filled + k] = out[:k]
        filled += k


def _check_threads(nthreads: int) -> int:
    if not isinstance(nthreads, int) or nthreads < 1:
        raise ValueError(f"nthreads must be a positive int, got {nthreads!r}")
    return nthreads


def decompress(src, *, nthreads: int = 1, max_nbytes: int = MAX_NBYTES) -> bytes:
    """Decode a whole chunk of any format version.

    ``nthreads`` > 1 decodes blocks in parallel threads (the codecs release
    the GIL).  ``max_nbytes`` caps the uncompressed size a header may claim.
    Raises FormatError / UnsupportedError for bad or undecodable input.
    """
    _check_threads(nthreads)
    mv = _view(src)
    i = _read_info(mv, max_nbytes)
    obj, out = _buffers.new_bytes(i.nbytes)
    _decode_all(i, mv, out, nthreads)
    out.release()
    return _buffers.finish(obj)


def decompress_into(src, dst, *, nthreads: int = 1) -> int:
    """Decode a chunk into the writable bytes-like ``dst`` (at least nbytes
    long, else ValueError) and return nbytes."""
    _check_threads(nthreads)
    mv = _view(src)
    try:
        out = memoryview(dst)
    except TypeError:
        raise TypeError("dst must be a writable bytes-like object") from None
    if out.readonly:
        raise TypeError("dst must be writable")
    out = out.cast("B") if out.format != "B" or out.ndim != 1 else out
    i = _read_info(mv, MAX_NBYTES)
    if len(out) < i.nbytes:
        raise ValueError(f"dst holds {len(out)} bytes, the chunk needs {i.nbytes}")
    _decode_all(i, mv, out[:i.nbytes], nthreads)
    return i.nbytes


def getitem(src, start: int, nitems: int) -> bytes:
    """Items ``[start, start + nitems)`` of the chunk's typesize, decoding only
    the blocks that hold them (plus block 0 when the delta filter needs it)."""
    mv = _view(src)
    i = _read_info(mv)
    _check_decodable(i)
    ts = i.typesize
    if start < 0 or nitems < 0 or (start + nitems) * ts > i.nbytes:
        raise ValueError(f"items [{start}, {start + nitems}) of {ts} bytes are outside "
                         f"the chunk's {i.nbytes} bytes")
    lo, hi = start * ts, (start + nitems) * ts
    if hi == lo:
        return b""
    if i.special or i.memcpyed or i.vl:
        if i.memcpyed and not i.special:
            return bytes(mv[i.overhead + lo:i.overhead + hi])
        if i.special:
            unit = _special_unit(i, mv)
            base = lo - lo % len(unit)       # the range, aligned to the unit
            buf = memoryview(bytearray(hi - base))
            _repeat(buf, unit)
            return bytes(buf[lo - base:])
        return decompress(mv)[lo:hi]
    dec = _Decoder(i, mv)
    bs = i.blocksize
    first, last = lo // bs, (hi - 1) // bs
    base = first * bs
    _keep, buf = _buffers.new_bytes((last - first + 1) * bs)   # scratch, never handed out
    if dec.decode_native(buf, 1, first, last - first + 1):
        return bytes(buf[lo - base:hi - base])
    block0 = None
    if dec.uses_delta:
        block0 = memoryview(bytearray(dec.block_size(0)))
        dec.decode_block(0, block0, None)
    for j in range(first, last + 1):
        size = dec.block_size(j)
        dst = buf[(j - first) * bs:(j - first) * bs + size]
        if j == 0 and block0 is not None:
            dst[:] = block0
        else:
            dec.decode_block(j, dst, block0)
    return bytes(buf[lo - base:hi - base])
