"""b2nd arrays: blosckit vs python-blosc2 side by side, in one process.

    python benchmarks/b2nd_speed.py [--repeat 5]

Rows (ms, best of N, the two timed alternately; ratio = python-blosc2 time /
blosckit time, above 1: blosckit faster), for float32 arrays of several
shapes: read the whole array from a frame in memory as a NumPy array
(blosckit ``Frame.b2nd.array()`` vs ``NDArray[...]``), and write one
(``compress_b2nd`` vs ``blosc2.asarray``), both zstd level 1 with shuffle,
one thread each; then the reads at two threads each (``array(nthreads=2)``
vs ``DParams(nthreads=2)``) and the writes with two threads each
(``compress_b2nd(nthreads=2)`` vs ``cparams={..., "nthreads": 2}``).
The region row reads ``[1234:1334, 2345:2445]`` of a 4000x4000 float64
array stored with python-blosc2's default chunks and blocks
(``Frame.b2nd[...]`` vs ``NDArray[...]``): both decode only the blocks the
region touches.  Each block is decoded straight into its place by the
native block kernel; reading is bound by the codec (zstd) on large arrays,
where python-blosc2's own overhead is small.

The one-thread read rows also print ``codec``: python-blosc2 doing the codec
work alone (``blosc2.decompress2`` of every stored chunk: zstd and the
unshuffle, no array layout), and ``ceiling`` = blosc2 / codec, the ratio
blosckit would reach if everything but that work cost nothing.  Both
libraries run the same libzstd version on the same bytes, so a row whose
ceiling is below 1.5 cannot reach 1.5 at one thread.  The two-thread read
rows print ``codec/2``, that codec work shared perfectly between two
threads, and the ceiling it gives; the region row at two threads is
``Frame.b2nd.region(key, nthreads=2)``.  (Writes have no such
column: ``compress2`` makes a new context per call, which costs more than
``asarray``'s whole overhead; instruction counts show the zstd encoder's
work equal on both sides.)
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


REGION = (slice(1234, 1334), slice(2345, 2445))


def _floor_row(name: str, t_bk: float, t_b2: float, t_codec: float) -> None:
    """A one-thread read row with python-blosc2's codec-only time and the
    ceiling."""
    print(f"{name:44} {t_bk * 1e3:9.2f} {t_b2 * 1e3:9.2f} {t_b2 / t_bk:7.1f} "
          f"{t_codec * 1e3:9.2f} {t_b2 / t_codec:8.1f}", flush=True)


def _decode_time(frame: bytes, repeat: int) -> float:
    """python-blosc2 decoding every stored chunk of the frame, nothing else
    (seconds, best of ``repeat``)."""
    f = blosckit.open_frame(frame)
    stored = [f.chunk(i) for i in range(f.nchunks)]

    def dec():
        for c in stored:
            blosc2.decompress2(c, nthreads=1)
    return best_pair(dec, dec, repeat)[0]


def _name(shape, blocks) -> str:
    return f"{'x'.join(map(str, shape))} / {'x'.join(map(str, blocks))} blocks"


def _region_arrays():
    """The region row's array: blosckit's view of it and python-blosc2's."""
    a = np.random.default_rng(0).random((4000, 4000))
    frame = bytes(blosc2.asarray(a, cparams={"codec": blosc2.Codec.ZSTD, "clevel": 1,
                                              "nthreads": 2}).to_cframe())
    arr = blosc2.ndarray_from_cframe(frame)
    b = blosckit.open_frame(frame).b2nd
    assert (b[REGION] == a[REGION]).all() and (arr[REGION] == a[REGION]).all()
    return b, arr


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "nthreads": 1}
    reads = []
    print(f"float32 arrays, zstd 1 + shuffle, one thread, ms, best of {args.repeat}")
    print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7} {'codec':>9} "
          f"{'ceiling':>8}")
    for shape, chunks, blocks in CASES:
        a = np.random.default_rng(0).random(shape).astype("<f4")
        frame = blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks, codec="zstd",
                                       clevel=1)
        b = blosckit.open_frame(frame).b2nd
        arr = blosc2.ndarray_from_cframe(frame)
        arr.schunk.dparams = blosc2.DParams(nthreads=1)
        assert b.read() == arr[...].tobytes() == a.tobytes() and (b.array() == a).all()
        name = _name(shape, blocks)
        t_dec = _decode_time(frame, args.repeat)
        reads.append((shape, blocks, b, arr, t_dec))
        _floor_row(f"read  {name}", *best_pair(b.array, lambda: arr[...], args.repeat), t_dec)
        row(f"write {name}", *best_pair(
            lambda: blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks,
                                           codec="zstd", clevel=1),
            lambda: blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=cp),
            args.repeat))
    rb, rarr = _region_arrays()
    rarr.schunk.dparams = blosc2.DParams(nthreads=1)
    row("region 100x100 of 4000x4000 f8", *best_pair(lambda: rb[REGION], lambda: rarr[REGION],
                                                     args.repeat))
    print(f"\nreads, 2 threads each, ms, best of {args.repeat}")
    print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7} {'codec/2':>9} "
          f"{'ceiling':>8}")
    for shape, blocks, b, arr, t_dec in reads:
        arr.schunk.dparams = blosc2.DParams(nthreads=2)
        _floor_row(f"read  {_name(shape, blocks)}",
                   *best_pair(lambda: b.array(nthreads=2), lambda: arr[...], args.repeat),
                   t_dec / 2)
    rarr.schunk.dparams = blosc2.DParams(nthreads=2)
    row("region 100x100 of 4000x4000 f8",
        *best_pair(lambda: rb.region(REGION, nthreads=2), lambda: rarr[REGION], args.repeat))
    write_rows(args.repeat, 2)


def write_rows(repeat: int, nthreads: int) -> None:
    """The write rows with ``nthreads`` threads on each side."""
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "nthreads": nthreads}
    print(f"\nwrites, {nthreads} threads each, ms, best of {repeat}")
    print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7}")
    for shape, chunks, blocks in CASES:
        a = np.random.default_rng(0).random(shape).astype("<f4")
        row(f"write {_name(shape, blocks)}", *best_pair(
            lambda: blosckit.compress_b2nd(a, chunkshape=chunks, blockshape=blocks,
                                           codec="zstd", clevel=1, nthreads=nthreads),
            lambda: blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=cp),
            repeat))


if __name__ == "__main__":
    main()
