"""Values to human text, for the inspector and error messages.

``describe(path, value)`` reads a value the way the format's documents name
it ("lz4", "shuffle", "sparse", "special: zeros").  A few fields mean
something only together with their neighbours (the chunk flags' bits 0 and 2,
a frame's codec nibble 6): for those the caller passes the parsed structure
they sit in as ``context``.
"""
from __future__ import annotations

from typing import Any

from . import enums, frame

# specs/frame.md: frame_type, the trailer's fingerprint type, the msgpack
# bools of has_vlmetalayers.
FRAME_TYPES = {0: "contiguous", 1: "sparse"}
FINGERPRINT_TYPES = {0: "none", 1: "32-bit", 2: "64-bit", 3: "128-bit"}
MSGPACK_BOOLS = {0xC3: "true", 0xC2: "false"}
# The 11/12-element layouts' filter_flags.shuffle.
OLD_SHUFFLES = {0: "no shuffle", 1: "shuffle", 2: "bitshuffle"}


def describe(path: str, value: Any, context: Any = None) -> str:
    """A short human reading of ``value`` found at structure ``path``;
    ``context`` is the parsed structure the field belongs to (a chunk or
    frame header), for fields whose meaning depends on other fields."""
    if path.startswith("frame."):
        return _frame(path, value, context)
    return _chunk(path, value, context)


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _chunk(path: str, value: Any, context: Any) -> str:
    leaf = _leaf(path)
    if leaf == "version" and path.startswith("chunk."):
        return enums.VERSIONS.get(value, "unknown version")
    if leaf in ("shuffle", "bitshuffle") and path.endswith("flags." + leaf):
        return _filter_bit(leaf, value, context)
    if leaf == "compformat":
        return enums.COMPFORMATS.get(value, "?")
    if leaf == "udcodec":
        return enums.codec_name(value) if value else ""
    if leaf == "special":
        return enums.SPECIALS.get(value) or ("none" if value == 0 else "reserved")
    if leaf.startswith("filters["):
        return enums.filter_name(value) if value else ""
    if leaf == "csize" and isinstance(value, int):
        if value == 0:
            return "all zeros"
        if value < 0:
            return f"run of byte {-value & 0xFF:#04x}" if value >= -255 else "bad run"
    return ""


def _filter_bit(leaf: str, value: Any, header: Any) -> str:
    """Flag bits 0 and 2 of a chunk: Blosc1 filters, unless both are set,
    which (in any version, and always in Blosc2 chunks) marks the 32-byte
    extended header instead (specs/chunk.md#flags)."""
    if not value:
        return ""
    flags = _get(header, "flags")
    if flags is not None and flags.get("shuffle") and flags.get("bitshuffle"):
        other = "bit 2" if leaf == "shuffle" else "bit 0"
        return f"with {other}: extended header (filters are in the filter slots)"
    return "byte shuffle" if leaf == "shuffle" else "bit shuffle"


def _get(obj: Any, name: str) -> Any:
    try:
        return obj.get(name) if obj is not None else None
    except AttributeError:
        return None


def _frame(path: str, value: Any, context: Any) -> str:
    leaf = _leaf(path)
    if path.startswith("frame.offsets["):
        return _offset_entry(value)
    if leaf == "version" and path.endswith("general_flags.version"):
        return f"frame format version {value}"
    if leaf == "version" and path.startswith("frame.trailer"):
        return f"trailer version {value}"
    if leaf == "magic":
        return "the frame signature b2frame\\0"
    if leaf == "frame_type":
        return FRAME_TYPES.get(value, "unknown frame type")
    if leaf == "has_vlmetalayers":
        return MSGPACK_BOOLS.get(value, "not a msgpack bool")
    if leaf == "fingerprint_type":
        return FINGERPRINT_TYPES.get(value, "unknown fingerprint type")
    if leaf == "splitmode" and isinstance(value, int):
        return enums.SPLITMODES.get(value + 1, "unknown split mode")
    if leaf == "codec" and path.endswith("codec_flags.codec"):
        return _frame_codec(value, context)
    if leaf == "udcodec":
        return enums.codec_name(value)
    if leaf.startswith("filters["):
        return enums.filter_name(value) if value else ""
    if leaf == "shuffle" and path.endswith("filter_flags.shuffle"):
        return OLD_SHUFFLES.get(value, "unknown")
    if leaf == "offsets_size":
        return _offsets_size(value, context)
    return ""


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


def _offset_entry(value: Any) -> str:
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


def chunk_codec(c) -> str:
    """The codec a parsed chunk was written with, as far as it says: LZ4HC
    and LZ4 share a stream format, and Blosc2 writers put the codec id in
    the udcodec byte, which tells them apart."""
    ud = c.header.extended.udcodec if c.extended else 0
    if ud and ud in enums.CODEC_FORMAT and enums.CODEC_FORMAT[ud] == c.compformat:
        return enums.codec_name(ud)
    return c.codec
