"""Blosc2 frame structures (contiguous frames and the index file of sparse
frames), every header layout, and the rules each one must satisfy.

specs/frame.md.  A frame is a msgpack header at fixed offsets (big-endian
integers behind msgpack markers), the chunks section, an offsets index (a
Blosc chunk of little-endian int64) and a msgpack trailer.  The header
layout is told by the fixarray's element count: 14 today; 13, 12 and 11 in
the layouts of the older documents (no blocksize; 12 and 11 also without a
filter pipeline).  Markers are declared as constants, so a wrong marker fails
at its own field with its own path.
"""
from __future__ import annotations

import struct

import construct as cs

from . import fast_format, fast_parser, field_offset
from .layout import Layout
from .rules import OFFSETS, declare, rule

MAGIC = b"b2frame\x00"

# ---------------------------------------------------------------------------
# specs/frame.md#header -- the fixed part, per layout
# ---------------------------------------------------------------------------

GeneralFlags = cs.BitStruct(
    "vl_blocks" / cs.Flag * "bit 7: every chunk has variable-length blocks",
    "variable_chunks" / cs.Flag * "bit 6: chunks of variable length",
    "offsets_size" / cs.BitsInteger(2) * "bits 4-5: offset width, 1 = 64-bit (the only one written)",
    "version" / cs.BitsInteger(4) * "bits 0-3: frame format version",
)

CodecFlags = cs.BitStruct(
    "clevel" / cs.BitsInteger(4) * "bits 4-7: compression level",
    "codec" / cs.BitsInteger(4) * "bits 0-3: codec id (6: see udcodec)",
)

OtherFlags = cs.BitStruct(
    "reserved" / cs.BitsInteger(6) * "bits 2-7: unused",
    "splitmode" / cs.BitsInteger(2) * "bits 0-1: split mode - 1 (0 always .. 3 forward-compat)",
)

# Filter flags of the 11/12-element layout (byte 0x1A), instead of frame_type.
FilterFlags = cs.BitStruct(
    "reserved" / cs.BitsInteger(4) * "bits 4-7: unused",
    "shuffle" / cs.BitsInteger(2) * "bits 2-3: 0 none, 1 shuffle, 2 bitshuffle",
    "split" / cs.Flag * "bit 1: blocks are split",
    "memcpyed" / cs.Flag * "bit 0: data stored raw",
)

OtherFlags2 = cs.BitStruct(
    "reserved" / cs.BitsInteger(7) * "bits 1-7: unused",
    "use_dict" / cs.Flag * "bit 0: chunks use a dictionary",
)

FilterPipeline = cs.Struct(
    "marker" / cs.Const(b"\xd8") * "msgpack fixext 16",
    "nfilters" / cs.Int8ub * "number of filter slots (the fixext type byte), 6",
    "filters" / cs.Array(6, cs.Int8ub) * "filter id per slot",
    "udcodec" / cs.Int8ub * "codec id when the codec nibble is 6",
    "compcode_meta" / cs.Int8ub * "codec parameter",
    "filters_meta" / cs.Array(6, cs.Int8ub) * "parameter per filter slot",
    "other_flags2" / OtherFlags2 * "more compression flags",
    "reserved" / cs.Int8ub * "unused",
)


