"""Finding every Blosc chunk and Blosc2 frame inside an arbitrary blob.

What a recovery engineer needs first: given a disk image, a core dump or a
container file of unknown layout, where do chunks and frames sit?  Frames are
found by their signature (the msgpack header with ``b2frame\\0`` at byte 2)
and opened with :func:`blosckit.open_frame` (its index entries read as a
reader reads them); chunks by the salvage scanner
(candidate headers found by one regular expression, then decoded whole), in
the stretches no intact frame covers.  A frame that does not open is listed
with the reason, and the scan for chunks goes through it.
"""
from __future__ import annotations

import mmap
from dataclasses import dataclass

from ..chunk import read as _chunk
from ..errors import FormatError
from ..formats import enums
from ..formats import frame as ff
from ..formats.describe import chunk_codec
from ..frame.read import open_frame
from .salvage.chunks import SCAN_MAX_NBYTES, Source, load
from .salvage.chunks import scan as scan_chunks

__all__ = ["Found", "scan"]


@dataclass(frozen=True)
class Found:
    """One structure found by :func:`scan`.

    ``kind`` is ``"frame"`` or ``"chunk"``; ``offset`` and ``size`` are in
    bytes of the blob (``size`` is the declared length, cut to what the blob
    holds); ``nbytes`` the decoded size it declares; ``error`` is None when
    it reads, else the reason it does not (``"offset: path: message [rule]"``
    in the structure's own coordinates)."""
    kind: str
    offset: int
    size: int
    nbytes: int
    summary: str
    error: str | None = None


def _frame_at(mv: memoryview, start: int) -> Found | None:
    """The frame whose header starts at ``start``, or None when the bytes
    there are not a frame header at all."""
    layout = ff.header_layout(mv[start])
    if layout is None:
        return None
    try:
        head = ff.FAST_HEADERS[layout](mv, start)
    except Exception:                  # noqa: BLE001 -- a damaged or cut header
        return None
    size = max(0, min(int(head.frame_len), len(mv) - start))
    try:
        with open_frame(mv[start:start + size]) as f:
            for i in range(f.nchunks):    # each entry and where its chunk lies
                f.locate(i)
            summary = (f"Blosc2 frame, format version {f.version}, {f.nchunks} chunks, "
                       f"{f.nbytes} -> {f.cbytes} bytes, {f.codec}")
            return Found("frame", start, size, f.nbytes, summary)
    except FormatError as e:
        return Found("frame", start, size, int(head.nbytes), "Blosc2 frame (damaged)",
                     f"{e.offset}: {e.path}: {e.message} [{e.rule}]")


def _chunk_summary(data: bytes) -> str:
    c = _chunk.parse_chunk(data)
    kind = f"special: {c.special}" if c.special else chunk_codec(c)
    return f"{enums.family(c.version)} chunk, format version {c.version}, {kind}, {c.nbytes} -> {c.cbytes} bytes"


def scan(src: Source, *, max_nbytes: int = SCAN_MAX_NBYTES) -> list[Found]:
    """Every frame and chunk inside ``src`` (bytes-like or a path), in
    offset order.  Chunks inside a frame that opens are part of it and not
    listed; ``max_nbytes`` bounds the decoded size of a chunk candidate (a
    false candidate must not make the scan allocate gigabytes)."""
    inp = load(src)
    if inp.directory is not None:
        raise IsADirectoryError(f"{src}: a directory (scan takes one blob)")
    mv = inp.mv
    frames: list[Found] = []
    # a file is mapped: searched in place, never copied
    whole = isinstance(mv.obj, (bytes, mmap.mmap)) and len(mv.obj) == len(mv)
    data = mv.obj if whole else bytes(mv)
    pos = data.find(ff.MAGIC, 2)
    while pos != -1:
        found = _frame_at(mv, pos - 2)
        if found is not None and not (frames and found.offset < frames[-1].offset
                                      + frames[-1].size and frames[-1].error is None):
            frames.append(found)
        pos = data.find(ff.MAGIC, pos + 1)
    out: list[Found] = list(frames)
    start = 0
    for stop, after in [(f.offset, f.offset + f.size) for f in frames if f.error is None] \
            + [(len(mv), len(mv))]:
        for c in scan_chunks(mv, start, stop, None, max_nbytes):
            assert c.offset is not None
            out.append(Found("chunk", c.offset, len(c.data), c.nbytes, _chunk_summary(c.data)))
        start = max(start, after)
    return sorted(out, key=lambda f: (f.offset, f.kind))
