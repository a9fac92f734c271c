"""Peak memory of compressing, decompressing, validating and salvaging a
200 MB array: blosckit vs python-blosc2, job by job.

    python benchmarks/frame_memory.py [--mb 200] [--data sine random]

The data: ``--mb`` MB of float64, ``np.round(np.sin(np.linspace(0, 1000,
n)), 3)`` (``sine``) and uniform random numbers (``random``, hardly
compressible: the frames are nearly as large as the data); a table each.
Written once as ``a.npy``, as a b2nd frame by ``blosc2.asarray``
(python-blosc2's defaults: zstd, clevel 5, chunks of 1,000,000 items and
blocks of 15,625 here, which blosckit's compress rows use too) and as a
plain frame by ``blosc2.SChunk`` (8 MB chunks, as the array's).

Each job runs in a fresh child process of its own, which reports its peak
RSS (Linux ``VmHWM``: what the process ever held resident, pages of mapped
files included) in MiB, absolute, as the issue measured it: interpreter and
imports included.  The interpreter's baseline (after the imports of each
side) is printed first.  Each output is then checked against the input
(python-blosc2 reads what blosckit wrote; NumPy compares what either
decompressed), so no row is fast or lean for being wrong.

The bound (issue 21): blosckit's peak at most python-blosc2's for the same
job plus 64 MiB.  python-blosc2 has no validate or salvage; their rows are
set beside python-blosc2 opening the frame and decoding every chunk (the
nearest job it has: reading everything once), marked ``*``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

MB, MIB = 10**6, 1 << 20
BOUND_MIB = 64                  # the issue's allowance over python-blosc2
B2_CHUNK = 8 * MB               # plain frame chunks: what blosc2.asarray picks here

# Every child: its peak and current RSS.
PRELUDE = textwrap.dedent("""
    import json, re, sys, time
    def status(field):          # MiB
        return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read())[1]) / 1024
""")

# Children report what they held after the imports (``base``) and at the
# peak; ``t0`` starts the clock after the imports.
START = "base, t0 = status('VmRSS'), time.perf_counter()\n"
REPORT = """
got = dict(peak=status("VmHWM"), base=base, seconds=time.perf_counter() - t0)
"""
SEND = "print(json.dumps(got))\n"

SETUP = """
import numpy as np, blosc2
n = MBYTES // 8
if DATA == "sine":
    a = np.round(np.sin(np.linspace(0, 1000, n)), 3)
else:
    a = np.random.default_rng(0).random(n)
np.save(NPY, a)
blosc2.asarray(a, urlpath=B2ND, mode="w")
blosc2.SChunk(chunksize=B2_CHUNK, data=a, urlpath=B2FRAME, contiguous=True, mode="w",
              cparams=blosc2.CParams(typesize=8))
"""

IMPORT_BK = "import numpy as np, blosckit\nfrom blosckit.cli import main\n"
IMPORT_B2 = "import numpy as np, blosc2\n"

# python-blosc2's side of each job.
B2 = {
    # blosc2.asarray over the mapped .npy: python-blosc2's one call from a
    # NumPy array to a b2nd frame file; the mapping keeps the input out of
    # anonymous memory (np.load without mmap_mode would add the whole array
    # to its peak), so this is its leanest way, not a straw man.
    "compress": """
        blosc2.asarray(np.load(NPY, mmap_mode="r"), urlpath=OUT, mode="w")
    """,
    # the same, the frame kept in memory (as compress_b2nd returns it)
    "compress-mem": """
        open(OUT, "wb").write(blosc2.asarray(np.load(NPY, mmap_mode="r")).to_cframe())
    """,
    # NDArray[:] is how python-blosc2 gives an array back; then np.save
    "b2nd-npy": """
        np.save(OUT, blosc2.open(B2ND)[:])
    """,
    "b2nd-array": """
        a = blosc2.open(B2ND)[:]
    """,
    # chunk by chunk: python-blosc2's leanest way from a frame to a file
    # (schunk[:] would hold the whole data, a lighter bound for us)
    "plain-raw": """
        sc = blosc2.open(B2FRAME)
        with open(OUT, "wb") as fh:
            for i in range(sc.nchunks):
                fh.write(sc.decompress_chunk(i))
    """,
    "plain-mem": """
        data = blosc2.open(B2FRAME)[:]
    """,
    # stand-ins for validate / salvage: open and decode every chunk
    "read-b2nd": """
        arr = blosc2.open(B2ND)     # kept: the schunk dies with its NDArray
        sc = arr.schunk
        for i in range(sc.nchunks):
            sc.decompress_chunk(i)
    """,
    "read-plain": """
        sc = blosc2.open(B2FRAME)
        for i in range(sc.nchunks):
            sc.decompress_chunk(i)
    """,
}

# (label, blosckit's code, python-blosc2's job, the check of OUT)
JOBS = [
    ("compress .npy -> b2nd, CLI",
     """assert main(["compress", NPY, OUT, "--codec", "zstd", "--clevel", "5",
             "--chunkshape", "1000000", "--blockshape", "15625"]) == 0""",
     "compress", "npy-vs-b2nd"),
    ("compress_b2nd(mapped .npy) -> bytes",
     """a = np.load(NPY, mmap_mode="r")
