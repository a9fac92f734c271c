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

from typing import Any, NamedTuple

from . import chunk as fc
from . import signatures
from . import fast_format, fast_parser, field_offset
from .layout import ConstMismatch, Layout
from .rules import OFFSETS, explain, rule
from .truncation import INPUT, TRUNCATION_RULES, Truncation

MAGIC = signatures.FRAME_MAGIC

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
    if _FIXSTR_KIND.of(marker) != FIXSTR_KIND:
        return None
    return _FIXSTR_LEN.of(marker)


_FIXSTR_KIND = NAME_MARKER["name_marker.kind"]
_FIXSTR_LEN = NAME_MARKER["name_marker.len_name"]


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


def written_special(entry: int) -> bool:
    """The entry is a special offset as writers write it: the sign bit and
    one kind bit (F-special-bits, F-special)."""
    return entry < 0 and special_kind(entry) is not None and not special_extra_bits(entry)


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
# specs/frame.md#rules -- rules on the header
# ---------------------------------------------------------------------------

_F = "frame.header."


class FrameView:
    """The header's fields the rules and the reader use, read through the
    flat layout of the header's own layout (``layout``: its element count,
    None when byte 0 names none; ``markers_ok`` False when a constant of
    that layout differs or the input ends inside it)."""
    __slots__ = ("n", "layout", "markers_ok", "sparse", "version", "frame_type",
                 "offsets_size", "header_len", "frame_len", "nbytes", "cbytes", "typesize",
                 "blocksize", "chunksize", "nfilters", "has_vlmetalayers_byte", "codec",
                 "clevel", "udcodec", "filters", "filters_meta", "filter_shuffle")
    n: int                      # bytes available
    layout: int | None          # header elements: 14, or 13 / 12 / 11 (older layouts)
    markers_ok: bool
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


def start_extent(n: int) -> Truncation:
    """A frame starts with its header: an empty input is cut short there
    (the truncation rule, formats/truncation.py)."""
    return Truncation(n, 1, "frame.header", "a frame starts with its header")


INPUT_RULES = TRUNCATION_RULES


@rule("F-layout", "error", "frame.header.fixarray", "frame.md#rules",
      "the header starts with a msgpack fixarray of 11..14 elements")
def layout_known(v, src, sink):
    if v.layout is None and v.n:
        sink("not a Blosc2 frame: no header fixarray of 11..14 elements", 0)


@rule("F-marker", "error", "frame.header", "frame.md#rules",
      "every msgpack marker of the header is the declared one")
def markers_declared(v, src, sink):
    if v.layout is None or v.markers_ok:
        return
    if not explain(FRAME_HEADERS[v.layout], src, 0, "frame.header", sink):
        sink("the header's markers disagree with its layout", 0)


# Before anything else of the header is read.
LAYOUT_RULES = (layout_known, markers_declared)


def _at(v: FrameView, field: str) -> int:
    """Where ``field`` sits in the view's own header layout (the older
    layouts put fields elsewhere than today's)."""
    return FLAT_HEADERS[v.layout].offset(field)


def frame_extent(v: FrameView, src) -> Truncation:
    """The frame as its header says (``frame_len`` bytes), once the fixed
    header is read, with the part of it the input ends inside.  An input
    that ends with a whole trailer holds a whole frame: its ``frame_len``
    is then the field at fault (F-frame-len), not the input."""
    n = v.n
    end = v.frame_len
    if end > n and trailer_view(n, n, v.header_len, src).head is not None:
        end = n
    if end <= n:      # the input holds it: the part and the words are never read
        return _new(Truncation, (n, end, "frame", ""))
    return Truncation(n, end, _part_at(v, src, n), f"frame_len says the frame is "
                      f"{v.frame_len} bytes")


def _part_at(v: FrameView, src, at: int) -> str:
    """The part of the frame byte ``at`` falls in, as far as the header
    locates the parts (the index's length comes from its chunk header)."""
    if at < v.header_len:
        return "frame.metalayers" if v.layout in LAYOUT_WITH_METALAYERS else "frame.header"
    index = v.header_len + (0 if v.sparse else max(v.cbytes, 0))
    if at < index:
        return "frame.chunks"
    if 0 <= index and index + fc.LEN_HEADER <= at:
        index_end = index + fc.FAST_HEADER.unpack_from(src, index)[_CBYTES_AT]
        if index_end <= at:
            return "frame.trailer"
    return "frame.offsets"


