"""Frames: blosckit vs python-blosc2 side by side, in one process.

    python benchmarks/frame_speed.py [--nchunks 10000] [--repeat 5]

Rows (ms, best of N, the two timed alternately; ratio = python-blosc2 time /
blosckit time, above 1: blosckit faster):
- open a 10,000-chunk frame file and read one vlmetalayer (target: blosckit
  at most half python-blosc2's time, reading no chunk);
- decompress every chunk of it;
- validate it without decoding blocks (blosckit ``validate(deep=False)``; target
  at most 50 ms) beside python-blosc2's own structural check, opening it;
- validate it decoding every block, beside python-blosc2 decompressing it all;
- build a 10,000-chunk contiguous frame in memory from compressed chunks
  (target: blosckit at least 100x faster).
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import blosc2
import numpy as np
from _timing import best_pair, row

import blosckit
from blosckit.frame.build import build_frame


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nchunks", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    n, items = args.nchunks, 256
    cp = blosc2.CParams(typesize=4, codec=blosc2.Codec.LZ4, clevel=5, nthreads=1)
    data = np.arange(n * items, dtype="<i4")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.b2frame"
        sc = blosc2.SChunk(chunksize=items * 4, data=data, cparams=cp, urlpath=str(path),
                           contiguous=True, mode="w")
        sc.vlmeta["info"] = {"nchunks": n}
        del sc
        print(f"{n} chunks of {items * 4} bytes (lz4, shuffle), ms, best of {args.repeat}")
        print(f"{'operation':44} {'blosckit':>9} {'blosc2':>9} {'ratio':>7}")

        def bk_open():
            with blosckit.open_frame(path) as f:
                return f.vlmetalayers["info"]

        def b2_open():
            s = blosc2.open(str(path), mode="r")
            return s.vlmeta["info"]

        row("open the file, read one vlmetalayer", *best_pair(bk_open, b2_open, args.repeat))

        f = blosckit.open_frame(path)
        sc = blosc2.open(str(path), mode="r")
        assert f.decompress() == data.tobytes()
        row("decompress every chunk", *best_pair(f.decompress, lambda: sc[:], args.repeat))

        assert blosckit.validate(path, deep=False) == []
        row("validate, no block decoded (blosc2: open)",
            *best_pair(lambda: blosckit.validate(path, deep=False),
                       lambda: blosc2.open(str(path), mode="r"), args.repeat))
        row("validate, every block decoded (blosc2: [:])",
            *best_pair(lambda: blosckit.validate(path),
                       lambda: blosc2.open(str(path), mode="r")[:], args.repeat))

        chunks = [f.chunk(i) for i in range(n)]

        def bk_build():
            return build_frame(chunks, vlmetalayers={"info": b"\x81\xa1n\x01"})

        def b2_build():
            s = blosc2.SChunk(chunksize=items * 4, cparams=cp)
            for c in chunks:
                s.append_chunk(c)
            return s.to_cframe()

        assert blosc2.schunk_from_cframe(bk_build())[:] == data.tobytes()
        row("build a frame from compressed chunks", *best_pair(bk_build, b2_build,
                                                               max(1, args.repeat // 2)))
        f.close()


if __name__ == "__main__":
    main()
