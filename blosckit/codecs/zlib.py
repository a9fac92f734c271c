"""zlib streams: zlib-ng (as C-Blosc2 bundles) writes C-Blosc2's bytes, CPython's
zlib writes C-Blosc 1.x's; both decode either."""
from __future__ import annotations

import zlib as _zlib

from . import libs
from ._fit import FailureTexts, describe_count, fit_into

try:
    from zlib_ng import zlib_ng as _zng
except ImportError:  # pragma: no cover - declared dependency
    _zng = None  # type: ignore[assignment]

# zlib-ng's own deflate/inflate (declared in libs; libs.zngzlib is read at call
# time so that a test can force the Python path), called as C-Blosc2's
# one-shot compress2/uncompress call them: one deflate(Z_FINISH) into an
# output buffer of the stream's limit.  (The Python binding hands deflate its
# output in growing pieces, and zlib-ng's output then differs now and then.)
_cffi = libs.ffi
_Z_FINISH = 4
_Z_STREAM_END = 1

_texts = FailureTexts()
# The two failures that are not a zlib message: the same sentences on both paths.
TRUNCATED = "the stream ends before its end marker (truncated)"
OVERFLOW = "the stream decodes to more bytes than the block holds"


def _lib():
    return libs.zngzlib


def _zng_compress_into(src, dst, level: int) -> int:
    lib = _lib()
    st = _cffi.new("zng_stream*")
    if lib.zng_deflateInit(st, level) != 0:
        return 0
    try:
        st.next_in = _cffi.from_buffer(src)
        st.avail_in = len(src)
        st.next_out = _cffi.from_buffer(dst, require_writable=True)
        st.avail_out = len(dst)
        rc = lib.zng_deflate(st, _Z_FINISH)
        return int(st.total_out) if rc == _Z_STREAM_END else 0
    finally:
        lib.zng_deflateEnd(st)


def _zng_decompress_into(src, dst) -> int:
    """One inflate(Z_FINISH), as the native chunk decoder runs it: the bytes
    produced when the stream ended, else a failure code (bytes after the end
    marker are ignored, as zlib's uncompress ignores them in C-Blosc2)."""
    lib = _lib()
    st = _cffi.new("zng_stream*")
    if lib.zng_inflateInit(st) != 0:
        return _texts.code("inflateInit failed")
    try:
        st.next_in = _cffi.from_buffer(src)
        st.avail_in = len(src)
        st.next_out = _cffi.from_buffer(dst, require_writable=True)
        st.avail_out = len(dst)
        rc = lib.zng_inflate(st, _Z_FINISH)
        if rc == _Z_STREAM_END:
            return int(st.total_out)
        if st.msg != _cffi.NULL:
            return _texts.code(_cffi.string(st.msg).decode("ascii", "replace"))
        # output full with input left: more data than the block; else cut short
        return _texts.code(OVERFLOW if st.avail_out == 0 and st.avail_in > 0 else TRUNCATED)
    finally:
        lib.zng_inflateEnd(st)


def _python_decompress_into(src, dst) -> int:
    """The Python binding's decompressobj, held to the same verdict as the C
    path: the stream must reach its end marker within ``len(dst)`` bytes."""
    lib = _zng if _zng is not None else _zlib
    try:
        d = lib.decompressobj()
        out = d.decompress(src, len(dst) + 1)
    except lib.error as exc:
        # "Error -3 while decompressing data: <zlib's msg>": keep the msg
        return _texts.code(str(exc).split(": ", 1)[-1])
    if len(out) > len(dst):
        return _texts.code(OVERFLOW)
    if not d.eof:
        return _texts.code(TRUNCATED)
    dst[:len(out)] = out
    return len(out)


def library_version() -> str | None:
    """zlib-ng's release, from the loaded library or the zlib-ng package."""
    v = libs.version_string(_lib(), "zlibng_version")
    if v is None and _zng is not None:
        v = getattr(_zng, "ZLIBNG_RUNTIME_VERSION", None)
    return v


class Zlib:
    code = 4
    name = "zlib"
    compformat = 3

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder: zlib-ng's
        deflate for Blosc2 chunks; None for Blosc1 (CPython's zlib)."""
        lib = _lib()
        if flavor != "blosc2" or lib is None:
            return None
        return 3, clevel, {"fn": libs.address(lib, "zng_deflate"),
                           "fn_begin": libs.address(lib, "zng_deflateInit"),
                           "fn_end": libs.address(lib, "zng_deflateEnd")}

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst``; the stream's length, or 0 when it does
        not fit (C-Blosc's one-shot ``compress2`` fails the same way)."""
        if flavor == "blosc2" and _lib() is not None:
            return _zng_compress_into(src, dst, clevel)
        return fit_into(self.compress(src, clevel, flavor=flavor), dst, 0)

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        # the Blosc level is the zlib level, as in both C libraries
        lib = _zng if (flavor == "blosc2" and _zng is not None) else _zlib
        out = lib.compress(src, clevel)
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        """Decode one block stream into ``dst``: the bytes produced (the stream
        reached its end marker), or a negative code for ``describe_failure``."""
        if _lib() is not None:
            return _zng_decompress_into(src, dst)
        return _python_decompress_into(src, dst)

    def describe_failure(self, code: int, expected: int) -> str:
        """Why ``decompress_into`` returned ``code`` for a block of ``expected`` bytes."""
        return describe_failure(code, expected)

    def paths(self) -> dict:
        """Which path encodes and decodes this codec now, and what backs it.
        (Blosc1 chunks are always written with CPython's zlib, as C-Blosc 1.x.)"""
        native = _lib() is not None
        version = library_version()
        pylib = "zlib-ng" if _zng is not None else "zlib"
        pyver = version if _zng is not None else _zlib.ZLIB_RUNTIME_VERSION
        enc = libs.path_info(True, "zng_deflate", "zlib-ng", version) if native else \
            libs.path_info(False, f"{'zlib_ng' if _zng else 'zlib'}.compress", pylib, pyver)
        dec = libs.path_info(True, "zng_inflate", "zlib-ng", version) if native else \
            libs.path_info(False, f"{'zlib_ng' if _zng else 'zlib'}.decompressobj", pylib, pyver)
        return {
            "encode": enc, "decode": dec,
            "packages": {"zlib-ng": libs.package_version("zlib-ng")},
            "byte_identical": native,
            "caveat": None if native else (
                "the Python binding hands deflate its output in pieces: same level, but "
                "zlib-ng's bytes then differ from C-Blosc2's now and then"),
        }


def describe_failure(code: int, expected: int) -> str:
    """The sentence for a failure code of ``Zlib.decompress_into``."""
    if code >= 0:
        return describe_count("zlib", code, expected)
    return f"the zlib stream does not decode: {_texts.text(code) or f'error {code}'}"


CODECS = (Zlib(),)