def _header(count: int, *, blocksize: bool, pipeline: bool, frame_type: bool) -> cs.Struct:
    """The fixed part of a header layout with ``count`` array elements."""
    fields = [
        "fixarray" / cs.Const(bytes([0x90 | count])) * "msgpack fixarray: the header's elements",
        "magic_marker" / cs.Const(b"\xa8") * "msgpack str of 8",
        "magic" / cs.Const(MAGIC) * "the frame signature",
        "header_len_marker" / cs.Const(b"\xd2") * "msgpack int32",
        "header_len" / cs.Int32sb * "bytes in the header, metalayers included",
        "frame_len_marker" / cs.Const(b"\xcf") * "msgpack uint64",
        "frame_len" / cs.Int64ub * "bytes in the whole frame",
        "flags_marker" / cs.Const(b"\xa4") * "msgpack str of 4: the flag bytes",
        "general_flags" / GeneralFlags * "version, offset width, chunk kinds",
        ("frame_type" / cs.Int8ub * "0 contiguous, 1 sparse (directory)") if frame_type
        else ("filter_flags" / FilterFlags * "default filters of the chunks"),
        "codec_flags" / CodecFlags * "codec id and level",
        "other_flags" / OtherFlags * "split mode",
        "nbytes_marker" / cs.Const(b"\xd3") * "msgpack int64",
        "nbytes" / cs.Int64sb * "uncompressed bytes of all chunks",
        "cbytes_marker" / cs.Const(b"\xd3") * "msgpack int64",
        "cbytes" / cs.Int64sb * "bytes in the chunks section",
        "typesize_marker" / cs.Const(b"\xd2") * "msgpack int32",
        "typesize" / cs.Int32sb * "bytes per item",
    ]
    if blocksize:
        fields += ["blocksize_marker" / cs.Const(b"\xd2") * "msgpack int32",
                   "blocksize" / cs.Int32sb * "block size of the chunks (0: chosen per chunk)"]
    fields += [
        "chunksize_marker" / cs.Const(b"\xd2") * "msgpack int32",
        "chunksize" / cs.Int32sb * "uncompressed bytes per chunk (0: variable)",
        "nthreads_c_marker" / cs.Const(b"\xd1") * "msgpack int16",
        "nthreads_c" / cs.Int16sb * "threads for compression (advisory)",
        "nthreads_d_marker" / cs.Const(b"\xd1") * "msgpack int16",
        "nthreads_d" / cs.Int16sb * "threads for decompression (advisory)",
        "has_vlmetalayers" / cs.Int8ub * "msgpack bool: 0xc3 true, 0xc2 false",
    ]
    if pipeline:
        fields.append("filter_pipeline" / FilterPipeline * "filters and codec bytes")
    return cs.Struct(*fields)


# Element count -> the fixed part of that header layout.
FRAME_HEADERS = {
    14: _header(14, blocksize=True, pipeline=True, frame_type=True),
    13: _header(13, blocksize=False, pipeline=True, frame_type=True),
    12: _header(12, blocksize=False, pipeline=False, frame_type=False),
    11: _header(11, blocksize=False, pipeline=False, frame_type=False),
}
LEN_FIXED = {n: h.sizeof() for n, h in FRAME_HEADERS.items()}     # 87, 82, 64, 64
# The same layouts read through parsers derived from them (tested equal):
# construct spends about 300 us on a header, these about 20.
FAST_HEADERS = {n: fast_parser(h, ">") for n, h in FRAME_HEADERS.items()}
FLAT_HEADERS = {n: Layout(h, ">", root="frame.header") for n, h in FRAME_HEADERS.items()}
HEADER = FLAT_HEADERS[14]                      # the current layout
LAYOUT_WITH_METALAYERS = (14, 13, 12)          # 11 elements: no metalayer section

# Rules report the offsets of the current layout's fields.
OFFSETS.update(HEADER.offsets())

# ---------------------------------------------------------------------------
# specs/frame.md#metalayers -- the header's metalayers and the trailer's
# vlmetalayers share one layout
# ---------------------------------------------------------------------------

MAX_METALAYERS = 16

# A msgpack fixstr marker: three type bits and the string's length.
FixStr = cs.BitStruct(
    "kind" / cs.BitsInteger(3) * "bits 5-7: 0b101 for a msgpack fixstr",
    "len_name" / cs.BitsInteger(5) * "bits 0-4: length of the name, 0..31",
)
FIXSTR_KIND = 0b101

MetaEntry = cs.Struct(
    "name_marker" / FixStr * "msgpack fixstr: 0xa0 | length of the name",
    "name" / cs.Bytes(cs.this.name_marker.len_name) * "metalayer name",
    "offset_marker" / cs.Const(b"\xd2") * "msgpack int32",
    "offset" / cs.Int32sb * "where the value's bin32 starts (header: frame start; trailer: "
                            "trailer start)",
)

