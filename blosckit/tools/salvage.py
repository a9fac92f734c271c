"""Salvaging damaged Blosc2 contiguous frames.

:func:`salvage` rebuilds a valid contiguous frame from a damaged one (a
truncated file, a corrupted offsets index, trailer or header, corrupted
chunks) and keeps every chunk that still decodes.  Two routes find chunks:

* **index**: the header gives ``header_len`` and ``cbytes``, the offsets
  index right after the chunks section decodes to one int64 per chunk, and
  each entry is read and decoded as a frame reader would (this is the only
  route for an undamaged frame, and keeps its chunk order);
* **scan**: where the index (or the header locating it) is unusable, the
  input is scanned for Blosc chunk headers.  A candidate must pass cheap
  header checks (version 1..6, non-negative int32 sizes, ``cbytes`` fitting
  in the input, the frame's typesize when the header gives it), found by one
  regular expression over the bytes, before it is decoded with
  :func:`blosckit.decompress`; an accepted chunk is skipped whole.

Chunks after the chunks section are not data: the offsets index and the
trailer's vlmetalayer values.  With a readable header the section ends at
``header_len + cbytes``; without one, a chunk preceded by a msgpack bin32
marker whose length is its ``cbytes`` is a (vl)metalayer value, and a chunk
of int64 values (typesize 8) that are special offsets or point below
itself, at least half of them at chunks found before it, is the offsets
index (everything after it is trailer).  See :func:`salvage` for the limits.
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Union

from ..chunk import read as _chunk
from ..errors import FormatError
from ..chunk.encode import MAX_BUFFERSIZE
from ..chunk.special import compress_special
from ..formats import b2nd as fb
from ..formats import enums
from ..formats import npy
from ..formats import chunk as fc
from ..formats import frame as ff
from ..formats.rules import RaiseFirst
from ..frame.read import open_frame, read_metalayers, special_chunk
from ..frame.build import build_frame

__all__ = ["salvage", "SalvageReport", "Recovered", "Dropped", "Damage", "SCAN_MAX_NBYTES"]

# Largest decoded size (bytes) a scanned candidate may claim when the header
# gives no chunk size: a false candidate must not make us allocate gigabytes.
SCAN_MAX_NBYTES = 1 << 28

_LEN_CHUNK_HEAD = fc.LEN_HEADER               # 16
_ENTRY = ff.FAST_OFFSET                       # one offsets-index entry


# _is_index: how many of the first chunks and positions to pair when the
# section start is unknown, and how many entries to try before all of them
_BASE_TRIES = 4
_INDEX_SAMPLE = 16

Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Recovered:
    """One chunk of the rebuilt frame: ``index`` is its position there,
    ``offset`` the byte offset of its first byte in the damaged input (None
    for a special chunk that only the index held), ``nbytes`` its decoded
    size in bytes, ``found_by`` "index" or "scan", ``source_index`` its
    position in the damaged frame's index (None when found by the scan)."""
    index: int
    offset: int | None
    nbytes: int
    found_by: str
    source_index: int | None = None


@dataclass(frozen=True)
class Dropped:
    """Something of the damaged input the rebuilt frame does not hold:
    ``what`` is "chunk", "bytes" (a stretch where no intact chunk was found),
    "index" / "vlmetalayer-value" (chunks that are not data), "metalayers"
    or "vlmetalayers"; ``offset`` and ``length`` in bytes of the input when
    known; ``source_index`` the chunk's position in the damaged index."""
    what: str
    offset: int | None
    length: int | None
    reason: str
    source_index: int | None = None


@dataclass(frozen=True)
class Damage:
    """A FormatError met on the way (offset in the input, path, rule)."""
    offset: int
    path: str
    rule: str | None
    message: str

    @classmethod
    def of(cls, e: FormatError) -> Damage:
        return cls(e.offset, e.path, e.rule, e.message)


