"""Zstandard through python-zstandard (which ships zstd 1.5.7)."""
from __future__ import annotations

import threading

import zstandard as _zstd

from . import _dl

_local = threading.local()


def _dctx():
    ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _dl.ffi.gc(_dl.zstdlib.ZSTD_createDCtx(), _dl.zstdlib.ZSTD_freeDCtx)
        _local.dctx = ctx
    return ctx


class Zstd:
    code = 5
    name = "zstd"
    compformat = 4

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2"):
        zd = _zstd.ZstdCompressionDict(dict) if dict else None
        c = _zstd.ZstdCompressor(level=clevel, dict_data=zd, write_content_size=True,
                                 write_checksum=False, write_dict_id=True)
        out = c.compress(bytes(src))
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        lib = _dl.zstdlib
        if lib is not None:
            ffi = _dl.ffi
            s = ffi.from_buffer(src)
            d = ffi.from_buffer(dst, require_writable=True)
            if dict:
                n = lib.ZSTD_decompress_usingDict(_dctx(), d, len(dst), s, len(src),
                                                  ffi.from_buffer(dict), len(dict))
            else:
                n = lib.ZSTD_decompressDCtx(_dctx(), d, len(dst), s, len(src))
            return -1 if lib.ZSTD_isError(n) else int(n)
        try:
            zd = _zstd.ZstdCompressionDict(dict) if dict else None
            out = _zstd.ZstdDecompressor(dict_data=zd).decompress(
                bytes(src), max_output_size=len(dst))
        except _zstd.ZstdError:
            return -1
        if len(out) > len(dst):
            return -1
        dst[:len(out)] = out
        return len(out)


CODECS = (Zstd(),)
