"""Finding the chunks of a damaged frame.

Two routes: through the offsets index (each entry read as the frame reader
reads it, a chunk found at its place), or, where the index is unusable, by
scanning the input for chunk headers (a chunk found at its offset: its
place is for :mod:`.place` to tell).  A sparse frame's chunks are files: the
index names them, and without it the chunk files found are taken by number.
"""
from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Union

from ...chunk import read as _chunk
from ...errors import FormatError
from ...formats import chunk as fc
from ...formats import enums
from ...formats import frame as ff
from ...formats.rules import RaiseFirst
from ...frame.read import Pages, map_file, special_chunk
from .header import Header, read_field
from .report import Damage, Dropped, SalvageReport

__all__ = ["SCAN_MAX_NBYTES", "Source", "Input", "Found", "Chunks", "load", "find_chunks"]

# Largest decoded size (bytes) a scanned candidate may claim when the header
# gives no chunk size: a false candidate must not make us allocate gigabytes.
SCAN_MAX_NBYTES = 1 << 28

_LEN_CHUNK_HEAD = fc.LEN_HEADER               # 16
_ENTRY = ff.FAST_OFFSET                       # one offsets-index entry

# is_index: how many of the first chunks and positions to pair when the
# section start is unknown, and how many entries to try before all of them
_BASE_TRIES = 4
_INDEX_SAMPLE = 16

Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]
_CHUNK_FILE = re.compile(r"[0-9A-F]{8}\.chunk")


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------

@dataclass
class Input:
    """The damaged frame: ``mv`` is a contiguous frame, or the index file
    of a sparse frame in ``directory`` (whose chunks are files)."""
    mv: memoryview
    directory: Path | None = None

    def __post_init__(self) -> None:
        self._pages = Pages(self.mv)

    def read_through(self, nbytes: int) -> None:
        """``nbytes`` more bytes of a mapped input were read: its pages are
        given back as the frame reader gives back a mapped frame's."""
        self._pages.read(nbytes)

    def chunk_file(self, number: int) -> bytes:
        """The chunk file ``number`` of a sparse frame (OSError)."""
        assert self.directory is not None
        return (self.directory / ff.chunk_file_name(number)).read_bytes()

    def chunk_numbers(self) -> list[int]:
        """The numbers of the chunk files in the directory, in order."""
        assert self.directory is not None
        return sorted(int(p.name[:8], 16) for p in self.directory.iterdir()
                      if _CHUNK_FILE.fullmatch(p.name))


def load(src: Source) -> Input:
    """The input: bytes-like as a flat byte view, a frame file mapped (not
    read: memory does not grow with it), a sparse frame directory by its
    index file (empty when that is gone).  OSError when a path cannot be
    read."""
    if isinstance(src, (str, os.PathLike)):
        st = os.stat(src)
        if stat.S_ISDIR(st.st_mode):
            p = Path(src)
            index = p / ff.SFRAME_INDEX
            return Input(memoryview(index.read_bytes() if index.exists() else b""), p)
        return Input(map_file(src)[0])      # closed with the last view of it
    mv = memoryview(src)
    if mv.ndim != 1 or mv.itemsize != 1 or not mv.c_contiguous:
        mv = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())
    return Input(mv.cast("B") if mv.format != "B" else mv)


# ---------------------------------------------------------------------------
# What is found
# ---------------------------------------------------------------------------

@dataclass
class Found:
    """A chunk that decodes: where it is (bytes of the input; None for a
    special entry and a sparse frame's chunk file, named by ``file``), its
    stored bytes and its decoded size."""
    offset: int | None
    data: bytes | memoryview
    nbytes: int
    typesize: int
    found_by: str
    source_index: int | None = None
    file: str | None = None

    head: fc.RawHeader | None = None      # read once (a mapped page costs up to 2 MiB)

    @property
    def header(self) -> fc.RawHeader:
        """The chunk's header as stored, read from its bytes once."""
        if self.head is None:
            self.head = fc.raw_header(self.data)
        return self.head

    @property
    def end(self) -> int:
        return (self.offset or 0) + len(self.data)

    @property
    def blocksize(self) -> int:
        return self.header.blocksize

    @property
    def special(self) -> bool:
        """A special chunk (zeros, NaN, a value, uninit): no blocks stored."""
        return self.header.special != 0

    @property
    def vl_blocks(self) -> bool:
        return self.header.vl_blocks