@dataclass
class SalvageReport:
    """What :func:`salvage` recovered, dropped and found damaged.

    ``damage[0]``, when the frame could not be opened, is the error of the
    normal route (:func:`blosckit.open_frame`).  ``chunksize`` is the
    rebuilt frame's chunk size in bytes (-1 when it holds no chunk)."""
    recovered: list[Recovered] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    chunksize: int = -1
    # b2nd frames: each chunk lost, as (its index in the chunk grid, the
    # array region it covered: (start, stop) items per dimension); a special
    # chunk of zeros stands in its grid place
    lost_regions: list[tuple[int, tuple[tuple[int, int], ...]]] = field(default_factory=list)
    metalayers_kept: bool = True
    vlmetalayers_kept: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_found(self) -> bool:
        """True when no chunk at all could be recovered."""
        return not self.recovered

    @property
    def intact(self) -> bool:
        """True when the input was a valid frame and everything was kept."""
        return not self.damage and not self.dropped

    def __str__(self) -> str:
        lines = [f"recovered {len(self.recovered)} chunks "
                 f"({sum(r.found_by == 'scan' for r in self.recovered)} by scan), "
                 f"dropped {len(self.dropped)} items"]
        lines += [f"damage at {d.offset}: {d.path}: {d.message} [{d.rule}]" for d in self.damage]
        lines += [f"dropped {d.what} at {d.offset} ({d.length} bytes): {d.reason}"
                  for d in self.dropped]
        lines += self.notes
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Internal records
# ---------------------------------------------------------------------------

@dataclass
class _Header:
    """The header fields that could be read, each on its own (None: not
    readable); sizes in bytes."""
    layout: int = 14
    header_len: int | None = None
    nbytes: int | None = None
    cbytes: int | None = None
    typesize: int | None = None
    chunksize: int | None = None
    metalayers: dict[str, bytes] | None = None
    meta_at: dict[str, int] = field(default_factory=dict)   # where each value's bytes start

    def section(self, n: int) -> tuple[int, int] | None:
        """The chunks section ``(start, end)`` clipped to ``n`` input bytes,
        when header_len and cbytes are both known."""
        if self.header_len is None or self.cbytes is None:
            return None
        return self.header_len, min(n, self.header_len + self.cbytes)

    def nchunks(self) -> int | None:
        """Chunks the header announces (fixed chunk size only)."""
        if self.nbytes is None or not self.chunksize or self.chunksize <= 0:
            return None
        return -(-self.nbytes // self.chunksize)

    def size_of(self, i: int) -> int | None:
        """Decoded size (bytes) of chunk ``i`` by the header, None if unknown."""
        n = self.nchunks()
        if n is None or not 0 <= i < n:
            return None
        assert self.chunksize is not None and self.nbytes is not None
        rest = self.nbytes - i * self.chunksize
        return min(rest, self.chunksize)


@dataclass
class _Found:
    """A chunk that decodes: where it is (bytes of the input), its stored
    bytes and its decoded size."""
    offset: int | None
    data: bytes
    nbytes: int
    typesize: int
    found_by: str
    source_index: int | None = None

    @property
    def end(self) -> int:
        return (self.offset or 0) + len(self.data)


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------

def _load(src: Source) -> memoryview:
    """The input as a flat byte view; a path is read whole (OSError when it
    cannot be)."""
    if isinstance(src, (str, os.PathLike)):
        with open(src, "rb") as fh:
            return memoryview(fh.read())
    mv = memoryview(src)
    if mv.ndim != 1 or mv.itemsize != 1 or not mv.c_contiguous:
        mv = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())
    return mv.cast("B") if mv.format != "B" else mv


# ---------------------------------------------------------------------------
# The header, field by field
# ---------------------------------------------------------------------------

def _field(mv: memoryview, con, name: str, base: int = 0,
           marker_name: str | None = None) -> int | None:
    """Field ``name`` of the msgpack structure ``con`` (a frame header, the
    trailer's tail) at ``base``, its marker and width from the declaration;
    None when the marker is not the declared one (the field is damaged) or
    the input ends first."""
    at, marker, fmt = ff.marked_field(con, name, marker_name)
    at += base
    if len(mv) < at + 1 + fmt.size or mv[at] != marker:
        return None
    return fmt.unpack_from(mv, at + 1)[0]


def _read_header(mv: memoryview, report: SalvageReport) -> _Header:
    """Every header field that can be read on its own: a damaged magic or
    one bad field does not discard the others.  The layout comes from byte 0
    (14 elements when that byte is damaged)."""
    n = len(mv)
    h = _Header(layout=(ff.header_layout(mv[0]) if n else None) or 14)
    con = ff.FRAME_HEADERS[h.layout]
    header_len = _field(mv, con, "header_len")
    fixed = ff.LEN_FIXED[h.layout]
    if header_len is not None and not fixed <= header_len <= n:
        header_len = None
    nbytes = _field(mv, con, "nbytes")
    h.nbytes = nbytes if nbytes is not None and nbytes >= 0 else None
    cbytes = _field(mv, con, "cbytes")
    h.cbytes = cbytes if cbytes is not None and cbytes >= 0 else None
    ts = _field(mv, con, "typesize")
    h.typesize = ts if ts is not None and 0 < ts else None
    cs = _field(mv, con, "chunksize")
    h.chunksize = cs if cs is not None and cs > 0 else None
    h.header_len = _check_metalayers(mv, h, header_len, report)
    return h


