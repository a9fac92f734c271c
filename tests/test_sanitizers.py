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

import importlib.util
import json
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest

from helpers import LONG, small_chunks

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined", "-O1", "-g"]
# what a sanitizer (or a crash under one) writes to stderr
REPORT = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|"
                    r"runtime error:|==\d+==ERROR|SUMMARY: |DEADLYSIGNAL")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the sanitizer build uses gcc/clang LD_PRELOAD (Linux)")

PROBE = r"""
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    char *volatile p = malloc(8);
    memset(p, 1, 8);
    int r = p[argc > 1 ? 8 : 7] - 1;   /* one past the end when given an argument */
    free(p);
    return r;
}
"""


def _compiler() -> str:
    return (sysconfig.get_config_var("CC") or "cc").split()[0]


def _asan_runtime(cc: str) -> str | None:
    """Path of the compiler's shared ASan runtime (gcc: libasan.so; clang:
    libclang_rt.asan-x86_64.so), or None."""
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so"):
        try:
            out = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
        if out and os.path.isabs(out) and os.path.exists(out):
            return os.path.realpath(out)
    return None


def _probe(tmp: pathlib.Path) -> str | None:
    """None when the compiler builds a sanitized program that runs clean and
    catches a heap overflow; else why not."""
    cc = shutil.which(_compiler())
    if cc is None:
        return f"no C compiler ({_compiler()!r} not found)"
    src, exe = tmp / "probe.c", tmp / "probe"
    src.write_text(PROBE)
    try:
        r = subprocess.run([cc, *SAN_FLAGS, str(src), "-o", str(exe)], capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return f"{cc} could not run: {e}"
    if r.returncode != 0:
        return f"{cc} cannot build with {' '.join(SAN_FLAGS[:1])}: {r.stderr.strip()[-300:]}"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    clean = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    if clean.returncode != 0:
        return (f"a sanitized program does not run here (exit {clean.returncode}): "
                f"{clean.stderr.strip()[-300:]}")
    bad = subprocess.run([str(exe), "x"], capture_output=True, text=True, env=env, timeout=60)
    if bad.returncode == 0 or "heap-buffer-overflow" not in bad.stderr:
        return "AddressSanitizer does not report a heap overflow here"
    if _asan_runtime(cc) is None:
        return f"{cc} has no shared ASan runtime to LD_PRELOAD into python"
    return None


def _build(tmp: pathlib.Path) -> pathlib.Path:
    """The blosckit package copied into tmp/pkg with an instrumented native
    module; returns tmp/pkg."""
    spec = importlib.util.spec_from_file_location(
        "_bk_build_native", ROOT / "blosckit" / "native" / "build_native.py")
    bn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bn)
    builder = bn.make_builder(bn.SOURCES)
    # make_builder's own arguments, its -O level replaced by the sanitizer flags
    module, source, ext, kw = builder._assigned_source
    kw = dict(kw)
    kw["extra_compile_args"] = [a for a in kw.get("extra_compile_args", [])
                                if not a.startswith("-O")] + SAN_FLAGS
    kw["extra_link_args"] = list(kw.get("extra_link_args", [])) + SAN_FLAGS
    builder._assigned_source = (module, source, ext, kw)
    so = pathlib.Path(builder.compile(tmpdir=str(tmp / "build"), verbose=False))
    pkg = tmp / "pkg"
    shutil.copytree(ROOT / "blosckit", pkg / "blosckit",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "src"))
    shutil.copy2(so, pkg / "blosckit" / "native" / so.name)
    return pkg


def _frames() -> dict[str, bytes]:
    """Frames written by python-blosc2 (here: C-Blosc2 itself trips ASan)."""
    import numpy as np
    blosc2 = pytest.importorskip("blosc2")
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
    pytest.importorskip("blosc2", reason="the corpus is written by python-blosc2")
    why = _probe(tmp_path)
    if why is not None:
        pytest.skip(f"no usable sanitizers: {why}")
    t0 = time.perf_counter()
    pkg = _build(tmp_path)
    t_build = time.perf_counter() - t0

    corpus = tmp_path / "corpus.pkl"
    with open(corpus, "wb") as fh:
        pickle.dump({"chunks": small_chunks(), "frames": _frames()}, fh)
    progress = tmp_path / "progress.txt"
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=_asan_runtime(shutil.which(_compiler())),
        # CPython leaks by design; a failed huge malloc is a MemoryError, not a report
        ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        # every Python object through malloc: ASan redzones around them too
        PYTHONMALLOC="malloc",
        PYTHONPATH=os.pathsep.join([str(pkg), str(TESTS)]),
        PYTHONDONTWRITEBYTECODE="1",
    )
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
