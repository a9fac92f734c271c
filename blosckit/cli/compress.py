"""``blosckit compress``: a file as one chunk, a frame of chunks, or (a .npy
array) a b2nd frame."""
from __future__ import annotations

import argparse
import math
import mmap
import sys
from typing import Any, Iterator

from ..chunk.encode import MAX_BUFFERSIZE, compress
from ..errors import FormatError
from ..formats import npy
from ..frame.shapes import default_shapes
from ..frame.writer import B2ndWriter, FrameWriter
from .output import Output, check_output, write_output
from .progress import Progress
from .report import EXIT_OK, UsageError
from .source import load_file

B2ND_SUFFIX = ".b2nd"              # an OUT so named gets a b2nd frame of a .npy input
FRAME_CHUNK_BYTES = 4 << 20   # default --chunksize (rounded to whole items)


def run(args: argparse.Namespace) -> int:
    """Encode IN to OUT and say what it became on stderr."""
    check_output(args.output, [args.input], args.force)
    src = load_file(args.input, "compress")
    data, header = npy_split(src.data)
    typesize = args.typesize
    if header is not None and typesize is None:
        typesize = _npy_itemsize(header["descr"])
    if args.chunkshape or args.blockshape or (header is not None
                                               and args.output.endswith(B2ND_SUFFIX)):
        return _compress_b2nd(data, header, typesize, args)
    return _compress_flat(data, 1 if typesize is None else typesize, args)


def npy_split(data: memoryview) -> tuple[memoryview, dict | None]:
    """A .npy file's array data and header; other input whole, and None
    (the commands that compress files share it)."""
    if bytes(data[:len(npy.MAGIC)]) != npy.MAGIC:
        return data, None
    header, start = npy.read_header(data)
    return data[start:], header


def _npy_itemsize(descr: Any) -> int:
    try:
        return npy.itemsize(descr)
    except FormatError:
        raise                   # objects: no --typesize makes them bytes (T-npy says so)
    except ValueError as e:
        raise UsageError(f".npy items: {e}: give --typesize") from None


def _compress_flat(data: memoryview, typesize: int, args: argparse.Namespace) -> int:
    """One chunk, or a frame of chunks (asked for, or above one chunk's limit)."""
    frame = args.frame or args.chunksize is not None or len(data) > MAX_BUFFERSIZE
    params = dict(typesize=typesize, codec=args.codec, clevel=args.clevel,
                  filters=args.filters, nthreads=args.nthreads)
    if not frame:
        return _wrote(args, data, compress(data, format=args.format, **params), "a chunk")
    if args.format != "blosc2":
        raise UsageError(f"--format {args.format} makes one chunk; frames hold Blosc2 chunks")
    return _stream_frame(data, args, params)


def _stream_frame(data: memoryview, args: argparse.Namespace, params: dict) -> int:
    """A frame written chunk by chunk as the input is read: memory holds a
    chunk or two, not the input or the frame."""
    ts = params["typesize"]
    size = args.chunksize if args.chunksize is not None else \
        max(ts, FRAME_CHUNK_BYTES // ts * ts)
    if size % ts:
        raise UsageError(f"--chunksize {size} is not a multiple of the typesize {ts}")
    note = Progress(f"compressing {args.input}", len(data))
    with Output(args.output) as out, FrameWriter(out.stream, chunksize=size, **params) as w:
        for piece in _pieces(data, size):
            w.write(piece)
            note.advance(len(piece))
    note.close()
    _said(args, len(data), w.frame_len or 0, "a frame")
    return EXIT_OK


def _pieces(data: memoryview, size: int) -> Iterator[memoryview]:
    """``data`` in pieces of ``size`` bytes.  The pages of a mapped input
    are given back once read: resident pages of a mapping count in the
    process's RSS, and the input may be larger than memory."""
    mapped = data.obj if isinstance(data.obj, mmap.mmap) else None
    # data runs to the end of the mapping (a file, or its part after a header)
    base = len(mapped) - len(data) if mapped is not None else 0
    done = 0
    for i in range(0, len(data), size):
        yield data[i:i + size]
        end = (base + i + size) // mmap.PAGESIZE * mmap.PAGESIZE
        if mapped is not None and end > done and hasattr(mmap, "MADV_DONTNEED"):
            mapped.madvise(mmap.MADV_DONTNEED, done, end - done)
            done = end


def _compress_b2nd(data: memoryview, header: dict | None, typesize: int | None,
                   args: argparse.Namespace) -> int:
    """A .npy array as a b2nd frame (python-blosc2's NDArray)."""
    if header is None:
        raise UsageError("--chunkshape / --blockshape need a .npy input (its shape and dtype)")
    if header.get("fortran_order"):
        raise UsageError(f"{args.input} is in Fortran order; b2nd arrays are C order "
                         "(save it with numpy.ascontiguousarray)")
    # a record type keeps its fields, written out as python-blosc2 writes them
    descr = npy.b2nd_dtype(header["descr"])
    shape = tuple(header.get("shape", ()))
    chunks, blocks = _b2nd_shapes(shape, typesize, args)
    if typesize is not None and len(data) != math.prod(shape) * typesize:
        raise UsageError(f"{len(data)} bytes of data for shape {shape} of {typesize}-byte "
                         f"items ({math.prod(shape) * typesize} bytes)")
    note = Progress(f"compressing {args.input}", len(data))
    # a row of chunks at a time, straight from the mapped input, whose pages
    # are given back as they are read (see _pieces)
    with Output(args.output) as out, B2ndWriter(
            out.stream, shape=shape, dtype=descr, chunkshape=chunks, blockshape=blocks,
            codec=args.codec, clevel=args.clevel, filters=args.filters,
            nthreads=args.nthreads) as w:
        for piece in _pieces(data, _row_nbytes(shape, chunks, len(data))):
            w.write(piece)
            note.advance(len(piece))
    note.close()
    shown = " x ".join(map(str, shape)) or "scalar"
    _said(args, len(data), w.frame_len or 0, f"a b2nd frame, shape {shown}, chunks {chunks}, "
                                             f"blocks {blocks}")
    return EXIT_OK


def _row_nbytes(shape: tuple[int, ...], chunks: tuple[int, ...], nbytes: int) -> int:
    """The bytes of one row of chunks of an array of ``nbytes`` bytes (the
    whole of a 0-d or empty array)."""
    if not shape or not shape[0] or not nbytes:
        return max(nbytes, 1)
    return nbytes // shape[0] * chunks[0]


def _b2nd_shapes(shape: tuple[int, ...], typesize: int | None, args: argparse.Namespace
                 ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The chunk and block shapes: given, or python-blosc2's, one extent per dimension."""
    chunks, blocks = default_shapes(shape, typesize, chunkshape=args.chunkshape,
                                    blockshape=args.blockshape)
    for name, ext in (("--chunkshape", chunks), ("--blockshape", blocks)):
        if len(ext) != len(shape):
            raise UsageError(f"{name} has {len(ext)} extents, the array {len(shape)} "
                             f"dimensions (shape {shape})")
    return chunks, blocks


def _wrote(args: argparse.Namespace, data: memoryview, out: bytes, what: str) -> int:
    """Write ``out`` and say what ``data`` became."""
    write_output(args.output, [out])
    _said(args, len(data), len(out), what)
    return EXIT_OK


def _said(args: argparse.Namespace, nbytes: int, written: int, what: str) -> None:
    ratio = nbytes / written if written else 0
    print(f"{args.input}: {nbytes} -> {written} bytes as {what} (ratio {ratio:.2f}) "
          f"-> {args.output}", file=sys.stderr)
