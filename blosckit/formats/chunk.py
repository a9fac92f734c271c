"""Chunk structures of Blosc1 and Blosc2, chunk format versions 1 to 6.

Every layout detail of a chunk is declared here once and used both to parse
and to build.  The prose for each field is in specs/chunk.md; anchors are
given per section.  Field names follow the C names of the upstream chunk
format document, so a grep for a C name lands on its field.
"""
from __future__ import annotations

import functools

import construct as cs
from construct import this

from . import fast_format

# ---------------------------------------------------------------------------
# specs/chunk.md#header -- the 16-byte header shared by every version
# ---------------------------------------------------------------------------

ChunkFlags = cs.BitStruct(
    "compformat" / cs.BitsInteger(3) * "bits 5-7: codec format (formats.enums.COMPFORMATS)",
    "dont_split" / cs.Flag * "bit 4: each block is one stream",
    "delta" / cs.Flag * "bit 3: Blosc1 delta filter",
    "bitshuffle" / cs.Flag * "bit 2: Blosc1 bitshuffle filter",
    "memcpyed" / cs.Flag * "bit 1: data stored uncompressed after the header",
    "shuffle" / cs.Flag * "bit 0: Blosc1 byte shuffle filter",
)

ChunkHeader = cs.Struct(
    "version" / cs.Int8ul * "chunk format version",
    "versionlz" / cs.Int8ul * "version of the codec's stream format",
    "flags" / ChunkFlags * "flags and codec format",
    "typesize" / cs.Int8ul * "bytes per item",
    "nbytes" / cs.Int32sl * "uncompressed size of the chunk",
    "blocksize" / cs.Int32sl * "uncompressed bytes per block (VL-block chunks: number of blocks)",
    "cbytes" / cs.Int32sl * "size of the whole chunk, header included",
)
LEN_HEADER = 16
LEN_EXTENDED = 32

# ---------------------------------------------------------------------------
# specs/chunk.md#extended-header -- bytes 16-31, present when flags has both
# shuffle and bitshuffle set
# ---------------------------------------------------------------------------

Blosc2Flags = cs.BitStruct(
    "instrumented" / cs.Flag * "bit 7: streams hold instrumentation records",
    "special" / cs.BitsInteger(3) * "bits 4-6: special chunk kind (formats.enums.SPECIALS)",
    "lazy" / cs.Flag * "bit 3: in-memory lazy chunk with a trailer",
    "unimplemented" / cs.Flag * "bit 2: never used by a writer",
    "big_endian" / cs.Flag * "bit 1: writer was big-endian (information only)",
    "use_dict" / cs.Flag * "bit 0: a dictionary section follows the bstarts",
)

Blosc2Flags2 = cs.BitStruct(
    "reserved" / cs.BitsInteger(7) * "bits 1-7: must be zero",
    "vl_blocks" / cs.Flag * "bit 0: variable-length blocks",
)

# Version 4 onwards: six filter slots plus codec bytes.
ExtendedHeader = cs.Struct(
    "filters" / cs.Array(6, cs.Int8ul) * "filter id per slot, applied in slot order",
    "udcodec" / cs.Int8ul * "codec id when the codec format is 6",
    "compcode_meta" / cs.Int8ul * "codec parameter",
    "filters_meta" / cs.Array(6, cs.Int8ul) * "parameter per filter slot",
    "blosc2_flags2" / Blosc2Flags2 * "secondary flags",
    "blosc2_flags" / Blosc2Flags * "Blosc2 flags",
)

# Version 3 (alpha): five filter slots, reserved bytes where later versions
# put the sixth slot and the codec bytes.
ExtendedHeaderAlpha = cs.Struct(
    "filters" / cs.Array(5, cs.Int8ul) * "filter id per slot, applied in slot order",
    "reserved1" / cs.Bytes(3) * "unused",
    "filters_meta" / cs.Array(5, cs.Int8ul) * "parameter per filter slot",
    "reserved2" / cs.Bytes(2) * "unused",
    "blosc2_flags" / Blosc2Flags * "Blosc2 flags",
)

EXTENDED_HEADERS = {3: ExtendedHeaderAlpha}   # every other version: ExtendedHeader


def is_extended(flags) -> bool:
    """The header is 32 bytes when flags has shuffle and bitshuffle both set."""
    return bool(flags.shuffle and flags.bitshuffle)


Header = cs.Struct(
    *ChunkHeader.subcons,
    "extended" / cs.If(lambda c: is_extended(c.flags),
                       cs.Switch(this.version, EXTENDED_HEADERS, default=ExtendedHeader))
    * "bytes 16-31: the Blosc2 extension of the header",
)

# ---------------------------------------------------------------------------
# specs/chunk.md#body -- what follows the header
# ---------------------------------------------------------------------------

Bstarts = cs.Array(this.num_blocks, cs.Int32sl)

DictSection = cs.Struct(
    "dsize" / cs.Int32sl * "dictionary size in bytes, 1..32768",
    "dict" / cs.Bytes(lambda c: max(c.dsize, 0)) * "dictionary bytes",
)

