"""BloscLZ, Blosc's own codec, implemented in blosckit's native library."""
from __future__ import annotations

from .. import native


class BloscLZ:
    code = 0
    name = "blosclz"
    compformat = 0

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2"):
        cap = len(src) if maxout is None else maxout
        out = bytearray(max(cap, 0))
        n = native.blosclz_compress_into(src, out, clevel, flavor=flavor)
        if n <= 0:
            return None
        return bytes(memoryview(out)[:n])

    def decompress_into(self, src, dst, dict=None) -> int:
        return native.blosclz_decompress_into(src, dst)


CODECS = (BloscLZ(),)
