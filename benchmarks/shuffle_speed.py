"""Speed of blosckit.native shuffles: the in-place kernels on 64 MiB versus a
plain memcpy, and the kernels that return new bytes versus a copy into new
bytes and versus C-Blosc2's exported kernels.

    python benchmarks/shuffle_speed.py [--mib 64] [--repeat 5] [--level avx2|sse2|scalar|all]
                                       [--only into|new]

Table "into": best-of-N wall times and the ratio to memcpy (dst[:] = src on a
preallocated buffer).  Target: shuffle/unshuffle within 1.5x of memcpy.

Table "new": ``blosckit.shuffle(src, ts)`` etc. (a new bytes object) at
4 KiB, 256 KiB and 64 MiB, src a bytearray.  Baselines, each timed
alternately with the blosckit call: ``bytes(src)`` (allocate new bytes and
copy), and C-Blosc2's ``blosc2_shuffle`` / ``blosc2_unshuffle`` /
``blosc2_bitshuffle`` / ``blosc2_bitunshuffle`` from python-blosc2's
libblosc2, called through cffi ABI mode into a freshly allocated,
uninitialised bytes object (the same allocation blosckit uses), so both sides
pay for a new output.  Speed ratios (> 1: blosckit faster): memcpy-new-bytes
time / blosckit time (target >= 0.67) and C-Blosc2 time / blosckit time
(target >= 0.8).
"""
import argparse
import glob
import os

import cffi
from _timing import best_pair

from blosckit.native import buffers as _buffers
from blosckit import native as N

NEW_SIZES = (("4 KiB", 4 << 10), ("256 KiB", 256 << 10), ("64 MiB", 64 << 20))
OPS = ("shuffle", "unshuffle", "bitshuffle", "bitunshuffle")


def _libblosc2():
    """python-blosc2's libblosc2 through cffi ABI mode, or None."""
    try:
        import blosc2
    except ImportError:
        return None, None
    libs = sorted(glob.glob(os.path.join(os.path.dirname(blosc2.__file__), "lib",
                                         "libblosc2.so*")))
    if not libs:
        return None, None
    ffi = cffi.FFI()
    ffi.cdef("\n".join(
        f"int32_t blosc2_{op}(const int32_t typesize, const int32_t blocksize, "
        "const void *src, void *dest);" for op in OPS))
    return ffi, ffi.dlopen(libs[0])


def into_table(args):
    size = args.mib << 20
    src = os.urandom(size)
    dst = bytearray(size)
    view = memoryview(dst)

    def memcpy():
        view[:] = src

    print(f"in place: buffer {args.mib} MiB, best of {args.repeat}, each op timed "
          "alternately with a memcpy")
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


def _looped(fn, times: int):
    """fn called `times` times per sample, so small sizes outlast the timer."""
    def run():
        for _ in range(times):
            fn()
    return run


def _blosc2_new(ffi, fn, src, ts: int):
    """A C-Blosc2 kernel into a new, uninitialised bytes object."""
    n = len(src)

    def run():
        out, addr = _buffers.new_bytes_at(n)
        if fn(ts, n, ffi.from_buffer(src), ffi.cast("void *", addr)) != n:
            raise RuntimeError("C-Blosc2 kernel failed")
        return out
    return run


def new_table(args):
    ffi, lib = _libblosc2()
    print(f"\nnew bytes: src a bytearray, best of {args.repeat} samples, blosckit timed "
          "alternately with each baseline; C-Blosc2 called via cffi ABI mode into a fresh "
          "uninitialised bytes object (like for like)")
    print(f"{'size':>8} {'ts':>3} {'op':<13} {'bk us':>10} {'copy us':>10} {'bk/copy':>8} "
          f"{'b2 us':>10} {'bk/b2':>7}")
    for label, size in NEW_SIZES:
        src = bytearray(os.urandom(size))
        times = max(1, (1 << 20) // size)     # calls per sample
        for ts in (4, 8):
            for op in OPS:
                ours = getattr(N, op)
                if ours(src, ts) is None:
                    raise RuntimeError(op)
                t_bk, t_cp = best_pair(_looped(lambda: ours(src, ts), times),
                                       _looped(lambda: bytes(src), times), args.repeat)
                row = (f"{label:>8} {ts:>3} {op:<13} {t_bk / times * 1e6:10.2f} "
                       f"{t_cp / times * 1e6:10.2f} {t_cp / t_bk:8.2f}")
                if lib is not None:
                    theirs = _blosc2_new(ffi, getattr(lib, f"blosc2_{op}"), src, ts)
                    if theirs() != ours(src, ts):
                        raise RuntimeError(f"{op}: C-Blosc2 and blosckit disagree")
                    t_bk2, t_b2 = best_pair(_looped(lambda: ours(src, ts), times),
                                            _looped(theirs, times), args.repeat)
                    row += f" {t_b2 / times * 1e6:10.2f} {t_b2 / t_bk2:7.2f}"
                print(row, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--level", default="best", help="avx2, sse2, scalar, best or all")
    ap.add_argument("--only", choices=("into", "new"))
    args = ap.parse_args(argv)
    if args.only in (None, "into"):
        into_table(args)
    if args.only in (None, "new"):
        new_table(args)


if __name__ == "__main__":
    main()