def _check_metalayers(mv: memoryview, h: _Header, header_len: int | None,
                      report: SalvageReport) -> int | None:
    """Read the metalayers into ``h`` and return the header length: the
    field when the metalayers end there, else where they end (the field is
    then damaged); the field alone when the metalayers are unreadable."""
    fixed = ff.LEN_FIXED[h.layout]
    if h.layout not in ff.LAYOUT_WITH_METALAYERS:
        h.metalayers = {}
        return header_len
    at: dict[str, int] = {}
    try:
        metas = read_metalayers(mv, fixed, len(mv), 0, "frame.metalayers", at)
    except FormatError as e:
        report.damage.append(Damage.of(e))
        return header_len
    # an empty section is its head and the values' head
    end = max((at[k] + len(v) for k, v in metas.items()),
              default=fixed + ff.FAST_META_HEAD.size + ff.FAST_VALUES_HEAD.size)
    h.metalayers, h.meta_at = metas, at
    if header_len != end:
        said = "is damaged" if header_len is None else f"reads {header_len}"
        report.notes.append(f"the header_len field {said}, the metalayers end at {end}: "
                            f"using {end}")
    return end


# ---------------------------------------------------------------------------
# The trailer's vlmetalayers
# ---------------------------------------------------------------------------

def _read_vlmeta(mv: memoryview, frame_end: int, header_len: int) -> dict[str, bytes]:
    """The vlmetalayers of the trailer ending at ``frame_end`` (after a
    header of ``header_len`` bytes, 0 when unknown), decoded; the reader's
    FormatError when the trailer or one value is unreadable."""
    t = ff.trailer_view(len(mv), frame_end, header_len, mv)
    RaiseFirst().run(ff.TRAILER_RULES, t, mv)
    at: dict[str, int] = {}
    raw = read_metalayers(mv, t.start + ff.LEN_TRAILER_HEAD, frame_end, t.start,
                          "frame.trailer.vlmetalayers", at)
    out = {}
    for name, value in raw.items():
        try:
            out[name] = _chunk.decompress(value)
        except FormatError as e:
            raise e.relocated(at[name], f"frame.trailer.vlmetalayers[{name!r}]") from None
    return out


# ---------------------------------------------------------------------------
# Chunks through the index
# ---------------------------------------------------------------------------

def _decode(mv: memoryview, pos: int, cbytes: int, max_nbytes: int,
            root: str = "chunk") -> _Found:
    """The chunk of ``cbytes`` bytes at ``pos`` (the caller located it),
    decoded; FormatError at input offsets, under ``root``, otherwise."""
    # a copy, not a view: decoding a memoryview slice that fails (an
    # unsupported codec) leaves a cycle whose collection crashes the
    # interpreter (blosckit.chunk bug, reported with the salvage work)
    raw = bytes(mv[pos:pos + max(cbytes, 0)])
    try:
        data = _chunk.decompress(raw, max_nbytes=max_nbytes)
    except FormatError as e:
        raise e.relocated(pos, root) from None
    return _Found(pos, raw, len(data), fc.raw_header(raw).typesize, "scan")


@dataclass
class _Index:
    """The offsets index's entries (int64, relative to header_len; negative:
    special) and where entry ``i`` is reported (its own bytes in a raw
    index, else the index chunk's start), as the frame reader reports it."""
    entries: list[int]
    start: int
    raw_at: int | None

    def entry_at(self, i: int) -> int:
        return self.start if self.raw_at is None else self.raw_at + ff.LEN_OFFSET * i


def _read_index(mv: memoryview, h: _Header) -> _Index:
    """The offsets index, from the chunk at header_len + cbytes; the
    reader's FormatError (F-index, or the index chunk's own rule) when it is
    missing, unreadable or holds the wrong count."""
    sec = h.section(len(mv))
    start = None if sec is None else sec[0] + (h.cbytes or 0)
    want = h.nchunks()
    # where the index ends is not trusted (the trailer may be gone): only
    # its own cbytes says
    iv = ff.index_view(len(mv), h.header_len or 0, -1, start, len(mv), False, want, mv)
    sink = RaiseFirst()
    sink.run(ff.INDEX_RULES, iv, mv)
    assert start is not None
    cap = ff.LEN_OFFSET * want if want is not None else SCAN_MAX_NBYTES
    try:
        cbytes = _chunk.chunk_sizes(mv[start:])[1]
        raw = _chunk.decompress(bytes(mv[start:start + max(cbytes, 0)]), max_nbytes=cap)
    except FormatError as e:
        raise e.relocated(start, "frame.offsets") from None
    sink.run(ff.INDEX_RULES, iv._replace(decoded=len(raw)), mv)
    at = fc.raw_data_offset(fc.raw_header(mv, start))
    return _Index([e for (e,) in _ENTRY.iter_unpack(raw)], start,
                  None if at is None else start + at)


