"""zlib streams: zlib-ng (as C-Blosc2 bundles) writes C-Blosc2's bytes, CPython's
zlib writes C-Blosc 1.x's; both decode either."""
from __future__ import annotations

import zlib as _zlib

try:
    from zlib_ng import zlib_ng as _zng
except ImportError:  # pragma: no cover - declared dependency
    _zng = None


class Zlib:
    code = 4
    name = "zlib"
    compformat = 3

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2"):
        lib = _zng if (flavor == "blosc2" and _zng is not None) else _zlib
        out = lib.compress(bytes(src), clevel)
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        lib = _zng if _zng is not None else _zlib
        try:
            d = lib.decompressobj()
            out = d.decompress(src, len(dst) + 1)
        except lib.error:
            return -1
        if len(out) > len(dst):
            return -1
        dst[:len(out)] = out
        return len(out)


CODECS = (Zlib(),)
