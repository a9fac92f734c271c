"""Throughput of ``blosckit validate --dask`` on one and two workers, beside
the machine's own two-process speedup.

    python benchmarks/validate_dask.py [--files 20000]

Writes ``--files`` small chunk files (python-blosc2, 4 KiB of int32 each)
and validates them: on a dask LocalCluster of one worker and of two (one
thread each, the files in batches as the command sends them), after a
warm-up batch that starts the workers. The speedup of two workers over one
is set beside what this machine gives two processes running a plain CPU
loop, since a shared machine gives less than two free cores.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _loop(n: int) -> int:
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1_000_003
    return x


def _cpu_speedup(n: int = 6_000_000) -> float:
    """Two processes over one on a plain CPU loop (the same total work)."""
    t0 = time.perf_counter()
    _loop(2 * n)
    one = time.perf_counter() - t0
    with multiprocessing.Pool(2) as pool:
        t0 = time.perf_counter()
        pool.map(_loop, [n, n])
        two = time.perf_counter() - t0
    return one / two


def _throughput(names: list[str], workers: int) -> float:
    """Files per second validated on a LocalCluster of ``workers``."""
    from distributed import Client, LocalCluster, as_completed

    from blosckit.cli.distributed import BATCH
    from blosckit.cli.validate import check_batch
    batches = [names[k:k + BATCH] for k in range(0, len(names), BATCH)]
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.submit(check_batch, names[:BATCH], True, pure=False).result()   # warm-up
        t0 = time.perf_counter()
        done = 0
        for fut in as_completed([client.submit(check_batch, b, True, pure=False)
                                 for b in batches]):
            done += len(fut.result())
        assert done == len(names)
        return done / (time.perf_counter() - t0)


def main(argv=None) -> None:
    import blosc2
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for i in range(args.files):
            p = Path(tmp) / f"{i:06d}.b2"
            p.write_bytes(blosc2.compress2(np.arange(i, i + 1024, dtype="<i4"), typesize=4))
            names.append(str(p))
        one = _throughput(names, 1)
        two = _throughput(names, 2)
    cpu = _cpu_speedup()
    print(f"{args.files} chunk files of 4 KiB (python-blosc2), deep validation")
    print(f"1 worker : {one:9.0f} files/s")
    print(f"2 workers: {two:9.0f} files/s   speedup {two / one:.2f}x")
    print(f"this machine, 2 processes on a CPU loop: {cpu:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
