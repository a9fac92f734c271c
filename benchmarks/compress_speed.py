"""Compression throughput and ratio: blosckit vs python-blosc2, same parameters.

Run: ``python benchmarks/compress_speed.py`` (or call ``main()``).
Data: 64 MiB of float64 (a noisy linspace) and of int32 (an arange with
jitter); codecs blosclz, lz4, zstd with the byte shuffle and the bit shuffle;
nthreads 1 and 2.
"""
from __future__ import annotations

import sys

from _timing import best_pair

import numpy as np

MIB = 1024 * 1024


def _datasets(nbytes: int):
    rng = np.random.default_rng(0)
    f8 = np.linspace(0, 1000, nbytes // 8) + rng.normal(0, 1e-3, nbytes // 8)
    i4 = np.arange(nbytes // 4, dtype=np.int32) + rng.integers(0, 16, nbytes // 4,
                                                               dtype=np.int32)
    return {"float64": (f8.tobytes(), 8), "int32": (i4.tobytes(), 4)}


def _compare(pieces, nbytes: int, ts: int, codec: str, filt: str, nthreads: int,
             repeat: int) -> tuple:
    """(blosckit MB/s, blosc2 MB/s, speed ratio, blosckit cratio, blosc2
    cratio) for compressing ``pieces`` (``nbytes`` in all)."""
    import blosc2

    from blosckit import compress

    kw = dict(typesize=ts, codec=codec, clevel=5, filters=(filt,), nthreads=nthreads)
    b2kw = dict(typesize=ts, codec=getattr(blosc2.Codec, codec.upper()), clevel=5,
                filters=[getattr(blosc2.Filter, filt.upper())], filters_meta=[0],
                splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT, nthreads=nthreads)
    mine = [0]
    ref = [0]

    def ours():
        mine[0] = sum(len(compress(p, **kw)) for p in pieces)

    def theirs():
        ref[0] = sum(len(blosc2.compress2(p, **b2kw)) for p in pieces)

    t_ours, t_ref = best_pair(ours, theirs, repeat)
    return (nbytes / t_ours / MIB, nbytes / t_ref / MIB, t_ref / t_ours, nbytes / mine[0],
            nbytes / ref[0])


def rows(nbytes: int = 64 * MIB, repeat: int = 5, chunk: int = 4 * MIB):
    """Yields rows of (data, codec, filter, nthreads, blosckit MB/s, blosc2 MB/s, speed
    ratio, blosckit cratio, blosc2 cratio).  Data is compressed ``chunk`` bytes at a
    time (the usual chunk size of a super-chunk)."""
    for name, (data, ts) in _datasets(nbytes).items():
        pieces = [memoryview(data)[i:i + chunk] for i in range(0, len(data), chunk)]
        for codec in ("blosclz", "lz4", "zstd"):
            for filt in ("shuffle", "bitshuffle"):
                for nthreads in (1, 2):
                    yield (name, codec, filt, nthreads,
                           *_compare(pieces, nbytes, ts, codec, filt, nthreads, repeat))


def run(nbytes: int = 64 * MIB, repeat: int = 5, chunk: int = 4 * MIB) -> list:
    """Every row of ``rows``, as a list."""
    return list(rows(nbytes, repeat, chunk))


def main(nbytes: int = 64 * MIB, repeat: int = 5) -> list:
    done = []
    print(f"{'data':8} {'codec':8} {'filter':10} {'thr':>3} {'blosckit MB/s':>14} "
          f"{'blosc2 MB/s':>12} {'speed x':>8} {'ratio bk':>9} {'ratio b2':>9}")
    for r in rows(nbytes, repeat):
        done.append(r)
        print(f"{r[0]:8} {r[1]:8} {r[2]:10} {r[3]:>3} {r[4]:>14.0f} {r[5]:>12.0f} "
              f"{r[6]:>8.2f} {r[7]:>9.2f} {r[8]:>9.2f}")
        sys.stdout.flush()
    return done


if __name__ == "__main__":
    main()