def _by_index(mv: memoryview, h: _Header, index: _Index,
              report: SalvageReport) -> list[_Found | None]:
    """Each index entry's chunk, read as the frame reader reads it (the
    same rules: F-special-bits, F-special, F-offset, F-chunk, the chunk's
    own), or None where it fails (reported)."""
    start, end = h.section(len(mv)) or (0, 0)
    out: list[_Found | None] = []
    sink = RaiseFirst()
    for i, entry in enumerate(index.entries):
        size = h.size_of(i)
        e = ff.EntryView(i, entry, index.entry_at(i), start, end, size, h.typesize or 1)
        try:
            if entry < 0:
                sink.run(ff.SPECIAL_RULES, e, mv)
                assert e.kind is not None and size is not None
                chunk = special_chunk(e.kind, size, e.typesize)
                out.append(_Found(None, chunk, size, fc.raw_header(chunk).typesize, "index", i))
                continue
            sink.run(ff.LOCATION_RULES, e, mv)
            e.start = start + entry
            try:
                e.cbytes = _chunk.chunk_sizes(mv[e.start:e.start + _LEN_CHUNK_HEAD])[1]
            except FormatError as err:
                raise err.relocated(e.start, e.chunk_path) from None
            sink.run(ff.CHUNK_RULES, e, mv)
            f = _decode(mv, e.start, e.cbytes, size or SCAN_MAX_NBYTES, e.chunk_path)
            e.nbytes = f.nbytes
            sink.run(ff.CHUNK_RULES, e, mv)
        except FormatError as err:
            report.damage.append(Damage.of(err))
            report.dropped.append(Dropped("chunk", start + entry if entry >= 0 else None,
                                          None, err.message, i))
            out.append(None)
            continue
        f.found_by, f.source_index = "index", i
        out.append(f)
    return out


# ---------------------------------------------------------------------------
# The scan
# ---------------------------------------------------------------------------

def _le32_at_most(bound: int) -> bytes:
    """A regex for a little-endian int32 in 0..``bound``, by its two high
    bytes only (a cheap pre-filter: values a little above pass)."""
    _, _, second, top = max(0, min(bound, 2**31 - 1)).to_bytes(4, "little")
    if top:
        return b".{3}" + _byte_range(top)
    return b".{2}" + _byte_range(second) + b"\\x00"


def _byte_range(top: int) -> bytes:
    return b"[\\x00-" + re.escape(bytes([top])) + b"]"


def _pattern(typesize: int | None, max_nbytes: int, max_cbytes: int) -> re.Pattern[bytes]:
    """Candidate 16-byte chunk headers: version 1..6, versionlz and flags,
    the typesize byte (fixed when known), nbytes and cbytes within their
    bounds (bytes), a non-negative blocksize.  A lookahead, so overlapping
    candidates are all seen; DOTALL so that "." is any byte."""
    width = fc.HEADER["typesize"].mask
    ts = re.escape(bytes([typesize])) if typesize is not None and 0 < typesize <= width \
        else b"."
    known = {"version": b"[" + re.escape(bytes([min(enums.VERSIONS)])) + b"-"
                        + re.escape(bytes([max(enums.VERSIONS)])) + b"]",
             "typesize": ts, "nbytes": _le32_at_most(max_nbytes),
             "blocksize": _le32_at_most(fc.MAX_NBYTES), "cbytes": _le32_at_most(max_cbytes)}
    # the header's fields in declaration order (bit fields are part of their byte)
    body = b"".join(known.get(name, b".{%d}" % f.size) for name, f in fc.HEADER.fields.items()
                    if "." not in name)
    return re.compile(b"(?=" + body + b")", re.DOTALL)


