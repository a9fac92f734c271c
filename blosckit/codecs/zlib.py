"""zlib streams: zlib-ng (as C-Blosc2 bundles) writes C-Blosc2's bytes, CPython's
zlib writes C-Blosc 1.x's; both decode either."""
from __future__ import annotations

import zlib as _zlib

from . import _dl
from ._fit import fit_into

try:
    from zlib_ng import zlib_ng as _zng
except ImportError:  # pragma: no cover - declared dependency
    _zng = None  # type: ignore[assignment]

# zlib-ng's own deflate (declared in _dl), called as C-Blosc2's one-shot
# compress2 calls it: one deflate(Z_FINISH) into an output buffer of the
# stream's limit.  (The Python binding hands deflate its output in growing
# pieces, and zlib-ng's output then differs now and then.)
_cffi = _dl.ffi
_zng_lib = _dl.zngzlib
_Z_FINISH = 4
_Z_STREAM_END = 1


def _zng_compress_into(src, dst, level: int) -> int:
    st = _cffi.new("zng_stream*")
    if _zng_lib.zng_deflateInit(st, level) != 0:
        return 0
    try:
        st.next_in = _cffi.from_buffer(src)
        st.avail_in = len(src)
        st.next_out = _cffi.from_buffer(dst, require_writable=True)
        st.avail_out = len(dst)
        rc = _zng_lib.zng_deflate(st, _Z_FINISH)
        return int(st.total_out) if rc == _Z_STREAM_END else 0
    finally:
        _zng_lib.zng_deflateEnd(st)


class Zlib:
    code = 4
    name = "zlib"
    compformat = 3

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder: zlib-ng's
        deflate for Blosc2 chunks; None for Blosc1 (CPython's zlib)."""
        if flavor != "blosc2" or _zng_lib is None:
            return None

        return 3, clevel, {"fn": _dl.address(_zng_lib, "zng_deflate"),
                           "fn_begin": _dl.address(_zng_lib, "zng_deflateInit"),
                           "fn_end": _dl.address(_zng_lib, "zng_deflateEnd")}

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst``; the stream's length, or 0 when it does
        not fit (C-Blosc's one-shot ``compress2`` fails the same way)."""
        if flavor == "blosc2" and _zng_lib is not None:
            return _zng_compress_into(src, dst, clevel)
        return fit_into(self.compress(src, clevel, flavor=flavor), dst, 0)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        lib = _zng if (flavor == "blosc2" and _zng is not None) else _zlib
        out = lib.compress(src, clevel)
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
        return fit_into(out, dst, -1)


CODECS = (Zlib(),)
