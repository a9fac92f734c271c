"""LZ4 and LZ4HC (one stored format) through python-lz4."""
from __future__ import annotations

import lz4.block as _block

from . import _dl


class LZ4:
    code = 1
    name = "lz4"
    compformat = 1
    hc = False

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2"):
        src = bytes(src)
        if self.hc:
            out = _block.compress(src, mode="high_compression", compression=clevel,
                                  store_size=False, dict=dict)
        else:
            # C-Blosc passes acceleration 10 - clevel to LZ4_compress_fast
            out = _block.compress(src, mode="fast", acceleration=10 - clevel,
                                  store_size=False, dict=dict)
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        lib = _dl.lz4lib
        if lib is not None:
            ffi = _dl.ffi
            s = ffi.from_buffer(src)
            d = ffi.from_buffer(dst, require_writable=True)
            if dict:
                return lib.LZ4_decompress_safe_usingDict(s, d, len(src), len(dst),
                                                         ffi.from_buffer(dict), len(dict))
            return lib.LZ4_decompress_safe(s, d, len(src), len(dst))
        try:
            out = _block.decompress(bytes(src), uncompressed_size=len(dst),
                                    dict=dict or None)
        except _block.LZ4BlockError:
            return -1
        dst[:len(out)] = out
        return len(out)


class LZ4HC(LZ4):
    code = 2
    name = "lz4hc"
    hc = True


CODECS = (LZ4(), LZ4HC())
