"""Putting the chunks found back at their places.

Every kind of frame keeps its chunks' places: a chunk found through the
index (or a sparse frame's chunk file) has its place; chunks found by the
scan follow one another from the start of the chunks section, and after a
stretch of lost bytes, only a run of chunks that ends the section has a
place (counted back from the end, when the header gives the count).  Each
place no chunk was recovered for gets a placeholder of zeros of the size
the chunk had, named in the report:

* a b2nd frame (its metalayer agreeing with the chunks): every chunk of the
  grid, the padded chunk size, a special chunk of zeros with the array's
  block size;
* a frame of one chunk size: a special chunk of zeros of that size (the
  last chunk's when it is the last);
* a frame of varying chunk sizes: a stored chunk of zeros of the size the
  lost chunk's own header still claims (0 when it does not read), since
  C-Blosc2 reads no special entry in such a frame.
"""
from __future__ import annotations

import importlib.util
import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from ...chunk.encode import MAX_BUFFERSIZE, compress
from ...chunk.special import compress_special
from ...chunk.vlblocks import compress_vlblocks
from ...errors import FormatError
from ...formats import b2nd as fb
from ...formats import chunk as fc
from ...formats import enums
from ...formats import npy
from ...formats.rules import RaiseFirst
from .chunks import Chunks, Found
from .header import Header
from .report import Damage, Dropped, Recovered, SalvageReport

__all__ = ["ArrayPlan", "array_plan", "place"]


