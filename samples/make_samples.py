"""Regenerate the bundled sample chunks (written by python-blosc2 / python-blosc).

Run from the project root: ``python samples/make_samples.py``.  The files are
write-once; the README shows `blosckit info` on them.
"""
from pathlib import Path

import blosc
import blosc2
import numpy as np

here = Path(__file__).parent
data = np.arange(250_000, dtype=np.int32).tobytes()
(here / "arange-lz4-shuffle.b2chunk").write_bytes(blosc2.compress2(
    data, typesize=4, codec=blosc2.Codec.LZ4, clevel=5, filters=[blosc2.Filter.SHUFFLE],
    splitmode=blosc2.SplitMode.ALWAYS_SPLIT, nthreads=1))
floats = np.linspace(0, 100, 100_000).tobytes()
(here / "linspace-zstd-bitshuffle.b2chunk").write_bytes(blosc2.compress2(
    floats, typesize=8, codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.BITSHUFFLE],
    nthreads=1))
blosc.set_nthreads(1)
(here / "arange-blosclz-blosc1.chunk").write_bytes(blosc.compress(
    data, typesize=4, clevel=5, shuffle=blosc.SHUFFLE, cname="blosclz"))

# A b2nd (NDArray) frame: a 2-D float32 grid in 2 x 3 chunks, with a vlmetalayer.
grid = 280 + 20 * np.sin(np.linspace(0, 6, 100))[:, None] * np.cos(np.linspace(0, 3, 120))
arr = blosc2.asarray(np.round(grid, 1).astype(np.float32), chunks=(50, 40), blocks=(25, 20),
                     cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, nthreads=1))
arr.schunk.vlmeta["units"] = "kelvin"
(here / "temperatures.b2nd").write_bytes(arr.to_cframe())
