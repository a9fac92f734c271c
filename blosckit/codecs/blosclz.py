"""BloscLZ, Blosc's own codec, implemented in blosckit's native library."""
from __future__ import annotations

from .. import native


class BloscLZ:
    code = 0
    name = "blosclz"
    compformat = 0

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst`` (its length is the output limit); the
        stream's length, or 0 when it does not fit or does not pay off.
        C-Blosc 1.x's encoder also looks at whether the block is split."""
        if flavor == "blosc1":
            n = native.blosclz_compress_into(src, dst, clevel, flavor=flavor, split=split)
        else:
            n = native.blosclz_compress_into(src, dst, clevel, flavor=flavor)
        return max(int(n), 0)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        cap = len(src) if maxout is None else maxout
        out = bytearray(max(cap, 0))
        n = self.compress_into(src, out, clevel, flavor=flavor, split=split)
        if n <= 0:
            return None
        return bytes(memoryview(out)[:n])

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder."""
        return 0, native._FLAVORS[flavor], {}

    def decompress_into(self, src, dst, dict=None) -> int:
        return native.blosclz_decompress_into(src, dst)


CODECS = (BloscLZ(),)
