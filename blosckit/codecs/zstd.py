"""Zstandard through python-zstandard (which ships zstd 1.5.7)."""
from __future__ import annotations

import threading

import zstandard as _zstd

from . import _dl
from ._fit import fit_into

_local = threading.local()

# libzstd's API through python-zstandard's cffi module (see _dl): the same calls
# C-Blosc makes (ZSTD_compressCCtx, ZSTD_compress_usingCDict, ZDICT training).
_zffi, _zlib = _dl.zstdffi, _dl.zstdlib

_cdicts: dict[bytes, object] = {}
_cdict_lock = threading.Lock()


def zstd_level(clevel: int) -> int:
    """The zstd level C-Blosc asks for at Blosc level ``clevel``."""
    top = _zlib.ZSTD_maxCLevel() if _zlib is not None else 22
    if clevel >= 9:
        return top
    if clevel == 8:
        return top - 2
    return clevel * 2 - 1


def _cctx():
    ctx = getattr(_local, "cctx", None)
    if ctx is None:
        ctx = _zffi.gc(_zlib.ZSTD_createCCtx(), _zlib.ZSTD_freeCCtx)
        _local.cctx = ctx
    return ctx


def _cdict(d: bytes):
    """A digested dictionary at zstd level 1, as C-Blosc2 builds it (cached)."""
    with _cdict_lock:
        cd = _cdicts.get(d)
        if cd is None:
            if len(_cdicts) > 8:
                _cdicts.clear()
            cd = _zffi.gc(_zlib.ZSTD_createCDict(_zffi.from_buffer(d), len(d), 1),
                          _zlib.ZSTD_freeCDict)
            _cdicts[d] = cd
        return cd


def train_dict(samples, sizes, maxsize: int) -> bytes | None:
    """Train a zstd dictionary of at most ``maxsize`` bytes on the samples laid
    end to end in ``samples`` (``sizes`` gives each one's length), with the
    library's default trainer; None when training fails."""
    if _zlib is None or maxsize <= 0:
        return None
    buf = _zffi.new("char[]", maxsize)
    arr = _zffi.new("size_t[]", list(sizes))
    n = _zlib.ZDICT_trainFromBuffer(buf, maxsize, _zffi.from_buffer(samples), arr, len(sizes))
    if _zlib.ZDICT_isError(n):
        return None
    return bytes(_zffi.buffer(buf, n))


def _dctx():
    ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _zffi.gc(_zlib.ZSTD_createDCtx(), _zlib.ZSTD_freeDCtx)
        _local.dctx = ctx
    return ctx


class Zstd:
    code = 5
    name = "zstd"
    compformat = 4

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst`` (its length is the output limit); the
        frame's length, or 0 when it does not fit.  With a dictionary the
        stream is written with a level-1 digested dictionary, as C-Blosc2 does."""
        if _zlib is None:
            return fit_into(self.compress(src, clevel, dict=dict, maxout=len(dst)), dst, 0)
        s = _zffi.from_buffer(src)
        d = _zffi.from_buffer(dst, require_writable=True)
        if dict:
            n = _zlib.ZSTD_compress_usingCDict(_cctx(), d, len(dst), s, len(src), _cdict(dict))
        else:
            n = _zlib.ZSTD_compressCCtx(_cctx(), d, len(dst), s, len(src), zstd_level(clevel))
        return 0 if _zlib.ZSTD_isError(n) else int(n)

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder, or None."""
        if _zlib is None:
            return None

        def addr(name):
            return _dl.address(_zlib, name, _zffi)
        return 4, zstd_level(clevel), {
            "fn": addr("ZSTD_compressCCtx"), "fn_error": addr("ZSTD_isError"),
            "fn_new": addr("ZSTD_createCCtx"), "fn_free": addr("ZSTD_freeCCtx")}

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        if _zlib is not None:
            out = bytearray(max(len(src) + len(src) // 128 + 1024, 0)
                            if maxout is None else maxout)
            n = self.compress_into(src, out, clevel, dict=dict)
            return bytes(out[:n]) if n else None
        zd = _zstd.ZstdCompressionDict(dict) if dict else None
        c = _zstd.ZstdCompressor(level=clevel, dict_data=zd, write_content_size=True,
                                 write_checksum=False, write_dict_id=True)
        out = c.compress(bytes(src))
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        lib = _zlib
        if lib is not None:
            ffi = _zffi
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
        return fit_into(out, dst, -1)


CODECS = (Zstd(),)