@dataclass
class Chunks:
    """The chunks found: ``slots`` when their places are known (the index,
    chunk file numbers; None where a chunk was lost), else ``scanned`` in
    input order with the chunks ``section`` they were found in (its end
    None when not known).  ``hints``: the decoded size a lost chunk's own
    header still claims (bytes)."""
    slots: list[Found | None] | None = None
    scanned: list[Found] = field(default_factory=list)
    section: tuple[int | None, int | None] = (None, None)
    hints: dict[int, int] = field(default_factory=dict)
    index_end: int | None = None             # where the offsets index ends
    counted: bool = False                    # the index confirmed the header's count

    def found(self) -> list[Found]:
        return [f for f in (self.slots if self.slots is not None else self.scanned)
                if f is not None]


def chunk_cap(h: Header) -> int:
    """The most bytes a chunk found without its index entry may decode to
    (a damaged chunk header, or a false candidate, must not make salvage
    allocate more than the frame's own header allows): twice the header's
    chunksize (a damaged chunksize that is a little off still lets the
    frame's chunks through), the header's nbytes in a frame of varying
    chunk sizes, at most SCAN_MAX_NBYTES, which is also the cap when the
    header says nothing."""
    if h.chunksize:
        return min(2 * h.chunksize, SCAN_MAX_NBYTES)
    if h.variable and h.nbytes:
        return min(h.nbytes, SCAN_MAX_NBYTES)
    return SCAN_MAX_NBYTES


def _decode(mv, pos: int, cbytes: int, max_nbytes: int, root: str = "chunk") -> Found:
    """The chunk of ``cbytes`` bytes at ``pos`` (the caller located it),
    decoded; FormatError at input offsets, under ``root``, otherwise."""
    # a copy, not a view: decoding a memoryview slice that fails (an
    # unsupported codec) leaves a cycle whose collection crashes the
    # interpreter (blosckit.chunk bug, reported with the salvage work)
    raw = bytes(mv[pos:pos + max(cbytes, 0)])
    try:
        nbytes = len(_chunk.decompress(raw, max_nbytes=max_nbytes))
    except FormatError as e:
        raise e.relocated(pos, root) from None
    # once it decodes, a view into the input is kept (not a second copy of
    # every chunk: a mapped frame file is not held in memory twice)
    stored = mv[pos:pos + cbytes] if isinstance(mv, memoryview) else raw
    head = fc.raw_header(raw)
    return Found(pos, stored, nbytes, head.typesize, "scan", head=head)


# ---------------------------------------------------------------------------
# Through the index
# ---------------------------------------------------------------------------

@dataclass
class _Index:
    """The offsets index's entries (int64, relative to header_len; negative:
    special; in a sparse frame, chunk file numbers), where entry ``i`` is
    reported (its own bytes in a raw index, else the index chunk's start),
    as the frame reader reports it, and where the index ends."""
    entries: list[int]
    start: int
    raw_at: int | None
    end: int

    def entry_at(self, i: int) -> int:
        return self.start if self.raw_at is None else self.raw_at + ff.LEN_OFFSET * i


def _read_index(inp: Input, h: Header) -> _Index:
    """The offsets index, from the chunk after the chunks section (in a
    sparse frame, after the header); the reader's FormatError (F-index, or
    the index chunk's own rule) when it is missing, unreadable or holds the
    wrong count."""
    mv = inp.mv
    if inp.directory is not None:
        start = h.header_len
    else:
        sec = h.section(len(mv))
        start = None if sec is None else sec[0] + (h.cbytes or 0)
    want = h.nchunks()
    # where the index ends is not trusted (the trailer may be gone): only
    # its own cbytes says
    iv = ff.index_view(len(mv), h.header_len or 0, -1, start, len(mv), False, want, mv)
    sink = RaiseFirst()
    sink.run(ff.INDEX_RULES, iv, mv)
    assert start is not None
    # without a count (chunks of varying size), each entry names a stored
    # chunk: at least a chunk header of the input, or a chunk file
    room = len(inp.chunk_numbers()) if inp.directory is not None else len(mv) // _LEN_CHUNK_HEAD
    cap = ff.LEN_OFFSET * (want if want is not None else room)
    try:
        cbytes = _chunk.chunk_sizes(mv[start:])[1]
        raw = _chunk.decompress(bytes(mv[start:start + max(cbytes, 0)]), max_nbytes=cap)
    except FormatError as e:
        raise e.relocated(start, "frame.offsets") from None
    sink.run(ff.INDEX_RULES, iv._replace(decoded=len(raw)), mv)
    at = fc.raw_data_offset(fc.raw_header(mv, start))
    return _Index([e for (e,) in _ENTRY.iter_unpack(raw)], start,
                  None if at is None else start + at, start + cbytes)


