"""Speed of blosckit.native shuffles on 64 MiB versus a plain memcpy.

    python benchmarks/shuffle_speed.py [--mib 64] [--repeat 5] [--level avx2|sse2|scalar|all]

Prints best-of-N wall times and the ratio to memcpy (dst[:] = src on a
preallocated buffer).  python-blosc2 exposes no shuffle-only call (a clevel 0
compress is a plain memcpy and skips the filters), so memcpy is the baseline.
Target: shuffle/unshuffle within 1.5x of memcpy.
"""
import argparse
import os

from _timing import best_pair

from blosckit import native as N


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--level", default="best", help="avx2, sse2, scalar, best or all")
    args = ap.parse_args(argv)

    size = args.mib << 20
    src = os.urandom(size)
    dst = bytearray(size)
    view = memoryview(dst)

    def memcpy():
        view[:] = src

    print(f"buffer {args.mib} MiB, best of {args.repeat}, each op timed alternately "
          "with a memcpy")
    levels = N.available_simd_levels()
    if args.level == "all":
        chosen = levels
    elif args.level == "best":
        chosen = [levels[-1]]
    else:
        chosen = [args.level]

    ops = [("shuffle", N.shuffle_into), ("unshuffle", N.unshuffle_into),
           ("bitshuffle", N.bitshuffle_into), ("bitunshuffle", N.bitunshuffle_into)]
    print(f"{'level':<7} {'ts':>3} {'op':<13} {'ms':>8} {'memcpy ms':>9} {'x memcpy':>9}")
    prev = N.simd_level()
    try:
        for lv in chosen:
            N._force_simd(lv)
            for ts in (4, 8):
                for name, fn in ops:
                    t, t_mem = best_pair(lambda: fn(src, dst, ts), memcpy, args.repeat)
                    print(f"{lv:<7} {ts:>3} {name:<13} {t * 1e3:8.2f} {t_mem * 1e3:9.2f} "
                          f"{t / t_mem:9.2f}")
    finally:
        N._force_simd(prev)


if __name__ == "__main__":
    main()