def _scan(mv: memoryview, start: int, end: int, typesize: int | None,
          max_nbytes: int) -> list[_Found]:
    """Every chunk that decodes between ``start`` and ``end`` (bytes of the
    input), in order.  The regex finds candidate headers in C; only those
    whose sizes fit are decoded; an accepted chunk is skipped whole."""
    pat = _pattern(typesize, max_nbytes, end - start)
    found: list[_Found] = []
    pos = start
    while pos + _LEN_CHUNK_HEAD <= end:
        m = pat.search(mv, pos, end)
        if m is None:
            break
        p = m.start()
        head = fc.raw_header(mv, p)
        cbytes = head.cbytes
        if _LEN_CHUNK_HEAD <= cbytes <= end - p and head.nbytes <= max_nbytes:
            try:
                f = _decode(mv, p, cbytes, max_nbytes)
            except FormatError:
                f = None              # not a chunk (or a damaged one): move on a byte
            if f is not None:
                found.append(f)
                pos = p + cbytes
                continue
        pos = p + 1
    return found


def _is_bin32_value(mv: memoryview, f: _Found) -> bool:
    """True when a msgpack bin32 marker with the chunk's length precedes it:
    how (vl)metalayer values are stored, never data chunks (the bytes before
    a data chunk end the previous chunk)."""
    p = f.offset or 0
    head = ff.LEN_META_VALUE_HEAD
    return p >= head and _field(mv, ff.MetaValue, "len_content", p - head,
                                "marker") == len(f.data)


def _is_index(f: _Found, base: int | None, before: list[_Found]) -> bool:
    """True when ``f`` looks like the offsets index of the chunks ``before``
    it: int64 items (typesize 8), each a special offset or a position below
    ``f`` counted from ``base`` (the start of the chunks section; when
    unknown, the base that makes most positions land on found chunks), at
    least half of the positions being those of chunks found before it."""
    if f.typesize != ff.LEN_OFFSET or f.nbytes == 0 or f.nbytes % ff.LEN_OFFSET or not before:
        return False
    entries = [e for (e,) in _ENTRY.iter_unpack(_chunk.decompress(f.data))]
    for e in entries:
        if e < 0 and not ff.written_special(e):
            return False
    positions = [e for e in entries if e >= 0]
    at = {c.offset or 0 for c in before}
    # a damaged first chunk hides the section start: try the bases that put
    # one of the first positions on one of the first chunks found
    bases = [base] if base is not None else \
        {c.offset - e for c in before[:_BASE_TRIES] for e in positions[:_BASE_TRIES]
         if c.offset is not None}
    top = max(positions, default=-1)
    for b in bases:
        if b + top >= (f.offset or 0):
            continue
        # a sample first: a data chunk of int64 rarely gets past 16 entries
        sample = positions[:_INDEX_SAMPLE]
        if 2 * sum(b + e in at for e in sample) >= len(sample) and \
                2 * sum(b + e in at for e in positions) >= len(positions):
            return True
    return False


def _classify(mv: memoryview, found: list[_Found], base: int | None,
              report: SalvageReport) -> tuple[list[_Found], int | None]:
    """Split scanned chunks, with no trusted end of the chunks section, into
    data and the rest: (vl)metalayer values and the offsets index (after
    which everything is trailer).  Returns the data and where the non-data
    part starts (None if nothing was excluded)."""
    data: list[_Found] = []
    stop: int | None = None
    for f in found:
        if stop is not None:
            what, why = "vlmetalayer-value", "after the offsets index (trailer)"
        elif _is_bin32_value(mv, f):
            what, why = "vlmetalayer-value", "stored as a msgpack bin32 value (a metalayer)"
        elif _is_index(f, base, data):
            what, why = "index", "the offsets index, not data"
            stop = f.offset
        else:
            data.append(f)
            continue
        if stop is None:
            stop = f.offset
        report.dropped.append(Dropped(what, f.offset, len(f.data), why))
    return data, stop


def _scan_route(mv: memoryview, h: _Header, report: SalvageReport) -> list[_Found]:
    """Chunks found by scanning, when the index cannot be used."""
    sec = h.section(len(mv))
    start = sec[0] if sec else (h.header_len or 0)
    end = len(mv)
    cap = max(h.chunksize or 0, SCAN_MAX_NBYTES)
    found = _scan(mv, start, end, h.typesize, cap)
    if not found and h.typesize is not None:
        # the header's typesize may be the damaged field
        found = _scan(mv, start, end, None, cap)
        if found:
            report.notes.append(f"no chunk has the header's typesize {h.typesize}")
    if sec is not None:
        data = [f for f in found if f.end <= sec[1]]
        for f in found[len(data):]:
            report.dropped.append(Dropped("index" if _is_index(f, sec[0], data)
                                          else "vlmetalayer-value", f.offset, len(f.data),
                                          f"after the chunks section (header_len + cbytes "
                                          f"= {sec[1]})"))
        stop: int | None = sec[1]
    else:
        data, stop = _classify(mv, found, h.header_len, report)
    data = _majority_typesize(data, report)
    _report_gaps(data, start, stop if stop is not None else
                 (data[-1].end if data else start), report)
    return data


