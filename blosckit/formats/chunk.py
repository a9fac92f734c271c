"""Chunk structures of Blosc1 and Blosc2, chunk format versions 1 to 6, and
the rules each one must satisfy.

Every layout detail of a chunk is declared here once and used to parse, to
build, to inspect and to validate; the rules sit beside the declaration they
check.  The prose for each field is in specs/chunk.md (anchors per section);
field names follow the C names of the upstream chunk format document, so a
grep for a C name lands on its field.

Rules read a :class:`ChunkView` (the header read through the fast formats
derived below, plus what a decoder derives from it) that the reader fills in
stages; ``VERSION_RULES`` .. ``LAYOUT_RULES`` list them in the order the
reader applies them.  Offsets come from the declarations, never literals.
"""
from __future__ import annotations

import functools
import struct
from typing import Any, Callable, NamedTuple

import construct as cs
from construct import this

from . import ctx_get, fast_format, fast_parser, inner
from . import enums, signatures
from .layout import Layout
from .rules import OFFSETS, RaiseFirst, rule
from .truncation import INPUT, TRUNCATION_RULES, Truncation, needed  # noqa: F401 (INPUT: fc.INPUT)

# ---------------------------------------------------------------------------
# specs/chunk.md#header -- the 16-byte header shared by every version
# ---------------------------------------------------------------------------

