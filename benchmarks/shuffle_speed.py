"""Speed of blosckit.native shuffles on 64 MiB versus a plain memcpy.

    python benchmarks/shuffle_speed.py [--mib 64] [--repeat 5] [--level avx2|sse2|scalar|all]

Prints best-of-N wall times and the ratio to memcpy (dst[:] = src on a
preallocated buffer).  python-blosc2 exposes no shuffle-only call (a clevel 0
compress is a plain memcpy and skips the filters), so memcpy is the baseline.
Target: shuffle/unshuffle within 1.5x of memcpy.
"""
import argparse
import importlib.util
import os
import sys
import time
import types


def _load_native():
    try:
        from blosckit import native
        return native
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for k in [k for k in sys.modules if k == "blosckit" or k.startswith("blosckit.")]:
            del sys.modules[k]
        pkg = types.ModuleType("blosckit")
        pkg.__path__ = [root]
        sys.modules["blosckit"] = pkg
        spec = importlib.util.spec_from_file_location(
            "blosckit.native", os.path.join(root, "native", "__init__.py"),
            submodule_search_locations=[os.path.join(root, "native")])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["blosckit.native"] = mod
        spec.loader.exec_module(mod)
        return mod


def best_of(fn, repeat):
    fn()  # warm up (page faults, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--level", default="best", help="avx2, sse2, scalar, best or all")
    args = ap.parse_args(argv)

    N = _load_native()
    size = args.mib << 20
    src = os.urandom(size)
    dst = bytearray(size)
    view = memoryview(dst)

    def memcpy():
        view[:] = src

    t_mem = best_of(memcpy, args.repeat)
    gbs = size / t_mem / 1e9
    print(f"buffer {args.mib} MiB, best of {args.repeat}; memcpy {t_mem * 1e3:.2f} ms "
          f"({gbs:.1f} GB/s)")
    levels = N.available_simd_levels()
    if args.level == "all":
        chosen = levels
    elif args.level == "best":
        chosen = [levels[-1]]
    else:
        chosen = [args.level]

    ops = [("shuffle", N.shuffle_into), ("unshuffle", N.unshuffle_into),
           ("bitshuffle", N.bitshuffle_into), ("bitunshuffle", N.bitunshuffle_into)]
    print(f"{'level':<7} {'ts':>3} {'op':<13} {'ms':>8} {'x memcpy':>9}")
    prev = N.simd_level()
    try:
        for lv in chosen:
            N._force_simd(lv)
            for ts in (4, 8):
                for name, fn in ops:
                    t = best_of(lambda: fn(src, dst, ts), args.repeat)
                    print(f"{lv:<7} {ts:>3} {name:<13} {t * 1e3:8.2f} {t / t_mem:9.2f}")
    finally:
        N._force_simd(prev)


if __name__ == "__main__":
    main()