MetaValue = cs.Struct(
    "marker" / cs.Const(b"\xc6") * "msgpack bin32",
    "len_content" / cs.Int32ub * "bytes in the value",
    "content" / cs.Bytes(cs.this.len_content) * "the value (vlmetalayers: a Blosc chunk)",
)
LEN_META_VALUE_HEAD = MetaValue.marker.sizeof() + MetaValue.len_content.sizeof()    # 5

MetalayersHead = cs.Struct(
    "marker" / cs.Const(b"\x93") * "msgpack fixarray of 3",
    "idx_marker" / cs.Const(b"\xcd") * "msgpack uint16",
    "idx" / cs.Int16ub * "size of the index (advisory)",
    "map_marker" / cs.Const(b"\xde") * "msgpack map16",
    "num_metalayers" / cs.Int16ub * "entries in the index",
)
ValuesHead = cs.Struct(
    "values_marker" / cs.Const(b"\xdc") * "msgpack array16",
    "num_values" / cs.Int16ub * "values that follow",
)
Metalayers = cs.Struct(
    *MetalayersHead.subcons,
    "index" / cs.Array(cs.this.num_metalayers, MetaEntry) * "name -> offset, in order",
    *ValuesHead.subcons,
)

# Fast paths derived from the fixed parts above (tests check the whole
# walk against ``Metalayers`` / ``MetaValue``).
FAST_META_HEAD = Layout(MetalayersHead, ">")
FAST_VALUES_HEAD = Layout(ValuesHead, ">")
NAME_MARKER = Layout(cs.Struct(*MetaEntry.subcons[:1]), ">")
FAST_ENTRY_TAIL = Layout(cs.Struct(*MetaEntry.subcons[2:]), ">")
FAST_VALUE_HEAD = Layout(cs.Struct(*MetaValue.subcons[:2]), ">")
LEN_NAME_MARKER = NAME_MARKER.size


def fixstr_len(marker: int) -> int | None:
    """The name length a metalayer entry's marker byte gives, or None when
    the byte is no msgpack fixstr."""
    if NAME_MARKER["name_marker.kind"].of(marker) != FIXSTR_KIND:
        return None
    return NAME_MARKER["name_marker.len_name"].of(marker)


def fixstr_marker(length: int) -> int:
    """The fixstr marker byte of a name of ``length`` bytes (0..31)."""
    byte = NAME_MARKER["name_marker.kind"].into(0, FIXSTR_KIND)
    return NAME_MARKER["name_marker.len_name"].into(byte, length)


def meta_entry_size(len_name: int) -> int:
    """Bytes of one index entry whose name is ``len_name`` bytes long."""
    return LEN_NAME_MARKER + len_name + FAST_ENTRY_TAIL.size

# ---------------------------------------------------------------------------
# specs/frame.md#trailer
# ---------------------------------------------------------------------------

TrailerHead = cs.Struct(
    "marker" / cs.Const(b"\x94") * "msgpack fixarray of 4",
    "version" / cs.Int8ub * "trailer version (positive fixint)",
)
LEN_TRAILER_HEAD = TrailerHead.sizeof()          # 2

# The end of every trailer, found from the end of the frame: the trailer
# length and the fingerprint.
TrailerTail = cs.Struct(
    "trailer_len_marker" / cs.Const(b"\xce") * "msgpack uint32",
    "trailer_len" / cs.Int32ub * "bytes in the trailer, from its start to the frame's end",
    "fingerprint_marker" / cs.Const(b"\xd8") * "msgpack fixext 16",
    "fingerprint_type" / cs.Int8ub * "0 none, 1 32-bit, 2 64-bit, 3 128-bit",
    "fingerprint" / cs.Bytes(16) * "the fingerprint, padded to the left",
)
LEN_TRAILER_TAIL = TrailerTail.sizeof()          # 23
FAST_TRAILER_TAIL = Layout(TrailerTail, ">", root="frame.trailer")
FAST_TRAILER_HEAD = Layout(TrailerHead, ">", root="frame.trailer")
MIN_TRAILER_LEN = 25                              # what C-Blosc2 accepts at least

