"""Values to human text, for the inspector and error messages.

``describe(path, value)`` reads a value the way the format's documents name
it ("lz4", "shuffle", "sparse", "special: zeros").  The readings are a table
(:data:`FIELDS`) keyed by declared field: each entry names the declarations
that hold its field, so a test fails when a declaration no longer has it.  A
few fields mean something only together with their neighbours (the chunk
flags' bits 0 and 2, a frame's codec nibble 6): for those the caller passes
the parsed structure they sit in as ``context``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from . import chunk, enums, frame

# specs/frame.md: frame_type, the trailer's fingerprint type, the msgpack
# bools of has_vlmetalayers.
FRAME_TYPES = {0: "contiguous", 1: "sparse"}
FINGERPRINT_TYPES = {0: "none", 1: "32-bit", 2: "64-bit", 3: "128-bit"}
MSGPACK_BOOLS = {0xC3: "true", 0xC2: "false"}
# The 11/12-element layouts' filter_flags.shuffle.
OLD_SHUFFLES = {0: "no shuffle", 1: "shuffle", 2: "bitshuffle"}


Text = Callable[[Any, Any], str]        # (value, context) -> the reading


@dataclass(frozen=True)
class Described:
    """The reading of one declared field.

    ``declarations`` are the structures that declare the field (layouts, or
    construct structs for those of variable size), ``field`` its name there
    (``"flags.shuffle"``; ``"filters[]"`` for each item of an array; ``""``
    for one whole entry), ``root`` where the structure sits in reports (by
    default the first layout's own root) and ``text(value, context)`` the
    reading."""
    declarations: tuple
    field: str
    text: Text
    root: str = ""

    @property
    def path(self) -> str:
        """The report path of the field, array indices as ``[]``."""
        root = self.root or self.declarations[0].root
        return f"{root}.{self.field}" if self.field else root


def describe(path: str, value: Any, context: Any = None) -> str:
    """A short human reading of ``value`` found at structure ``path``;
    ``context`` is the parsed structure the field belongs to (a chunk or
    frame header), for fields whose meaning depends on other fields.  A
    field with no entry in :data:`FIELDS` reads as ``""``."""
    entry = FIELDS.get(_INDEX.sub("[]", path) if "[" in path else path)
    return entry.text(value, context) if entry is not None else ""


_INDEX = re.compile(r"\[[^\]]*\]")     # [3], ['name']: any item of an array


def _named(names: dict, unknown: str) -> Text:
    """The name ``names`` gives a value, ``unknown`` for others."""
    return lambda value, _context: names.get(value, unknown)


def _id_name(name: Callable[[int], str]) -> Text:
    """The name of a codec or filter id; nothing for 0 (an empty slot)."""
    return lambda value, _context: name(value) if value else ""


def _special(value: Any, _context: Any) -> str:
    return enums.SPECIALS.get(value) or ("none" if value == 0 else "reserved")


def _csize(value: Any, _context: Any) -> str:
    """A stream's csize: 0 and negative values stand for zeros and runs."""
    if not isinstance(value, int) or value > 0:
        return ""
    if value == 0:
        return "all zeros"
    return f"run of byte {-value & 0xFF:#04x}" if value >= -255 else "bad run"


def _filter_bit(leaf: str) -> Text:
    """Flag bits 0 and 2 of a chunk: Blosc1 filters, unless both are set,
    which (in any version, and always in Blosc2 chunks) marks the 32-byte
    extended header instead (specs/chunk.md#flags)."""
    def text(value: Any, header: Any) -> str:
        if not value:
            return ""
        flags = _get(header, "flags")
        if flags is not None and flags.get("shuffle") and flags.get("bitshuffle"):
            other = "bit 2" if leaf == "shuffle" else "bit 0"
            return f"with {other}: extended header (filters are in the filter slots)"
        return "byte shuffle" if leaf == "shuffle" else "bit shuffle"
    return text


def _get(obj: Any, name: str) -> Any:
    try:
        return obj.get(name) if obj is not None else None
    except AttributeError:
        return None


def _splitmode(value: Any, _context: Any) -> str:
    """The frame's split mode, stored as the mode's code - 1."""
    if not isinstance(value, int):
        return ""
    return enums.SPLITMODES.get(value + 1, "unknown split mode")


def _offsets_size(value: Any, header: Any) -> str:
    """The offset width code: 64-bit offsets are code 1 from frame version 2
    on and code 2 before (specs/frame.md#rules, F-offsets-size)."""
    version = _get(_get(header, "general_flags"), "version")
    if version is None:
        return "64-bit offsets" if value in (1, 2) else "unknown offset width"
    expected = frame.offsets_size_code(version)
    if value == expected:
        return "64-bit offsets"
    return f"unknown offset width (64-bit is code {expected} in frame version {version})"


def _frame_codec(value: Any, header: Any) -> str:
    """The codec nibble: a codec id, or 6, which hands the id over to the
    filter pipeline's udcodec byte (layouts of 13 and 14 elements)."""
    if value == enums.COMPFORMAT_UDCODEC:
        udcodec = _get(_get(header, "filter_pipeline"), "udcodec")
        if udcodec is not None:
            return f"see udcodec: {enums.codec_name(udcodec)}"
        return "see udcodec"
    return enums.codec_name(value)


def _offset_entry(value: Any, _context: Any) -> str:
    """An offsets-index entry: negative ones are special chunks, named by
    the entry's top byte (specs/frame.md#offsets)."""
    if not isinstance(value, int) or value >= 0:
        return ""
    kind = frame.special_kind(value)
    if kind is None:
        return f"special entry of unknown kind {frame.offset_top(value):#04x}"
    if frame.special_extra_bits(value):
        return f"special: {kind}, with bits no writer sets"
    return f"special: {kind}"


# The declarations each reading belongs to.
_HEADER = (chunk.HEADER,)
_EXTENDED = (chunk.EXTENDED, chunk.EXTENDED_ALPHA)
_FRAME_HEADERS = tuple(frame.FLAT_HEADERS.values())
_WITH_PIPELINE = (frame.FLAT_HEADERS[14], frame.FLAT_HEADERS[13])
_WITH_FILTER_FLAGS = (frame.FLAT_HEADERS[12], frame.FLAT_HEADERS[11])

# Every field that has a reading (a test checks each is declared).
FIELDS: dict[str, Described] = {d.path: d for d in (
    Described(_HEADER, "version", _named(enums.VERSIONS, "unknown version")),
    Described(_HEADER, "flags.shuffle", _filter_bit("shuffle")),
    Described(_HEADER, "flags.bitshuffle", _filter_bit("bitshuffle")),
    Described(_HEADER, "flags.compformat", _named(enums.COMPFORMATS, "?")),
    Described(_EXTENDED, "filters[]", _id_name(enums.filter_name)),
    Described((chunk.EXTENDED,), "udcodec", _id_name(enums.codec_name)),
    Described(_EXTENDED, "blosc2_flags.special", _special),
    Described((chunk.Stream,), "csize", _csize, root="chunk.blocks[].streams[]"),
    Described(_FRAME_HEADERS, "magic", lambda _v, _c: "the frame signature b2frame\\0"),
    Described(_FRAME_HEADERS, "general_flags.version",
              lambda value, _c: f"frame format version {value}"),
    Described(_FRAME_HEADERS, "general_flags.offsets_size", _offsets_size),
    Described(_WITH_PIPELINE, "frame_type", _named(FRAME_TYPES, "unknown frame type")),
    Described(_WITH_FILTER_FLAGS, "filter_flags.shuffle", _named(OLD_SHUFFLES, "unknown")),
    Described(_FRAME_HEADERS, "codec_flags.codec", _frame_codec),
    Described(_FRAME_HEADERS, "other_flags.splitmode", _splitmode),
    Described(_FRAME_HEADERS, "has_vlmetalayers", _named(MSGPACK_BOOLS, "not a msgpack bool")),
    Described(_WITH_PIPELINE, "filter_pipeline.filters[]", _id_name(enums.filter_name)),
    Described(_WITH_PIPELINE, "filter_pipeline.udcodec",
              lambda value, _c: enums.codec_name(value)),
    Described((frame.FAST_TRAILER_HEAD,), "version",
              lambda value, _c: f"trailer version {value}"),
    Described((frame.FAST_TRAILER_TAIL,), "fingerprint_type",
              _named(FINGERPRINT_TYPES, "unknown fingerprint type")),
    Described((frame.Offset,), "", _offset_entry, root="frame.offsets[]"),
)}


def chunk_codec(c) -> str:
    """The codec a parsed chunk was written with, as far as it says: LZ4HC
    and LZ4 share a stream format, and Blosc2 writers put the codec id in
    the udcodec byte, which tells them apart (the alpha layout of chunk
    version 3 has no such byte)."""
    ud = c.header.extended.get("udcodec", 0) if c.extended else 0
    if ud and ud in enums.CODEC_FORMAT and enums.CODEC_FORMAT[ud] == c.compformat:
        return enums.codec_name(ud)
    return c.codec