def _by_index(inp: Input, h: Header, index: _Index, report: SalvageReport) -> Chunks:
    """Each index entry's chunk, read as the frame reader reads it (the
    same rules: F-special-bits, F-special, F-offset, F-sframe, F-chunk, the
    chunk's own), or None where it fails (reported, with the size its own
    header still claims in ``hints``)."""
    mv = inp.mv
    sparse = inp.directory is not None
    # a sparse frame's entries are read against its header's cbytes too
    start, end = (h.header_len or 0, (h.header_len or 0) + (h.cbytes or 0)) if sparse else \
        (h.section(len(mv)) or (0, 0))
    out = Chunks(slots=[], index_end=index.end, counted=h.nchunks() is not None)
    assert out.slots is not None
    sink = RaiseFirst()
    for i, entry in enumerate(index.entries):
        size = h.size_of(i)
        e = ff.EntryView(i, entry, index.entry_at(i), start, end, size, h.typesize or 1, sparse)
        where = start + entry if entry >= 0 and not sparse else None
        name = ff.chunk_file_name(entry) if entry >= 0 and sparse else None
        body: bytes | memoryview = mv
        try:
            if entry < 0:
                sink.run(ff.SPECIAL_RULES, e, mv)
                assert e.kind is not None and size is not None
                try:
                    # the header's block size: an array's chunks record it
                    chunk = special_chunk(e.kind, size, e.typesize, h.blocksize)
                except ValueError as err:      # a kind no chunk of these items can be
                    report.dropped.append(Dropped("chunk", None, None, f"special entry {i}: "
                                                  f"{err}", i))
                    out.slots.append(None)
                    continue
                out.slots.append(Found(None, chunk, size, fc.raw_header(chunk).typesize,
                                       "index", i))
                continue
            if sparse:
                try:
                    body = inp.chunk_file(entry)
                except OSError as err:
                    e.file_error = err.strerror or str(err)
                e.start = 0
            sink.run(ff.LOCATION_RULES, e, mv)
            if not sparse:
                e.start = start + entry
            assert e.start is not None
            try:
                e.cbytes = _chunk.chunk_sizes(body[e.start:e.start + _LEN_CHUNK_HEAD])[1]
            except FormatError as err:
                raise err.relocated(e.start, e.chunk_path) from None
            if not sparse:
                sink.run(ff.CHUNK_RULES, e, mv)
            f = _decode(body, e.start, e.cbytes, size or chunk_cap(h), e.chunk_path)
            inp.read_through(e.cbytes)
            e.nbytes = f.nbytes
            sink.run(ff.CHUNK_RULES, e, mv)
        except FormatError as err:
            report.damage.append(Damage.of(err))
            report.dropped.append(Dropped("chunk", where, None, err.message, i))
            hint = _claimed_nbytes(body if sparse else mv, e.start, h)
            if hint is not None:
                out.hints[i] = hint
            out.slots.append(None)
            continue
        f.found_by, f.source_index = "index", i
        if sparse:
            f.offset, f.file = None, name
        out.slots.append(f)
    return out


def _claimed_nbytes(buf, start: int | None, h: Header) -> int | None:
    """The decoded size a damaged chunk's header at ``start`` claims, when
    it reads and fits the frame (bytes); None otherwise."""
    if start is None or start + _LEN_CHUNK_HEAD > len(buf):
        return None
    n = fc.raw_header(buf, start).nbytes
    cap = h.nbytes if h.nbytes is not None else SCAN_MAX_NBYTES
    return n if 0 <= n <= cap else None


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


