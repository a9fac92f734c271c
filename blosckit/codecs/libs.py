"""Direct calls into the C libraries that the codec packages already ship.

python-lz4's extension module exports liblz4, the zlib-ng package's exports
zlib-ng's native API, and python-zstandard's cffi backend declares libzstd.
Calling them through cffi (GIL released) lets a stream be encoded or decoded
straight into its place in the output instead of through a fresh bytes
object, and gives the native block loops in ``blosckit.native`` their codec
entry points (``NATIVE_DECODERS`` here; ``native_encoder`` on each codec).
Every user falls back to the package's Python API when a symbol is missing;
``blosckit.native_info()`` reports which path each codec runs.
Tests force a fallback by setting a handle here (``lz4lib``, ``zstdlib``,
``zngzlib``) to None: the codec modules read these names at call time.
"""
from __future__ import annotations

import contextlib
from typing import Any

import cffi

from ..formats import enums

ffi = cffi.FFI()
ffi.cdef("""
const char* LZ4_versionString(void);
const char* zlibng_version(void);
int LZ4_decompress_safe(const char* src, char* dst, int compressedSize, int dstCapacity);
int LZ4_decompress_safe_usingDict(const char* src, char* dst, int srcSize, int dstCapacity,
                                  const char* dictStart, int dictSize);
int LZ4_compress_fast(const char* src, char* dst, int srcSize, int dstCapacity, int accel);
int LZ4_compress_HC(const char* src, char* dst, int srcSize, int dstCapacity, int level);
void* LZ4_createStream(void);
int LZ4_freeStream(void* stream);
int LZ4_loadDict(void* stream, const char* dict, int dictSize);
int LZ4_compress_fast_continue(void* stream, const char* src, char* dst, int srcSize,
                               int dstCapacity, int accel);
void* LZ4_createStreamHC(void);
int LZ4_freeStreamHC(void* stream);
void LZ4_resetStreamHC_fast(void* stream, int level);
int LZ4_loadDictHC(void* stream, const char* dict, int dictSize);
int LZ4_compress_HC_continue(void* stream, const char* src, char* dst, int srcSize,
                             int dstCapacity);
typedef struct {
    const uint8_t *next_in; uint32_t avail_in; size_t total_in;
    uint8_t *next_out; uint32_t avail_out; size_t total_out;
    const char *msg; void *state; void *zalloc; void *zfree; void *opaque;
    int data_type; uint32_t adler; unsigned long reserved;
} zng_stream;
int32_t zng_inflateInit(zng_stream *strm);
int32_t zng_inflate(zng_stream *strm, int32_t flush);
int32_t zng_inflateEnd(zng_stream *strm);
int32_t zng_deflateInit(zng_stream *strm, int32_t level);
int32_t zng_deflate(zng_stream *strm, int32_t flush);
int32_t zng_deflateEnd(zng_stream *strm);
""")

lz4lib: Any = None
with contextlib.suppress(Exception):
    import lz4.block._block as _lz4mod
    _lib = ffi.dlopen(_lz4mod.__file__)
    _lib.LZ4_decompress_safe  # noqa: B018 -- probe the symbols
    _lib.LZ4_compress_HC_continue  # noqa: B018
    lz4lib = _lib

# python-zstandard's cffi backend already declares libzstd's API: use its
# ffi and lib for zstd (its C backend keeps the symbols to itself).
zstdffi: Any = None
zstdlib: Any = None
with contextlib.suppress(ImportError):
    import zstandard._cffi as _zcffi    # the cffi backend module itself
    zstdffi, zstdlib = _zcffi.ffi, _zcffi.lib

zngzlib: Any = None
with contextlib.suppress(Exception):
    from zlib_ng import zlib_ng as _zngmod
    _lib = ffi.dlopen(_zngmod.__file__)
    _lib.zng_inflateEnd  # noqa: B018
    _lib.zng_deflateEnd  # noqa: B018
    zngzlib = _lib


def version_string(lib, name: str, owner=None) -> str | None:
    """The text returned by the library's version function ``name``, or None
    when the library is not loaded or does not export it."""
    owner = ffi if owner is None else owner
    if lib is None:
        return None
    try:
        return owner.string(getattr(lib, name)()).decode("ascii", "replace")
    except Exception:     # symbol not exported by this build of the library
        return None


def address(lib, name: str, owner=None) -> int:
    """Address of C function ``name`` in ``lib`` (opened by ``owner``, an FFI;
    this module's own by default)."""
    owner = ffi if owner is None else owner
    return int(owner.cast("uintptr_t", owner.addressof(lib, name)))


def _entries() -> dict:
    """Codec id -> (native codec kind, C entry points) for whole-chunk decoding."""
    def entry(name: str, fns: dict[str, int]) -> None:
        # the native decoder's codec kind is the codec's stored format
        code = enums.lookup(enums.CODECS, name)
        out[code] = (enums.CODEC_FORMAT[code], fns)

    out: dict[int, tuple[int, dict[str, int]]] = {}
    entry("blosclz", {})                      # BloscLZ lives in our own library
    if lz4lib is not None:
        fns = {"fn": address(lz4lib, "LZ4_decompress_safe"),
               "fn_dict": address(lz4lib, "LZ4_decompress_safe_usingDict")}
        entry("lz4", fns)
        entry("lz4hc", fns)
    if zstdlib is not None:
        def z(name):
            return address(zstdlib, name, zstdffi)
        entry("zstd", {"fn": z("ZSTD_decompressDCtx"), "fn_dict": z("ZSTD_decompress_usingDict"),
                       "fn_error": z("ZSTD_isError"), "fn_new": z("ZSTD_createDCtx"),
                       "fn_free": z("ZSTD_freeDCtx")})
    if zngzlib is not None:
        entry("zlib", {"fn": address(zngzlib, "zng_inflate"),
                       "fn_begin": address(zngzlib, "zng_inflateInit"),
                       "fn_end": address(zngzlib, "zng_inflateEnd")})
    return out


NATIVE_DECODERS = {}
with contextlib.suppress(Exception):
    NATIVE_DECODERS = _entries()


def package_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (importlib.metadata)."""
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def path_info(native: bool, via: str, library: str | None, version: str | None) -> dict:
    """One entry of a codec's ``paths()``: which kind of path runs, through
    which call, and the library (and its version, None if unknown) behind it."""
    return {"path": "native" if native else "python", "via": via,
            "library": library, "version": version}