@rule("F-version", "error", _F + "general_flags.version", "frame.md#rules",
      "the frame format version is 1..3 in the current layout (not checked in the older "
      "ones: beta.1's byte reads as 4, 13-element headers hold 1 or 2)")
def version_known(v, src, sink):
    if v.layout == 14 and not 1 <= v.version <= 3:
        sink(f"unknown frame format version {v.version}", _at(v, "general_flags.version"))


@rule("F-type", "error", _F + "frame_type", "frame.md#rules",
      "the frame type is 0 for a contiguous frame, 1 for a sparse frame's index")
def frame_type_matches(v, src, sink):
    if v.layout >= 13 and v.frame_type != (1 if v.sparse else 0):
        kind = "a sparse frame's index" if v.sparse else "a contiguous frame"
        hint = ("" if v.sparse or v.frame_type != 1 else
                f": this is the index file of a sparse frame ({SFRAME_INDEX}); open its "
                "directory instead")
        sink(f"frame type {v.frame_type} in {kind}{hint}", _at(v, "frame_type"))


def offsets_size_code(version: int) -> int:
    """The offset-width code of 64-bit offsets in frame format ``version``
    (the only width written): 1 from version 2 on, 2 before."""
    return 1 if version >= 2 else 2


@rule("F-offsets-size", "error", _F + "general_flags.offsets_size", "frame.md#rules",
      "offsets are 64-bit: code 1 from frame version 2 on, code 2 in versions 0 and 1")
def offsets_64bit(v, src, sink):
    expected = offsets_size_code(v.version)
    if v.layout >= 13 and v.offsets_size != expected:
        sink(f"offset width code {v.offsets_size}: 64-bit offsets are code {expected} in "
             f"frame version {v.version}", _at(v, "general_flags.offsets_size"))


@rule("F-header-len", "error", _F + "header_len", "frame.md#rules",
      "the header length covers the fixed part and fits in the frame")
def header_len_sane(v, src, sink):
    if not LEN_FIXED[v.layout] <= v.header_len <= v.frame_len:
        sink(f"header length {v.header_len} is outside {LEN_FIXED[v.layout]}.."
             f"{v.frame_len} (the frame length)", _at(v, "header_len"))


@rule("F-frame-len", "error", _F + "frame_len", "frame.md#rules",
      "a contiguous frame is exactly frame_len bytes long (a sparse index likewise)",
      needs=(INPUT,))
def frame_len_matches(v, src, sink):
    # an input shorter than frame_len is T-truncated, unless it holds a
    # whole frame (frame_extent): then, as with a longer input, the field
    if v.frame_len != v.n:
        sink(f"the header says {v.frame_len} bytes, the input has {v.n}",
             _at(v, "frame_len"))


@rule("F-sizes", "error", _F + "nbytes", "frame.md#rules",
      "nbytes and cbytes are not negative, and cbytes fits in the frame",
      needs=(_F + "frame_len",))
def sizes_sane(v, src, sink):
    if v.nbytes < 0 or v.cbytes < 0:
        field = "nbytes" if v.nbytes < 0 else "cbytes"
        sink(f"negative sizes: nbytes {v.nbytes}, cbytes {v.cbytes}", _at(v, field), _F + field)
    elif not v.sparse and v.nbytes and v.header_len + v.cbytes > v.frame_len:
        # (a frame without data has no chunks section: C-Blosc2 looks for the
        # trailer at header_len and leaves cbytes as it was when an edit
        # deletes the last chunk)
        sink(f"the chunks section ({v.cbytes} bytes after the {v.header_len}-byte header) "
             f"runs past the frame ({v.frame_len})", _at(v, "cbytes"), _F + "cbytes")


@rule("F-typesize", "error", _F + "typesize", "frame.md#rules", "typesize > 0")
def typesize_positive(v, src, sink):
    if v.typesize <= 0:
        sink(f"typesize {v.typesize} is not positive", _at(v, "typesize"))


