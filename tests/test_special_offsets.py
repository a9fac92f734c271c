"""Every reader agrees on every special-offset byte.

A frame of one chunk gets one index entry whose most significant byte is
each value 0x00-0xFF (and a few with stray bits in the low seven bytes),
in a raw (memcpyed) index and in a special-value index; ``open_frame``
(reading the chunk), ``validate``, the inspector's ``frame_nodes``,
``salvage`` and ``scan`` must name the same rule at the same offset and
path, and the same kind where they read one.  The expected verdict is
worked out here from the bits (specs/frame.md#special-offsets): the sign
bit and exactly one kind bit is a special chunk, no kind bit is F-special,
a kind bit with anything else is F-special-bits.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

import blosckit
from blosckit.errors import FormatError
from blosckit.tools.inspect import frame_nodes
from blosckit.tools.salvage import salvage
from blosckit.tools.scan import scan

KIND_BITS = {0x01: "zeros", 0x04: "uninit", 0x02: "nan"}     # specs/frame.md, by hand
DATA = np.arange(100, dtype="<i4").tobytes()                  # chunksize 400, typesize 4
LOW_BITS = (0, 1, 1 << 40, 0xFF << 48)


def _base() -> tuple[bytes, int, int]:
    fr = blosckit.build_frame([blosckit.compress(DATA, typesize=4)])
    f = blosckit.open_frame(fr)
    start, end = f.index_span
    assert (f.nchunks, f.chunksize, f.typesize, f.trailer_start) == (1, 400, 4, end)
    return fr, start, end


BASE, INDEX_AT, INDEX_END = _base()


def frame_with_entry(entry: int, raw: bool) -> bytes:
    """The base frame with its one index entry replaced by ``entry``, the
    index stored raw (memcpyed) or as a special-value chunk repeating it."""
    value = struct.pack("<q", entry)
    index = (blosckit.compress(value, typesize=8, clevel=0) if raw
             else blosckit.compress_special("value", 8, typesize=8, value=value))
    assert len(index) == INDEX_END - INDEX_AT            # the frame length is unchanged
    return BASE[:INDEX_AT] + index + BASE[INDEX_END:]


def expected(top: int, low: int) -> str | None:
    """The verdict from the entry's bits: a rule id, "chunk" (an offset
    into the chunks section, no special kind), or the special kind."""
    if not top & 0x80:
        return "chunk"
    kinds = [name for bit, name in KIND_BITS.items() if top & bit]
    if not kinds:
        return "F-special"
    if len(kinds) > 1 or top & 0x78 or low:
        return "F-special-bits"
    return kinds[0]


def _read_chunk(blob: bytes):
    with blosckit.open_frame(blob) as f:
        return f.decompress_chunk(0), f.offsets[0]


def _reader(blob: bytes) -> tuple[tuple | None, object, str | None]:
    """(error, kind or offset, message) of open_frame reading chunk 0."""
    try:
        _, entry = _read_chunk(blob)
    except FormatError as e:
        return (e.rule, e.offset, e.path), None, f"{e.offset}: {e.path}: {e.message} [{e.rule}]"
    return None, entry, None


def _first_error(problems) -> tuple | None:
    return next(((p.rule, p.offset, p.path) for p in problems if p.severity == "error"), None)


def _inspect(blob: bytes) -> tuple[tuple | None, str | None]:
    meaning = None
    try:
        for n in frame_nodes(blob, chunk=0):
            if n.path == "frame.chunks[0]":
                meaning = n.meaning
    except FormatError as e:
        return (e.rule, e.offset, e.path), meaning
    return None, meaning


def _salvage(blob: bytes) -> tuple[tuple | None, str | None]:
    out, report = salvage(blob)
    d = report.damage[0] if report.damage else None
    kind = None
    if report.recovered:
        with blosckit.open_frame(out) as g:
            kind = blosckit.parse_chunk(g.chunk(0)).special
    return (None if d is None else (d.rule, d.offset, d.path)), kind


def _scan(blob: bytes) -> str | None:
    [frame] = [f for f in scan(blob) if f.kind == "frame"]
    assert frame.offset == 0 and frame.size == len(blob)
    return frame.error


CASES = [(top, low, raw) for top in range(256) for low in (0,) for raw in (True, False)] + \
        [(top, low, raw) for top in (0x00, 0x01, 0x80, 0x81, 0x82, 0x84, 0x83, 0xC1, 0xFF)
         for low in LOW_BITS[1:] for raw in (True, False)]


@pytest.mark.parametrize("top,low,raw", CASES)
def test_every_reader_says_the_same_of_an_entry(top, low, raw):
    entry = struct.unpack("<q", struct.pack("<Q", top << 56 | low))[0]
    blob = frame_with_entry(entry, raw)
    want = expected(top, low)
    err, entry_read, message = _reader(blob)
    checked, kind_seen = _inspect(blob)
    salvaged, kind_salvaged = _salvage(blob)
    assert _first_error(blosckit.validate(blob)) == err
    assert checked == err
    assert salvaged == err
    assert _scan(blob) == message
    if want in ("F-special", "F-special-bits"):
        # at the entry: its own bytes in a raw index, else the index chunk's start
        at = INDEX_AT + (blosckit.parse_chunk(blob[INDEX_AT:INDEX_END]).ofs_streams
                         if raw else 0)
        assert err == (want, at, "frame.offsets[0]")
    elif want == "chunk":
        assert entry_read is None or entry_read == entry       # an offset, never a kind
        assert kind_salvaged is None
        if top or low >= 1 << 40:          # past the chunks section
            assert err is not None and err[0] == "F-offset"
    else:
        assert err is None
        assert entry_read == want and kind_salvaged == want
        assert kind_seen == f"special: {want} (no bytes stored)"


def test_the_writers_entries_read_as_c_blosc2_reads_them():
    """The three entries writers write decode to what python-blosc2 (the
    oracle) decodes them to."""
    blosc2 = pytest.importorskip("blosc2")
    for top in KIND_BITS:
        entry = struct.unpack("<q", struct.pack("<Q", (0x80 | top) << 56))[0]
        for raw in (True, False):
            blob = frame_with_entry(entry, raw)
            mine, _ = _read_chunk(blob)
            theirs = blosc2.schunk_from_cframe(blob, copy=True).decompress_chunk(0)
            if KIND_BITS[top] == "uninit":
                assert len(mine) == len(theirs) == len(DATA)   # no defined content
            else:
                assert mine == theirs, (hex(top), raw)
