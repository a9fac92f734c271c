"""The native code under AddressSanitizer and UndefinedBehaviorSanitizer.

An instrumented copy of ``blosckit.native._native`` is built from the same
sources and cdef (``blosckit/native/build_native.py``'s ``make_builder``) with
``-fsanitize=address,undefined`` into a temporary directory, next to a copy of
the ``blosckit`` package; ``tests/sanitize_run.py`` then runs the hostile
corpus through it in a subprocess (the interpreter is not instrumented, so it
gets the compiler's ``libasan.so`` through ``LD_PRELOAD``).  The test passes
when the subprocess exits 0 with no sanitizer report: readers raised only
FormatError, validate never raised, kernels and builder round-tripped.

Skipped, with the reason, when the compiler cannot build and run a
sanitized program.  ``BLOSCKIT_LONG=1`` runs the whole corpus.
"""
from __future__ import annotations

import json
import pathlib
import pickle
import subprocess
import sys
import time

import pytest

from helpers import LONG, small_chunks
from oracles import oracle
from sanitize_build import REPORT, TESTS, build, environment, probe

# a tier of its own (about a minute: a build and a long run), which
# ``python -m pytest`` leaves out and .ci/run runs: ``-m sanitize``
pytestmark = [pytest.mark.sanitize,
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="the sanitizer build uses gcc/clang LD_PRELOAD (Linux)")]


def _frames() -> dict[str, bytes]:
    """Frames written by python-blosc2 (here: C-Blosc2 itself trips ASan)."""
    np, blosc2 = oracle("numpy"), oracle("blosc2")
    out = {}
    data = np.arange(6000, dtype="<i4").tobytes()
    for codec in ("LZ4", "ZSTD", "BLOSCLZ"):
        s = blosc2.SChunk(chunksize=8000, data=data,
                          cparams={"typesize": 4, "codec": getattr(blosc2.Codec, codec),
                                   "nthreads": 1})
        out[f"blosc2-schunk-{codec.lower()}"] = bytes(s.to_cframe())
    a = blosc2.asarray(np.linspace(0, 1, 900).reshape(30, 30), chunks=(10, 30), blocks=(5, 30))
    out["blosc2-b2nd"] = bytes(a.to_cframe())
    return out


def test_hostile_corpus_under_sanitizers(tmp_path):
    oracle("blosc2")                    # the frames of the corpus are python-blosc2's
    why = probe(tmp_path)
    if why is not None:
        pytest.skip(f"no usable sanitizers: {why}")
    t0 = time.perf_counter()
    pkg = build(tmp_path)
    t_build = time.perf_counter() - t0

    corpus = tmp_path / "corpus.pkl"
    with open(corpus, "wb") as fh:
        pickle.dump({"chunks": small_chunks(), "frames": _frames()}, fh)
    progress = tmp_path / "progress.txt"
    env = environment(pkg, TESTS)
    t1 = time.perf_counter()
    r = subprocess.run([sys.executable, str(TESTS / "sanitize_run.py"), str(corpus),
                        str(progress)], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=3600 if LONG else 900)
    t_run = time.perf_counter() - t1

    last = progress.read_text() if progress.exists() else ""
    section, _, rest = last.partition(" ")
    label, _, blob = rest.partition(" ")
    where = (f"last input: section {section!r}, {label!r}, {len(blob.strip()) // 2} bytes "
             "(a crash inside the garbage collector may come from an earlier input):\n"
             f"{blob.strip()}")
    report = REPORT.search(r.stderr)
    assert report is None and r.returncode == 0, (
        f"sanitized run failed (exit {r.returncode}); {where}\n"
        f"--- stderr (tail) ---\n{r.stderr[-6000:]}\n--- stdout (tail) ---\n{r.stdout[-6000:]}")

    summary_line = [ln for ln in r.stdout.splitlines() if ln.startswith("SANITIZE-SUMMARY ")]
    assert summary_line, f"no summary from the subprocess:\n{r.stdout[-3000:]}"
    summary = json.loads(summary_line[-1].split(" ", 1)[1])
    # the subprocess really ran the instrumented build
    assert pathlib.Path(summary["native"]).resolve().parent == \
        (pkg / "blosckit" / "native").resolve(), summary["native"]
    assert summary["failures"] == 0
    counts = summary["counts"]
    for section, least in (("chunks", 1000), ("kernels", 100), ("builder", 100),
                           ("build_chunk", 100), ("frames", 500)):
        assert counts.get(section, {}).get("inputs", 0) >= least, (section, counts)
    assert counts["chunks"]["format_errors"] > 0 and counts["chunks"]["decoded"] > 0
    print(f"\nsanitized build {t_build:.1f}s, run {t_run:.1f}s "
          f"(sections {summary['seconds']}), long={summary['long']}")
    for section, c in counts.items():
        print(f"  {section}: {c}")