@rule("F-chunksize", "error", _F + "chunksize", "frame.md#rules",
      "a frame holding data has chunksize >= 0 (0: chunks of varying size, counted by "
      "the offsets index); an empty one may say anything (python-blosc2 writes -1)")
def chunksize_sane(v, src, sink):
    if v.nbytes > 0 and v.chunksize < 0:
        sink(f"chunksize {v.chunksize} with {v.nbytes} bytes of data", _at(v, "chunksize"))


@rule("F-nfilters", "error", _F + "filter_pipeline.nfilters", "frame.md#rules",
      "the filter pipeline has at most 6 slots")
def nfilters_sane(v, src, sink):
    if v.layout >= 13 and v.nfilters > 6:
        sink(f"{v.nfilters} filter slots, at most 6", _at(v, "filter_pipeline.nfilters"))


@rule("F-vlmeta-flag", "error", _F + "has_vlmetalayers", "frame.md#rules",
      "has_vlmetalayers is a msgpack bool (0xc2 or 0xc3)")
def vlmeta_flag_bool(v, src, sink):
    if v.has_vlmetalayers_byte not in (0xC2, 0xC3):
        sink(f"byte {v.has_vlmetalayers_byte:#04x} where a msgpack bool belongs",
             _at(v, "has_vlmetalayers"))


HEADER_RULES = (version_known, frame_type_matches, offsets_64bit, header_len_sane,
                frame_len_matches, sizes_sane, typesize_positive, chunksize_sane,
                nfilters_sane, vlmeta_flag_bool)


def read_or_none(layout: Layout, buf, at: int) -> tuple | None:
    """``layout``'s flat values at ``at`` of ``buf``, or None where a
    constant differs or the input ends (a rule then explains which field)."""
    try:
        return layout.read(buf, at)
    except (ConstMismatch, struct.error):
        return None


# ---------------------------------------------------------------------------
# specs/frame.md#rules -- the metalayer sections (header and trailer)
# ---------------------------------------------------------------------------

class MetaEntryView(NamedTuple):
    """One index entry of a metalayer section: its name's marker byte and
    bytes, its value offset (from the section's base), where the value's
    bin32 starts (``at``) and its content length (None when the value's
    head is unreadable or ``at`` lies outside the section)."""
    marker: int
    name: bytes
    offset: int
    at: int
    len_content: int | None


class MetaView(NamedTuple):
    """A metalayer section as read: at ``start`` of ``src``, everything in
    ``src[:limit]``, value offsets from ``base``, paths under ``root``;
    ``entries`` None when the section's index does not read."""
    start: int
    limit: int
    base: int
    root: str
    entries: list[MetaEntryView] | None

    def value_path(self, e: MetaEntryView) -> str:
        return f"{self.root}[{e.name.decode('utf-8', 'replace')!r}]"

    @property
    def bound(self) -> str:
        """What ends the section, in words: a read past it is the section's
        fault (the input holds the whole frame by then)."""
        return ("the header (header_len)" if self.root == "frame.metalayers"
                else "the frame (frame_len)")


@rule("F-meta", "error", "frame.metalayers", "frame.md#rules",
      "the metalayer index and values are well formed, at most 16 entries, each offset "
      "pointing at its bin32 value inside the header (trailer), no name twice")
def metalayers_well_formed(v, src, sink):
    if v.entries is None:
        if not explain(Metalayers, src[:v.limit], v.start, v.root, sink, bound=v.bound):
            sink("the metalayer index disagrees with its declaration", v.start, v.root)
        return
    if len(v.entries) > MAX_METALAYERS:
        sink(f"{len(v.entries)} metalayers, at most {MAX_METALAYERS}",
             v.start + FAST_META_HEAD.offset("num_metalayers"), f"{v.root}.num_metalayers")
        return
    limit = v.limit
    seen: set[bytes] = set()
    for k, e in enumerate(v.entries):
        if fixstr_len(e.marker) is None:
            sink(f"byte {e.marker:#04x} where a msgpack fixstr belongs", v.start,
                 f"{v.root}.index[{k}].name_marker")
        elif not 0 <= e.at < limit:
            sink(f"value offset {e.offset} points outside the section "
                 f"(0..{limit - v.base})", v.start, v.value_path(e))
        elif e.len_content is None or e.at + LEN_META_VALUE_HEAD + e.len_content > limit:
            # construct says which byte is wrong, or where the value runs out
            if not explain(MetaValue, src[:v.limit], e.at, v.value_path(e), sink,
                           bound=v.bound):
                sink("the value disagrees with its declaration", e.at, v.value_path(e))
        elif e.name in seen:
            # no writer repeats a name (C-Blosc2 refuses to add one twice);
            # C-Blosc2 finds the first, python-blosc2 lists both
            sink(f"the name {e.name.decode('utf-8', 'replace')!r} appears twice", v.start,
                 f"{v.root}.index[{k}].name")
        seen.add(e.name)