def scan(mv: memoryview, start: int, end: int, typesize: int | None,
         max_nbytes: int, progress: Callable[[int], None] | None = None) -> list[Found]:
    """Every chunk that decodes between ``start`` and ``end`` (bytes of the
    input), in order.  The regex finds candidate headers in C; only those
    whose sizes fit are decoded; an accepted chunk is skipped whole.
    ``progress(n)`` hears of each ``n`` bytes gone through."""
    pat = _pattern(typesize, max_nbytes, end - start)
    found: list[Found] = []
    pos = start
    while pos + _LEN_CHUNK_HEAD <= end:
        if progress is not None:
            progress(pos - start)
            start = pos
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


def _is_bin32_value(mv: memoryview, f: Found) -> bool:
    """True when a msgpack bin32 marker with the chunk's length precedes it:
    how (vl)metalayer values are stored, never data chunks (the bytes before
    a data chunk end the previous chunk)."""
    p = f.offset or 0
    head = ff.LEN_META_VALUE_HEAD
    return p >= head and read_field(mv, ff.MetaValue, "len_content", p - head,
                                    "marker") == len(f.data)


def _is_index(f: Found, base: int | None, before: list[Found]) -> bool:
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


def _classify(mv: memoryview, found: list[Found], base: int | None,
              report: SalvageReport) -> tuple[list[Found], int | None]:
    """Split scanned chunks, with no trusted end of the chunks section, into
    data and the rest: (vl)metalayer values and the offsets index (after
    which everything is trailer).  Returns the data and where the non-data
    part starts (None if nothing was excluded)."""
    data: list[Found] = []
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


def _scan_route(inp: Input, h: Header, report: SalvageReport) -> Chunks:
    """Chunks found by scanning, when the index cannot be used."""
    mv = inp.mv
    sec = h.section(len(mv))
    start = sec[0] if sec else (h.header_len or 0)
    cap = chunk_cap(h)
    found = scan(mv, start, len(mv), h.typesize, cap, inp.read_through)
    if not found and h.typesize is not None:
        # the header's typesize may be the damaged field
        found = scan(mv, start, len(mv), None, cap, inp.read_through)
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
    # the section's end is trusted when the header says it and it lies in the input
    end = sec[1] if sec is not None and h.header_len is not None and h.cbytes is not None \
        and h.header_len + h.cbytes <= len(mv) else None
    return Chunks(scanned=data, section=(h.header_len, end))


def _majority_typesize(data: list[Found], report: SalvageReport) -> list[Found]:
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


def _report_gaps(data: list[Found], start: int, stop: int, report: SalvageReport) -> None:
    """Each stretch of the chunks section where no intact chunk was found."""
    pos = start
    for f in data + [None]:
        at = stop if f is None else (f.offset or 0)
        if at > pos:
            report.dropped.append(Dropped("bytes", pos, at - pos, "no intact chunk found here"))
        if f is not None:
            pos = max(pos, f.end)


def _fill_failed(mv: memoryview, h: Header, got: Chunks, report: SalvageReport) -> None:
    """Scan the chunks section for intact chunks no index entry reaches
    (orphans), stretch by stretch between the chunks the index did reach.
    A compacted frame stores chunks in index order: when a stretch lies
    between chunks i and j and holds as many orphans as entries between i
    and j failed, they take those places in order; the other orphans are
    dropped (nothing tells their place)."""
    slots = got.slots
    assert slots is not None
    sec = h.section(len(mv))
    if sec is None:
        return
    known = sorted((s.offset, s.end, i) for i, s in enumerate(slots)
                   if s is not None and s.offset is not None)
    failed = {i for i, s in enumerate(slots) if s is None}
    pos, before = sec[0], -1
    for a, b, i in known + [(sec[1], sec[1], len(slots))]:
        if a > pos:
            orphans = scan(mv, pos, a, h.typesize, chunk_cap(h))
            places = sorted(k for k in failed if before < k < i) if before < i else []
            if orphans and len(orphans) == len(places):
                for k, f in zip(places, orphans):
                    f.source_index = k
                    slots[k] = f
                    failed.discard(k)
                    got.hints.pop(k, None)
                    report.notes.append(f"chunk found by scan at {f.offset} takes the place "
                                        f"of failed index entry {k}")
                    report.dropped[:] = [d for d in report.dropped if d.source_index != k]
            else:
                for f in orphans:
                    report.dropped.append(Dropped("chunk", f.offset, len(f.data), "intact, "
                                                  "but no index entry says where it belongs"))
        pos, before = max(pos, b), i