# ---------------------------------------------------------------------------
# A b2nd frame's array
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ArrayPlan:
    """A b2nd frame's array, as its metalayer says and the chunks agree:
    extents in items, the chunk grid, the stored chunk's size in bytes."""
    shape: tuple[int, ...]
    chunkshape: tuple[int, ...]
    grid: tuple[int, ...]
    padded: int
    typesize: int
    blocksize: int              # bytes of one block, prod(blockshape) * typesize

    def region(self, i: int) -> tuple[tuple[int, int], ...]:
        """The items (start, stop per dimension) chunk ``i`` of the grid covers."""
        strides = [math.prod(self.grid[d + 1:]) for d in range(len(self.grid))]
        corner = [i // st % g for st, g in zip(strides, self.grid)]
        return tuple((c * e, min(s, (c + 1) * e))
                     for c, e, s in zip(corner, self.chunkshape, self.shape))


def array_plan(h: Header, chunks: list[Found], n_input: int,
               report: SalvageReport) -> ArrayPlan | None:
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
        RaiseFirst().run(fb.META_RULES, fb.B2ndView(m), raw)
        itemsize = ts if dtype is None else npy.b2nd_itemsize(dtype)
        if ts is None or (itemsize is not None and itemsize != ts):
            why = f"its dtype {dtype!r} does not fit the frame's typesize {ts}"
        elif m is not None and m.dtype is not None and \
                m.dtype.dtype_format != fb.DTYPE_FORMAT_NUMPY:
            why = (f"its dtype format {m.dtype.dtype_format} is not 0 (a NumPy dtype string), "
                   "the only one python-blosc2 reads (V21)")
        elif itemsize is None and m is not None and m.dtype.dtype_format == 0 and _HAVE_NUMPY:
            why = f"its dtype {dtype!r} is no NumPy dtype (python-blosc2 cannot read the array)"
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
    return ArrayPlan(shape, cshape, grid, padded, ts, math.prod(bshape) * ts)


def _drop_array(meta: dict[str, bytes], name: str, why: str, report: SalvageReport) -> None:
    """Drop the array metalayer ``name`` that disagrees with the frame
    (reported): the chunks are kept as a frame without an array."""
    del meta[name]
    report.dropped.append(Dropped("metalayer", None, None,
                                  f"the {name} metalayer disagrees with the frame: {why}; "
                                  "the chunks are kept as a frame without an array",
                                  name=name))


# ---------------------------------------------------------------------------
# What each place holds
# ---------------------------------------------------------------------------

@dataclass
class _Frame:
    """What the rebuilt frame's places must hold: ``total`` places (None:
    as many as found), ``size(k)`` the decoded size of place ``k`` (None:
    any), ``chunksize`` for the header (0: varying sizes)."""
    total: int | None
    size: Callable[[int], int | None]
    chunksize: int
    typesize: int
    blocksize: int | None
    vl_blocks: bool = False           # its chunks hold variable-length blocks
    array: bool = False               # a b2nd array's chunks

    @property
    def variable(self) -> bool:
        return self.chunksize == 0


def _frame_kind(got: Chunks, h: Header, plan: ArrayPlan | None,
                report: SalvageReport) -> _Frame | None:
    found = got.found()
    if plan is not None:
        return _Frame(math.prod(plan.grid), lambda k: plan.padded, plan.padded,
                      plan.typesize, plan.blocksize, array=True)
    if not found:
        return None
    ts = h.typesize or Counter(f.typesize for f in found).most_common(1)[0][0]
    blocksize = found[0].blocksize
    vl = found[0].vl_blocks
    sizes = Counter(f.nbytes for f in found)
    # varying sizes: the header says so, or (its chunksize unreadable) the
    # index places chunks of different sizes before the last
    placed = got.slots is not None
    middle = [f.nbytes for f in (got.slots or [])[:-1] if f is not None]
    if h.variable or (h.chunksize is None and placed and len(set(middle)) > 1):
        total = len(got.slots) if got.slots is not None else None
        return _Frame(total, lambda k: None, 0, ts, None, vl)
    size = h.chunksize if h.chunksize is not None and h.chunksize in sizes \
        else sizes.most_common(1)[0][0]
    if h.chunksize is not None and h.chunksize != size:
        report.notes.append(f"no chunk holds the header's chunksize {h.chunksize}: using {size}")
    total = h.nchunks() if size == h.chunksize else None
    if total is not None and not got.counted and \
            total > len(got.found()) + (h.cbytes or 0) // fc.LEN_HEADER:
        # no index confirms the count, and the chunks section could not
        # hold that many chunks: the nbytes field is damaged
        report.notes.append(f"the header's nbytes announces {total} chunks, more than its "
                            f"cbytes can hold: the count is not trusted")
        total = None
    if total is not None:
        return _Frame(total, h.size_of, size, ts, min(blocksize, size) or None, vl)
    return _Frame(None, lambda k: size, size, ts, min(blocksize, size) or None, vl)


# ---------------------------------------------------------------------------
# Places
# ---------------------------------------------------------------------------

def _scan_places(got: Chunks, kind: _Frame, report: SalvageReport) -> list[Found | None]:
    """Places for chunks found by the scan: a run from the start of the
    chunks section (from the first chunk found when the start is unknown),
    then, after lost bytes, a run that ends the section and so counts back
    from the last place.  The others are dropped: nothing tells their
    place."""
    start, end = got.section
    slots: list[Found | None] = []
    pos = start
    rest: list[Found] = []
    broken = False
    for f in got.scanned:
        k = len(slots)
        if broken or not (pos is None or f.offset == pos):
            broken = True
            rest.append(f)
        elif _fits(kind, k, f, last_ok=True):
            slots.append(f)
            pos = f.end
        else:
            # it follows the run but is no chunk of this frame: whether it
            # took a chunk's place or came in between, nothing tells
            broken = True
            report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                          _misfit(kind, k, f), f.source_index))
    if rest and kind.total is not None and end is not None:
        tail: list[Found] = []
        at = end
        for f in reversed(rest):
            if f.end != at or not _fits(kind, kind.total - 1 - len(tail), f):
                break
            tail.insert(0, f)
            at = f.offset or 0
        first = kind.total - len(tail)
        if tail and first >= len(slots):
            slots += [None] * (first - len(slots)) + tail
            rest = rest[:len(rest) - len(tail)]
            report.notes.append(f"{len(tail)} chunks found by the scan end the chunks "
                                f"section: they take the last places ({first}..)")
    for f in rest:
        report.dropped.append(Dropped("chunk", f.offset, len(f.data), "found by the scan "
                                      "after lost bytes: its place cannot be told",
                                      f.source_index))
    if start is None and slots:
        report.notes.append("the header is unreadable: chunks are placed from the first one "
                            "found")
    return slots


def _fits(kind: _Frame, k: int, f: Found, last_ok: bool = False) -> bool:
    """Whether ``f`` can be the chunk at place ``k`` (its decoded size; in
    an array, a stored chunk's blocks are the array's: C-Blosc2's array
    reader goes by them); ``last_ok``: a shorter chunk may end a frame
    whose count is unknown."""
    if kind.array and f.offset is not None and not f.special and \
            f.blocksize != kind.blocksize:
        return False
    want = kind.size(k)
    if want is None:
        return True
    return f.nbytes == want or (last_ok and kind.total is None and 0 < f.nbytes < want)


