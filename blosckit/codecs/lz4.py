"""LZ4 and LZ4HC (one stored format) through python-lz4."""
from __future__ import annotations

import re
import threading

import lz4 as _lz4pkg
import lz4.block as _block

from . import libs
from ._fit import FailureTexts, describe_count, fit_into

# The liblz4 that python-lz4 ships is reached through cffi (libs.lz4lib, read
# at call time so that a test can force the Python path): the same functions
# C-Blosc calls, with the same output limit, GIL released.
_cffi = libs.ffi

# The LZ4 release bundled by C-Blosc2 3.3.5: stream bytes match only when the
# library here is the same release (the header matches either way).
C_BLOSC2_LZ4 = "1.10.0"

_local = threading.local()
_texts = FailureTexts()
_ERRCODE = re.compile(r"Error code: (\d+)")


def _lib():
    return libs.lz4lib


def _addr(name: str) -> int:
    return libs.address(_lib(), name)


def _stream(hc: bool):
    """This thread's LZ4 stream state (for dictionary compression)."""
    name = "hc" if hc else "fast"
    st = getattr(_local, name, None)
    if st is None:
        enc = _lib()
        if hc:
            st = _cffi.gc(enc.LZ4_createStreamHC(), enc.LZ4_freeStreamHC)
        else:
            st = _cffi.gc(enc.LZ4_createStream(), enc.LZ4_freeStream)
        setattr(_local, name, st)
    return st


def library_version() -> str | None:
    """liblz4's release ("1.9.4"): from the loaded library, else python-lz4's report."""
    v = libs.version_string(_lib(), "LZ4_versionString")
    if v is None:
        v = getattr(_lz4pkg, "library_version_string", lambda: None)()
    return v


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
        enc = _lib()
        if enc is None:
            return fit_into(self.compress(src, clevel, dict=dict, maxout=len(dst)), dst, 0)
        s = _cffi.from_buffer(src)
        d = _cffi.from_buffer(dst, require_writable=True)
        if dict:
            dd = _cffi.from_buffer(dict)
            st = _stream(self.hc)
            if self.hc:
                enc.LZ4_resetStreamHC_fast(st, clevel)
                enc.LZ4_loadDictHC(st, dd, len(dict))
                return max(enc.LZ4_compress_HC_continue(st, s, d, len(src), len(dst)), 0)
            enc.LZ4_loadDict(st, dd, len(dict))
            return max(enc.LZ4_compress_fast_continue(st, s, d, len(src), len(dst),
                                                      10 - clevel), 0)
        if self.hc:
            return max(enc.LZ4_compress_HC(s, d, len(src), len(dst), clevel), 0)
        return max(enc.LZ4_compress_fast(s, d, len(src), len(dst), 10 - clevel), 0)

    def native_encoder(self, clevel: int, flavor: str):
        """``(kind, param, fns)`` for the native block encoder, or None."""
        if _lib() is None:
            return None
        if self.hc:
            return 2, clevel, {"fn": _addr("LZ4_compress_HC")}
        return 1, 10 - clevel, {"fn": _addr("LZ4_compress_fast")}

    def compress(self, src, clevel, *, dict=None, maxout=None, flavor="blosc2", split=True):
        if _lib() is not None:
            out = bytearray(len(src) + len(src) // 255 + 16 if maxout is None else maxout)
            n = self.compress_into(src, out, clevel, dict=dict)
            return bytes(out[:n]) if n else None
        src = bytes(src)
        # the level mapping of C-Blosc2: HC takes the level, fast mode
        # acceleration 10 - clevel
        if self.hc:
            out = _block.compress(src, mode="high_compression", compression=clevel,
                                  store_size=False, dict=dict)
        else:
            out = _block.compress(src, mode="fast", acceleration=10 - clevel,
                                  store_size=False, dict=dict)
        if maxout is not None and len(out) > maxout:
            return None
        return out

    def decompress_into(self, src, dst, dict=None) -> int:
        """Decode one block stream into ``dst``: the bytes produced (the
        stream is whole), or a negative code for ``describe_failure``."""
        lib = _lib()
        if lib is not None:
            s = _cffi.from_buffer(src)
            d = _cffi.from_buffer(dst, require_writable=True)
            if dict:
                return lib.LZ4_decompress_safe_usingDict(s, d, len(src), len(dst),
                                                         _cffi.from_buffer(dict), len(dict))
            return lib.LZ4_decompress_safe(s, d, len(src), len(dst))
        try:
            # python-lz4 calls LZ4_decompress_safe with this capacity and
            # returns what it produced (possibly fewer bytes)
            out = _block.decompress(bytes(src), uncompressed_size=len(dst),
                                    dict=dict or None)
        except _block.LZ4BlockError as exc:
            return _python_failure(str(exc))
        return fit_into(out, dst, -1)

    def describe_failure(self, code: int, expected: int) -> str:
        """Why ``decompress_into`` returned ``code`` for a block of ``expected`` bytes."""
        return describe_failure(code, expected)

    def paths(self) -> dict:
        """Which path encodes and decodes this codec now, and what backs it."""
        native = _lib() is not None
        version = library_version()
        call = "LZ4_compress_HC" if self.hc else "LZ4_compress_fast"
        pyname = "lz4.block.compress"
        return {
            "encode": libs.path_info(native, call if native else pyname, "liblz4", version),
            "decode": libs.path_info(native, "LZ4_decompress_safe" if native
                                    else "lz4.block.decompress", "liblz4", version),
            "packages": {"lz4": libs.package_version("lz4")},
            # same calls and levels; the bytes also need C-Blosc2's LZ4 release
            "byte_identical": native and version == C_BLOSC2_LZ4,
            "caveat": None if version == C_BLOSC2_LZ4 else (
                f"liblz4 {version} here, {C_BLOSC2_LZ4} in C-Blosc2 3.3.5: the header "
                "matches but the stream bytes (and so cbytes, sometimes the raw flag) "
                "may differ"),
        }


def _python_failure(message: str) -> int:
    """python-lz4 reports liblz4's code as "Error code: N" (N = minus the
    code): return the same code as the native path, else an interned text."""
    m = _ERRCODE.search(message)
    if m:
        return -int(m.group(1))
    return _texts.code(message)


def describe_failure(code: int, expected: int) -> str:
    """The sentence for a failure code of ``LZ4.decompress_into``."""
    if code >= 0:
        return describe_count("lz4", code, expected)
    text = _texts.text(code)
    if text is not None:
        return f"the lz4 stream does not decode: {text}"
    # liblz4 returns minus (input position + 1) of the sequence it rejected
    return (f"the lz4 stream is malformed at its byte {-code - 1} (a match or literal "
            f"run that reaches outside the stream or the {expected}-byte block)")


class LZ4HC(LZ4):
    code = 2
    name = "lz4hc"
    hc = True


CODECS = (LZ4(), LZ4HC())