def _majority_typesize(data: list[_Found], report: SalvageReport) -> list[_Found]:
    """Keep the chunks of the most common typesize (the frame's chunks
    share it); the others are dropped as foreign."""
    if not data:
        return data
    ts = Counter(f.typesize for f in data).most_common(1)[0][0]
    for f in data:
        if f.typesize != ts:
            report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                          f"typesize {f.typesize}, the other chunks' is {ts}"))
    return [f for f in data if f.typesize == ts]


def _report_gaps(data: list[_Found], start: int, stop: int, report: SalvageReport) -> None:
    """Each stretch of the chunks section where no intact chunk was found."""
    pos = start
    for f in data + [None]:
        at = stop if f is None else (f.offset or 0)
        if at > pos:
            report.dropped.append(Dropped("bytes", pos, at - pos, "no intact chunk found here"))
        if f is not None:
            pos = max(pos, f.end)


def _fill_failed(mv: memoryview, h: _Header, slots: list[_Found | None],
                 report: SalvageReport) -> list[_Found]:
    """Scan the chunks section for intact chunks no index entry reaches
    (orphans).  When there are exactly as many orphans as failed entries,
    they take those slots in offset order (a compacted frame stores chunks
    in index order); otherwise they are dropped."""
    sec = h.section(len(mv))
    failed = [i for i, s in enumerate(slots) if s is None]
    if sec is None:
        return [s for s in slots if s is not None]
    # an orphan lies between the chunks the index did reach
    known = sorted((s.offset, s.end) for s in slots if s is not None and s.offset is not None)
    orphans: list[_Found] = []
    pos = sec[0]
    for a, b in known + [(sec[1], sec[1])]:
        if a > pos:
            orphans += _scan(mv, pos, a, h.typesize, max(h.chunksize or 0, SCAN_MAX_NBYTES))
        pos = max(pos, b)
    if orphans and len(orphans) == len(failed):
        for i, f in zip(failed, orphans):
            f.source_index = i
            slots[i] = f
            report.notes.append(f"chunk found by scan at {f.offset} takes the place of "
                                f"failed index entry {i}")
            report.dropped[:] = [d for d in report.dropped if d.source_index != i]
    else:
        for f in orphans:
            report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                          "intact, but no index entry says where it belongs"))
    return [s for s in slots if s is not None]


# ---------------------------------------------------------------------------
# Placing chunks in a fixed-chunksize frame
# ---------------------------------------------------------------------------

def _place(chunks: list[_Found], h: _Header, report: SalvageReport) -> tuple[list[_Found], int]:
    """The chunks a fixed-chunksize frame can hold, in order, and that
    chunk size (bytes): the header's when some chunk has it, else the most
    common size.  A chunk of another size is dropped, except a shorter last
    one."""
    if not chunks:
        return [], -1
    sizes = Counter(f.nbytes for f in chunks)
    size: int = h.chunksize if h.chunksize is not None and h.chunksize in sizes \
        else sizes.most_common(1)[0][0]
    if h.chunksize is not None and h.chunksize != size:
        report.notes.append(f"no chunk holds the header's chunksize {h.chunksize}: using {size}")
    last = chunks[-1]
    keep: list[_Found] = []
    odd: list[_Found] = []
    for f in chunks:
        (keep if f.nbytes == size or (f is last and f.nbytes < size) else odd).append(f)
    for f in odd:
        report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                      f"holds {f.nbytes} bytes among chunks of {size}: a "
                                      "fixed-chunksize frame cannot place it",
                                      f.source_index))
    if len(odd) == 1:
        report.notes.append(f"only the chunk at {odd[0].offset} differs in size")
    return keep, size


# ---------------------------------------------------------------------------
# Placing chunks in their grid places (b2nd frames)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _ArrayPlan:
    """A b2nd frame's array, as its metalayer says and the chunks agree:
    extents in items, the chunk grid, the stored chunk's size in bytes."""
    shape: tuple[int, ...]
    chunkshape: tuple[int, ...]
    grid: tuple[int, ...]
    padded: int
    typesize: int
    blocksize: int              # bytes of one block, prod(blockshape) * typesize