# ---------------------------------------------------------------------------
# specs/frame.md#offsets -- the offsets index's entries
# ---------------------------------------------------------------------------

Offset = cs.Int64sl
FAST_OFFSET = fast_format(Offset)   # one entry of the decoded index
LEN_OFFSET = FAST_OFFSET.size


def pack_entries(entries: list[int]) -> bytes:
    """The decoded offsets index: one entry per chunk, as declared."""
    return struct.pack(f"{FAST_OFFSET.format[0]}{len(entries)}{FAST_OFFSET.format[1:]}",
                       *entries)

# A special entry: a negative offset whose most significant byte (the last
# of the little-endian int64) names the kind of data the chunk stands for.
# C-Blosc2 writes 0x80 | kind in that byte and zeros below, and reads the
# kind bits in the order zeros, uninit, nan.
SpecialTop = cs.BitStruct(
    "special" / cs.Flag * "bit 7: a special entry (the offset's sign bit)",
    "reserved" / cs.BitsInteger(4) * "bits 3-6: never set by a writer",
    "uninit" / cs.Flag * "bit 2: the chunk is uninitialised",
    "nan" / cs.Flag * "bit 1: the chunk holds NaNs",
    "zeros" / cs.Flag * "bit 0: the chunk holds zeros",
)
SpecialOffset = cs.Struct(
    "low" / cs.Bytes(7) * "bytes 0-6: zero",
    "top" / SpecialTop * "byte 7, the most significant: the kind",
)
SPECIAL_OFFSET = Layout(SpecialOffset, "<")
_TOP = SPECIAL_OFFSET["top"]
_TOP_SHIFT = 8 * _TOP.offset
# kind name -> its bit in the top byte, in the order C-Blosc2 tests them
SPECIAL_KIND_BITS = {kind: SPECIAL_OFFSET[f"top.{kind}"].bits
                     for kind in ("zeros", "uninit", "nan")}
# the top byte's kind code (its low bits) -> name; the codes are the chunk's
# special kinds (formats.enums.SPECIALS)
SPECIAL_KINDS = {bit: kind for kind, bit in SPECIAL_KIND_BITS.items()}
_SPECIAL_FLAG = SPECIAL_OFFSET["top.special"].bits
_KIND_BITS = sum(SPECIAL_KIND_BITS.values())


def offset_top(entry: int) -> int:
    """The most significant byte of an index entry (an int64)."""
    return (entry >> _TOP_SHIFT) & _TOP.mask


def special_kind(entry: int) -> str | None:
    """The special kind an index entry stands for, as C-Blosc2 reads it
    (the first of zeros, uninit, nan whose bit is set), or None: a chunk
    offset (``entry`` >= 0) or a negative entry with no kind bit."""
    if entry >= 0:
        return None
    top = offset_top(entry)
    return next((kind for kind, bit in SPECIAL_KIND_BITS.items() if top & bit), None)


def special_extra_bits(entry: int) -> int:
    """The bits of a negative entry besides its sign bit and one kind bit:
    reserved bits, a second kind bit, any bit of the lower bytes.  Writers
    set none; a damaged entry does."""
    top = offset_top(entry)
    kind = special_kind(entry)
    extra = (entry & ((1 << _TOP_SHIFT) - 1)) | (top & ~(_SPECIAL_FLAG | _KIND_BITS)) << _TOP_SHIFT
    if kind is not None:
        extra |= (top & _KIND_BITS & ~SPECIAL_KIND_BITS[kind]) << _TOP_SHIFT
    return extra


def special_offset(kind: str) -> int:
    """The index entry (a negative int64) that stands for a chunk of ``kind``."""
    top = _SPECIAL_FLAG | SPECIAL_KIND_BITS[kind]
    return (top << _TOP_SHIFT) - (1 << 8 * LEN_OFFSET)

# The sparse frame's chunk files: the index entry is the file number.
SFRAME_INDEX = "chunks.b2frame"