def _drop_unframeable(got: Chunks, report: SalvageReport) -> None:
    """Chunks no rebuilt frame holds: a Blosc1 chunk (C-Blosc2 reads none
    inside a frame), and, found without its index entry, a chunk of no data
    (a frame of one chunk size counts none of 0 bytes)."""
    def why(f: Found) -> str | None:
        version = f.header.version
        if enums.family(version) != "Blosc2":
            return f"a {enums.family(version)} chunk (format version {version}): C-Blosc2 " \
                   "reads none inside a frame"
        return "it holds no data" if f.nbytes == 0 and f.found_by != "index" else None

    def keep(f: Found | None) -> bool:
        reason = None if f is None else why(f)
        if reason is not None:
            assert f is not None
            report.dropped.append(Dropped("chunk", f.offset, len(f.data), reason,
                                          f.source_index))
        return reason is None

    if got.slots is not None:
        got.slots = [f if keep(f) else None for f in got.slots]
    got.scanned = [f for f in got.scanned if keep(f)]


def _misfit(kind: _Frame, k: int, f: Found) -> str:
    if f.nbytes != kind.size(k) and kind.size(k) is not None:
        return f"holds {f.nbytes} bytes, the chunk at place {k} {kind.size(k)}"
    return f"its blocks are {f.blocksize} bytes, the array's {kind.blocksize}"


def place(got: Chunks, h: Header, plan: ArrayPlan | None,
          report: SalvageReport) -> tuple[list[bytes], int]:
    """The rebuilt frame's chunks, each at its place, placeholders where
    chunks were lost (in ``report.lost_regions``), and its chunksize (0:
    varying; -1: no chunk).  Recovered chunks go into ``report.recovered``."""
    _drop_unframeable(got, report)
    kind = _frame_kind(got, h, plan, report)
    if kind is None:
        return [], -1
    slots = list(got.slots) if got.slots is not None else _scan_places(got, kind, report)
    for k, f in enumerate(slots):
        if f is not None and not _fits(kind, k, f, last_ok=k == len(slots) - 1):
            report.dropped.append(Dropped("chunk", f.offset, len(f.data),
                                          _misfit(kind, k, f), f.source_index))
            slots[k] = None
    total = len(slots) if kind.total is None else kind.total
    for f in slots[total:]:
        if f is not None:
            report.dropped.append(Dropped("chunk", f.offset, len(f.data), f"beyond the "
                                          f"{total} chunks the frame holds", f.source_index))
    slots = slots[:total] + [None] * (total - len(slots))
    while kind.total is None and slots and slots[-1] is None and not kind.variable:
        slots.pop()            # a count unknown: nothing tells a lost chunk was last
    out: list[bytes] = []
    pos = 0
    for k, f in enumerate(slots):
        if f is None:
            size = kind.size(k)
            if size is None:
                size = got.hints.get(k, 0)
            chunk = _zeros(size, kind)
            report.lost_regions.append((k, plan.region(k) if plan is not None
                                        else ((pos, pos + size),)))
        else:
            chunk, size = f.data, f.nbytes
            if kind.array and f.special and f.blocksize != kind.blocksize:
                # a special entry rebuilt with a damaged header's block
                # size: an array's chunks record its blocks' size
                chunk = bytearray(chunk)
                fc.HEADER.put(chunk, "blocksize", min(kind.blocksize or size, size), 0)
                chunk = bytes(chunk)
            report.recovered.append(Recovered(k, f.offset, f.nbytes, f.found_by,
                                              f.source_index, f.file))
        out.append(chunk)
        pos += size
    if report.lost_regions:
        report.notes.append(f"{len(report.lost_regions)} of {len(slots)} chunks were lost: "
                            "zeros stand in their places (lost_regions)")
    return out, kind.chunksize


def _zeros(size: int, kind: _Frame) -> bytes:
    """A chunk of ``size`` zero bytes for a place of ``kind``'s frame: of
    its items when a chunk header holds their size and they divide it
    (C-Blosc2 builds no partial item), else of bytes; a special chunk, or a
    chunk of one variable-length block in a frame of such chunks (a frame
    holds one kind or the other)."""
    ts = kind.typesize if 0 < kind.typesize <= _MAX_TYPESIZE and size % kind.typesize == 0 \
        else 1
    if kind.vl_blocks:
        return compress_vlblocks([bytes(size)] if size else [], typesize=ts)
    if ts != kind.typesize and not kind.variable:
        # partial items: C-Blosc2 rebuilds no special entry of them (V16),
        # so the zeros are stored (level 0: copied)
        return compress(bytes(size), typesize=min(kind.typesize, _MAX_TYPESIZE), clevel=0)
    return compress_special("zeros", size, typesize=ts, blocksize=None
                            if kind.blocksize is None else min(kind.blocksize, size))


_MAX_TYPESIZE = fc.HEADER["typesize"].mask      # a chunk header's typesize byte
# a dtype string NumPy cannot read is damage only where NumPy can say so
_HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
