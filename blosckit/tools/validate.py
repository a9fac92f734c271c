"""``validate``: every problem of a blob, as a list, never an exception.

The checks are the reader's own rules (``formats/``) run into a collecting
sink, plus warnings for chunks that are valid but that C-Blosc2 misreads
(the table in :mod:`blosckit.divergences`).
"""
from __future__ import annotations

import math
import os
import stat
from pathlib import Path

from . import divergences
from .containers import container_kind, in_container
from .stores import open_container
from ..frame import read as _frame
from ..frame.remote import fetch_whole, is_url
from ..chunk import read as _chunk
from .. import native
from ..chunk.read import as_view, chunk_sizes, check_chunk, check_trailing
from ..errors import FormatError, Problem
from ..formats import chunk as fc
from ..formats import frame as ff
from ..formats.rules import Collect

__all__ = ["validate", "validate_container", "Problem"]



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
    """Every problem of a frame, each once: its header rules all at once,
    then what the reader checks while opening it, then each chunk through
    the chunk layer's own rules (relocated to ``frame.chunks[i]`` at the
    chunk's frame offset; for a sparse frame, at its offset in its chunk
    file)."""
    sink = Collect()
    _frame.read_header(mv, sink, directory is not None)
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
            sink.error(e)
    if _errors(out):
        return out
    out += _frame_divergence_warnings(f)
    out += _trailer_warnings(f)
    b = f.b2nd
    if b is not None:
        out += b.grid_problems() + b.dtype_problems()
    todo = _chunks_to_check(f, deep)
    # an array's chunks are each checked against its chunk shape, as
    # reading the array does (after the chunk's own checks)
    array = b is not None and not _errors(out) and math.prod(b.shape) > 0
    checked = set(todo) if array else ()
    total: int | None = 0           # the chunks' sizes added up, None once one is unknown
    for i in (range(f.nchunks) if array else todo):
        problems, nbytes = _check_frame_chunk(f, i, deep) if not array or i in checked \
            else ([], None)
        out += problems
        if array and not _errors(problems):
            out += b.chunk_problems(i, f.chunk_nbytes(i) if nbytes is None else nbytes)
        total = None if total is None or nbytes is None else total + nbytes
    if f.variable_size and total is not None and not _errors(out):
        sink = Collect()
        f.check_total(total, sink)
        out += sink.problems
    # a fault of a shared field (the header's cbytes) is met from each entry
    # that reads it: one problem
    return list(dict.fromkeys(out))


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
    sink = Collect()
    sink.run(ff.TRAILER_WARNINGS, f.trailer, f.buffer)
    return sink.problems


def _chunks_to_check(f: _frame.Frame, deep: bool):
    """The chunks the Python rules must look at.  One native call checks
    every chunk of a contiguous frame of fixed chunk size (the reader's
    rules in C, decoding every block when ``deep``; the frame's chunk size;
    no divergence possible) and only the others are left.  Its deep mode
    decodes into one scratch of the frame's chunk size: when no chunk
    claims that much (a 324-byte frame whose header says 1 GiB chunks),
    every chunk is left to the Python rules, which allocate what each chunk
    claims, within its place in the frame."""
    batch = f.native_batch()
    if batch is None:
        return range(f.nchunks)
    section, tail_of_last, table = batch
    if deep and _largest_claim(f, section) < f.chunksize:
        return range(f.nchunks)
    raw, ok, todo = f.entries.raw, native.CHECK_OK, []
    # a run of chunks per call: a mapped file's pages are given back between runs
    for a, b, tail in f.native_groups():
        status = native.check_chunks(section, raw[ff.LEN_OFFSET * a:ff.LEN_OFFSET * b], b - a,
                                     f.chunksize, tail, table, deep)
        todo += [a + k for k, s in enumerate(status) if s != ok]
    return todo


_NBYTES_AT = fc.HEADER["nbytes"].index


def _largest_claim(f: _frame.Frame, section: memoryview) -> int:
    """The most bytes a chunk stored in ``section`` says (in its header) it
    holds, capped by the frame's chunk size; 0 without stored chunks."""
    most, end = 0, len(section) - fc.LEN_HEADER
    for off in f.entries:
        if 0 <= off <= end:
            most = max(most, fc.FAST_HEADER.unpack_from(section, off)[_NBYTES_AT])
    return min(most, f.chunksize)