def chunk_file_name(number: int) -> str:
    """An sframe chunk file: the number in 8 upper-case hex digits."""
    return f"{number:08X}.chunk"


def header_layout(count_byte: int) -> int | None:
    """The layout (element count) a header's first byte announces, or None."""
    n = count_byte - 0x90
    return n if n in FRAME_HEADERS else None


def looks_like_frame(buf) -> bool:
    """True when ``buf`` (bytes-like) starts as a frame header does; chunks
    start with a format version 1..6 instead."""
    return len(buf) > 0 and header_layout(buf[0]) is not None


# ---------------------------------------------------------------------------
# specs/frame.md#rules -- rules on the header (FrameView: see frame.py)
# ---------------------------------------------------------------------------

_F = "frame.header."

F_LAYOUT = declare("F-layout", "error", "frame.header.fixarray", "frame.md#rules",
                   "the header starts with a msgpack fixarray of 11..14 elements")
F_MARKER = declare("F-marker", "error", "frame.header", "frame.md#rules",
                   "every msgpack marker of the header is the declared one")


@rule("F-version", "error", _F + "general_flags.version", "frame.md#rules",
      "the frame format version is 1..3 (0 in the older layouts)")
def version_known(v, src, sink):
    if v.layout == 14 and not 1 <= v.version <= 3:
        sink(f"unknown frame format version {v.version}")


@rule("F-type", "error", _F + "frame_type", "frame.md#rules",
      "the frame type is 0 for a contiguous frame, 1 for a sparse frame's index")
def frame_type_matches(v, src, sink):
    if v.layout >= 13 and v.frame_type != (1 if v.sparse else 0):
        kind = "a sparse frame's index" if v.sparse else "a contiguous frame"
        sink(f"frame type {v.frame_type} in {kind}")


@rule("F-offsets-size", "error", _F + "general_flags.offsets_size", "frame.md#rules",
      "offsets are 64-bit: code 1 from frame version 2 on, code 2 in versions 0 and 1")
def offsets_64bit(v, src, sink):
    expected = 1 if v.version >= 2 else 2
    if v.layout >= 13 and v.offsets_size != expected:
        sink(f"offset width code {v.offsets_size}: 64-bit offsets are code {expected} in "
             f"frame version {v.version}")


@rule("F-header-len", "error", _F + "header_len", "frame.md#rules",
      "the header length covers the fixed part and fits in the frame")
def header_len_sane(v, src, sink):
    if not LEN_FIXED[v.layout] <= v.header_len <= v.frame_len:
        sink(f"header length {v.header_len} is outside {LEN_FIXED[v.layout]}.."
             f"{v.frame_len} (the frame length)")


@rule("F-frame-len", "error", _F + "frame_len", "frame.md#rules",
      "a contiguous frame is exactly frame_len bytes long (a sparse index likewise)")
def frame_len_matches(v, src, sink):
    if v.frame_len != v.n:
        where = v.n if v.frame_len > v.n else OFFSETS[_F + "frame_len"]
        sink(f"the header says {v.frame_len} bytes, the input has {v.n}", where)


@rule("F-sizes", "error", _F + "nbytes", "frame.md#rules",
      "nbytes and cbytes are not negative, and cbytes fits in the frame",
      needs=(_F + "frame_len",))
def sizes_sane(v, src, sink):
    if v.nbytes < 0 or v.cbytes < 0:
        sink(f"negative sizes: nbytes {v.nbytes}, cbytes {v.cbytes}")
    elif not v.sparse and v.header_len + v.cbytes > v.frame_len:
        sink(f"the chunks section ({v.cbytes} bytes after the {v.header_len}-byte header) "
             f"runs past the frame ({v.frame_len})", OFFSETS[_F + "cbytes"])


@rule("F-typesize", "error", _F + "typesize", "frame.md#rules", "typesize > 0")
def typesize_positive(v, src, sink):
    if v.typesize <= 0:
        sink(f"typesize {v.typesize} is not positive")