META_RULES = (metalayers_well_formed,)


# ---------------------------------------------------------------------------
# specs/frame.md#rules -- the trailer
# ---------------------------------------------------------------------------


class TrailerView(NamedTuple):
    """The trailer of a frame ending at ``frame_len`` (``n`` bytes of input;
    the header ``header_len`` bytes long, 0 when unknown), read from its
    end (:func:`trailer_view`): ``tail`` (TrailerTail's flat values at
    ``tail_at``, None when unreadable or the frame is too short for it),
    ``trailer_len`` and whether it is sane, ``start`` (None until the
    length is sane) and ``head`` (TrailerHead's values at ``start``, None
    when unreadable)."""
    n: int
    frame_len: int
    header_len: int
    tail_at: int
    tail: tuple | None
    trailer_len: int | None
    length_sane: bool
    start: int | None
    head: tuple | None


def trailer_view(n: int, frame_len: int, header_len: int, src) -> TrailerView:
    """The trailer of the frame ending at ``frame_len`` of ``src``, as read."""
    tail_at = frame_len - LEN_TRAILER_TAIL
    tail = head = start = tl = None
    sane = False
    if frame_len >= LEN_TRAILER_TAIL + header_len:
        tail = read_or_none(FAST_TRAILER_TAIL, src, tail_at)
    if tail is not None:
        tl = _TRAILER_LEN(tail)
        sane = MIN_TRAILER_LEN <= tl <= frame_len - header_len
        if sane:
            start = frame_len - tl
            head = read_or_none(FAST_TRAILER_HEAD, src, start)
    return _new(TrailerView, (n, frame_len, header_len, tail_at, tail, tl, sane, start, head))


_new = tuple.__new__        # a view made without NamedTuple's Python-level __new__


@rule("F-trailer", "error", "frame.trailer", "frame.md#rules",
      "the trailer ends the frame: its tail markers, a length of at least 25 that fits "
      "after the header, and its leading fixarray")
def trailer_ends_frame(v, src, sink):
    if v.frame_len < LEN_TRAILER_TAIL + v.header_len:
        sink("the frame ends before its trailer", v.n)
    elif v.tail is None:
        if not explain(TrailerTail, src, v.tail_at, "frame.trailer", sink):
            sink("the trailer's tail disagrees with its declaration", v.tail_at)
    elif not v.length_sane:
        sink(f"trailer length {v.trailer_len} is outside {MIN_TRAILER_LEN}.."
             f"{v.frame_len - v.header_len}",
             v.tail_at + FAST_TRAILER_TAIL.offset("trailer_len"), "frame.trailer.trailer_len")
    elif v.head is None:
        if not explain(TrailerHead, src, v.start, "frame.trailer", sink):
            sink("the trailer's head disagrees with its declaration", v.start)


TRAILER_RULES = (trailer_ends_frame,)


# Warnings from the validator: readers ignore these bytes, writers set them.
@rule("F-trailer-version", "warning", "frame.trailer.version", "frame.md#rules",
      "the trailer version is 1 (0 before 2.0.0-beta.2)")
def trailer_version_known(v, src, sink):
    version = _TRAILER_VERSION(v.head)
    if version not in TRAILER_VERSIONS:
        sink(f"trailer version {version}; writers put 1 (0 before 2.0.0-beta.2)",
             v.start + FAST_TRAILER_HEAD.offset("version"))


