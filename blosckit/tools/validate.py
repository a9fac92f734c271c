"""``validate``: every problem of a blob, as a list, never an exception.

The checks are the reader's own rules (``formats/``) run into a collecting
sink, plus warnings for chunks that are valid but that C-Blosc2 misreads
(the table in :mod:`blosckit.divergences`).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from . import divergences
from ..frame import read as _frame
from ..chunk import read as _chunk
from .. import native
from ..chunk.read import as_view, chunk_sizes, check_chunk
from ..errors import FormatError, Problem
from ..formats import chunk as fc
from ..formats import b2nd as fb
from ..formats import frame as ff
from ..formats import field_offsets, parse
from ..formats.rules import Collect

__all__ = ["validate", "Problem"]


def _read_source(src) -> memoryview:
    if isinstance(src, (str, os.PathLike)):
        return memoryview(Path(src).read_bytes())
    return as_view(src)


def divergence_warnings(mv: memoryview, *, index: bool = False) -> list[Problem]:
    """A warning for each known divergence of C-Blosc2 (or, for chunk versions
    1-2, C-Blosc 1.x) in decoding the (valid) chunk in ``mv`` (``index``: as
    a frame's offsets index): the library refuses it or returns other data."""
    found = divergences.reader_divergences(mv, operation="decompress")
    if index:
        found += divergences.index_divergences(mv)
    return [Problem("warning", 0, "chunk", f"{d.library} {d.c_blosc2} refuses or misreads "
                    f"this chunk: {d.title} (blosckit reads it; see {d.anchor})", d.id)
            for d in found]


def _errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


def check_frame(mv: memoryview, *, directory: Path | None = None,
                deep: bool = True) -> list[Problem]:
    """Every problem of a frame: its header rules all at once, then what the
    reader checks while opening it, then each chunk through the chunk
    layer's own rules (relocated to ``frame.chunks[i]`` at the chunk's frame
    offset; for a sparse frame, at its offset in its chunk file)."""
    sink = Collect()
    try:
        _frame.read_header(mv, sink, directory is not None)
    except FormatError as e:          # a marker: nothing else can be located
        sink.error(e)
    if sink.problems:
        return sink.problems
    try:
        f = _frame.Frame(mv, directory=directory)
    except FormatError as e:
        sink.error(e)
        return sink.problems
    out = sink.problems
    for step in (lambda: f.vlmetalayers, lambda: f.b2nd, lambda: f.entries):
        try:
            step()
        except FormatError as e:
            out.append(Problem("error", e.offset, e.path, e.message, e.rule or "?"))
    if _errors(out):
        return out
    out += _frame_divergence_warnings(f)
    out += _trailer_warnings(f)
    _check_b2nd_grid(f, out)
    for i in _chunks_to_check(f, deep):
        out += _check_frame_chunk(f, i, deep)
    return out


def _frame_divergence_warnings(f: _frame.Frame) -> list[Problem]:
    """Warnings for what C-Blosc2 or python-blosc2 refuses in a frame that
    blosckit reads, outside its data chunks: the offsets index and the
    vlmetalayer values (C-Blosc2 decodes them as any chunk) and the frame
    divergences of the table."""
    out = []
    start, end = f.index_span
    if end > start:
        out += [p.relocated(start, "frame.offsets")
                for p in divergence_warnings(f.buffer[start:end], index=True)]
    for name, raw in f.vlmetalayers_raw.items():
        out += [p.relocated(f.vlmetalayer_at[name], f"frame.trailer.vlmetalayers[{name!r}]")
                for p in divergence_warnings(memoryview(raw))]
    out += [Problem("warning", at, path, f"{d.library} {d.c_blosc2} refuses this frame: "
                    f"{d.title} (blosckit reads it; see {d.anchor})", d.id)
            for d, at, path in divergences.frame_divergences(f)]
    return out


def _trailer_warnings(f: _frame.Frame) -> list[Problem]:
    """The trailer's version and fingerprint: no reader looks at them, so
    odd values are warnings (a sign of damage or of an unknown writer)."""
    out = []
    version = parse(ff.TrailerHead, f.buffer, f.trailer_start, "frame.trailer",
                    rule=ff.F_TRAILER.id).version
    if version not in (0, 1):
        out.append(Problem("warning", f.trailer_start + 1, "frame.trailer.version",
                           f"trailer version {version}; writers put 1 (0 before "
                           "2.0.0-beta.2)", ff.F_TRAILER_VERSION.id))
    at = f.fields.frame_len - ff.LEN_TRAILER_TAIL
    tail = parse(ff.TrailerTail, f.buffer, at, "frame.trailer", rule=ff.F_TRAILER.id)
    kind_at = at + field_offsets(ff.TrailerTail, "t")["t.fingerprint_type"]
    if tail.fingerprint_type > 3:
        out.append(Problem("warning", kind_at, "frame.trailer.fingerprint_type",
                           f"fingerprint kind {tail.fingerprint_type} is none of 0..3",
                           ff.F_FINGERPRINT.id))
    elif tail.fingerprint_type == 0 and any(tail.fingerprint):
        out.append(Problem("warning", kind_at + 1, "frame.trailer.fingerprint",
                           "fingerprint kind 0 (none) with bytes that are not zero",
                           ff.F_FINGERPRINT.id))
    return out


def _chunks_to_check(f: _frame.Frame, deep: bool):
    """The chunks the Python rules must look at.  One native call checks
    every chunk of a contiguous frame of fixed chunk size (the reader's
    rules in C, decoding every block when ``deep``; the frame's chunk size;
    no divergence possible) and only the others are left."""
    batch = f.native_batch()
    if batch is None:
        return range(f.nchunks)
    section, last, table = batch
    status = native.check_chunks(section, f.entries.raw, f.nchunks, f.chunksize, last, table,
                                 deep)
    ok = native.CHECK_OK
    return [i for i, s in enumerate(status) if s != ok]


def _check_b2nd_grid(f: _frame.Frame, out: list[Problem]) -> None:
    b = f.b2nd
    why = None if b is None else b.grid_problem()
    if b is not None and why is not None:
        out.append(Problem("error", b.offset, b.path, why, fb.B2ND_RULE.id))


def _check_frame_chunk(f: _frame.Frame, i: int, deep: bool) -> list[Problem]:
    root = f"frame.chunks[{i}]"
    try:
        kind = f.special(i)
        if kind is not None:
            f.special_nbytes(i, kind)
            return []
        base, view = f.chunk_view(i)
    except FormatError as e:
        return [Problem("error", e.offset, e.path, e.message, e.rule or "?")]
    if not deep and _native_ok(view):
        problems: list[Problem] = []           # the native check ran the same rules
    else:
        problems = [p.relocated(base, root) for p in check_chunk(view, deep=deep)]
    if not _errors(problems):
        want = f.chunk_nbytes(i)
        nbytes = chunk_sizes(view)[0]
        if want is not None and nbytes != want:
            problems.append(Problem("error", base + fc.HEADER.offset("nbytes"),
                                    f"{root}.header.nbytes",
                                    f"chunk {i} holds {nbytes} bytes, the frame's chunks hold "
                                    f"{want}", ff.F_CHUNK.id))
        if not divergences.beyond_all_reader_divergences(view):
            problems += [p.relocated(base, root) for p in divergence_warnings(view)]
    return problems


def _native_ok(view: memoryview) -> bool:
    """The one-call native reader accepts the chunk's header, bstarts and
    dictionary (the reader's rules, checked in C for the chunks it handles)."""
    table = _chunk.fast_table()
    return table is not None and native.check_fast(view, table)


def validate(src, *, deep: bool = True) -> list[Problem]:
    """Every problem of the chunk or frame in ``src`` (bytes-like, or a path
    to a chunk file, a frame file or a sparse frame directory; the kind is
    detected), in the order found; ``[]`` means valid.

    ``deep`` decodes every block and checks every size; without it only the
    header, bstarts and dictionary are checked.  Each Problem has a severity
    (``"error"`` makes the input invalid; ``"warning"``: legal, but misread by
    C-Blosc2 3.3.5 or suspicious), a byte offset inside the input, a field
    path and the id of the rule in ``specs/``.  Never raises for bytes input
    (a path that cannot be read raises OSError).
    """
    if isinstance(src, (str, os.PathLike)) and stat.S_ISDIR(os.stat(src).st_mode):
        index = Path(src) / ff.SFRAME_INDEX
        return check_frame(memoryview(index.read_bytes()), directory=Path(src), deep=deep)
    mv = _read_source(src)
    if ff.looks_like_frame(mv):
        return check_frame(mv, deep=deep)
    problems = check_chunk(mv, deep=deep)
    if not _errors(problems):
        problems += divergence_warnings(mv)
        cbytes = chunk_sizes(mv)[1]
        if len(mv) > cbytes:
            problems.append(Problem("warning", cbytes, "chunk", f"{len(mv) - cbytes} bytes "
                                    f"follow the chunk's {cbytes} (cbytes); readers ignore "
                                    "them", fc.T_TRAILING.id))
    return problems
