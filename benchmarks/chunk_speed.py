"""Decompression (and compression) throughput of blosckit vs python-blosc2.

Both run in this process on the same chunk with the same nthreads; the table
prints GB/s for each and the ratio blosckit / blosc2 (>= 1 means blosckit is
as fast or faster).  Usage: ``python benchmarks/chunk_speed.py [--quick]``.

The per-call table (small chunks, nthreads=1) prints microseconds per call
of ``blosckit.decompress(chunk)``, of ``native.decompress_fast`` (the one-call
fast path on its own) and of ``blosc2.decompress2(chunk)`` /
``blosc2.decompress(chunk)``, with the ratios blosckit time / blosc2 time
(target: decompress <= 1.25x decompress2).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import blosc2
import numpy as np

import blosckit
from _timing import best_pair

SIZE = 64 * 2**20


def datasets(size: int):
    n8 = size // 8
    yield "float64", np.linspace(0, 1000, n8).astype(np.float64)
    n4 = size // 4
    rng = np.random.default_rng(0)
    yield "int32", (np.arange(n4, dtype=np.int32) + rng.integers(0, 100, n4, dtype=np.int32))


def decompress_table(size: int, repeat: int) -> None:
    print(f"decompress, {size // 2**20} MiB, GB/s (best of {repeat}, alternating)")
    print(f"{'data':8} {'codec':8} {'filter':10} {'thr':>3} {'ratio':>7} "
          f"{'blosckit':>9} {'blosc2':>8} {'bk/b2':>6}")
    for dname, arr in datasets(size):
        data = arr.tobytes()
        for codec in ("lz4", "blosclz", "zstd"):
            for filt in ("shuffle", "bitshuffle"):
                chunk = blosc2.compress2(
                    data, typesize=arr.itemsize, clevel=5,
                    codec=getattr(blosc2.Codec, codec.upper()),
                    filters=[getattr(blosc2.Filter, filt.upper())], nthreads=1)
                assert blosckit.decompress(chunk) == data
                dst = bytearray(len(data))
                for nthreads in (1, 2):
                    t_bk, t_b2 = best_pair(
                        lambda: blosckit.decompress_into(chunk, dst, nthreads=nthreads),
                        lambda: blosc2.decompress2(chunk, dst=dst, nthreads=nthreads), repeat)
                    gb = len(data) / 1e9
                    print(f"{dname:8} {codec:8} {filt:10} {nthreads:>3} "
                          f"{len(data) / len(chunk):7.1f} {gb / t_bk:9.2f} {gb / t_b2:8.2f} "
                          f"{t_b2 / t_bk:6.2f}")
                    sys.stdout.flush()


PER_CALL_SIZES = (4 << 10, 64 << 10, 256 << 10)


def _looped(fn, times: int):
    """fn called `times` times per sample: a sample outlasts the timer's noise."""
    def run():
        for _ in range(times):
            fn()
    return run


def _per_call_data(size: int) -> bytes:
    rng = np.random.default_rng(size)
    n = size // 4
    return (np.arange(n, dtype=np.int32) * 3 + rng.integers(0, 50, n, dtype=np.int32)).tobytes()


def per_call_table(repeat: int) -> None:
    """Per-call cost on small chunks: frames hold thousands of them.  A
    sample is ~2 MiB of work (a millisecond or two), so many are taken: the
    best of few is at the mercy of this machine's drift at the microsecond
    scale."""
    repeat = max(repeat, 25)
    prev = blosc2.set_nthreads(1)
    print(f"decompress per call, typesize 4, shuffle, clevel 5, nthreads=1, us per call "
          f"(best of {repeat}, timed alternately); b2 = blosc2.decompress, C-Blosc2's "
          "cheapest call (blosc2.decompress2 shown too); bk/b2 is the time ratio "
          "(target <= 1.25)")
    print(f"{'size':>7} {'codec':8} {'blosckit':>9} {'b2':>8} {'bk/b2':>6} {'b2 dec2':>8}")
    try:
        for size in PER_CALL_SIZES:
            data = _per_call_data(size)
            times = max(1, (2 << 20) // size)
            for codec in ("lz4", "blosclz", "zstd"):
                chunk = blosc2.compress2(data, typesize=4, clevel=5,
                                         codec=getattr(blosc2.Codec, codec.upper()),
                                         filters=[blosc2.Filter.SHUFFLE], nthreads=1)
                assert blosckit.decompress(chunk) == data
                best_pair(_looped(lambda: blosckit.decompress(chunk), times),   # warm-up
                          _looped(lambda: blosc2.decompress(chunk), times), 3)
                t_bk, t_b2 = best_pair(_looped(lambda: blosckit.decompress(chunk), times),
                                       _looped(lambda: blosc2.decompress(chunk), times), repeat)
                _, t_d2 = best_pair(_looped(lambda: blosckit.decompress(chunk), times),
                                    _looped(lambda: blosc2.decompress2(chunk), times), repeat)
                us = 1e6 / times
                print(f"{size >> 10:>5}Ki {codec:8} {t_bk * us:9.2f} {t_b2 * us:8.2f} "
                      f"{t_bk / t_b2:6.2f} {t_d2 * us:8.2f}")
                sys.stdout.flush()
    finally:
        blosc2.set_nthreads(prev)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="8 MiB, 3 repeats")
    ap.add_argument("--only", choices=("per-call", "decompress", "compress", "shuffle"))
    args = ap.parse_args()
    size, repeat = (8 * 2**20, 3) if args.quick else (SIZE, 9)
    sys.path.insert(0, str(Path(__file__).parent))
    if args.only in (None, "per-call"):
        per_call_table(repeat)
    if args.only in (None, "decompress"):
        decompress_table(size, repeat)
    if args.only in (None, "compress"):
        import compress_speed
        compress_speed.main()
    if args.only in (None, "shuffle"):
        import shuffle_speed
        shuffle_speed.main(["--level", "all"])


if __name__ == "__main__":
    main()