@rule("F-fingerprint", "warning", "frame.trailer.fingerprint_type", "frame.md#rules",
      "the fingerprint kind is 0..3; kind 0 (none, the only one written) has 16 zero "
      "bytes")
def fingerprint_known(v, src, sink):
    kind, fingerprint = _FINGERPRINT_TYPE(v.tail), _FINGERPRINT(v.tail)
    at = v.tail_at + FAST_TRAILER_TAIL.offset("fingerprint_type")
    if kind not in FINGERPRINT_KINDS:
        sink(f"fingerprint kind {kind} is none of 0..{max(FINGERPRINT_KINDS)}", at)
    elif kind == 0 and any(fingerprint):
        sink("fingerprint kind 0 (none) with bytes that are not zero",
             v.tail_at + FAST_TRAILER_TAIL.offset("fingerprint"), "frame.trailer.fingerprint")


# Run on a trailer F-trailer accepted.
TRAILER_WARNINGS = (trailer_version_known, fingerprint_known)
TRAILER_VERSIONS = (0, 1)
FINGERPRINT_KINDS = range(4)
_TRAILER_LEN = FAST_TRAILER_TAIL.getter("trailer_len")
_TRAILER_VERSION = FAST_TRAILER_HEAD.getter("version")
_FINGERPRINT_TYPE = FAST_TRAILER_TAIL.getter("fingerprint_type")
_FINGERPRINT = FAST_TRAILER_TAIL.getter("fingerprint")

# ---------------------------------------------------------------------------
# specs/frame.md#rules -- the offsets index
# ---------------------------------------------------------------------------


class IndexView(NamedTuple):
    """The offsets index as it is located and read (:func:`index_view`):
    it starts at ``start`` (None when the header does not say where) and
    ends by ``end`` (exactly there when ``fills``: the trailer's start);
    ``nchunks`` offsets are due (None: as many as it holds, chunks of
    varying size); ``absent`` for a frame without data (the trailer follows
    the header).  ``chunk_nbytes`` / ``chunk_cbytes`` are its chunk header's
    (None when the space holds no header: the chunk's own H1 says so);
    ``decoded`` the bytes it decodes to (None before it is decoded);
    ``counted_at`` where the frame header's nbytes sits when ``nchunks``
    comes from it (None otherwise); ``refused`` the error of a decoder that
    lacks what the index chunk asks for (an UnsupportedError)."""
    n: int
    header_len: int
    start: int | None
    end: int
    fills: bool
    nchunks: int | None
    absent: bool
    chunk_nbytes: int | None
    chunk_cbytes: int | None
    decoded: int | None
    counted_at: int | None
    refused: Any = None


def index_view(n: int, header_len: int, frame_nbytes: int, start: int | None, end: int,
               fills: bool, nchunks: int | None, src, counted_at: int | None = None
               ) -> IndexView:
    """The offsets index between ``start`` and ``end`` of ``src``, its chunk
    header read when the space holds one."""
    # no data, no index: the trailer follows the chunks section, or (C-Blosc2
    # after an edit deleted the last chunk, cbytes left as it was) the header
    absent = frame_nbytes == 0 and end in (start, header_len)
    nb = cb = None
    if start is not None and not absent and header_len <= start and \
            start + fc.LEN_HEADER <= min(end, n):
        h = fc.FAST_HEADER.unpack_from(src, start)
        nb, cb = h[_NBYTES_AT], h[_CBYTES_AT]
    return _new(IndexView, (n, header_len, start, end, fills, nchunks, absent, nb, cb, None,
                            counted_at, None))


@rule("F-index", "error", "frame.offsets", "frame.md#rules",
      "the offsets index is a valid chunk of one int64 per chunk, right after the chunks "
      "section")
