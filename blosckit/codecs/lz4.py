"""LZ4 and LZ4HC (one stored format) through python-lz4."""
from __future__ import annotations

import threading

import lz4.block as _block

from . import _dl
from ._fit import fit_into

# The encoder entry points of the liblz4 that python-lz4 ships (declared in
# _dl), called the way C-Blosc calls them: same functions, same output limit,
# GIL released.
_cffi = _dl.ffi
_enc = _dl.lz4lib

_local = threading.local()


def _addr(name: str) -> int:
    return _dl.address(_enc, name)


def _stream(hc: bool):
    """This thread's LZ4 stream state (for dictionary compression)."""
    name = "hc" if hc else "fast"
    st = getattr(_local, name, None)
    if st is None:
        if hc:
            st = _cffi.gc(_enc.LZ4_createStreamHC(), _enc.LZ4_freeStreamHC)
        else:
            st = _cffi.gc(_enc.LZ4_createStream(), _enc.LZ4_freeStream)
        setattr(_local, name, st)
    return st


class LZ4:
    code = 1
    name = "lz4"
    compformat = 1
    hc = False

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst`` (its length is the output limit); the
        stream's length, or 0 when it does not fit.  Fast mode uses
        acceleration 10 - clevel and HC the level itself, as C-Blosc does; a
        dictionary is loaded afresh for every stream."""
        if _enc is None:
            return fit_into(self.compress(src, clevel, dict=dict, maxout=len(dst)), dst, 0)
        s = _cffi.from_buffer(src)
        d = _cffi.from_buffer(dst, require_writable=True)
        if dict:
            dd = _cffi.from_buffer(dict)
            st = _stream(self.hc)
            if self.hc:
                _enc.LZ4_resetStreamHC_fast(st, clevel)
                _enc.LZ4_loadDictHC(st, dd, len(dict))
                return max(_enc.LZ4_compress_HC_continue(st, s, d, len(src), len(dst)), 0)
            _enc.LZ4_loadDict(st, dd, len(dict))
            return max(_enc.LZ4_compress_fast_continue(st, s, d, len(src), len(dst),
                                                       10 - clevel), 0)
        if self.hc:
            return max(_enc.LZ4_compress_HC(s, d, len(src), len(dst), clevel), 0)
        return max(_enc.LZ4_compress_fast(s, d, len(src), len(dst), 10 - clevel), 0)

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder, or None."""
        if _enc is None:
            return None
        if self.hc:
            return 2, clevel, {"fn": _addr("LZ4_compress_HC")}
        return 1, 10 - clevel, {"fn": _addr("LZ4_compress_fast")}

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
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
        return fit_into(out, dst, -1)


class LZ4HC(LZ4):
    code = 2
    name = "lz4hc"
    hc = True


CODECS = (LZ4(), LZ4HC())