def _check_frame_chunk(f: _frame.Frame, i: int, deep: bool
                       ) -> tuple[list[Problem], int | None]:
    """Chunk ``i`` as the reader reads it: its entry and where it lies, then
    the chunk's own rules (capped at the frame's chunk size, as the reader
    decodes it) relocated into the frame, then its size against the frame's.
    Also the chunk's decoded size in bytes (None after an error)."""
    try:
        e, view = f.locate(i)
    except FormatError as err:
        return [Problem("error", err.offset, err.path, err.message, err.rule or "?")], None
    if view is None:
        return [], e.size
    root, base = e.chunk_path, e.start
    if not deep and _native_ok(view, e.size):
        problems: list[Problem] = []           # the native check ran the same rules
    else:
        problems = [p.relocated(base, root) for p in check_chunk(
            view, deep=deep, max_nbytes=f.chunk_cap(e))]
    f.read_through(len(view))
    if _errors(problems):
        return problems, None
    nbytes = chunk_sizes(view)[0]
    sink = Collect()
    f.check_nbytes(e, nbytes, sink)
    problems += sink.problems
    if not divergences.beyond_all_reader_divergences(view):
        problems += [p.relocated(base, root) for p in divergence_warnings(view)]
    return problems, nbytes


def _native_ok(view: memoryview, size: int | None) -> bool:
    """The one-call native reader accepts the chunk's header, bstarts and
    dictionary (the reader's rules, checked in C for the chunks it handles)
    and the chunk claims no more than the frame's chunk size."""
    table = _chunk.fast_table()
    return (table is not None and native.check_fast(view, table)
            and (size is None or chunk_sizes(view)[0] <= size))


def validate(src, *, deep: bool = True) -> list[Problem]:
    """Every problem of the chunk or frame in ``src`` (bytes-like, or a path
    to a chunk file, a frame file or a sparse frame directory; the kind is
    detected), in the order found; ``[]`` means valid.

    ``deep`` decodes every block and checks every size; without it only the
    header, bstarts and dictionary are checked.  Each Problem has a severity
    (``"error"`` makes the input invalid; ``"warning"``: legal, but misread by
    C-Blosc2 3.3.5 or suspicious), a byte offset inside the input, a field
    path and the id of the rule in ``specs/``.  Never raises for bytes input
    (a path that cannot be read raises OSError).  A URL (``https://``,
    ``s3://``, ...: fsspec) of a chunk or contiguous frame is read with one
    byte-range request.

    A path may also name an HDF5 file or a zarr store (v2 or v3, sharded
    or not): every chunk of every Blosc dataset or array is checked, and
    each Problem has the chunk's ``location`` (``"/group/ds[2,0]"``) and an
    offset in the file holding it (:func:`validate_container`; an HDF5 file
    needs h5py, else :class:`~.containers.ExtraNeeded`, an ImportError).
    """
    if is_url(src):
        mv, close = fetch_whole(src)
        try:
            return _check(mv, deep)
        finally:
            close()
    if isinstance(src, (str, os.PathLike)):
        if container_kind(src) is not None:
            return validate_container(src, deep=deep)
        if stat.S_ISDIR(os.stat(src).st_mode):
            index = Path(src) / ff.SFRAME_INDEX
            return check_frame(memoryview(index.read_bytes()), directory=Path(src), deep=deep)
        # mapped, not read: a frame's pages are given back as its chunks are checked
        with _frame.mapped_file(src) as mv:
            return _check(mv, deep)
    return _check(as_view(src), deep)


def _check(mv: memoryview, deep: bool) -> list[Problem]:
    """:func:`validate` of a chunk or a frame (detected) in ``mv``."""
    if ff.looks_like_frame(mv):
        return check_frame(mv, deep=deep)
    problems = check_chunk(mv, deep=deep)
    if not _errors(problems):
        problems += divergence_warnings(mv)
        problems += check_trailing(mv)
    return problems


def validate_container(path: str | os.PathLike, *, deep: bool = True) -> list[Problem]:
    """Every problem of every Blosc chunk of the container at ``path``, each
    at its chunk's location and at a byte offset in the file that holds
    it, in name then chunk order; ``[]`` when all are valid."""
    out: list[Problem] = []
    try:
        opened = open_container(path)
    except FormatError as e:            # the container itself is damaged (a cut HDF5 file)
        return [Problem("error", e.offset, e.path, e.message, e.rule or "?")]
    with opened as c:
        for a in c.arrays:
            out += a.problems
            for item in a.chunks():
                if isinstance(item, Problem):
                    out.append(item)
                elif item.blosc:
                    out += [in_container(p, item) for p in _check(as_view(item.blosc_data), deep)]
    return out