def index_fills_its_space(v, src, sink):
    start, end = v.start, v.end
    if start is None:
        sink("header_len or cbytes unreadable: the index cannot be located", 0, "frame.header")
    elif v.absent:
        return
    elif not v.header_len <= start <= end - fc.LEN_HEADER:
        # the space between the chunks section and the trailer is the
        # header's and trailer's saying: the input holds it whole
        sink(f"no room for the offsets index between {start} and {end} (its chunk header "
             f"needs {fc.LEN_HEADER} bytes)", min(start, v.n))
    elif v.chunk_cbytes is not None and v.fills and v.chunk_cbytes != end - start:
        sink(f"the index chunk ({v.chunk_cbytes} bytes for {v.chunk_nbytes // LEN_OFFSET} "
             f"offsets) does not fill the {end - start} bytes before the trailer",
             start + _CHUNK_NBYTES_AT)
    elif v.chunk_cbytes is not None and v.nchunks is not None and \
            v.chunk_nbytes != LEN_OFFSET * v.nchunks:
        if v.counted_at is not None and v.chunk_nbytes % LEN_OFFSET == 0:
            # the index is whole where it lies: the count it disagrees with
            # comes from the header's nbytes
            sink(f"the header's nbytes and chunksize make {v.nchunks} chunks, the offsets "
                 f"index (a whole chunk in its place) holds {v.chunk_nbytes // LEN_OFFSET}",
                 v.counted_at, "frame.header.nbytes")
        else:
            sink(f"the index chunk holds {v.chunk_nbytes} bytes, {v.nchunks} offsets of "
                 f"{LEN_OFFSET} are due", start + _CHUNK_NBYTES_AT)
    elif v.refused is not None:
        # C-Blosc2 writes every index with its default parameters (blosclz,
        # shuffle, 8-byte items): an index this build cannot decode is damage
        sink(f"{v.refused.message}: C-Blosc2 writes the offsets index with its default "
             "parameters, so the index is damaged", v.refused.offset, v.refused.path)
    elif v.decoded is not None and (v.decoded % LEN_OFFSET or (
            v.nchunks is not None and v.decoded != LEN_OFFSET * v.nchunks)):
        sink(f"the index holds {v.decoded} bytes, {v.nchunks} offsets of {LEN_OFFSET} are due",
             start + _CHUNK_NBYTES_AT)


INDEX_RULES = (index_fills_its_space,)
_CHUNK_NBYTES_AT = fc.HEADER.offset("nbytes")
_NBYTES_AT, _CBYTES_AT = fc.HEADER["nbytes"].index, fc.HEADER["cbytes"].index

# ---------------------------------------------------------------------------
# specs/frame.md#rules -- each index entry and the chunk it stands for
# ---------------------------------------------------------------------------


class EntryView:
    """Entry ``i`` of the offsets index (``entry``, an int64), its byte
    offset ``at`` (the index chunk's start when the index is compressed),
    and the frame's facts it is read with: the chunks section
    ``[header_len, section_end)``, the decoded ``size`` of chunk ``i`` (None:
    chunks of varying size), ``typesize``, ``sparse`` (entries name chunk
    files).  The reader adds what it finds: ``file_error`` (a sparse
    frame's chunk file that cannot be read), the chunk's ``start`` and
    ``cbytes`` (from its header), whether it is marked ``lazy``, and
    ``nbytes`` once decoded."""
    __slots__ = ("i", "entry", "at", "header_len", "section_end", "size", "typesize",
                 "sparse", "file_error", "start", "cbytes", "nbytes", "lazy")

    def __init__(self, i: int, entry: int, at: int, header_len: int, section_end: int,
                 size: int | None, typesize: int, sparse: bool = False):
        self.i, self.entry, self.at = i, entry, at
        self.header_len, self.section_end = header_len, section_end
        self.size, self.typesize, self.sparse = size, typesize, sparse
        self.file_error = self.start = self.cbytes = self.nbytes = None
        self.lazy = False

    @property
    def flags_at(self) -> int:
        """Where the chunk's blosc2_flags byte is (in its own file when sparse)."""
        return self.start + _B2FLAGS_AT

    @property
    def kind(self) -> str | None:
        return special_kind(self.entry)

    @property
    def path(self) -> str:
        return f"frame.offsets[{self.i}]"

    @property
    def chunk_path(self) -> str:
        return f"frame.chunks[{self.i}]"


def entry_hex(entry: int) -> str:
    """An index entry as the 16 hex digits of its int64."""
    return f"{entry & (1 << 8 * LEN_OFFSET) - 1:#018x}"


@rule("F-special-bits", "error", "frame.offsets[]", "frame.md#rules",
      "a special offset has the sign bit and one kind bit set, nothing else")