open(OUT, "wb").write(blosckit.compress_b2nd(a, chunkshape=(1_000_000,),
                      blockshape=(15_625,), codec="zstd", clevel=5))""",
     "compress-mem", "npy-vs-b2nd"),
    ("decompress b2nd -> .npy, CLI",
     'assert main(["decompress", B2ND, OUT]) == 0', "b2nd-npy", "npy-vs-npy"),
    ("b2nd -> .npy, API (B2nd.iter_read)",
     """import numpy.lib.format as fmt
with blosckit.open_frame(B2ND) as f, open(OUT, "wb") as fh:
    b = f.b2nd
    fmt.write_array_header_1_0(fh, dict(descr=b.dtype, fortran_order=False, shape=b.shape))
    for piece in b.iter_read():
        fh.write(piece)""",
     "b2nd-npy", "npy-vs-npy"),
    ("B2nd.array() in memory",
     """with blosckit.open_frame(B2ND) as f:
    a = f.b2nd.array()""",
     "b2nd-array", "array-vs-npy"),
    ("decompress plain frame -> raw, CLI",
     'assert main(["decompress", B2FRAME, OUT]) == 0', "plain-raw", "npy-vs-raw"),
    ("plain frame -> raw, API (iter_decompress)",
     """with blosckit.open_frame(B2FRAME) as f, open(OUT, "wb") as fh:
    for piece in f.iter_decompress():
        fh.write(piece)""",
     "plain-raw", "npy-vs-raw"),
    ("Frame.decompress() in memory",
     """with blosckit.open_frame(B2FRAME) as f:
    data = f.decompress()""",
     "plain-mem", "bytes-vs-npy"),
    ("validate b2nd frame, CLI", 'assert main(["validate", "-q", B2ND]) == 0',
     "read-b2nd", None),
    ("validate plain frame, CLI", 'assert main(["validate", "-q", B2FRAME]) == 0',
     "read-plain", None),
    ("validate(path) plain frame, API", "assert blosckit.validate(B2FRAME) == []",
     "read-plain", None),
    ("salvage b2nd frame, CLI", 'assert main(["salvage", B2ND, OUT]) == 0',
     "read-b2nd", "b2nd-vs-frame"),
    ("salvage plain frame, CLI", 'assert main(["salvage", B2FRAME, OUT]) == 0',
     "read-plain", "npy-vs-frame"),
]
STAND_INS = {"read-b2nd", "read-plain"}
# the CLI picks the output by its name: a b2nd frame, a NumPy file
SUFFIX = {"npy-vs-b2nd": ".b2nd", "b2nd-vs-frame": ".b2nd", "npy-vs-npy": ".npy", "npy-vs-raw": ".bin"}

# Checks of a result held in memory, run in the job's child once its peak
# is taken: the result against the input.
AFTER = {
    "array-vs-npy": "ok = np.array_equal(a, np.load(NPY, mmap_mode='r'))",
    "bytes-vs-npy": "ok = data == np.load(NPY, mmap_mode='r').tobytes()",
}

# Checks of OUT, in a child of their own: OUT against the input.
CHECKS = {
    "npy-vs-b2nd": """
        ok = np.array_equal(blosc2.open(OUT)[:], np.load(NPY, mmap_mode="r"))
    """,
    "npy-vs-frame": """
        src = np.load(NPY, mmap_mode="r").reshape(-1).view(np.uint8)
        sc = blosc2.open(OUT)
        at, ok = 0, sc.nbytes == src.nbytes
        for i in range(sc.nchunks):
            got = np.frombuffer(sc.decompress_chunk(i), np.uint8)
            ok = ok and np.array_equal(got, src[at:at + len(got)])
            at += len(got)
    """,
    "b2nd-vs-frame": """
        ok = np.array_equal(blosc2.open(OUT)[:], blosc2.open(B2ND)[:])
    """,
    "npy-vs-npy": """
        ok = np.array_equal(np.load(OUT, mmap_mode="r"), np.load(NPY, mmap_mode="r"))
    """,
    "npy-vs-raw": """
        src = np.load(NPY, mmap_mode="r")
        ok = np.array_equal(np.memmap(OUT, src.dtype, "r"), src)
    """,
}


def _child(code: str, **names) -> dict:
    setup = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    run = subprocess.run([sys.executable, "-c", PRELUDE + setup + code],
                         capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"child failed:\n{code}\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def _job(imports: str, body: str, after: str = "", **names) -> dict:
    """Run ``body`` after ``imports`` in a fresh child: its peak, its
    baseline and its time (and ``ok``, when ``after`` checks the result)."""
    tail = after + "\ngot['ok'] = bool(ok)\n" if after else ""
    return _child(imports + START + textwrap.dedent(body) + REPORT + tail + SEND, **names)


def _check(kind: str, **names) -> bool:
    code = IMPORT_B2 + textwrap.dedent(CHECKS[kind]) + "print(json.dumps(dict(ok=bool(ok))))\n"
    return _child(code, **names)["ok"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="MB (10**6 bytes) of float64 data")
    ap.add_argument("--data", choices=("sine", "random"), nargs="+",
                    default=["sine", "random"])
    args = ap.parse_args(argv)
    for k, kind in enumerate(args.data):
        if k:
            print()
        _table(kind, args.mb)
    print(f"\nbound: blosckit <= python-blosc2 + {BOUND_MIB} MiB.  * python-blosc2 has no "
          "such job: opening the frame and decoding every chunk stands in.")


def _table(kind: str, mb: int) -> None:
    """Every job on ``mb`` MB of ``kind`` data, one row each."""
    with tempfile.TemporaryDirectory() as tmp:
        names = dict(NPY=f"{tmp}/a.npy", B2ND=f"{tmp}/a.b2nd", B2FRAME=f"{tmp}/a.b2frame",
                     MBYTES=mb * MB, DATA=kind, B2_CHUNK=B2_CHUNK)
        _child(SETUP + "print('{}')\n", **names)
        sizes = {k: Path(names[k]).stat().st_size / MIB for k in ("NPY", "B2ND", "B2FRAME")}
        print(f"data: {mb} MB of {kind} float64; .npy {sizes['NPY']:.1f} MiB, "
              f"b2nd frame {sizes['B2ND']:.1f} MiB, plain frame {sizes['B2FRAME']:.1f} MiB "
              "(both by python-blosc2)")
        for label, imports in (("python + numpy + blosckit", IMPORT_BK),
                               ("python + numpy + blosc2", IMPORT_B2)):
            got = _job(imports, "", **names)
            print(f"baseline, {label}: {got['peak']:.1f} MiB")
        print(f"{'job':40} {'blosckit':>9} {'blosc2':>9} {'diff':>7} {'bound':>6} "
              f"{'bk s':>6} {'b2 s':>6}  result")
        print(f"{'':40} {'peak MiB':>9} {'peak MiB':>9} {'MiB':>7}")
        b2: dict[str, dict] = {}
        for label, bk_code, b2_job, check in JOBS:
            out = f"{tmp}/out{SUFFIX.get(check, '')}"
            bk = _job(IMPORT_BK, bk_code, AFTER.get(check, ""), OUT=out, **names)
            if check is None:
                verdict = "valid"           # the job asserts validate's verdict
            elif check in AFTER:
                verdict = "identical" if bk["ok"] else "WRONG"
            else:
                verdict = "identical" if _check(check, OUT=out, **names) else "WRONG"
            Path(out).unlink(missing_ok=True)
            if b2_job not in b2:
                b2[b2_job] = _job(IMPORT_B2, B2[b2_job], OUT=out, **names)
                Path(out).unlink(missing_ok=True)
            ref = b2[b2_job]
            diff = bk["peak"] - ref["peak"]
            star = "*" if b2_job in STAND_INS else " "
            within = "yes" if diff <= BOUND_MIB else "NO"
            print(f"{label:40} {bk['peak']:9.1f} {ref['peak']:8.1f}{star} {diff:7.1f} "
                  f"{within:>6} {bk['seconds']:6.2f} {ref['seconds']:6.2f}  {verdict}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