def _array_plan(h: _Header, chunks: list[_Found], n_input: int,
                report: SalvageReport) -> _ArrayPlan | None:
    """The array of a frame whose ``b2nd`` (or ``caterva``) metalayer reads
    and agrees with the frame (its rules, the dtype's width against the
    typesize); a metalayer that does not is dropped and reported (never
    kept broken).  None for a frame that holds no array."""
    meta = h.metalayers or {}
    name = next((n for n in fb.NAMES if n in meta), None)
    if name is None:
        return None
    raw = meta[name]
    ts = h.typesize if h.typesize is not None and h.typesize > 0 else \
        (Counter(f.typesize for f in chunks).most_common(1)[0][0] if chunks else None)
    try:
        m = fb.B2ndMeta.parse(raw)
    except Exception:            # noqa: BLE001 -- the rules below say which field
        m = None
    why: str | None = None
    try:
        dtype = None if m is None or m.dtype is None else m.dtype.dtype.decode()
        view = fb.B2ndView(m)
        RaiseFirst().run(fb.META_RULES, view, raw)
        itemsize = ts if dtype is None else npy.b2nd_itemsize(dtype)
        if ts is None or (itemsize is not None and itemsize != ts):
            why = f"its dtype {dtype!r} does not fit the frame's typesize {ts}"
    except UnicodeDecodeError:
        why = "its dtype string is not UTF-8"
    except FormatError as e:
        # the value's rules report inside the value: put it where it lies
        report.damage.append(Damage.of(e.relocated(h.meta_at.get(name, 0),
                                                   f"frame.metalayers[{name!r}]")))
        why = e.message
    if why is not None:
        return _drop_array(meta, name, why, report)
    assert m is not None and ts is not None
    shape = tuple(e.value for e in m.shape)
    cshape = tuple(e.value for e in m.chunkshape)
    bshape = tuple(e.value for e in m.blockshape)
    grid = tuple(fb.chunk_grid(shape, cshape))
    # the grid must be the frame's: as many chunks as the header counts, or
    # (header unreadable) no more than the input had room to index
    want, total = h.nchunks(), math.prod(grid)
    padded = fb.padded_items(cshape, bshape) * ts
    if padded > MAX_BUFFERSIZE or (h.chunksize is not None and padded != h.chunksize):
        why = f"a chunk of {padded} bytes, the frame's chunks hold {h.chunksize}"
    elif (want is not None and total != want) or (want is None and total > n_input):
        why = (f"its chunk grid {list(grid)} holds {total} chunks, the frame "
               f"{want if want is not None else 'has no room for them'}")
    if why is not None:
        return _drop_array(meta, name, why, report)
    return _ArrayPlan(shape, cshape, grid, padded, ts, math.prod(bshape) * ts)


def _drop_array(meta: dict[str, bytes], name: str, why: str, report: SalvageReport) -> None:
    """Drop the array metalayer ``name`` that disagrees with the frame
    (reported): the chunks are kept as a frame without an array."""
    del meta[name]
    report.dropped.append(Dropped("metalayers", None, None,
                                  f"the {name} metalayer disagrees with the frame: {why}; "
                                  "the chunks are kept as a frame without an array"))