def special_bits_written(v, src, sink):
    # C-Blosc2 reads the first kind bit and ignores the rest: such an entry
    # is damage (or an unknown writer's), never a writer's output
    if v.entry < 0 and v.kind is not None and special_extra_bits(v.entry):
        sink(f"special offset {entry_hex(v.entry)} has bits besides the sign bit and the "
             f"{v.kind} bit", v.at, v.path)


@rule("F-special", "error", "frame.offsets[]", "frame.md#rules",
      "a special offset's kind is zeros, nan or uninit, in a frame of fixed chunk size, and "
      "the chunk it stands for passes the chunk rules: NaN needs typesize 4 or 8, NaN and "
      "uninit whole items")
def special_readable(v, src, sink):
    if v.entry >= 0:
        return
    kind, size, ts = v.kind, v.size, v.typesize
    if kind is None:
        sink(f"special offset {entry_hex(v.entry)} names no special kind", v.at, v.path)
    elif size is None:
        sink("a special offset in a frame whose chunks vary in size", v.at, v.path)
    elif kind == "nan" and ts not in fc.NAN_WIDTHS:
        sink(f"a NaN entry needs typesize 4 or 8, the frame's is {ts}", v.at, v.path)
    elif kind != "zeros" and size % ts:
        sink(f"a {kind} entry of {size} bytes is not a whole number of {ts}-byte items",
             v.at, v.path)


# A negative entry: the extra bits first (an entry with no kind bit is F-special).
SPECIAL_RULES = (special_bits_written, special_readable)


@rule("F-offset", "error", "frame.offsets[]", "frame.md#rules",
      "each offset is a special value or points at a chunk inside the chunks section; in a "
      "sparse frame, a chunk file number is at most cbytes - 32")
def offset_in_section(v, src, sink):
    if v.entry < 0:
        return
    cbytes = v.section_end - v.header_len
    if not v.sparse and not (
            v.header_len <= v.header_len + v.entry <= v.section_end - fc.LEN_HEADER):
        sink(f"offset {v.entry} is outside the chunks section "
             f"(0..{cbytes - fc.LEN_HEADER})", v.at, v.path)
    elif v.sparse and cbytes < fc.LEN_EXTENDED:
        # no file number passes the bound below: the header's cbytes is the
        # fault (the validator reports it once, not once per entry)
        sink(f"the header's cbytes {cbytes} is below {fc.LEN_EXTENDED}, so every chunk file "
             f"number is above cbytes - {fc.LEN_EXTENDED}: C-Blosc2 refuses the frame",
             None, _F + "cbytes")
    elif v.sparse and v.entry > cbytes - fc.LEN_EXTENDED:
        # C-Blosc2 bounds every entry by cbytes - 32, file numbers too; a
        # writer's cbytes (the chunk files' bytes) always leaves room
        sink(f"chunk file number {v.entry} is above the header's cbytes {cbytes} - "
             f"{fc.LEN_EXTENDED}: C-Blosc2 refuses the frame", v.at, v.path)


@rule("F-sframe", "error", "frame.chunks[]", "frame.md#rules",
      "every chunk file an sframe's index names exists")
def chunk_file_readable(v, src, sink):
    if v.file_error is not None:
        sink(f"chunk file {chunk_file_name(v.entry)} cannot be read: {v.file_error}", v.at,
             v.chunk_path)


# A non-negative entry, before its chunk's header is read.
LOCATION_RULES = (offset_in_section, chunk_file_readable)


@rule("F-chunk", "error", "frame.chunks[]", "frame.md#rules",
      "each chunk lies inside the chunks section and holds chunksize bytes (the last one "
      "may hold fewer)")