@rule("F-chunksize", "error", _F + "chunksize", "frame.md#rules",
      "a frame holding data has chunksize >= 0 (0: chunks of varying size, counted by "
      "the offsets index); an empty one may say anything (python-blosc2 writes -1)")
def chunksize_sane(v, src, sink):
    if v.nbytes > 0 and v.chunksize < 0:
        sink(f"chunksize {v.chunksize} with {v.nbytes} bytes of data")


@rule("F-nfilters", "error", _F + "filter_pipeline.nfilters", "frame.md#rules",
      "the filter pipeline has at most 6 slots")
def nfilters_sane(v, src, sink):
    if v.layout >= 13 and v.nfilters > 6:
        sink(f"{v.nfilters} filter slots, at most 6")


@rule("F-vlmeta-flag", "error", _F + "has_vlmetalayers", "frame.md#rules",
      "has_vlmetalayers is a msgpack bool (0xc2 or 0xc3)")
def vlmeta_flag_bool(v, src, sink):
    if v.has_vlmetalayers_byte not in (0xC2, 0xC3):
        sink(f"byte {v.has_vlmetalayers_byte:#04x} where a msgpack bool belongs")


HEADER_RULES = (version_known, frame_type_matches, offsets_64bit, header_len_sane,
                frame_len_matches, sizes_sane, typesize_positive, chunksize_sane,
                nfilters_sane, vlmeta_flag_bool)

# Checked while the metalayers, the offsets index and the trailer are read.
F_META = declare("F-meta", "error", "frame.metalayers", "frame.md#rules",
                 "the metalayer index and values are well formed, at most 16 entries, each "
                 "offset pointing at its bin32 value inside the header (trailer)")
F_TRAILER = declare("F-trailer", "error", "frame.trailer", "frame.md#rules",
                    "the trailer ends the frame: its tail markers, a length of at least 25 "
                    "that fits after the header, and its leading fixarray")
F_INDEX = declare("F-index", "error", "frame.offsets", "frame.md#rules",
                  "the offsets index is a valid chunk of one int64 per chunk, right after "
                  "the chunks section")
F_OFFSET = declare("F-offset", "error", "frame.offsets[]", "frame.md#rules",
                   "each offset is a special value or points at a chunk inside the chunks "
                   "section")
F_CHUNK = declare("F-chunk", "error", "frame.chunks[]", "frame.md#rules",
                  "each chunk lies inside the chunks section and holds chunksize bytes (the "
                  "last one may hold fewer)")
F_SPECIAL = declare("F-special", "error", "frame.offsets[]", "frame.md#rules",
                    "a special offset's kind is zeros, nan or uninit, in a frame of fixed "
                    "chunk size, and the chunk it stands for passes the chunk rules: NaN needs "
                    "typesize 4 or 8, NaN and uninit whole items")
F_SFRAME = declare("F-sframe", "error", "frame.chunks[]", "frame.md#rules",
                   "every chunk file an sframe's index names exists")
# Warnings from the validator: readers ignore these bytes, writers set them.
F_TRAILER_VERSION = declare("F-trailer-version", "warning", "frame.trailer.version",
                            "frame.md#rules", "the trailer version is 1 (0 before 2.0.0-beta.2)")
F_FINGERPRINT = declare("F-fingerprint", "warning", "frame.trailer.fingerprint_type",
                        "frame.md#rules", "the fingerprint kind is 0..3; kind 0 (none, the "
                        "only one written) has 16 zero bytes")


def marked_field(con: cs.Struct, name: str, marker_name: str | None = None
                 ) -> tuple[int, int, struct.Struct]:
    """``(offset of the marker, marker byte, struct of the value)`` of the
    msgpack field ``name`` of ``con``, declared as ``marker_name`` (default
    ``name_marker``) then ``name``, for readers that take one field at a
    time (salvage)."""
    marker_name = marker_name or f"{name}_marker"
    marker = next(s for s in con.subcons if s.name == marker_name)
    value = next(s for s in con.subcons if s.name == name)
    const = marker
    while not isinstance(const, cs.Const):
        const = const.subcon
    return field_offset(con, marker.name), const.value[0], fast_format(value, ">")
