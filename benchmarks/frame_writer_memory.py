"""Peak memory of writing big frames: blosckit vs python-blosc2, side by side.

    python benchmarks/frame_writer_memory.py [--frame-gib 2] [--npy-gib 1] [--kind random]

Each job runs in a child process of its own and reports its peak RSS
(Linux ``VmHWM``, reset through ``/proc/self/clear_refs`` once the imports
are done) above the RSS it had then (MiB; the interpreter's baseline), its
wall time and its output's size:

- ``FrameWriter``: ``--frame-gib`` GiB of data written 1 MiB at a time to a
  frame file, 4 MiB chunks, lz4 (target: under 100 MB above the baseline);
  python-blosc2: the same data appended 4 MiB at a time to
  ``SChunk(urlpath=..., contiguous=True)``.
- ``blosckit compress a.npy out.b2frame`` (the CLI, in the child process) of
  a ``--npy-gib`` GiB float64 ``.npy`` (target: under 150 MB); python-blosc2:
  ``SChunk(data=np.load(a.npy, mmap_mode="r"), urlpath=..., contiguous=True)``
  with the same chunk size and codec.

Then python-blosc2 opens every output and decodes each chunk, compared with
the input (a row says "read back: identical").  ``--kind random`` (default)
writes incompressible bytes, so the frame is as large as the data; ``sine``
a compressible signal.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

from _timing import RSS_HELPERS, run_child

import numpy as np

MIB = 1 << 20
CHUNK = 4 * MIB

# Shared by every child: the data of piece i (1 MiB), the same in all jobs.
PRELUDE = RSS_HELPERS + textwrap.dedent("""
    import numpy as np
    MIB = 1 << 20
    def piece(i, kind):
        if kind == "random":
            return np.random.default_rng(i).integers(0, 256, MIB, dtype=np.uint8)
        x = np.arange(i * MIB // 8, (i + 1) * MIB // 8)
        return np.round(np.sin(x / 1000.0) * 1000).astype("<f8").view(np.uint8)
""")

JOBS = {
    "frame-blosckit": """
        from blosckit import FrameWriter
        base, t0 = baseline(), time.perf_counter()
        with FrameWriter(OUT, chunksize=CHUNK, codec="lz4") as w:
            for i in range(NPIECES):
                w.write(piece(i, KIND))
    """,
    "frame-blosc2": """
        import blosc2
        cp = blosc2.CParams(typesize=1, codec=blosc2.Codec.LZ4, clevel=5, nthreads=1,
                            filters=[blosc2.Filter.SHUFFLE], filters_meta=[0])
        base, t0 = baseline(), time.perf_counter()
        sc = blosc2.SChunk(chunksize=CHUNK, urlpath=OUT, contiguous=True, mode="w", cparams=cp,
                           dparams=blosc2.DParams(nthreads=1))
        per = CHUNK // MIB
        for i in range(0, NPIECES, per):
            sc.append_data(np.concatenate([piece(j, KIND) for j in range(i, i + per)]))
        del sc
    """,
    "npy-blosckit": """
        from blosckit.cli import main
        base, t0 = baseline(), time.perf_counter()
        assert main(["compress", NPY, OUT, "--chunksize", str(CHUNK), "--codec", "lz4",
                     "--force"]) == 0
    """,
    "npy-blosc2": """
        import blosc2
        base, t0 = baseline(), time.perf_counter()
        a = np.load(NPY, mmap_mode="r")
        cp = blosc2.CParams(typesize=8, codec=blosc2.Codec.LZ4, clevel=5, nthreads=1,
                            filters=[blosc2.Filter.SHUFFLE], filters_meta=[0])
        sc = blosc2.SChunk(chunksize=CHUNK, data=a, urlpath=OUT, contiguous=True, mode="w",
                           cparams=cp, dparams=blosc2.DParams(nthreads=1))
        del sc
    """,
}

REPORT = """
    print(json.dumps(dict(above_baseline_mib=peak() - base, baseline_mib=base,
                          seconds=time.perf_counter() - t0)))
"""

# python-blosc2 decodes every chunk of a frame and compares it with the input.
CHECK = textwrap.dedent("""
    import blosc2
    sc = blosc2.open(OUT)
    if NPY:
        src = np.load(NPY, mmap_mode="r").view(np.uint8).reshape(-1)
    per = CHUNK // MIB
    ok = sc.nchunks * CHUNK >= NBYTES and sc.nbytes == NBYTES
    for c in range(sc.nchunks):
        got = np.frombuffer(sc.decompress_chunk(c), np.uint8)
        if NPY:
            want = src[c * CHUNK:(c + 1) * CHUNK]
        else:
            want = np.concatenate([piece(j, KIND) for j in range(c * per, (c + 1) * per)])
        ok = ok and np.array_equal(got, want)
    print(json.dumps(dict(identical=bool(ok))))
""")


def _child(*bodies: str, **names) -> dict:
    setup = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return run_child(PRELUDE + setup + "".join(textwrap.dedent(b) for b in bodies))


def _write_npy(path: Path, nbytes: int, kind: str) -> None:
    """A float64 .npy of ``nbytes`` data bytes, written 1 MiB at a time."""
    n = nbytes // 8
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (n,)})
        for i in range(nbytes // MIB):
            x = np.arange(i * MIB // 8, (i + 1) * MIB // 8)
            data = (np.random.default_rng(i).random(MIB // 8) if kind == "random"
                    else np.round(np.sin(x / 1000.0) * 1000))
            fh.write(data.astype("<f8").tobytes())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frame-gib", type=float, default=2.0)
    ap.add_argument("--npy-gib", type=float, default=1.0)
    ap.add_argument("--kind", choices=("random", "sine"), default="random")
    args = ap.parse_args(argv)
    frame_bytes = int(args.frame_gib * 1024) * MIB // CHUNK * CHUNK
    npy_bytes = int(args.npy_gib * 1024) * MIB
    print(f"{'job':44} {'peak above baseline MiB':>24} {'baseline MiB':>13} {'s':>6} "
          f"{'output MiB':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        npy = Path(tmp) / "a.npy"
        _write_npy(npy, npy_bytes, args.kind)
        rows = [
            ("frame-blosckit", f"FrameWriter, {frame_bytes / 2**30:g} GiB of data", "", frame_bytes),
            ("frame-blosc2", "python-blosc2 SChunk(urlpath), same data", "", frame_bytes),
            ("npy-blosckit", f"blosckit compress {npy_bytes / 2**30:g} GiB .npy -> frame",
             str(npy), npy_bytes),
            ("npy-blosc2", "python-blosc2 SChunk(data=mmapped .npy)", str(npy), npy_bytes),
        ]
        for job, label, npy_name, nbytes in rows:
            out = str(Path(tmp) / f"{job}.b2frame")
            names = dict(OUT=out, NPY=npy_name, CHUNK=CHUNK, KIND=args.kind,
                         NPIECES=nbytes // MIB, NBYTES=nbytes)
            got = _child(JOBS[job], REPORT, **names)
            size = Path(out).stat().st_size
            print(f"{label:44} {got['above_baseline_mib']:24.1f} {got['baseline_mib']:13.1f} "
                  f"{got['seconds']:6.1f} {size / MIB:11.1f}")
            sys.stdout.flush()
            check = _child(CHECK, **names)
            print(f"{'  read back by python-blosc2:':44} "
                  f"{'identical' if check['identical'] else 'DIFFERENT'}")
            Path(out).unlink()


if __name__ == "__main__":
    main()
