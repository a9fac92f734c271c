"""``blosckit append FRAME FILE...``: compress files with the frame's own
parameters and append them to the frame, in place (a frame file or a
sparse frame directory)."""
from __future__ import annotations

import argparse
import sys

from ..frame.edit import EditableFrame
from .compress import npy_split
from .output import same_file
from .progress import Progress
from .report import EXIT_OK, UsageError, emit
from .source import load_file

DEFAULT_CHUNK_BYTES = 4 << 20      # a frame of varying chunk sizes: bytes per new chunk


def run(args: argparse.Namespace) -> int:
    """Append each FILE's data (raw bytes, or a .npy file's array data)
    as chunks of the frame's chunk size; say what was appended."""
    for name in args.files:
        if name != "-" and same_file(args.frame, name):
            raise UsageError(f"{name} is the frame {args.frame}: give another FILE")
    with EditableFrame(args.frame) as f:
        if f.rolled_back:
            print(f"{args.frame}: an edit cut short was undone first", file=sys.stderr)
        if f.b2nd is not None:
            raise UsageError(f"{args.frame} holds an n-dimensional array (b2nd): appending "
                             "bytes would not keep its shape")
        size = f.chunksize if f.chunksize > 0 else args.chunksize
        ts = max(f.typesize, 1)
        size = max(ts, size // ts * ts)
        before, added = f.nchunks, 0
        for name in args.files:
            data, _ = npy_split(load_file(name, "append").data)
            if len(data) % ts:
                raise UsageError(f"{name}: {len(data)} bytes are not whole items of the "
                                 f"frame's typesize {ts}")
            note = Progress(f"appending {name}", len(data))
            for at in range(0, len(data), size):
                f.append_data(data[at:at + size])
                note.advance(min(size, len(data) - at))
                added += min(size, len(data) - at)
            note.close()
        result = dict(frame=args.frame, chunks_before=before, chunks=f.nchunks, bytes=added,
                      nbytes=f.nbytes, cbytes=f.cbytes)
    if args.json:
        emit(result)
    else:
        print(f"{args.frame}: appended {added} bytes as {result['chunks'] - before} chunk(s); "
              f"{result['chunks']} chunks, {result['nbytes']} bytes "
              f"({result['cbytes']} compressed)", file=sys.stderr)
    return EXIT_OK
