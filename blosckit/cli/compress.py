"""``blosckit compress``: a file as one chunk, a frame of chunks, or (a .npy
array) a b2nd frame."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..chunk.encode import MAX_BUFFERSIZE, compress
from ..formats import npy
from ..frame import b2nd
from ..frame.build import compress_frame
from .output import check_output, write_output
from .progress import Progress
from .report import EXIT_OK, UsageError
from .source import load_file

B2ND_SUFFIX = ".b2nd"              # an OUT so named gets a b2nd frame of a .npy input
FRAME_CHUNK_BYTES = b2nd.CHUNK_BYTES   # default --chunksize (rounded to whole items)


def run(args: argparse.Namespace) -> int:
    """Encode IN to OUT and say what it became on stderr."""
    check_output(args.output, [args.input], args.force)
    src = load_file(args.input, "compress")
    data, header = _npy_split(src.data)
    typesize = args.typesize
    if header is not None and typesize is None:
        typesize = _npy_itemsize(header["descr"])
    if args.chunkshape or args.blockshape or (header is not None
                                               and args.output.endswith(B2ND_SUFFIX)):
        return _compress_b2nd(data, header, typesize, args)
    return _compress_flat(data, 1 if typesize is None else typesize, args)


def _npy_split(data: memoryview) -> tuple[memoryview, dict | None]:
    """A .npy file's array data and header; other input whole, and None."""
    if bytes(data[:len(npy.MAGIC)]) != npy.MAGIC:
        return data, None
    header, start = npy.read_header(data)
    return data[start:], header


def _npy_itemsize(descr: Any) -> int:
    try:
        return npy.itemsize(descr)
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
    return _wrote(args, data, _compress_frame(data, args, params), "a frame")


def _compress_frame(data: memoryview, args: argparse.Namespace, params: dict) -> bytes:
    ts = params["typesize"]
    size = args.chunksize if args.chunksize is not None else \
        max(ts, FRAME_CHUNK_BYTES // ts * ts)
    if size % ts:
        raise UsageError(f"--chunksize {size} is not a multiple of the typesize {ts}")
    note = Progress(f"compressing {args.input}", len(data))
    out = compress_frame(data, chunksize=size, progress=note.advance, **params)
    note.close()
    return out


def _compress_b2nd(data: memoryview, header: dict | None, typesize: int | None,
                   args: argparse.Namespace) -> int:
    """A .npy array as a b2nd frame (python-blosc2's NDArray)."""
    if header is None:
        raise UsageError("--chunkshape / --blockshape need a .npy input (its shape and dtype)")
    if header.get("fortran_order"):
        raise UsageError(f"{args.input} is in Fortran order; b2nd arrays are C order "
                         "(save it with numpy.ascontiguousarray)")
    descr = header["descr"]
    if not isinstance(descr, str):
        descr = f"|V{typesize}"          # a record type: b2nd stores its items as such
    shape = tuple(header.get("shape", ()))
    chunks, blocks = _b2nd_shapes(shape, typesize, args)
    out = b2nd.compress_b2nd(data, shape=shape, dtype=descr, typesize=typesize,
                             chunkshape=chunks, blockshape=blocks, codec=args.codec,
                             clevel=args.clevel, filters=args.filters, nthreads=args.nthreads)
    shown = " x ".join(map(str, shape)) or "scalar"
    return _wrote(args, data, out, f"a b2nd frame, shape {shown}, chunks {chunks}, "
                                   f"blocks {blocks}")


def _b2nd_shapes(shape: tuple[int, ...], typesize: int | None, args: argparse.Namespace
                 ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The chunk and block shapes: given, or the defaults, one extent per dimension."""
    chunks = args.chunkshape or b2nd.default_shape(shape, typesize, b2nd.CHUNK_BYTES)
    blocks = args.blockshape or b2nd.default_shape(chunks, typesize, b2nd.BLOCK_BYTES)
    for name, ext in (("--chunkshape", chunks), ("--blockshape", blocks)):
        if len(ext) != len(shape):
            raise UsageError(f"{name} has {len(ext)} extents, the array {len(shape)} "
                             f"dimensions (shape {shape})")
    return chunks, blocks


def _wrote(args: argparse.Namespace, data: memoryview, out: bytes, what: str) -> int:
    """Write ``out`` and say what ``data`` became."""
    write_output(args.output, [out])
    ratio = len(data) / len(out) if out else 0
    print(f"{args.input}: {len(data)} -> {len(out)} bytes as {what} (ratio {ratio:.2f}) "
          f"-> {args.output}", file=sys.stderr)
    return EXIT_OK
