"""``blosckit decompress``: a chunk or a frame (detected) to raw bytes, or a
b2nd frame to a .npy file."""
from __future__ import annotations

import argparse
import itertools
import math
import sys
from typing import Iterable, Iterator

from ..chunk.read import decompress
from ..errors import FormatError
from ..formats import npy
from ..frame.read import Frame, open_frame
from . import containers
from .output import check_output, write_output
from .progress import Progress
from .report import EXIT_OK, UsageError
from .source import Source, load, relocated

NPY_SUFFIX = ".npy"


def run(args: argparse.Namespace) -> int:
    """Decode IN to OUT and say what became of it on stderr."""
    check_output(args.output, [args.input], args.force)
    where = containers.target(args.input)
    if where is not None:
        if args.offset is not None or args.stored:
            raise UsageError("--offset and --stored read chunk or frame files, not an HDF5 "
                             "file or zarr store")
        n = containers.decompress(args, *where)
        print(f"{args.input}: array -> {n} bytes -> "
              f"{args.output}", file=sys.stderr)
        return EXIT_OK
    src = load(args.input, args.offset)
    try:
        n = _decompress(src, args)
    except FormatError as e:
        raise relocated(e, src.base)
    print(f"{args.input}: {src.kind} -> {n} bytes -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _decompress(src: Source, args: argparse.Namespace) -> int:
    """Write the decoded ``src`` to OUT; returns the bytes written.  Frames
    are written piece by piece as they decode (memory holds one piece),
    the same way on a terminal as in a pipe: progress is display only."""
    if src.kind == "chunk":
        return write_output(args.output, [decompress(src.data, nthreads=args.nthreads)])
    with open_frame(src.target) as f:
        if args.output.endswith(NPY_SUFFIX):
            return _write_npy(f, args)
        if not args.stored and f.b2nd is not None:
            # an array's items in C order, a row of chunks at a time
            note = Progress(f"decompressing {args.input}", _array_nbytes(f))
            return write_output(args.output, _advancing(f.b2nd.iter_read(), note))
        note = Progress(f"decompressing {args.input}", f.nbytes)
        return write_output(args.output,
                            _advancing(f.iter_decompress(nthreads=args.nthreads), note))


def _array_nbytes(f: Frame) -> int:
    assert f.b2nd is not None
    return math.prod(f.b2nd.shape) * f.typesize


def _write_npy(f: Frame, args: argparse.Namespace) -> int:
    """The array of the b2nd frame ``f`` as a NumPy file, a row of chunks at
    a time."""
    if f.b2nd is None:
        raise UsageError(f"{args.input} is not a b2nd (NDArray) frame: .npy output "
                         "needs its shape and dtype; write raw bytes instead")
    b = f.b2nd
    note = Progress(f"decompressing {args.input}", _array_nbytes(f))
    header = npy.write_header(npy.npy_descr(b.dtype), b.shape)
    return write_output(args.output, itertools.chain([header],
                                                     _advancing(b.iter_read(), note)))


def _advancing(pieces: Iterable[bytes | bytearray], note: Progress) -> Iterator[bytes | bytearray]:
    """``pieces`` passed on, advancing ``note``; the line is cleared at the end."""
    try:
        for piece in pieces:
            note.advance(len(piece))
            yield piece
    finally:
        note.close()
