"""Timing shared by the benchmark scripts."""
from __future__ import annotations

import sys
import time


def best_pair(fa, fb, repeat: int) -> tuple[float, float]:
    """Best wall times (seconds) of two functions run alternately, after one
    warm-up call each, so that both see the same machine (this one's speed
    drifts by 10-20% over seconds)."""
    fa()
    fb()
    ta = tb = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fa()
        t1 = time.perf_counter()
        fb()
        t2 = time.perf_counter()
        ta, tb = min(ta, t1 - t0), min(tb, t2 - t1)
    return ta, tb


def row(name: str, t_bk: float, t_b2: float) -> None:
    """One result line: ms for each side, and python-blosc2 / blosckit."""
    print(f"{name:44} {t_bk * 1e3:9.2f} {t_b2 * 1e3:9.2f} {t_b2 / t_bk:7.1f}")
    sys.stdout.flush()

