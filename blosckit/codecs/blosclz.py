"""BloscLZ, Blosc's own codec, implemented in blosckit's native library."""
from __future__ import annotations

from .. import native
from . import libs
from ._fit import describe_count

# The C-Blosc2 / C-Blosc releases whose BloscLZ bytes the native encoder reproduces.
BLOSCLZ_RULES = {"blosc2": "2.5.3 (C-Blosc2 3.3.x)", "blosc1": "2.5.1 (C-Blosc 1.21.x)"}


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
        return 0, native.FLAVORS[flavor], {}

    def decompress_into(self, src, dst, dict=None) -> int:
        """Decode one block stream into ``dst``: the bytes produced; 0 for a
        malformed stream (a match reaching outside the output or input)."""
        return native.blosclz_decompress_into(src, dst)

    def describe_failure(self, code: int, expected: int) -> str:
        """Why ``decompress_into`` returned ``code`` for a block of ``expected`` bytes."""
        if code == 0:
            return ("the blosclz stream is malformed (a match or literal run reaches "
                    f"outside the stream or the {expected}-byte block)")
        return describe_count("blosclz", code, expected)

    def paths(self) -> dict:
        """BloscLZ has only the native path (blosckit's own C library)."""
        ver = BLOSCLZ_RULES["blosc2"]
        return {
            "encode": libs.path_info(True, "bk_blosclz_compress", "blosckit.native", ver),
            "decode": libs.path_info(True, "bk_blosclz_decompress", "blosckit.native", ver),
            "packages": {},
            "byte_identical": True,
            "caveat": None,
        }


CODECS = (BloscLZ(),)