def _place_array(chunks: list[_Found], h: _Header, plan: _ArrayPlan,
                 report: SalvageReport) -> tuple[list[_Found], int]:
    """The chunks of an array, each at its grid place, and a zeros chunk in
    each place none was recovered for (named in ``report.lost_regions``).
    A chunk knows its place from the index; found by the scan, only while
    chunks follow one another from the start of the chunks section (after
    a stretch of lost bytes nothing tells how many chunks it held)."""
    total = math.prod(plan.grid)
    slots: list[_Found | None] = [None] * total
    if all(f.source_index is not None for f in chunks):
        for f in chunks:
            assert f.source_index is not None
            if f.source_index < total:
                slots[f.source_index] = f
    else:
        pos, k = h.header_len, 0
        for f in chunks:
            if pos is None or f.offset != pos or k >= total:
                report.dropped.append(Dropped(
                    "chunk", f.offset, len(f.data), "found by the scan after lost bytes: "
                    "its place in the chunk grid cannot be told", f.source_index))
                continue
            slots[k], k, pos = f, k + 1, f.end
    for i, f in enumerate(slots):
        if f is not None and f.nbytes != plan.padded:
            report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                          f"holds {f.nbytes} bytes, a chunk of this array "
                                          f"{plan.padded}", f.source_index))
            slots[i] = None
    filler = compress_special("zeros", plan.padded, typesize=plan.typesize,
                              blocksize=plan.blocksize)
    out: list[_Found] = []
    strides = [math.prod(plan.grid[d + 1:]) for d in range(len(plan.grid))]
    for i, f in enumerate(slots):
        if f is None:
            corner = [i // st % g for st, g in zip(strides, plan.grid)]
            region = tuple((c * e, min(s, (c + 1) * e))
                           for c, e, s in zip(corner, plan.chunkshape, plan.shape))
            report.lost_regions.append((i, region))
            f = _Found(None, filler, plan.padded, plan.typesize, "filler")
        out.append(f)
    if report.lost_regions:
        report.notes.append(f"{len(report.lost_regions)} of {total} chunks of the array were "
                            "lost: zeros stand in their places (lost_regions)")
    return out, plan.padded


# ---------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------

def salvage(src: Source) -> tuple[bytes, SalvageReport]:
    """Rebuild a valid contiguous frame from a damaged one.

    ``src``: bytes-like, or a path (read whole; OSError when unreadable).
    Returns the new frame (bytes, written by
    :func:`blosckit.build_frame`, which python-blosc2 opens) and a
    :class:`SalvageReport`: per recovered chunk its index in the new frame,
    its offset in the input and how it was found; what was dropped and why;
    the damage (FormatErrors) met.  Never raises for bytes input: garbage
    gives an empty frame and ``report.nothing_found``.

    Limits: the scan takes chunks in input order (a frame whose index
    reorders chunks, after inserts, loses that order once the index is
    gone); special chunks (zeros, NaN, uninit) live only in the index and
    are lost with it; a corrupted chunk that still decodes (Blosc has no
    checksum) is kept; a chunk of another size in the middle cannot be
    placed; a header whose cbytes field is wrong but plausible cuts the
    section short (the chunks after it are reported as dropped).
    """
    mv = _load(src)
    report = SalvageReport()
    opened = False
    try:
        with open_frame(mv):
            opened = True
    except FormatError as e:
        report.damage.append(Damage.of(e))
    h = _read_header(mv, report)
    chunks = [] if opened and h.nbytes == 0 else _chunks(mv, h, report)
    plan = _array_plan(h, chunks, len(mv), report)
    if plan is not None:
        placed, size = _place_array(chunks, h, plan, report)
    else:
        placed, size = _place(chunks, h, report)
    for k, f in enumerate(placed):
        if f.found_by != "filler":
            report.recovered.append(Recovered(k, f.offset, f.nbytes, f.found_by,
                                              f.source_index))
    _count_missing(h, len(chunks), report)
    meta = _keep_metalayers(h, report)
    vl = _keep_vlmeta(mv, h, report)
    report.chunksize = size
    empty = None
    if plan is not None and not placed:     # an array without items: its item size
        empty = compress_special("zeros", 0, typesize=plan.typesize)
    out = build_frame([f.data for f in placed], metalayers=meta or None,
                      vlmetalayers=vl or None, chunksize=size if placed else None,
                      empty_chunk=empty)
    if report.nothing_found:
        report.notes.append("no intact chunk was found")
    return out, report


def _chunks(mv: memoryview, h: _Header, report: SalvageReport) -> list[_Found]:
    """Chunks through the index when it is readable (the scan fills failed
    entries), else through the scan."""
    try:
        index = _read_index(mv, h)
    except FormatError as e:
        report.damage.append(Damage.of(e))
        report.notes.append("the offsets index is unusable: chunks found by scanning")
        return _scan_route(mv, h, report)
    slots = _by_index(mv, h, index, report)
    if any(s is None for s in slots):
        return _fill_failed(mv, h, slots, report)
    return [s for s in slots if s is not None]


def _count_missing(h: _Header, found: int, report: SalvageReport) -> None:
    """Say so when the header announces more chunks than were found."""
    want = h.nchunks()
    if want is not None and found < want:
        report.notes.append(f"the header announces {want} chunks, {found} were found intact")


def _keep_metalayers(h: _Header, report: SalvageReport) -> dict[str, bytes]:
    if h.metalayers is None:
        report.metalayers_kept = False
        report.dropped.append(Dropped("metalayers", ff.LEN_FIXED[h.layout], None,
                                      "the header's metalayers are unreadable"))
        return {}
    return h.metalayers


def _keep_vlmeta(mv: memoryview, h: _Header, report: SalvageReport) -> dict[str, bytes]:
    """The trailer's vlmetalayers, read from the end of the input, or none
    (dropped and reported) when the trailer is damaged or cut off."""
    try:
        return _read_vlmeta(mv, len(mv), h.header_len or 0)
    except FormatError as e:
        report.damage.append(Damage.of(e))
        report.vlmetalayers_kept = False
        report.dropped.append(Dropped("vlmetalayers", e.offset, None,
                                      f"the trailer is unreadable: {e.message}"))
        return {}
