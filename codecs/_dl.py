"""Direct calls into the C libraries that the codec packages already ship.

python-lz4 and python-zstandard export the liblz4 / libzstd symbols from their
extension modules.  Calling them through cffi (ABI mode, GIL released) lets a
stream decode straight into its place in the output instead of into a fresh
bytes object that then has to be copied.  Every user falls back to the
package's Python API when a symbol is missing.
"""
from __future__ import annotations

import contextlib

import cffi

ffi = cffi.FFI()
ffi.cdef("""
int LZ4_decompress_safe(const char* src, char* dst, int compressedSize, int dstCapacity);
int LZ4_decompress_safe_usingDict(const char* src, char* dst, int srcSize, int dstCapacity,
                                  const char* dictStart, int dictSize);
typedef struct ZSTD_DCtx_s ZSTD_DCtx;
ZSTD_DCtx* ZSTD_createDCtx(void);
size_t ZSTD_freeDCtx(ZSTD_DCtx* dctx);
size_t ZSTD_decompressDCtx(ZSTD_DCtx* dctx, void* dst, size_t dstCapacity,
                           const void* src, size_t srcSize);
size_t ZSTD_decompress_usingDict(ZSTD_DCtx* dctx, void* dst, size_t dstCapacity,
                                 const void* src, size_t srcSize,
                                 const void* dict, size_t dictSize);
unsigned ZSTD_isError(size_t code);
""")

lz4lib = None
with contextlib.suppress(Exception):
    import lz4.block._block as _lz4mod
    _lib = ffi.dlopen(_lz4mod.__file__)
    _lib.LZ4_decompress_safe  # noqa: B018 -- probe the symbol
    _lib.LZ4_decompress_safe_usingDict  # noqa: B018
    lz4lib = _lib

zstdlib = None
with contextlib.suppress(Exception):
    import zstandard.backend_c as _zmod
    _lib = ffi.dlopen(_zmod.__file__)
    _lib.ZSTD_decompressDCtx  # noqa: B018
    _lib.ZSTD_decompress_usingDict  # noqa: B018
    zstdlib = _lib
