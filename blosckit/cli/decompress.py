"""``blosckit decompress``: a chunk or a frame (detected) to raw bytes, or a
b2nd frame to a .npy file."""
from __future__ import annotations

import argparse
import sys
from typing import Iterator

from ..chunk.read import decompress
from ..errors import FormatError
from ..formats import npy
from ..frame.read import Frame, open_frame
from .output import check_output, write_output
from .progress import Progress
from .report import EXIT_OK, UsageError
from .source import Source, load, relocated

NPY_SUFFIX = ".npy"


def run(args: argparse.Namespace) -> int:
    """Decode IN to OUT and say what became of it on stderr."""
    check_output(args.output, [args.input], args.force)
    src = load(args.input, args.offset)
    try:
        n = _decompress(src, args)
    except FormatError as e:
        raise relocated(e, src.base)
    print(f"{args.input}: {src.kind} -> {n} bytes -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _decompress(src: Source, args: argparse.Namespace) -> int:
    """Write the decoded ``src`` to OUT; returns the bytes written."""
    if src.kind == "chunk":
        return write_output(args.output, [decompress(src.data, nthreads=args.nthreads)])
    with open_frame(src.target) as f:
        if args.output.endswith(NPY_SUFFIX):
            return _write_npy(f, args)
        note = Progress(f"decompressing {args.input}", f.nbytes)
        if not note.on:            # no progress to show: the batched native decoder
            return write_output(args.output, [f.decompress(nthreads=args.nthreads)])
        return write_output(args.output, _chunk_by_chunk(f, args.nthreads, note))


def _write_npy(f: Frame, args: argparse.Namespace) -> int:
    """The array of the b2nd frame ``f`` as a NumPy file."""
    if f.b2nd is None:
        raise UsageError(f"{args.input} is not a b2nd (NDArray) frame: .npy output "
                         "needs its shape and dtype; write raw bytes instead")
    b = f.b2nd
    return write_output(args.output, [npy.write_header(b.dtype, b.shape), b.read()])


def _chunk_by_chunk(f: Frame, nthreads: int, note: Progress) -> Iterator[bytes]:
    """The decoded chunks of ``f`` in turn, advancing ``note``."""
    for i in range(f.nchunks):
        data = f.decompress_chunk(i, nthreads=nthreads)
        note.advance(len(data))
        yield data
    note.close()
