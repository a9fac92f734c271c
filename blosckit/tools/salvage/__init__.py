"""Salvaging damaged Blosc2 frames.

:func:`salvage` rebuilds a valid contiguous frame from a damaged one (a
truncated file, a corrupted offsets index, trailer or header, corrupted
chunks; a contiguous frame or a sparse frame directory) and keeps every
chunk that still decodes, at its place.  Two routes find chunks
(:mod:`.chunks`):

* **index**: the header gives ``header_len`` and ``cbytes``, the offsets
  index right after the chunks section decodes to one int64 per chunk, and
  each entry is read and decoded as a frame reader would (this is the only
  route for an undamaged frame);
* **scan**: where the index (or the header locating it) is unusable, the
  input is scanned for Blosc chunk headers.  A candidate must pass cheap
  header checks (version 1..6, non-negative int32 sizes, ``cbytes`` fitting
  in the input, the frame's typesize when the header gives it), found by one
  regular expression over the bytes, before it is decoded; an accepted
  chunk is skipped whole.  In a sparse frame, the chunk files are taken by
  number.

Chunks after the chunks section are not data: the offsets index and the
trailer's vlmetalayer values.  With a readable header the section ends at
``header_len + cbytes``; without one, a chunk preceded by a msgpack bin32
marker whose length is its ``cbytes`` is a (vl)metalayer value, and a chunk
of int64 values (typesize 8) that are special offsets or point below
itself, at least half of them at chunks found before it, is the offsets
index (everything after it is trailer).  :mod:`.place` puts the chunks at
their places; :mod:`.header` keeps each metalayer and vlmetalayer that
reads.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterator

from ...chunk.special import compress_special
from ...errors import FormatError
from ...formats import chunk as fc
from ...frame.build import FrameAssembler
from ...frame.edit import MOVE_BYTES, FileIO
from ...frame.journal import is_complete, restored_copy
from ...frame.read import open_frame
from .chunks import SCAN_MAX_NBYTES, Chunks, Input, Source, find_chunks, load
from .header import Header, keep_vlmetalayers, read_header
from .place import array_plan, place
from .report import Damage, Dropped, Recovered, SalvageReport

__all__ = ["salvage", "salvage_pieces", "SalvageReport", "Recovered", "Dropped", "Damage",
           "SCAN_MAX_NBYTES"]


def salvage(src: Source) -> tuple[bytes, SalvageReport]:
    """Rebuild a valid contiguous frame from a damaged one.

    ``src``: bytes-like, a path to a frame file (mapped, not read whole) or
    to a sparse frame directory (OSError when unreadable).  Returns the new
    frame (bytes, written by :func:`blosckit.build_frame`; python-blosc2
    opens it) and a :class:`SalvageReport`: per recovered chunk its index
    in the new frame, where it was in the input and how it was found; each
    lost chunk whose place is kept by a placeholder of zeros
    (``lost_regions``); what was dropped and why; the damage (FormatErrors)
    met.  The output keeps the input's kind: a b2nd array its shape, dtype
    and grid places; a frame of varying chunk sizes stays one; each
    metalayer and vlmetalayer that reads is kept, each one that does not is
    dropped on its own.  Never raises for bytes input: garbage gives an
    empty frame and ``report.nothing_found``.

    Limits: the scan takes chunks in input order (a frame whose index
    reorders chunks, after inserts, loses that order once the index is
    gone), and after a stretch of lost bytes it places only a run of chunks
    that ends the chunks section; special chunks (zeros, NaN, uninit) live
    only in the index and are lost with it; a corrupted chunk that still
    decodes (Blosc has no checksum) is kept; a header whose cbytes field is
    wrong but plausible cuts the section short (the chunks after it are
    reported as dropped).
    """
    pieces, report = salvage_pieces(src)
    return b"".join(pieces), report


def salvage_pieces(src: Source) -> tuple[Iterator, SalvageReport]:
    """:func:`salvage`, its frame given as an iterator of its pieces in
    order (bytes-like; the recovered chunks are views into a mapped input)
    for a writer that streams them: memory then holds about 16 MiB of a
    mapped input at a time, and no second copy of it.

    A frame whose edit in place was cut short (its undo journal lies beside
    it, :mod:`blosckit.frame.journal`) is salvaged as it was before the
    edit: the journal is put back into a copy in a temporary folder (the
    input is not changed), and the report says so."""
    if isinstance(src, (str, os.PathLike)) and is_complete(Path(src)):
        tmp = tempfile.TemporaryDirectory(prefix="blosckit-salvage-")
        copy = restored_copy(FileIO(), Path(src), Path(tmp.name), MOVE_BYTES)
        pieces, report = _salvage_pieces(copy)
        report.notes.append("an edit in place was cut short: the frame as it was before "
                            "that edit (its journal put back into a copy) was salvaged")
        return _kept_until_done(pieces, tmp), report
    return _salvage_pieces(src)


def _kept_until_done(pieces: Iterator, tmp: tempfile.TemporaryDirectory) -> Iterator:
    """``pieces``, with ``tmp`` removed once they are all given."""
    with tmp:
        yield from pieces


def _salvage_pieces(src: Source) -> tuple[Iterator, SalvageReport]:
    inp = load(src)
    report = SalvageReport()
    opened = False
    try:
        with open_frame(src if inp.directory is not None else inp.mv):
            opened = True
    except FormatError as e:
        report.damage.append(Damage.of(e))
    except OSError as e:                    # a sparse frame's index file is gone
        report.notes.append(f"the sparse frame does not open: {e}")
    h = read_header(inp.mv, report)
    got = Chunks(slots=[]) if opened and h.nbytes == 0 else find_chunks(inp, h, report)
    found = got.found()
    plan = array_plan(h, found, len(inp.mv), report)
    chunks, size = place(got, h, plan, report)
    _count_missing(h, len(found), report)
    meta = _keep_metalayers(h, report)
    vl = keep_vlmetalayers(inp.mv, h, got.index_end, report) if inp.mv else {}
    report.chunksize = size
    empty = None
    if plan is not None and not chunks:     # an array without items: its item size
        empty = compress_special("zeros", 0, typesize=plan.typesize)
    pieces = _frame_pieces(inp, chunks, meta, vl, size if chunks else None, empty)
    if report.nothing_found:
        report.notes.append("no intact chunk was found")
    return _given_back(pieces, inp), report


_GROUP = 16        # chunks read between two gives-back of a mapped input's pages


def _frame_pieces(inp: Input, chunks: list, meta: dict[str, bytes], vl: dict[str, bytes],
                  chunksize: int | None, empty: bytes | None) -> list:
    """The rebuilt frame's pieces in order (as :func:`blosckit.build_frame`
    joins them), its chunks' headers read a group at a time with the mapped
    input's pages given back between groups (the system maps file pages up
    to 2 MiB at a time: reading every chunk's header maps the whole file)."""
    frame = FrameAssembler(metalayers=meta or None, chunksize=chunksize)
    body: list = []
    for k in range(0, len(chunks), _GROUP):
        group = chunks[k:k + _GROUP]
        body += frame.extend(group)
        inp.read_through(sum(len(c) for c in group))
    fixed, tail = frame.finish(vl or None, None if empty is None else fc.raw_header(empty))
    return [fixed, frame.meta_section, *body, *tail]


def _given_back(pieces: list, inp: Input) -> Iterator:
    """Each piece; the mapped input's pages given back behind them."""
    for piece in pieces:
        yield piece
        inp.read_through(len(piece))


def _count_missing(h: Header, found: int, report: SalvageReport) -> None:
    """Say so when the header announces more chunks than were found."""
    want = h.nchunks()
    if want is not None and found < want:
        report.notes.append(f"the header announces {want} chunks, {found} were found intact")


def _keep_metalayers(h: Header, report: SalvageReport) -> dict[str, bytes]:
    if h.metalayers is None:
        report.metalayers_kept = False
        return {}
    return h.metalayers
