"""The subprocess worker of ``tests/test_robustness.py``: hostile inputs run
through blosckit's readers under an address-space limit.

Run as ``python tests/robustness_run.py BLOBS`` where ``BLOBS`` is a pickle
list of ``(kind, blob)`` written by the parent (kind ``"c"``: a chunk,
``"f"``: a frame, ``"x"``: a splice, given to every reader).  For each blob:

* chunks: ``decompress(max_nbytes=1 << 22)`` and ``parse_chunk``;
* frames: ``open_frame``, then ``.decompress()``, ``.metalayers``,
  ``.vlmetalayers``, ``.b2nd`` (and ``.b2nd.read()`` when there is one);
* all: ``validate``, which must never raise.

The readers may raise only ``blosckit.FormatError`` (UnsupportedError is a
subclass); anything else (MemoryError included) is a failure.  Every call is
timed.

This process imports blosckit once and forks a child for each run of blobs;
the child sets ``RLIMIT_AS`` to its baseline + ``ROBUST_AS_HEADROOM`` bytes
(2 GiB by default) and reports one line per blob on a pipe.  A child that
dies (a crash) or stays silent for ``HANG_SECONDS`` (killed) is reported
with the blob it was on, and a new child resumes at the next blob.

The last stdout line is ``ROBUST-SUMMARY <json>``: counts, the slowest call
and the failures (blob index, what happened).
"""
from __future__ import annotations

import json
import os
import pickle
import resource
import select
import signal
import sys
import time
import traceback

import blosckit
from blosckit import FormatError

CAP = 1 << 22
HEADROOM = int(os.environ.get("ROBUST_AS_HEADROOM", str(2 << 30)))
HANG_SECONDS = float(os.environ.get("ROBUST_HANG_SECONDS", "20"))
MAX_FAILURES = 50


def _vm_size() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")


class Stats:
    def __init__(self) -> None:
        self.slowest = 0.0
        self.slowest_api = ""
        self.calls = 0
        self.format_errors = 0
        self.failures: list[str] = []

    def call(self, api: str, fn, *args, **kw):
        """``(ok, result)``; a FormatError is (False, err); any other
        exception is recorded as a failure and gives (False, None)."""
        self.calls += 1
        t = time.perf_counter()
        try:
            res = fn(*args, **kw)
            ok = True
        except FormatError as e:
            self.format_errors += 1
            res, ok = e, False
        except BaseException as e:      # MemoryError, RecursionError, ... all fail
            res, ok = None, False
            self.failures.append(f"{api} raised {type(e).__name__}: {e} | "
                                 + " / ".join(traceback.format_exc(limit=-3).splitlines()[-6:]))
        dt = time.perf_counter() - t
        if dt > self.slowest:
            self.slowest, self.slowest_api = dt, api
        return ok, res


def _attr(obj, name):
    return getattr(obj, name)


def run_blob(kind: str, blob: bytes) -> Stats:
    st = Stats()
    if kind in "cx":
        st.call("decompress", blosckit.decompress, blob, max_nbytes=CAP)
        st.call("parse_chunk", blosckit.parse_chunk, blob)
    if kind in "fx":
        ok, f = st.call("open_frame", blosckit.open_frame, blob)
        if ok:
            st.call("Frame.decompress", f.decompress)
            st.call("Frame.metalayers", _attr, f, "metalayers")
            st.call("Frame.vlmetalayers", _attr, f, "vlmetalayers")
            ok, b = st.call("Frame.b2nd", _attr, f, "b2nd")
            if ok and b is not None:
                st.call("B2nd.read", b.read)
    # validate never raises: a FormatError from it is a failure too
    st.calls += 1
    t = time.perf_counter()
    try:
        probs = blosckit.validate(blob)
        if not isinstance(probs, list):
            st.failures.append(f"validate returned {type(probs).__name__}")
    except BaseException as e:
        st.failures.append(f"validate raised {type(e).__name__}: {e} | "
                           + " / ".join(traceback.format_exc(limit=-3).splitlines()[-6:]))
    dt = time.perf_counter() - t
    if dt > st.slowest:
        st.slowest, st.slowest_api = dt, "validate"
    return st


def child(blobs, start: int, w: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + HEADROOM, resource.RLIM_INFINITY))
    for i in range(start, len(blobs)):
        kind, blob = blobs[i]
        st = run_blob(kind, blob)
        rec = {"i": i, "calls": st.calls, "fe": st.format_errors,
               "t": st.slowest, "api": st.slowest_api, "fail": st.failures}
        os.write(w, (json.dumps(rec) + "\n").encode())
    os._exit(0)


def main() -> int:
    with open(sys.argv[1], "rb") as fh:
        blobs = pickle.load(fh)
    t0 = time.perf_counter()
    calls = format_errors = forks = 0
    slowest = (0.0, "", -1)
    failures: list[tuple[int, str]] = []
    nfail = 0
    done = 0
    while done < len(blobs):
        r, w = os.pipe()
        forks += 1
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                child(blobs, done, w)
            finally:
                os._exit(3)
        os.close(w)
        buf = b""
        hung = False
        while True:
            ready, _, _ = select.select([r], [], [], HANG_SECONDS)
            if not ready:
                hung = True
                break
            data = os.read(r, 1 << 16)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                rec = json.loads(line)
                done = rec["i"] + 1
                calls += rec["calls"]
                format_errors += rec["fe"]
                if rec["t"] > slowest[0]:
                    slowest = (rec["t"], rec["api"], rec["i"])
                for msg in rec["fail"]:
                    nfail += 1
                    if len(failures) < MAX_FAILURES:
                        failures.append((rec["i"], msg))
        if hung:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(r)
        if done < len(blobs):
            nfail += 1
            what = (f"hang: no answer in {HANG_SECONDS} s" if hung else
                    f"crash: child died (signal {os.WTERMSIG(status)})"
                    if os.WIFSIGNALED(status) else
                    f"crash: child exited {os.WEXITSTATUS(status)}")
            if len(failures) < MAX_FAILURES:
                failures.append((done, what))
            done += 1
    summary = {"inputs": len(blobs), "calls": calls, "format_errors": format_errors,
               "forks": forks, "failures_total": nfail, "failures": failures,
               "slowest": {"seconds": slowest[0], "api": slowest[1], "index": slowest[2]},
               "seconds": round(time.perf_counter() - t0, 2)}
    print("ROBUST-SUMMARY " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