ChunkFlags = cs.BitStruct(
    "compformat" / cs.BitsInteger(3) * "bits 5-7: codec format (formats.enums.COMPFORMATS)",
    "dont_split" / cs.Flag * "bit 4: each block is one stream",
    "delta" / cs.Flag * "bit 3: Blosc1 delta filter",
    "bitshuffle" / cs.Flag * "bit 2: Blosc1 bitshuffle filter (with bit 0: extended header)",
    "memcpyed" / cs.Flag * "bit 1: data stored uncompressed after the header",
    "shuffle" / cs.Flag * "bit 0: Blosc1 byte shuffle filter (with bit 2: extended header)",
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
HEADER = Layout(ChunkHeader, "<", root="chunk.header")
LEN_HEADER = HEADER.size             # 16
# The flags byte's bits, from the declaration.
FLAG_SHUFFLE = HEADER["flags.shuffle"].bits
FLAG_MEMCPYED = HEADER["flags.memcpyed"].bits
FLAG_BITSHUFFLE = HEADER["flags.bitshuffle"].bits
FLAG_DELTA = HEADER["flags.delta"].bits
FLAG_DONT_SPLIT = HEADER["flags.dont_split"].bits
FLAGS_EXTENDED = FLAG_SHUFFLE | FLAG_BITSHUFFLE

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

EXTENDED = Layout(ExtendedHeader, "<", root="chunk.header.extended", base=LEN_HEADER)
EXTENDED_ALPHA = Layout(ExtendedHeaderAlpha, "<", root="chunk.header.extended",
                        base=LEN_HEADER)
EXTENDED_LAYOUTS = {3: EXTENDED_ALPHA}         # every other version: EXTENDED
# The Blosc2 flag bytes' bits, from the declarations.
B2_DICT = EXTENDED["blosc2_flags.use_dict"].bits
B2_LAZY = EXTENDED["blosc2_flags.lazy"].bits
B2_INSTR = EXTENDED["blosc2_flags.instrumented"].bits
F2_VL_BLOCKS = EXTENDED["blosc2_flags2.vl_blocks"].bits
F2_RESERVED = EXTENDED["blosc2_flags2.reserved"].bits


NUM_FILTER_SLOTS = EXTENDED["filters"].count                  # 6
# Blosc1 filter flags, placed in filter slots the way C-Blosc2 places them
# (shuffle or bitshuffle last, delta before it).
BLOSC1_FLAG_SLOTS = (
    (FLAG_SHUFFLE, NUM_FILTER_SLOTS - 1, enums.lookup(enums.FILTERS, "shuffle")),
    (FLAG_BITSHUFFLE, NUM_FILTER_SLOTS - 1, enums.lookup(enums.FILTERS, "bitshuffle")),
    (FLAG_DELTA, NUM_FILTER_SLOTS - 2, enums.lookup(enums.FILTERS, "delta")),
)


def meta_byte(meta: int) -> int:
    """A filter meta (-128..255) as the byte stored in its slot (negative
    metas wrap, as C-Blosc2 stores an int8)."""
    return meta & EXTENDED["filters_meta"].item_mask


def blosc1_slots(flags: int) -> list[int]:
    """The filter slots a 16-byte header's flags byte stands for."""
    slots = [0] * NUM_FILTER_SLOTS
    for bit, slot, fid in BLOSC1_FLAG_SLOTS:
        if flags & bit:
            slots[slot] = fid
    return slots


class RawHeader(NamedTuple):
    """What a chunk header's bytes say, read through the layouts with no
    rule applied (for builders and predicates that look at headers of
    chunks already read, or at candidates).  The extended fields are 0 (and
    ``has_extended`` False) when the flags announce no extended header or
    the bytes end before it; the alpha layout has no udcodec, compcode_meta
    nor blosc2_flags2 (0)."""
    version: int
    versionlz: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    has_extended: bool
    filters: tuple[int, ...]
    filters_meta: tuple[int, ...]
    udcodec: int
    compcode_meta: int
    blosc2_flags2: int
    blosc2_flags: int

    @property
    def compformat(self) -> int:
        return compformat(self.flags)

    @property
    def special(self) -> int:
        return special_kind(self.blosc2_flags)

    @property
    def vl_blocks(self) -> bool:
        return bool(self.blosc2_flags2 & F2_VL_BLOCKS)

    @property
    def six_slots(self) -> bool:
        """The extended header has six filter slots and the codec bytes
        (every version but the alpha one)."""
        return self.has_extended and self.version not in EXTENDED_LAYOUTS


def raw_header(buf, at: int = 0) -> RawHeader:
    """The header at ``at`` of ``buf`` (at least 16 bytes there; struct.error
    otherwise), as stored."""
    h = HEADER.struct.unpack_from(buf, at)
    flags = h[_FLAGS_AT]
    if extended_flags(flags) and len(buf) - at >= LEN_EXTENDED:
        lay = extended_layout(h[_VERSION_AT])
        x = lay.struct.unpack_from(buf, at + lay.base)
        ext = [get(x) for get in _RAW_EXT[lay]]
        return RawHeader(*h, True, tuple(ext[0]) + (0,) * (NUM_FILTER_SLOTS - len(ext[0])),
                         tuple(ext[1]) + (0,) * (NUM_FILTER_SLOTS - len(ext[1])), *ext[2:])
    return RawHeader(*h, False, (0,) * NUM_FILTER_SLOTS, (0,) * NUM_FILTER_SLOTS, 0, 0, 0, 0)


class StoredChunk(NamedTuple):
    """What a frame builder reads of every chunk it stores (bytes; the
    special kind as formats.enums.SPECIALS, 0 for none)."""
    nbytes: int
    cbytes: int
    blocksize: int
    special: int
    vl_blocks: bool


def stored_chunk(buf) -> StoredChunk:
    """The sizes and kind of the chunk starting ``buf`` (16 bytes at least;
    struct.error otherwise), without the rest of its header: a frame
    builder reads this once per chunk, :func:`raw_header` once per frame."""
    version, _, flags, _, nbytes, blocksize, cbytes = _UNPACK_HEADER(buf, 0)
    if flags & FLAGS_EXTENDED != FLAGS_EXTENDED or len(buf) < LEN_EXTENDED:
        return _new_sizes((nbytes, cbytes, blocksize, 0, False))
    b2_at, b2f2_at = _KIND_AT.get(version, _KIND_AT_CURRENT)
    return _new_sizes((nbytes, cbytes, blocksize,
                       (buf[b2_at] >> _SPECIAL_SHIFT) & _SPECIAL_MASK,
                       b2f2_at is not None and bool(buf[b2f2_at] & F2_VL_BLOCKS)))


def plain_chunk_test(nbytes: int, vl_blocks: bool) -> Callable[[Any], int]:
    """For frame builders: a function giving the ``cbytes`` of a chunk that
    holds exactly ``nbytes``, is not special, has ``vl_blocks`` as given and
    a current extended header, all as its header says (-1 for any other
    chunk: :func:`stored_chunk` then reads it).  It reads no more than that,
    once per chunk of a frame; tested equal to :func:`stored_chunk`."""
    unpack, (b2_at, b2f2_at) = _UNPACK_HEADER, _KIND_AT_CURRENT
    special_bits = _SPECIAL_MASK << _SPECIAL_SHIFT
    want_vl = F2_VL_BLOCKS if vl_blocks else 0
    odd = tuple(EXTENDED_LAYOUTS)

    def test(buf) -> int:
        if len(buf) < LEN_EXTENDED:
            return -1
        version, _, flags, _, n, _, cbytes = unpack(buf, 0)
        if (n != nbytes or cbytes != len(buf) or flags & FLAGS_EXTENDED != FLAGS_EXTENDED
                or version in odd or buf[b2_at] & special_bits
                or buf[b2f2_at] & F2_VL_BLOCKS != want_vl):
            return -1
        return cbytes
    return test


def extended_layout(version: int) -> Layout:
    """The extended-header layout of chunk format ``version``."""
    return EXTENDED_LAYOUTS.get(version, EXTENDED)


def compformat(flags: int) -> int:
    """The codec format held in the flags byte ``flags``."""
    return HEADER["flags.compformat"].of(flags)


def extended_flags(flags: int) -> bool:
    """The header is 32 bytes: the flags byte has shuffle and bitshuffle set."""
    return flags & FLAGS_EXTENDED == FLAGS_EXTENDED


def special_kind(blosc2_flags: int) -> int:
    """The special kind (formats.enums.SPECIALS) held in the blosc2_flags byte."""
    return EXTENDED["blosc2_flags.special"].of(blosc2_flags)


def marked_lazy(buf) -> bool:
    """The chunk in ``buf`` (bytes-like, the chunk's bytes or fewer) is
    marked lazy: an extended header held whole, the lazy bit set and no
    special kind (special chunks are never lazy, whatever the bit says: V1)."""
    if len(buf) < LEN_EXTENDED or not extended_flags(buf[_FLAGS_OFFSET]):
        return False
    b2 = buf[_B2FLAGS_OFFSET]
    return bool(b2 & B2_LAZY) and not special_kind(b2)


def raw_data_offset(h: RawHeader) -> int | None:
    """Where a memcpyed chunk's data starts (its bytes stored as they are),
    None for any other chunk (a special one included)."""
    if h.flags & FLAG_MEMCPYED and not h.special:
        return LEN_EXTENDED if extended_flags(h.flags) else LEN_HEADER
    return None


def streams_in_block(split: bool, typesize: int, bsize: int, blocksize: int) -> int:
    """How many streams a block of ``bsize`` bytes has: ``typesize`` in a
    split chunk, except for a short last block (``bsize`` != ``blocksize``),
    which is one stream like every block of an unsplit chunk."""
    return typesize if split and bsize == blocksize else 1


_FLAGS_AT = HEADER["flags"].index
_FLAGS_OFFSET = HEADER.offset("flags")
# the same byte in both extended layouts (a test checks the alpha one)
_B2FLAGS_OFFSET = EXTENDED.offset("blosc2_flags")
_VERSION_AT = HEADER["version"].index
_NBYTES_AT, _CBYTES_AT = HEADER["nbytes"].index, HEADER["cbytes"].index
_BLOCKSIZE_AT = HEADER["blocksize"].index
# extended layout -> where blosc2_flags and blosc2_flags2 (None: absent) sit
_KIND_AT = {lay: (lay.offset("blosc2_flags"),
                  lay.offset("blosc2_flags2") if "blosc2_flags2" in lay else None)
            for lay in (EXTENDED, EXTENDED_ALPHA)}
_KIND_AT = {v: _KIND_AT[lay] for v, lay in EXTENDED_LAYOUTS.items()}   # by chunk version
_KIND_AT_CURRENT = (EXTENDED.offset("blosc2_flags"), EXTENDED.offset("blosc2_flags2"))
_SPECIAL_SHIFT = EXTENDED["blosc2_flags.special"].shift
_SPECIAL_MASK = EXTENDED["blosc2_flags.special"].mask
_UNPACK_HEADER = HEADER.struct.unpack_from
# stored_chunk unpacks the 16-byte header by position
assert tuple(n for n in HEADER.fields if "." not in n) == (
    "version", "versionlz", "flags", "typesize", "nbytes", "blocksize", "cbytes")
_new_sizes = functools.partial(tuple.__new__, StoredChunk)   # no Python-level __new__
_RAW_EXT = {lay: tuple((lambda values: 0) if name not in lay else lay.getter(name)
                       for name in ("filters", "filters_meta", "udcodec", "compcode_meta",
                                    "blosc2_flags2", "blosc2_flags"))
            for lay in (EXTENDED, EXTENDED_ALPHA)}
assert RawHeader._fields[:7] == tuple(n for n in HEADER.fields if "." not in n)


def is_extended(flags) -> bool:
    """The header is 32 bytes when flags has shuffle and bitshuffle both set."""
    return bool(flags.shuffle and flags.bitshuffle)


Header = cs.Struct(
    *ChunkHeader.subcons,
    "extended" / cs.If(lambda c: is_extended(c.flags),
                       cs.Switch(this.version, EXTENDED_HEADERS, default=ExtendedHeader))
    * "bytes 16-31: the Blosc2 extension of the header",
)
LEN_EXTENDED = LEN_HEADER + ExtendedHeader.sizeof()      # 32
assert ExtendedHeaderAlpha.sizeof() == ExtendedHeader.sizeof()

# Field path -> offset, for every fixed field of both header layouts: the
# offsets rules and errors report.
OFFSETS.update(HEADER.offsets())
OFFSETS.update(EXTENDED_ALPHA.offsets())
OFFSETS.update(EXTENDED.offsets())


def switch_case(switch: cs.Switch, obj) -> cs.Construct:
    """The extended-header layout of a parsed header (for ``formats.walk``)."""
    return switch.cases.get(obj.version, switch.default)


# ---------------------------------------------------------------------------
# specs/chunk.md#body -- what follows the header
# ---------------------------------------------------------------------------

Bstarts = cs.Array(lambda c: ctx_get(c, "num_blocks"), cs.Int32sl)

DictSection = cs.Struct(
    "dsize" / cs.Int32sl * "dictionary size in bytes, 1..32768",
    "dict" / cs.Bytes(lambda c: max(c.dsize, 0)) * "dictionary bytes",
)

# Chunk format versions from which a run stream's csize is followed by a
# token byte (versions 1-3 have none).
VERSION_RUN_TOKEN = 4

# A stream of a regular block.  csize > 0: payload (raw when csize equals the
# stream's uncompressed size); 0: all zeros; < 0: run of byte -csize, followed
# by a token byte from version 4 on.
Stream = cs.Struct(
    "csize" / cs.Int32sl * "payload size, 0 for zeros, negative for a byte run",
    "token" / cs.If(lambda c: c.csize < 0 and ctx_get(c, "version") >= VERSION_RUN_TOKEN,
                    cs.Int8ul)
    * "bit 0 set: run-length of byte -csize",
    "cdata" / cs.If(this.csize > 0, cs.Bytes(this.csize)) * "codec stream or raw bytes",
)
TOKEN_RUN = 0x01

# A block of a VL-block chunk: one stream, its payload running to the next
# bstart (or to cbytes for the last block).
VLBlock = cs.Struct(
    "size" / cs.Int32sl * "uncompressed size of the block",
    "payload" / cs.Bytes(lambda c: ctx_get(c, "len_payload"))
    * "codec stream, raw when as long as size",
)

# The trailer of an in-memory lazy chunk (never valid in stored data).
LazyTrailer = cs.Struct(
    "nchunk" / cs.Int32sl * "chunk number in its super-chunk",
    "offset" / cs.Int64sl * "chunk offset inside its frame",
    "block_csizes" / cs.Array(lambda c: ctx_get(c, "num_blocks"), cs.Int32sl)
    * "compressed size per block",
)

# ---------------------------------------------------------------------------
# Derived fast formats for hot paths (tests check each against its
# declaration on random bytes).
# ---------------------------------------------------------------------------
FAST_HEADER = HEADER.struct                       # <BBBBiii
FAST_EXTENDED = EXTENDED.struct                   # <6BBB6BBB
FAST_EXTENDED_ALPHA = EXTENDED_ALPHA.struct
FAST_BSTART = fast_format(Bstarts.subcon)         # one bstart
FAST_DSIZE = fast_format(DictSection.dsize)
FAST_CSIZE = fast_format(Stream.csize)
FAST_VLSIZE = fast_format(VLBlock.size)
LEN_BSTART = FAST_BSTART.size
LEN_CSIZE = FAST_CSIZE.size
LEN_TOKEN = inner(Stream.token).thensubcon.sizeof()
LEN_VLSIZE = FAST_VLSIZE.size


def token_follows(version: int) -> bool:
    """A run stream's csize is followed by its token byte in this version."""
    return version >= VERSION_RUN_TOKEN


_PARSE_CHUNK_HEADER = fast_parser(ChunkHeader)
_PARSE_EXTENDED = {v: fast_parser(c) for v, c in EXTENDED_HEADERS.items()}
_PARSE_EXTENDED_DEFAULT = fast_parser(ExtendedHeader)


def parse_header(buf):
    """``Header.parse(buf)`` (without construct's ``_io`` entries), read
    through parsers derived from the declarations; the caller has checked
    that ``buf`` holds the header (16 or 32 bytes).  Tested against
    ``Header.parse`` by hypothesis."""
    h = _PARSE_CHUNK_HEADER(buf, 0)
    h["extended"] = None
    if is_extended(h.flags):
        h["extended"] = _PARSE_EXTENDED.get(h.version, _PARSE_EXTENDED_DEFAULT)(buf, LEN_HEADER)
    return h


@functools.lru_cache(maxsize=64)
def fast_bstarts(num_blocks: int) -> struct.Struct:
    """``struct.Struct`` reading ``num_blocks`` bstarts (derived from ``Bstarts``)."""
    return struct.Struct("<" + FAST_BSTART.format.lstrip("<") * num_blocks)


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


# ---------------------------------------------------------------------------
# What the rules read
# ---------------------------------------------------------------------------

MAX_NBYTES = 2**31 - 1
MAX_BLOCKSIZE = 536866816          # the format's largest block
MAX_DICTSIZE = 32768
LEGACY_MIN_SPLIT = 128             # C-Blosc 1.x: smallest per-stream size it split
MAX_SPLITS = 16                    # C-Blosc 1.x: largest typesize it split
NAN_WIDTHS = (4, 8)


class ChunkView:
    """A chunk's header read through the fast formats, plus what a decoder
    derives from it.  The reader fills it stage by stage; rules read it."""
    __slots__ = (
        "n", "max_nbytes",
        "version", "versionlz", "flags", "typesize", "nbytes", "hdr_blocksize", "cbytes",
        "extended", "overhead", "slots", "metas", "udcodec", "compcode_meta", "flags2",
        "b2flags", "special", "memcpyed", "vl", "lazy", "instr", "use_dict", "compformat",
        "blocksize", "nblocks", "bstarts", "ofs_dict", "ofs_streams", "dict", "split",
        "legacy",
    )
    n: int                  # bytes available in the input
    max_nbytes: int         # the caller's cap on nbytes
    version: int
    versionlz: int
    flags: int              # the raw flags byte
    typesize: int
    nbytes: int
    hdr_blocksize: int      # blocksize as stored
    cbytes: int
    extended: bool          # 32-byte header
    overhead: int           # the header length
    slots: list[int]        # filter id per slot (Blosc1 flags mapped to slots)
    metas: list[int]
    udcodec: int
    compcode_meta: int
    flags2: int
    b2flags: int
    special: int            # 0..7 (formats.enums.SPECIALS)
    memcpyed: bool
    vl: bool
    lazy: bool
    instr: bool
    use_dict: bool
    compformat: int
    blocksize: int          # clamped to nbytes as C-Blosc2 does
    nblocks: int
    bstarts: list[int]
    ofs_dict: int           # where the dictionary section starts (after the bstarts)
    ofs_streams: int        # where the streams section starts
    dict: bytes | None
    split: bool             # full blocks are split into typesize streams
    legacy: bool            # version <= 2: C-Blosc 1.x rules
    def has_udcodec(self) -> bool:
        """The header has the udcodec byte (a six-slot extended header)."""
        return self.extended and self.version not in EXTENDED_HEADERS

    # where T-max-nbytes reports (a whole output reports elsewhere: OutputCap)
    what = "nbytes"
    nbytes_at = OFFSETS["chunk.header.nbytes"]
    nbytes_path = "chunk.header.nbytes"


def bstart_offset(v: ChunkView, j: int) -> int:
    """Offset of bstart ``j``."""
    return v.overhead + LEN_BSTART * j


_H, _X = "chunk.header.", "chunk.header.extended."

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-header -- rules on the 16- and 32-byte header
# ---------------------------------------------------------------------------

# specs/chunk.md#rules-input: where the chunk ends, for the truncation rule
# (T-truncated, formats/truncation.py), at each stage of the reading.

def header_extent(n: int) -> Truncation:
    """The 16-byte header, before anything is read (``n`` input bytes)."""
    return Truncation(n, LEN_HEADER, "chunk.header", needed(LEN_HEADER, n))


def extended_extent(v: ChunkView) -> Truncation:
    """The extended header the flags announce (once H6 has passed: a chunk
    whose cbytes is below it is H6's, not a cut input's)."""
    end = LEN_EXTENDED if v.extended else LEN_HEADER
    return Truncation(v.n, end, _EXT, needed(LEN_EXTENDED, v.n))


def cbytes_extent(v: ChunkView) -> Truncation:
    """The whole chunk, ``cbytes`` long, once the header is read.  A lazy
    chunk's cbytes counts data left in its frame: its header is all it
    holds (special chunks are never lazy, whatever the bit says: V1)."""
    end = v.overhead if v.lazy and not v.special else v.cbytes
    return Truncation(v.n, end, "chunk", f"cbytes says the chunk is {v.cbytes} bytes")


INPUT_RULES = TRUNCATION_RULES


@rule("T-version", "error", _H + "version", "chunk.md#rules-header", "version is 1..6")
def version_known(v, src, sink):
    if v.version not in enums.VERSIONS:
        what = signatures.looks_like(src)
        sink(("version 0 was never written" if v.version == 0
              else f"unknown chunk version {v.version}")
             + (f": the input looks like {what}" if what else ""))


@rule("H2", "error", _H + "cbytes", "chunk.md#rules-header", "cbytes >= 16")
def cbytes_covers_header(v, src, sink):
    if v.cbytes < LEN_HEADER:
        sink(f"cbytes {v.cbytes} is below the {LEN_HEADER}-byte header")


@rule("H5", "error", _H + "typesize", "chunk.md#rules-header", "typesize > 0")
def typesize_positive(v, src, sink):
    if v.typesize == 0:
        sink("typesize is 0")


@rule("T-nbytes", "error", _H + "nbytes", "chunk.md#rules-header", "nbytes >= 0")
def nbytes_not_negative(v, src, sink):
    if v.nbytes < 0:
        sink(f"negative nbytes {v.nbytes}")


@rule("T-max-nbytes", "error", _H + "nbytes", "chunk.md#rules-header",
      "nbytes <= the caller's max_nbytes")
def nbytes_below_cap(v, src, sink):
    if v.nbytes > v.max_nbytes:
        sink(f"{v.what} {v.nbytes} exceeds the limit of {v.max_nbytes}", v.nbytes_at,
             v.nbytes_path)


class OutputCap:
    """A whole output (a frame, a b2nd array) under the caller's cap, as
    T-max-nbytes reads it: ``nbytes`` bytes reported at ``nbytes_at`` /
    ``nbytes_path``."""
    __slots__ = ("nbytes", "max_nbytes", "nbytes_at", "nbytes_path")
    what = "the output's size"

    def __init__(self, nbytes: int, max_nbytes: int, at: int, path: str):
        self.nbytes, self.max_nbytes, self.nbytes_at, self.nbytes_path = (
            nbytes, max_nbytes, at, path)


def check_output_cap(nbytes: int, max_nbytes: int | None, at: int, path: str) -> None:
    """The same limit on a whole output (a frame, a b2nd array), when the
    caller gives one: FormatError (T-max-nbytes) at ``at``/``path``."""
    if max_nbytes is not None:
        RaiseFirst().run(CAP_RULES, OutputCap(nbytes, max_nbytes, at, path), None)


CAP_RULES = (nbytes_below_cap,)


@rule("H6", "error", _H + "cbytes", "chunk.md#rules-header",
      "cbytes >= 32 when the header is extended")
def cbytes_covers_extended(v, src, sink):
    if v.extended and LEN_HEADER <= v.cbytes < LEN_EXTENDED:
        sink(f"cbytes {v.cbytes} is below the {LEN_EXTENDED}-byte extended header")


# A chunk of unknown version has no known layout: nothing else is read.
VERSION_RULES = (version_known,)
HEADER_RULES = (cbytes_covers_header, typesize_positive, nbytes_not_negative,
                nbytes_below_cap, cbytes_covers_extended)

# Rules on the fields of the extended header (run once it has been read;
# not when the input ends inside it: those bytes are not there).
_EXT = "chunk.header.extended"


@rule("T-flags2", "error", _X + "blosc2_flags2", "chunk.md#rules-header",
      "blosc2_flags2 bits 1-7 are zero", needs=(_EXT,))
def flags2_reserved_clear(v, src, sink):
    if v.flags2 & F2_RESERVED:
        sink(f"reserved bits set in blosc2_flags2 ({v.flags2:#04x})")


@rule("H3", "error", _H + "blocksize", "chunk.md#rules-header", "blocksize > 0")
def blocksize_positive(v, src, sink):
    if v.hdr_blocksize <= 0:
        sink(f"blocksize {v.hdr_blocksize} is not positive")


@rule("H4", "error", _H + "blocksize", "chunk.md#rules-header",
      "blocksize <= 536866816 (for VL-block chunks: the block count)")
def blocksize_below_max(v, src, sink):
    if v.hdr_blocksize > MAX_BLOCKSIZE:
        sink(f"blocksize {v.hdr_blocksize} exceeds the maximum {MAX_BLOCKSIZE}")


@rule("H8", "error", _X + "blosc2_flags", "chunk.md#rules-header",
      "a VL-block chunk is not special", needs=(_EXT,))
def vl_not_special(v, src, sink):
    if v.vl and v.special:
        sink("a VL-block chunk cannot be special")


@rule("H12", "error", _H + "flags", "chunk.md#rules-header", "a VL-block chunk is not memcpyed",
      needs=(_EXT,))
def vl_not_memcpyed(v, src, sink):
    if v.vl and v.memcpyed:
        sink("a VL-block chunk cannot be memcpyed")


@rule("D2", "error", _X + "blosc2_flags.special", "chunk.md#rules-special",
      "special kind is 0..4", needs=(_EXT,))
def special_known(v, src, sink):
    if v.special not in enums.SPECIALS:
        sink(f"unknown special kind {v.special}")


@rule("T-udcodec", "error", _X + "udcodec", "chunk.md#rules-header",
      "codec format 6 names a plugin codec (udcodec >= 6), never a built-in one",
      needs=(_EXT,))
def udcodec_not_builtin(v, src, sink):
    # writers store built-in codecs under their own codec format; C-Blosc2
    # looks udcodec up among plugins only and refuses such a chunk
    if (v.compformat == enums.COMPFORMAT_UDCODEC and v.has_udcodec() and not v.special
            and not v.memcpyed and v.udcodec < enums.FIRST_UDCODEC):
        sink(f"codec format 6 with udcodec {v.udcodec} ({enums.codec_name(v.udcodec)}), a "
             "built-in codec that is stored under its own codec format")


# The header's fields, once the extended header is read; the chunk's extent
# (cbytes_extent, T-truncated) is checked between the two groups.
FIELD_RULES = (flags2_reserved_clear, blocksize_positive, blocksize_below_max, vl_not_special,
               vl_not_memcpyed, special_known)
CODEC_FIELD_RULES = (udcodec_not_builtin,)
# What of them a chunk whose extended header is not all there still gets.
BASIC_FIELD_RULES = tuple(r for r in FIELD_RULES + CODEC_FIELD_RULES if _EXT not in r.needs)

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-special -- special chunks (no bstarts, no streams)
# ---------------------------------------------------------------------------


@rule("T-special-flags", "error", _H + "flags", "chunk.md#rules-special",
      "a non-empty special chunk has neither the memcpyed flag nor use_dict")
def special_plain_flags(v, src, sink):
    # contradictory claims no writer makes with data (an empty dict chunk is
    # written as memcpyed zeros); C-Blosc2 refuses them
    if v.nbytes > 0 and (v.memcpyed or v.use_dict):
        what = "the memcpyed flag" if v.memcpyed else "use_dict"
        sink(f"a special chunk with {what} set", OFFSETS[_H + "flags"] if v.memcpyed
             else OFFSETS[_X + "blosc2_flags.use_dict"])


@rule("H9", "error", _H + "cbytes", "chunk.md#rules-special",
      "a value chunk's value width (cbytes - 32) is positive and divides nbytes",
      needs=(_H + "cbytes", _H + "nbytes"))
def value_width(v, src, sink):
    if v.special != 3:
        return
    w = v.cbytes - LEN_EXTENDED
    if not (0 < w <= MAX_BLOCKSIZE and w <= v.nbytes and v.nbytes % w == 0):
        sink(f"a value chunk's value is cbytes - {LEN_EXTENDED} = {w} bytes, which must be "
             f"> 0 and divide nbytes {v.nbytes}")


@rule("H10", "error", _H + "nbytes", "chunk.md#rules-special",
      "NaN and uninit chunks: nbytes is a multiple of typesize",
      needs=(_H + "typesize", _H + "nbytes"))
def special_whole_items(v, src, sink):
    if v.special in (2, 4) and v.typesize and v.nbytes % v.typesize:
        sink(f"nbytes {v.nbytes} is not a multiple of typesize {v.typesize}")


@rule("T-special-cbytes", "error", _H + "cbytes", "chunk.md#rules-special",
      "zeros / NaN / uninit chunks are exactly 32 bytes")
def special_is_header_only(v, src, sink):
    if v.special in (1, 2, 4) and v.cbytes != LEN_EXTENDED:
        sink(f"a {enums.SPECIALS[v.special]} chunk has cbytes {LEN_EXTENDED}, got {v.cbytes}")


@rule("D-nan", "error", _H + "typesize", "chunk.md#rules-special",
      "a NaN chunk has typesize 4 or 8")
def nan_width(v, src, sink):
    if v.special == 2 and v.nbytes and v.typesize not in NAN_WIDTHS:
        sink(f"a NaN chunk needs typesize 4 or 8, got {v.typesize}")


SPECIAL_RULES = (special_plain_flags, value_width, special_whole_items, special_is_header_only, nan_width)

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-body -- sizes, bstarts and the dictionary section
# ---------------------------------------------------------------------------


@rule("D3", "error", _H + "cbytes", "chunk.md#rules-body",
      "memcpyed chunk: cbytes == nbytes + header length", needs=(_H + "nbytes",))
def memcpyed_size(v, src, sink):
    if v.memcpyed and v.cbytes != v.nbytes + v.overhead:
        sink(f"a memcpyed chunk must have cbytes = nbytes + {v.overhead}, "
             f"got {v.cbytes} for nbytes {v.nbytes}")


@rule("D4", "error", _H + "cbytes", "chunk.md#rules-body",
      "empty regular chunk: cbytes == header length")
def empty_size(v, src, sink):
    if (not v.memcpyed and not v.vl and v.nbytes == 0 and v.cbytes != v.overhead
            and not v.lazy):
        sink(f"an empty chunk must have cbytes {v.overhead}, got {v.cbytes}")


@rule("D6", "error", "chunk.bstarts", "chunk.md#rules-body", "the bstarts fit inside cbytes")
def bstarts_fit(v, src, sink):
    end = v.overhead + LEN_BSTART * v.nblocks
    limit = min(v.cbytes, v.n)
    if end > limit:
        sink(f"{v.nblocks} block starts need {end} bytes, the chunk has {limit}", limit)


BODY_SIZE_RULES = (memcpyed_size, empty_size)
BSTARTS_FIT_RULES = (bstarts_fit,)


@rule("D7", "error", "chunk.dict.dsize", "chunk.md#rules-body", "room for the dictionary size")
def dict_size_fits(v, src, sink):
    if v.ofs_dict + DictSection.dsize.sizeof() > v.cbytes:
        sink("no room for the dictionary size", v.cbytes)


@rule("D8", "error", "chunk.dict.dsize", "chunk.md#rules-body", "dictionary size is 1..32768",
      needs=("chunk.dict.dsize",))
def dict_size_range(v, src, sink):
    dsize = FAST_DSIZE.unpack_from(src, v.ofs_dict)[0]
    if not 0 < dsize <= MAX_DICTSIZE:
        sink(f"dictionary size {dsize} is outside 1..{MAX_DICTSIZE}", v.ofs_dict)


@rule("D9", "error", "chunk.dict.dict", "chunk.md#rules-body",
      "the dictionary fits inside cbytes", needs=("chunk.dict.dsize",))
def dict_fits(v, src, sink):
    dsize = FAST_DSIZE.unpack_from(src, v.ofs_dict)[0]
    if v.ofs_dict + FAST_DSIZE.size + dsize > v.cbytes:
        sink(f"the {dsize}-byte dictionary runs past the chunk end ({v.cbytes})", v.cbytes)


DICT_RULES = (dict_size_fits, dict_size_range, dict_fits)


@rule("B1", "error", "chunk.bstarts[]", "chunk.md#rules-body",
      "each bstart lies in the streams section: after bstarts and dictionary, "
      "at most cbytes - 4")
def bstarts_in_range(v, src, sink):
    lo, hi = v.ofs_streams, v.cbytes - LEN_CSIZE
    if v.bstarts and lo <= min(v.bstarts) and max(v.bstarts) <= hi:
        return                      # the common case, without a Python loop
    for j, b in enumerate(v.bstarts):
        if not lo <= b <= hi:
            sink(f"block start {b} is outside the streams section {lo}..{hi}",
                 bstart_offset(v, j), f"chunk.bstarts[{j}]")


@rule("VL2", "error", "chunk.bstarts[]", "chunk.md#rules-vlblocks",
      "VL-block starts increase strictly")
def vl_bstarts_increase(v, src, sink):
    if not v.vl:
        return
    prev = -1
    for j, b in enumerate(v.bstarts):
        if b <= prev:
            sink("VL-block starts must be strictly increasing", bstart_offset(v, j),
                 f"chunk.bstarts[{j}]")
        prev = max(prev, b)


@rule("B2", "error", _H + "blocksize", "chunk.md#rules-streams",
      "split chunks: blocksize >= typesize", needs=(_H + "typesize",))
def split_block_holds_item(v, src, sink):
    if v.split and v.nbytes // v.blocksize and v.typesize > 1 and v.blocksize < v.typesize:
        sink(f"blocksize {v.blocksize} is smaller than typesize {v.typesize} in a split chunk")


@rule("B3", "error", _H + "blocksize", "chunk.md#rules-streams",
      "split chunks: blocksize is a multiple of typesize", needs=(_H + "typesize",))
def split_block_whole_items(v, src, sink):
    if (v.split and v.nbytes // v.blocksize and v.typesize > 1
            and v.blocksize >= v.typesize and v.blocksize % v.typesize):
        sink(f"blocksize {v.blocksize} is not a multiple of typesize {v.typesize} "
             "in a split chunk: the last bytes of each block are never written")


BSTART_RULES = (bstarts_in_range, vl_bstarts_increase)
SPLIT_RULES = (split_block_holds_item, split_block_whole_items)

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-decode -- what a decoder must support
# ---------------------------------------------------------------------------


@rule("T-lazy", "error", _X + "blosc2_flags.lazy", "chunk.md#rules-decode",
      "stored chunks are not lazy (decoding raises UnsupportedError)", unsupported=True)
def not_lazy(v, src, sink):
    if v.lazy:
        sink("lazy chunks exist only inside C-Blosc2's memory; their data is not in the chunk")


@rule("T-instr", "error", _X + "blosc2_flags.instrumented", "chunk.md#rules-decode",
      "instrumented chunks hold codec statistics, not data (decoding raises "
      "UnsupportedError)", unsupported=True)
def not_instrumented(v, src, sink):
    if v.instr:
        sink("instrumented chunks hold codec statistics, not data")


DECODABLE_RULES = (not_lazy, not_instrumented)



@rule("T-trailing", "warning", "chunk", "chunk.md#rules-header",
      "the input ends where the chunk does (bytes after cbytes are ignored)")
def input_ends_with_chunk(v, src, sink):
    # checked by the validator only, on a bare chunk: readers decode the
    # first cbytes bytes and ignore the rest, often a sign of a wrong length
    if v.n > v.cbytes:
        sink(f"{v.n - v.cbytes} bytes follow the chunk's {v.cbytes} (cbytes); readers "
             "ignore them", v.cbytes)


TRAILING_RULES = (input_ends_with_chunk,)

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-decode -- the codec and filters this build decodes
# ---------------------------------------------------------------------------


class PipelineView:
    """What decoding a chunk's streams needs: its codec (``decoder``, None
    when this build has none for it) and the filter ids this build decodes
    (``known_filters``), looked up by the reader; ``needed`` is true once a
    stream needs the codec (a chunk of zeros, runs and raw streams decodes
    without it)."""
    __slots__ = ("chunk", "decoder", "known_filters", "needed")

    def __init__(self, chunk: ChunkView, decoder, known_filters, needed: bool = False):
        self.chunk, self.decoder, self.known_filters, self.needed = (
            chunk, decoder, known_filters, needed)


@rule("T-codec", "error", _H + "flags.compformat", "chunk.md#rules-decode",
      "the codec is one this build decodes", unsupported=True)
def codec_decodable(v, src, sink):
    c = v.chunk
    if c.compformat == enums.COMPFORMAT_SCHUNK and not c.memcpyed and not c.special:
        sink("codec format 7 is defined by a super-chunk, not by the chunk")
    elif not v.needed or v.decoder is not None:
        return
    elif c.compformat != enums.COMPFORMAT_UDCODEC:
        sink(f"codec format {c.compformat} ({enums.COMPFORMATS[c.compformat]}) cannot be "
             "decoded")
    elif not c.has_udcodec():
        sink("codec format 6 names its codec in the extended header's udcodec byte, which "
             "this header does not have")
    else:
        sink(f"codec {enums.codec_name(c.udcodec)} (id {c.udcodec}) is not available in this "
             "build", OFFSETS[_X + "udcodec"], _X + "udcodec")


@rule("T-filter", "error", _X + "filters[]", "chunk.md#rules-decode",
      "every filter is one this build decodes", unsupported=True)
def filters_decodable(v, src, sink):
    c = v.chunk
    for slot in reversed(range(NUM_FILTER_SLOTS)):     # in decode order
        fid = c.slots[slot]
        if fid in v.known_filters:
            continue
        if c.extended:
            at, path = OFFSETS[_X + "filters"] + slot, f"{_X}filters[{slot}]"
        else:
            at, path = OFFSETS[_H + "flags"], _H + "flags"
        sink(f"filter {enums.filter_name(fid)} (id {fid}) cannot be decoded by this build",
             at, path)


# T-codec runs twice: before anything is decoded (codec format 7 is refused
# at once) and when a stream needs the codec (``needed``).
CODEC_RULES = (codec_decodable,)
FILTER_RULES = (filters_decodable,)

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-streams -- streams of regular blocks
# ---------------------------------------------------------------------------


class StreamView:
    """Stream ``k`` of block ``j`` as the reader walks it: its csize field
    at ``pos`` (``csize`` None when the chunk ends before it), the token
    byte after a run's csize (``token``, None when there is none or the
    chunk ends first), the chunk end ``end`` (cbytes) and the stream's
    uncompressed size ``want``; once decoded, ``got`` bytes, explained by
    ``why(got, want)``.  One view per block walk, refilled per stream."""
    __slots__ = ("j", "k", "pos", "end", "csize", "token", "token_follows", "want", "got",
                 "why")
    payload = "cdata"

    def __init__(self, j: int, end: int, token_follows: bool, want: int):
        self.j, self.k, self.end, self.token_follows, self.want = j, 0, end, token_follows, want
        self.pos, self.csize, self.token, self.got, self.why = 0, None, None, 0, None

    def path(self, leaf: str) -> str:
        return f"chunk.blocks[{self.j}].streams[{self.k}].{leaf}"

    @property
    def payload_at(self) -> int:
        return self.pos + LEN_CSIZE

    @property
    def size(self) -> int:
        """Bytes of the stream: csize field, token, payload."""
        csize = self.csize or 0
        token = LEN_TOKEN if csize < 0 and self.token_follows else 0
        return LEN_CSIZE + token + max(csize, 0)


@rule("B4", "error", "chunk.blocks[].streams[].csize", "chunk.md#rules-streams",
      "each stream (size field and payload) ends inside cbytes")
def stream_inside_chunk(v, src, sink):
    if v.csize is None:
        sink("the chunk ends before this stream's size", v.end, v.path("csize"))
    elif v.csize > v.end - v.payload_at:
        sink(f"stream of {v.csize} bytes runs past the chunk end ({v.end})", v.pos,
             v.path("csize"))


@rule("B5", "error", "chunk.blocks[].streams[].token", "chunk.md#rules-streams",
      "a negative csize is followed by its token byte (versions >= 4)")
def run_has_token(v, src, sink):
    if v.csize is not None and v.csize < 0 and v.token_follows and v.token is None:
        sink("the chunk ends before the run token", v.end, v.path("token"))


@rule("T-token", "error", "chunk.blocks[].streams[].token", "chunk.md#rules-decode",
      "a stream token has bit 0 set (other encodings are reserved)", unsupported=True)
def token_is_run(v, src, sink):
    if v.token is not None and not v.token & TOKEN_RUN:
        sink(f"stream token {v.token:#04x} is not a run (other encodings are reserved)",
             v.payload_at, v.path("token"))


# A run stream's csize is minus its byte value, one byte: csize is
# -1..-MAX_RUN_BYTE (the C header carries it too).
MAX_RUN_BYTE = 0xFF


@rule("B6", "error", "chunk.blocks[].streams[].csize", "chunk.md#rules-streams",
      f"a run-length csize is -1..-{MAX_RUN_BYTE}")
def run_is_one_byte(v, src, sink):
    if v.csize is not None and v.csize < -MAX_RUN_BYTE:
        sink(f"a run stream encodes one byte, csize {v.csize} is below -{MAX_RUN_BYTE}", v.pos,
             v.path("csize"))


# In the order the reader applies them to each stream, before its payload.
STREAM_RULES = (stream_inside_chunk, run_has_token, token_is_run, run_is_one_byte)


@rule("B7", "error", "chunk.blocks[].streams[].cdata", "chunk.md#rules-streams",
      "each codec stream decodes to exactly its uncompressed size")
def payload_decodes(v, src, sink):
    if v.got != v.want:
        sink(v.why(v.got, v.want), v.payload_at, v.path(v.payload))


DECODED_RULES = (payload_decodes,)


class BlockView:
    """Block ``j`` decoded in one piece (the native block decoder) for B7:
    ``got`` is -1 when it failed."""
    __slots__ = ("j", "payload_at", "want", "got", "why")
    payload = ""

    def __init__(self, j: int, at: int, want: int, got: int, why):
        self.j, self.payload_at, self.want, self.got, self.why = j, at, want, got, why

    def path(self, leaf: str) -> str:
        return f"chunk.blocks[{self.j}]"

# ---------------------------------------------------------------------------
# specs/chunk.md#rules-vlblocks -- blocks of VL-block chunks
# ---------------------------------------------------------------------------


class VLBlockView:
    """VL block ``j`` as the reader walks it: it starts at ``start`` (its
    bstart) and runs to ``stop`` (the next bstart, or cbytes), its size
    field says ``size`` bytes, the blocks before it add up to ``total``;
    ``final`` once every block is counted (``total`` then is the sum).
    When decoded: ``want`` bytes of output for it, ``got`` decoded."""
    __slots__ = ("chunk", "j", "start", "stop", "size", "total", "final", "want", "got",
                 "why")
    payload = "payload"

    def __init__(self, chunk: ChunkView):
        self.chunk, self.j, self.start, self.stop, self.size = chunk, 0, 0, 0, 0
        self.total, self.final, self.want, self.got, self.why = 0, False, 0, 0, None

    def path(self, leaf: str) -> str:
        return f"chunk.blocks[{self.j}].{leaf}"

    @property
    def payload_at(self) -> int:
        return self.start + LEN_VLSIZE

    @property
    def len_payload(self) -> int:
        return self.stop - self.payload_at


@rule("VL3", "error", "chunk.bstarts[]", "chunk.md#rules-vlblocks",
      "VL blocks end inside cbytes")
def vl_block_inside_chunk(v, src, sink):
    if not v.final and v.stop > v.chunk.cbytes:
        sink("block runs past cbytes", bstart_offset(v.chunk, v.j + 1),
             f"chunk.bstarts[{v.j + 1}]")


@rule("VL4", "error", "chunk.blocks[].size", "chunk.md#rules-vlblocks", "VL-block size > 0")
def vl_size_positive(v, src, sink):
    if not v.final and v.size <= 0:
        sink(f"VL-block size {v.size} is not positive", v.start, v.path("size"))


@rule("VL7", "error", "chunk.header.nbytes", "chunk.md#rules-vlblocks",
      "VL-block sizes add up to nbytes")
def vl_sizes_add_up(v, src, sink):
    # a running sum, so that an overflow is caught at the block that causes it
    nbytes = v.chunk.nbytes
    if v.final:
        if v.total != nbytes:
            sink(f"VL-block sizes add up to {v.total}, nbytes is {nbytes}")
    elif v.total + v.size > nbytes:
        sink(f"VL-block sizes add up past nbytes ({nbytes})", v.start, v.path("size"))


# Per block while the blocks are counted (then once more with ``final``).
VL_SPAN_RULES = (vl_block_inside_chunk, vl_size_positive, vl_sizes_add_up)


@rule("VL5", "error", "chunk.blocks[].size", "chunk.md#rules-vlblocks",
      "VL-block size matches its span of the output")
def vl_size_matches(v, src, sink):
    if v.size != v.want:
        sink(f"block size {v.size} disagrees with {v.want}", v.start, v.path("size"))


@rule("VL6", "error", "chunk.blocks[].payload", "chunk.md#rules-vlblocks",
      "VL-block payload is not empty")
def vl_payload_present(v, src, sink):
    if v.len_payload <= 0:
        sink("empty VL-block payload", v.payload_at, v.path("payload"))


# Per block before its payload is decoded.
VL_BLOCK_RULES = (vl_size_matches, vl_payload_present)