# A stream of a regular block.  csize > 0: payload (raw when csize equals the
# stream's uncompressed size); 0: all zeros; < 0: run of byte -csize, followed
# by a token byte from version 4 on.
Stream = cs.Struct(
    "csize" / cs.Int32sl * "payload size, 0 for zeros, negative for a byte run",
    "token" / cs.If(lambda c: c.csize < 0 and c._.version >= 4, cs.Int8ul)
    * "bit 0 set: run-length of byte -csize",
    "cdata" / cs.If(this.csize > 0, cs.Bytes(this.csize)) * "codec stream or raw bytes",
)

Block = cs.Array(this.num_streams, Stream)

# A block of a VL-block chunk: one stream, its payload running to the next
# bstart (or to cbytes for the last block).
VLBlock = cs.Struct(
    "size" / cs.Int32sl * "uncompressed size of the block",
    "payload" / cs.Bytes(lambda c: c._.len_payload) * "codec stream, raw when as long as size",
)

# The trailer of an in-memory lazy chunk (never valid in stored data).
LazyTrailer = cs.Struct(
    "nchunk" / cs.Int32sl * "chunk number in its super-chunk",
    "offset" / cs.Int64sl * "chunk offset inside its frame",
    "block_csizes" / cs.Array(lambda c: c._.num_blocks, cs.Int32sl) * "compressed size per block",
)


def _num_blocks(c) -> int:
    h = c.header
    ext = h.extended
    if ext is not None and getattr(ext, "blosc2_flags2", None) is not None \
            and ext.blosc2_flags2.vl_blocks:
        return max(h.blocksize, 0)
    if h.blocksize <= 0 or h.nbytes <= 0:
        return 0
    return -(-h.nbytes // h.blocksize)


def _has_bstarts(c) -> bool:
    h = c.header
    if h.flags.memcpyed:
        return False
    ext = h.extended
    return not (ext is not None and ext.blosc2_flags.special)


def _special(c) -> int:
    ext = c.header.extended
    return ext.blosc2_flags.special if ext is not None else 0


def _lazy(c) -> bool:
    ext = c.header.extended
    return bool(ext is not None and ext.blosc2_flags.lazy)


def _use_dict(c) -> bool:
    ext = c.header.extended
    return bool(ext is not None and ext.blosc2_flags.use_dict)


# The parts of a chunk that sit at fixed places: header, bstarts, dictionary,
# a special chunk's value.  Streams are reached through bstarts (which may be
# in any order), so they are parsed one block at a time with Block/VLBlock.
ChunkPrefix = cs.Struct(
    "header" / Header,
    "num_blocks" / cs.Computed(_num_blocks),
    "bstarts" / cs.If(_has_bstarts, Bstarts),
    # a lazy chunk's trailer, not a dictionary, follows its bstarts
    "dict" / cs.If(lambda c: _has_bstarts(c) and _use_dict(c) and not _lazy(c), DictSection),
    "lazy_trailer" / cs.If(lambda c: _has_bstarts(c) and _lazy(c), LazyTrailer),
    "value" / cs.If(lambda c: _special(c) == 3,
                    cs.Bytes(lambda c: max(c.header.cbytes - LEN_EXTENDED, 0))),
    "ofs_streams" / cs.Tell,
)

# ---------------------------------------------------------------------------
# Derived fast formats for hot paths (a test checks they agree with the
# declarations above on random bytes).
# ---------------------------------------------------------------------------
FAST_HEADER = fast_format(ChunkHeader)            # <BBBBiii
FAST_EXTENDED = fast_format(ExtendedHeader)       # <6BBB6BBB
FAST_EXTENDED_ALPHA = fast_format(ExtendedHeaderAlpha)


@functools.lru_cache(maxsize=1024)
def _bits_byte(con_name: str, items: tuple) -> int:
    # a BitStruct built once per distinct value, through its declaration
    return globals()[con_name].build(dict(items))[0]


def pack_header(h: dict) -> bytes:
    """Fast equivalent of ``Header.build(h)`` for the builder's hot path
    (construct spends 40-130 us on a header).  ``h`` holds the same fields;
    the bit fields may also be given as their raw byte.  A test checks it
    against ``Header.build``."""
    def byte(con_name, value):
        return value if isinstance(value, int) else _bits_byte(con_name, tuple(sorted(value.items())))
    out = FAST_HEADER.pack(h["version"], h["versionlz"], byte("ChunkFlags", h["flags"]),
                           h["typesize"], h["nbytes"], h["blocksize"], h["cbytes"])
    ext = h.get("extended")
    if ext is None:
        return out
    b2 = byte("Blosc2Flags", ext["blosc2_flags"])
    if h["version"] in EXTENDED_HEADERS:      # the alpha layout
        return out + FAST_EXTENDED_ALPHA.pack(*ext["filters"], ext["reserved1"],
                                              *ext["filters_meta"], ext["reserved2"], b2)
    return out + FAST_EXTENDED.pack(*ext["filters"], ext["udcodec"], ext["compcode_meta"],
                                    *ext["filters_meta"], byte("Blosc2Flags2", ext["blosc2_flags2"]),
                                    b2)