def _fill_failed_files(inp: Input, h: Header, got: Chunks, report: SalvageReport) -> None:
    """A sparse frame's failed entries take the chunk files no entry
    reached (orphans): the file numbered as the entry's place, else, when
    there are as many orphans as failed entries, the orphans in number
    order (python-blosc2 numbers a frame's chunk files as it appends)."""
    slots = got.slots
    assert slots is not None
    failed = [i for i, s in enumerate(slots) if s is None]
    # only the files no entry reached are decoded again
    orphans = {f.file: f for f in _by_file(inp, h, SalvageReport(), frozenset(
        f.file for f in slots if f is not None and f.file is not None)).found()}
    pairs = [(i, ff.chunk_file_name(i)) for i in failed if ff.chunk_file_name(i) in orphans]
    if not pairs and len(orphans) == len(failed):
        pairs = list(zip(failed, sorted(orphans)))
    for i, name in pairs:
        f = orphans.pop(name)
        f.source_index = i
        slots[i] = f
        got.hints.pop(i, None)
        report.notes.append(f"chunk file {name} takes the place of failed index entry {i}")
        report.dropped[:] = [d for d in report.dropped if d.source_index != i]
    for name in orphans:
        report.dropped.append(Dropped("chunk", None, None, f"chunk file {name} is intact, but "
                                      "no index entry says where it belongs"))


def _by_file(inp: Input, h: Header, report: SalvageReport,
             skip: frozenset[str] = frozenset()) -> Chunks:
    """A sparse frame without a usable index: each chunk file that decodes
    (but those named in ``skip``), at the place its number gives (a frame
    never edited in place numbers its chunk files in index order; the
    report says so).  A number past every place the frame can hold (the
    header's count, or as many places as there are files) places nothing."""
    numbers = inp.chunk_numbers()
    places = max(len(numbers), h.nchunks() or 0)
    slots: list[Found | None] = [None] * min(numbers[-1] + 1 if numbers else 0, places)
    for n in numbers:
        name = ff.chunk_file_name(n)
        if name in skip:
            continue
        if n >= places:
            report.dropped.append(Dropped("chunk", None, None, f"chunk file {name}: its number "
                                          f"is past the {places} places the frame can hold"))
            continue
        try:
            raw = inp.chunk_file(n)
            f = _decode(raw, 0, _chunk.chunk_sizes(raw[:_LEN_CHUNK_HEAD])[1],
                        chunk_cap(h), f"frame.chunks[{n}]")
        except (OSError, FormatError) as e:
            if isinstance(e, FormatError):
                report.damage.append(Damage.of(e))
            report.dropped.append(Dropped("chunk", None, None, f"chunk file {name}: "
                                          f"{getattr(e, 'message', None) or e}"))
            continue
        f.offset, f.file, f.found_by = None, name, "file"
        slots[n] = f
    if numbers:
        report.notes.append("the sparse frame's index is unusable: each chunk file is "
                            "placed by its number")
    return Chunks(slots=slots)


def find_chunks(inp: Input, h: Header, report: SalvageReport) -> Chunks:
    """Chunks through the index when it is readable (the scan fills failed
    entries), else through the scan (a sparse frame: its chunk files)."""
    try:
        index = _read_index(inp, h)
    except FormatError as e:
        report.damage.append(Damage.of(e))
        if inp.directory is not None:
            return _by_file(inp, h, report)
        report.notes.append("the offsets index is unusable: chunks found by scanning")
        return _scan_route(inp, h, report)
    got = _by_index(inp, h, index, report)
    assert got.slots is not None
    if any(s is None for s in got.slots):
        if inp.directory is None:
            _fill_failed(inp.mv, h, got, report)
        else:
            _fill_failed_files(inp, h, got, report)
    return got
