"""Zstandard through python-zstandard (which ships zstd 1.5.7)."""
from __future__ import annotations

import struct
import threading

import zstandard as _zstd

from . import libs
from ._fit import FailureTexts, describe_count, fit_into

_local = threading.local()
_texts = FailureTexts()

# libzstd's API through python-zstandard's cffi module (libs.zstdffi/zstdlib,
# read at call time so that a test can force the Python path): the same calls
# C-Blosc makes (ZSTD_compressCCtx, ZSTD_compress_usingCDict, ZDICT training).

_cdicts: dict[bytes, object] = {}
_cdict_lock = threading.Lock()

# The level C-Blosc2 digests a dictionary at (ZSTD_createCDict).
DICT_LEVEL = 1
# Frame magic numbers: a zstd frame, and the 16 skippable-frame magics.
_MAGIC = 0xFD2FB528
_SKIPPABLE_MASK, _SKIPPABLE = 0xFFFFFFF0, 0x184D2A50


def _api():
    """(ffi, lib) of libzstd, or (None, None) when only the Python package is there."""
    return libs.zstdffi, libs.zstdlib


def zstd_level(clevel: int) -> int:
    """The zstd level C-Blosc asks for at Blosc level ``clevel``: 2 *
    clevel - 1, the library's maximum at 9.  (C-Blosc's wrapper then moves
    a zstd level of 8 to the maximum less 2, but it tests the level after
    mapping, which is odd or the maximum: that line never applies, so Blosc
    level 8 is zstd level 15.)"""
    if clevel >= 9:
        lib = _api()[1]
        return lib.ZSTD_maxCLevel() if lib is not None else _zstd.MAX_COMPRESSION_LEVEL
    return clevel * 2 - 1


def _context(kind: str):
    """This thread's zstd context, ``kind`` "CCtx" (compress) or "DCtx"."""
    ctx = getattr(_local, kind, None)
    if ctx is None:
        ffi, lib = _api()
        ctx = ffi.gc(getattr(lib, f"ZSTD_create{kind}")(), getattr(lib, f"ZSTD_free{kind}"))
        setattr(_local, kind, ctx)
    return ctx


def _cctx():
    return _context("CCtx")


def _cdict(d: bytes):
    """A digested dictionary at zstd level 1, as C-Blosc2 builds it (cached)."""
    ffi, lib = _api()
    with _cdict_lock:
        cd = _cdicts.get(d)
        if cd is None:
            if len(_cdicts) > 8:
                _cdicts.clear()
            cd = ffi.gc(lib.ZSTD_createCDict(ffi.from_buffer(d), len(d), DICT_LEVEL),
                        lib.ZSTD_freeCDict)
            _cdicts[d] = cd
        return cd


def train_dict(samples, sizes, maxsize: int) -> bytes | None:
    """Train a zstd dictionary of at most ``maxsize`` bytes on the samples laid
    end to end in ``samples`` (``sizes`` gives each one's length), with the
    library's default trainer; None when training fails."""
    ffi, lib = _api()
    if lib is None or maxsize <= 0:
        return None
    buf = ffi.new("char[]", maxsize)
    arr = ffi.new("size_t[]", list(sizes))
    n = lib.ZDICT_trainFromBuffer(buf, maxsize, ffi.from_buffer(samples), arr, len(sizes))
    if lib.ZDICT_isError(n):
        return None
    return bytes(ffi.buffer(buf, n))


def _dctx():
    return _context("DCtx")


def library_version() -> str:
    """libzstd's release ("1.5.7"), from the library or python-zstandard."""
    ffi, lib = _api()
    v = libs.version_string(lib, "ZSTD_versionString", ffi)
    return v if v is not None else ".".join(map(str, _zstd.ZSTD_VERSION))


