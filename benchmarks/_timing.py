"""Timing and child processes shared by the benchmark scripts."""
from __future__ import annotations

import sys
import time

# Python source for a child measuring its own peak RSS (Linux, MiB):
# baseline() resets the peak (VmHWM) to the RSS now and returns it (ru_maxrss
# would keep the parent's peak across exec), peak() reads it.
RSS_HELPERS = """
import json, re, sys, time
def status(field):
    return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read())[1]) / 1024
def baseline():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return status("VmRSS")
def peak():
    return status("VmHWM")
"""


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



def run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; the JSON object its last line
    of output holds (SystemExit with its stderr when it fails)."""
    import json
    import subprocess
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"child failed:\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])
