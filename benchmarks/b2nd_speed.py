"""b2nd arrays: blosckit vs python-blosc2 side by side, in one process.

    python benchmarks/b2nd_speed.py [--repeat 5]

Rows (ms, best of N, the two timed alternately; ratio = python-blosc2 time /
blosckit time, above 1: blosckit faster), for float32 arrays of several
shapes: read the whole array from a frame in memory (blosckit
``Frame.b2nd.read()`` vs ``NDArray[...]``), and write one (``compress_b2nd``
vs ``blosc2.asarray``), both zstd level 1 with shuffle, one thread each;
then the writes again with two threads each (``compress_b2nd(nthreads=2)``
vs ``cparams={..., "nthreads": 2}``).
The chunk and block grids are undone by the native run kernel; what is left
is per-chunk Python work, so shapes with many small blocks cost most.
"""
from __future__ import annotations

import argparse

import blosc2
import numpy as np
from _timing import best_pair, row

import blosckit

CASES = [  # shape, chunks, blocks
    ((1000, 1000), (250, 500), (50, 100)),
    ((200_000, 4), (50_000, 4), (5_000, 4)),
    ((100, 100, 100), (50, 50, 50), (10, 10, 50)),
    ((1000, 1000), (1000, 1000), (100, 1000)),
    ((64, 64), (16, 16), (8, 8)),
]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "nthreads": 1}
    print(f"float32 arrays, zstd 1 + shuffle, one thread, ms, best of {args.repeat}")
    print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7}")
    for shape, chunks, blocks in CASES:
        a = np.random.default_rng(0).random(shape).astype("<f4")
        frame = blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks, codec="zstd",
                                       clevel=1)
        f = blosckit.open_frame(frame)
        arr = blosc2.ndarray_from_cframe(frame)
        arr.schunk.dparams = blosc2.DParams(nthreads=1)
        assert f.b2nd.read() == arr[...].tobytes() == a.tobytes()
        name = f"{'x'.join(map(str, shape))} / {'x'.join(map(str, blocks))} blocks"
        row(f"read  {name}", *best_pair(f.b2nd.read, lambda: arr[...], args.repeat))
        row(f"write {name}", *best_pair(
            lambda: blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks,
                                           codec="zstd", clevel=1),
            lambda: blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=cp),
            args.repeat))
    write_rows(args.repeat, 2)


def write_rows(repeat: int, nthreads: int) -> None:
    """The write rows with ``nthreads`` threads on each side."""
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "nthreads": nthreads}
    print(f"\nwrites, {nthreads} threads each, ms, best of {repeat}")
    print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7}")
    for shape, chunks, blocks in CASES:
        a = np.random.default_rng(0).random(shape).astype("<f4")
        name = f"{'x'.join(map(str, shape))} / {'x'.join(map(str, blocks))} blocks"
        row(f"write {name}", *best_pair(
            lambda: blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks,
                                           codec="zstd", clevel=1, nthreads=nthreads),
            lambda: blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=cp),
            repeat))


if __name__ == "__main__":
    main()