def chunk_fits_frame(v, src, sink):
    if not v.sparse and v.cbytes < fc.LEN_HEADER:
        sink(f"chunk {v.i}'s header says it is {v.cbytes} bytes long, less than a "
             f"{fc.LEN_HEADER}-byte chunk header (its header is damaged or zeroed)",
             v.start + fc.HEADER.offset("cbytes"), f"{v.chunk_path}.header.cbytes")
    elif not v.sparse and v.cbytes > v.section_end - v.start:
        sink(f"chunk of {v.cbytes} bytes at {v.start} runs past the chunks section "
             f"({v.section_end})", v.start + fc.HEADER.offset("cbytes"),
             f"{v.chunk_path}.header.cbytes")
    elif v.nbytes is not None and v.size is not None and v.nbytes != v.size:
        sink(f"chunk {v.i} holds {v.nbytes} bytes, the frame's chunks hold {v.size}",
             v.start + _CHUNK_NBYTES_AT, f"{v.chunk_path}.header.nbytes")


@rule("F-lazy", "error", "frame.chunks[]", "frame.md#rules",
      "a chunk stored in a frame (a data chunk, a vlmetalayer value) is not marked lazy")
def stored_not_lazy(v, src, sink):
    # C-Blosc2 sets the bit only on a chunk it holds in memory, whose blocks
    # it reads back from its frame: stored, the bit is damage (a bare chunk
    # with it is T-lazy, a chunk this build cannot decode)
    if v.lazy:
        sink("a stored chunk marked lazy (C-Blosc2 marks only chunks it holds in memory, "
             "which point back into their frame)", v.flags_at, f"{v.chunk_path}{_LAZY_PATH}")


# Once the chunk's header is read (``start``, ``cbytes``), and again once its
# decoded size (``nbytes``) is known.
CHUNK_RULES = (chunk_fits_frame, stored_not_lazy)
_B2FLAGS_AT = fc.EXTENDED.offset("blosc2_flags")
_LAZY_PATH = ".header.extended.blosc2_flags.lazy"


class ValueChunkView(NamedTuple):
    """A vlmetalayer's value as the trailer stores it: a chunk in a bin32
    of ``length`` bytes starting at ``start`` (path ``chunk_path``); the
    chunk's ``cbytes`` (None when fewer than a chunk header's bytes are
    there) and whether it is marked ``lazy``."""
    start: int
    chunk_path: str
    length: int
    cbytes: int | None
    lazy: bool

    @property
    def flags_at(self) -> int:
        return self.start + _B2FLAGS_AT


def value_chunk_view(start: int, path: str, value) -> ValueChunkView:
    """The view of the vlmetalayer value ``value`` (its bytes) at ``start``."""
    cbytes = fc.FAST_HEADER.unpack_from(value, 0)[_CBYTES_AT] \
        if len(value) >= fc.LEN_HEADER else None
    return _new(ValueChunkView, (start, path, len(value), cbytes, fc.marked_lazy(value)))


@rule("F-vlmeta", "error", "frame.trailer.vlmetalayers[]", "frame.md#rules",
      "a vlmetalayer value is one chunk whose cbytes is the value's bin32 length")
def value_is_one_chunk(v, src, sink):
    if v.cbytes is None:
        sink(f"the value holds {v.length} bytes, fewer than a {fc.LEN_HEADER}-byte chunk "
             "header", v.start, v.chunk_path)
    elif v.cbytes != v.length:
        sink(f"the value's chunk says cbytes {v.cbytes}, its bin32 length is {v.length} "
             "(C-Blosc2 refuses the frame)", v.start + fc.HEADER.offset("cbytes"),
             f"{v.chunk_path}.header.cbytes")


# Each vlmetalayer value, before it is decoded.
VALUE_RULES = (value_is_one_chunk, stored_not_lazy)


class TotalView(NamedTuple):
    """A frame of variable-size chunks once every chunk is read: its header
    ``layout``, the header's ``nbytes`` and the chunks' sizes added up
    (``total``, bytes)."""
    layout: int
    nbytes: int
    total: int


@rule("F-nbytes", "error", _F + "nbytes", "frame.md#rules",
      "in a frame of variable-size chunks, the chunks' sizes add up to the header's nbytes")
def chunks_add_up(v, src, sink):
    # a fixed-size frame counts its chunks from nbytes (F-chunk checks each);
    # a variable-size one has nothing else tying nbytes to its chunks
    if v.total != v.nbytes:
        sink(f"the chunks hold {v.total} bytes, the header says {v.nbytes}",
             FLAT_HEADERS[v.layout].offset("nbytes"))


TOTAL_RULES = (chunks_add_up,)


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
