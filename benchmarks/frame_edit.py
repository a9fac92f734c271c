"""Editing frames in place: blosckit vs python-blosc2, side by side.

    python benchmarks/frame_edit.py [--frame-mib 512] [--appends 64]

Each job runs in a child process of its own on its own copy of the same frame
(python-blosc2 writes it: incompressible bytes in 4 MiB chunks, lz4, one
thread) and reports its peak RSS above the RSS it had once the imports were
done (Linux ``VmHWM`` reset through ``/proc/self/clear_refs``; MiB) and its wall
time:

- ``append``: ``--appends`` chunks of 4 MiB appended one call at a time
  (``EditableFrame.append_data`` / ``SChunk.append_data``);
- ``update``: chunk 0 replaced by a chunk half its size, so every chunk after
  it moves (blosckit moves them 1 MiB at a time, after copying them to its
  undo journal: about three times the bytes C-Blosc2 reads and writes);
- ``delete``: chunk 1 deleted (the index and trailer rewritten).

Then the two frames of each job are compared byte for byte, and python-blosc2
decodes every chunk of blosckit's.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

from _timing import RSS_HELPERS, run_child

MIB = 1 << 20
CHUNK = 4 * MIB

PRELUDE = RSS_HELPERS + textwrap.dedent("""
    import numpy as np
    MIB = 1 << 20
    def piece(i, n=4 * MIB):
        return np.random.default_rng(i).integers(0, 256, n, dtype=np.uint8)
    def half(i):                  # compresses to about half its size
        p = piece(i)
        p[: len(p) // 2] = 0
        return p
""")

MAKE = """
    import blosc2
    blosc2.set_nthreads(1)
    sc = blosc2.SChunk(chunksize=4 * MIB, urlpath=OUT, contiguous=True, mode="w",
                       cparams=blosc2.CParams(typesize=1, codec=blosc2.Codec.LZ4, nthreads=1),
                       dparams=blosc2.DParams(nthreads=1))
    for i in range(NCHUNKS):
        sc.append_data(piece(i))
    del sc
    print(json.dumps({}))
"""

EDITS = {
    "append": ("for i in range(APPENDS): f.append_data(piece(10_000 + i))",
               "for i in range(APPENDS): s.append_data(piece(10_000 + i))"),
    "update": ("f.update_chunk(0, blosckit.compress(half(7), **f.compression_params()))",
               "s.update_data(0, half(7), copy=True)"),
    "delete": ("f.delete_chunk(1)", "s.delete_chunk(1)"),
}

OURS = """
    import blosckit
    base, t0 = baseline(), time.perf_counter()
    with blosckit.open_frame(OUT, mode="a") as f:
        {edit}
"""
THEIRS = """
    import blosc2
    blosc2.set_nthreads(1)
    base, t0 = baseline(), time.perf_counter()
    s = blosc2.open(OUT, mode="a")
    {edit}
    del s
"""
REPORT = """
    print(json.dumps(dict(above=peak() - base, seconds=time.perf_counter() - t0)))
"""
CHECK = """
    import blosc2
    s = blosc2.open(OUT)
    print(json.dumps(dict(nchunks=s.nchunks, read=all(len(s.decompress_chunk(i)) > 0
                                                      for i in range(s.nchunks)))))
"""


def _child(*bodies: str, **names) -> dict:
    setup = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return run_child(PRELUDE + setup + "".join(textwrap.dedent(b) for b in bodies))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frame-mib", type=int, default=512)
    ap.add_argument("--appends", type=int, default=64)
    args = ap.parse_args(argv)
    nchunks = max(2, args.frame_mib * MIB // CHUNK)
    print(f"frame: {nchunks} chunks of 4 MiB (incompressible, lz4), by python-blosc2")
    print(f"{'job':10} {'blosckit MiB':>13} {'blosc2 MiB':>11} {'blosckit s':>11} "
          f"{'blosc2 s':>9}  result")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.b2frame"
        _child(MAKE, OUT=str(base), NCHUNKS=nchunks)
        for job, (ours, theirs) in EDITS.items():
            a, b = Path(tmp) / f"{job}-bk.b2frame", Path(tmp) / f"{job}-b2.b2frame"
            shutil.copyfile(base, a)
            shutil.copyfile(base, b)
            names = dict(APPENDS=args.appends)
            got = _child(OURS.format(edit=ours), REPORT, OUT=str(a), **names)
            them = _child(THEIRS.format(edit=theirs), REPORT, OUT=str(b), **names)
            same = a.read_bytes() == b.read_bytes()
            check = _child(CHECK, OUT=str(a))
            result = ("identical bytes" if same else "DIFFERENT bytes") + \
                (", read by python-blosc2" if check["read"] else ", NOT READ")
            print(f"{job:10} {got['above']:13.1f} {them['above']:11.1f} "
                  f"{got['seconds']:11.2f} {them['seconds']:9.2f}  {result}")
            sys.stdout.flush()
            a.unlink()
            b.unlink()


if __name__ == "__main__":
    main()