class Zstd:
    code = 5
    name = "zstd"
    compformat = 4

    def compress_into(self, src, dst, clevel, *, dict=None, flavor="blosc2",
                      split=True) -> int:
        """Encode ``src`` into ``dst`` (its length is the output limit); the
        frame's length, or 0 when it does not fit.  With a dictionary the
        stream is written with a level-1 digested dictionary, as C-Blosc2 does."""
        ffi, lib = _api()
        if lib is None:
            return fit_into(self.compress(src, clevel, dict=dict, maxout=len(dst)), dst, 0)
        s = ffi.from_buffer(src)
        d = ffi.from_buffer(dst, require_writable=True)
        if dict:
            n = lib.ZSTD_compress_usingCDict(_cctx(), d, len(dst), s, len(src), _cdict(dict))
        else:
            n = lib.ZSTD_compressCCtx(_cctx(), d, len(dst), s, len(src), zstd_level(clevel))
        return 0 if lib.ZSTD_isError(n) else int(n)

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder, or None."""
        ffi, lib = _api()
        if lib is None:
            return None

        def addr(name):
            return libs.address(lib, name, ffi)
        return 4, zstd_level(clevel), {
            "fn": addr("ZSTD_compressCCtx"), "fn_error": addr("ZSTD_isError"),
            "fn_new": addr("ZSTD_createCCtx"), "fn_free": addr("ZSTD_freeCCtx")}

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        if _api()[1] is not None:
            out = bytearray(max(len(src) + len(src) // 128 + 1024, 0)
                            if maxout is None else maxout)
            n = self.compress_into(src, out, clevel, dict=dict)
            return bytes(out[:n]) if n else None
        return _python_compress(src, clevel, dict, maxout)

    def decompress_into(self, src, dst, dict=None) -> int:
        """Decode one block stream (every frame in it) into ``dst``: the bytes
        produced, or a negative code for ``describe_failure``."""
        ffi, lib = _api()
        if lib is None:
            return _python_decompress_into(src, dst, dict)
        s = ffi.from_buffer(src)
        d = ffi.from_buffer(dst, require_writable=True)
        if dict:
            n = lib.ZSTD_decompress_usingDict(_dctx(), d, len(dst), s, len(src),
                                              ffi.from_buffer(dict), len(dict))
        else:
            n = lib.ZSTD_decompressDCtx(_dctx(), d, len(dst), s, len(src))
        if lib.ZSTD_isError(n):
            return -int(lib.ZSTD_getErrorCode(n))      # the error enum, negated
        return int(n)

    def describe_failure(self, code: int, expected: int) -> str:
        """Why ``decompress_into`` returned ``code`` for a block of ``expected`` bytes."""
        return describe_failure(code, expected)

    def paths(self) -> dict:
        """Which path encodes and decodes this codec now, and what backs it."""
        native = _api()[1] is not None
        version = library_version()
        return {
            "encode": libs.path_info(native, "ZSTD_compressCCtx" if native
                                    else "zstandard.ZstdCompressor", "libzstd", version),
            "decode": libs.path_info(native, "ZSTD_decompressDCtx" if native
                                    else "zstandard.ZstdDecompressor", "libzstd", version),
            "packages": {"zstandard": libs.package_version("zstandard")},
            "byte_identical": native,
            "caveat": None if native else (
                "python-zstandard's compressor: the same zstd level, but frames are not "
                "checked against C-Blosc2's bytes"),
        }


def _python_compress(src, clevel: int, dict: bytes | None, maxout: int | None) -> bytes | None:
    """python-zstandard's compressor with C-Blosc2's level mapping and frame
    options (content size and dictionary id written, no checksum)."""
    if dict:
        # C-Blosc2 compresses with a dictionary digested at level 1
        zd = _zstd.ZstdCompressionDict(dict)
        c = _zstd.ZstdCompressor(level=DICT_LEVEL, dict_data=zd, write_content_size=True,
                                 write_checksum=False, write_dict_id=True)
    else:
        c = _zstd.ZstdCompressor(level=zstd_level(clevel), write_content_size=True,
                                 write_checksum=False, write_dict_id=True)
    out = c.compress(bytes(src))
    if maxout is not None and len(out) > maxout:
        return None
    return out


def _python_decompress_into(src, dst, dict: bytes | None) -> int:
    """Decode like ZSTD_decompressDCtx: every frame of ``src`` in turn
    (skippable frames skipped), failing on a cut frame, on bytes that are not
    a frame and on output beyond ``dst``."""
    data = bytes(src)
    zd = _zstd.ZstdCompressionDict(dict) if dict else None
    out = bytearray()
    while data:
        if len(data) >= 8 and struct.unpack_from("<I", data)[0] & _SKIPPABLE_MASK == _SKIPPABLE:
            size = struct.unpack_from("<I", data, 4)[0]
            if 8 + size > len(data):
                return _texts.code("Src size is incorrect")
            data = data[8 + size:]
            continue
        if len(data) < 4 or struct.unpack_from("<I", data)[0] != _MAGIC:
            return _texts.code("Unknown frame descriptor") if len(data) >= 4 \
                else _texts.code("Src size is incorrect")
        got = _one_frame(data, zd, len(dst) - len(out))
        if isinstance(got, int):
            return got
        frame, data = got
        out += frame
    dst[:len(out)] = out
    return len(out)


def _one_frame(data: bytes, zd, room: int) -> tuple[bytes, bytes] | int:
    """Decode the frame at the start of ``data``: (its bytes, the input after
    it), or a failure code.  The input is fed in small slices so that a
    frame claiming far more than ``room`` bytes is stopped early (bounded
    memory on hostile input)."""
    d = _zstd.ZstdDecompressor(dict_data=zd).decompressobj()
    out = bytearray()
    pos = 0
    try:
        while not d.eof and pos < len(data):
            out += d.decompress(data[pos:pos + _FEED])
            pos += _FEED
            if len(out) > room:
                return _texts.code("Destination buffer is too small")
    except _zstd.ZstdError as exc:
        return _texts.code(str(exc).split(": ", 1)[-1])
    if not d.eof:
        return _texts.code("Src size is incorrect")
    return bytes(out), d.unused_data + data[pos:]


_FEED = 512     # input bytes per decompress call (<= ~16 MiB of output each)


def _error_text(code: int) -> str | None:
    """libzstd's text for error enum ``-code``, when the library is loaded."""
    ffi, lib = _api()
    if lib is None:
        return None
    try:
        return ffi.string(lib.ZSTD_getErrorString(-code)).decode("ascii", "replace")
    except Exception:       # not exported by this build
        return None


def describe_failure(code: int, expected: int) -> str:
    """The sentence for a failure code of ``Zstd.decompress_into``."""
    if code >= 0:
        return describe_count("zstd", code, expected)
    text = _texts.text(code)
    if text is None:
        text = _error_text(code) or f"zstd error {-code}"
    return f"the zstd stream does not decode: {text}"


CODECS = (Zstd(),)
