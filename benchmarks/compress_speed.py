"""Compression throughput and ratio: blosckit vs python-blosc2, same parameters.

Run: ``python benchmarks/compress_speed.py`` (or call ``main()``).
Data: 64 MiB of float64 (a noisy linspace) and of int32 (an arange with
jitter); codecs blosclz, lz4, zstd with the byte shuffle; nthreads 1 and 2.
"""
from __future__ import annotations


from _timing import best_pair

import numpy as np

MIB = 1024 * 1024


def _datasets(nbytes: int):
    rng = np.random.default_rng(0)
    f8 = np.linspace(0, 1000, nbytes // 8) + rng.normal(0, 1e-3, nbytes // 8)
    i4 = np.arange(nbytes // 4, dtype=np.int32) + rng.integers(0, 16, nbytes // 4,
                                                               dtype=np.int32)
    return {"float64": (f8.tobytes(), 8), "int32": (i4.tobytes(), 4)}


def run(nbytes: int = 64 * MIB, repeat: int = 5, chunk: int = 4 * MIB):
    """Rows of (data, codec, nthreads, blosckit MB/s, blosc2 MB/s, speed ratio,
    blosckit cratio, blosc2 cratio).  Data is compressed ``chunk`` bytes at a
    time (the usual chunk size of a super-chunk)."""
    import blosc2

    from blosckit import compress

    rows = []
    for name, (data, ts) in _datasets(nbytes).items():
        pieces = [memoryview(data)[i:i + chunk] for i in range(0, len(data), chunk)]
        for codec in ("blosclz", "lz4", "zstd"):
            for nthreads in (1, 2):
                kw = dict(typesize=ts, codec=codec, clevel=5, filters=("shuffle",),
                          nthreads=nthreads)
                b2kw = dict(typesize=ts, codec=getattr(blosc2.Codec, codec.upper()),
                            clevel=5, filters=[blosc2.Filter.SHUFFLE], filters_meta=[0],
                            splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
                            nthreads=nthreads)
                mine = [0]
                ref = [0]

                def ours():
                    mine[0] = sum(len(compress(p, **kw)) for p in pieces)

                def theirs():
                    ref[0] = sum(len(blosc2.compress2(p, **b2kw)) for p in pieces)

                t_ours, t_ref = best_pair(ours, theirs, repeat)
                rows.append((name, codec, nthreads, nbytes / t_ours / MIB, nbytes / t_ref / MIB,
                             t_ref / t_ours, nbytes / mine[0], nbytes / ref[0]))
    return rows


def main(nbytes: int = 64 * MIB, repeat: int = 5) -> list:
    rows = run(nbytes, repeat)
    print(f"{'data':8} {'codec':8} {'thr':>3} {'blosckit MB/s':>14} {'blosc2 MB/s':>12} "
          f"{'speed x':>8} {'ratio bk':>9} {'ratio b2':>9}")
    for r in rows:
        print(f"{r[0]:8} {r[1]:8} {r[2]:>3} {r[3]:>14.0f} {r[4]:>12.0f} {r[5]:>8.2f} "
              f"{r[6]:>9.2f} {r[7]:>9.2f}")
    return rows


if __name__ == "__main__":
    main()
