"""cffi build script for blosckit.native._native.

setuptools runs this as ``native/build_native.py:ffibuilder`` from the project
root; ``python native/build_native.py`` builds the module in place (the .so
lands in native/ so ``import blosckit.native._native`` works).
"""
import glob
import os

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC_DIR = os.path.join(HERE, "src")


def _rel(path):
    """Path relative to the project root (some setuptools/cffi versions reject absolute ones)."""
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


CDEF = """
int bk_simd_level(void);
int bk_simd_best(void);
int bk_set_simd_level(int level);

int bk_shuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize);
int bk_unshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize);
int bk_bitshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int legacy);
int bk_bitunshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int legacy);

int64_t bk_blosclz_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen);
int64_t bk_blosclz_compress(int clevel, const uint8_t *src, size_t len, uint8_t *dst,
                            size_t maxout, int flavor, int split);

void bk_delta_encode(const uint8_t *dref, const uint8_t *src, uint8_t *dst, size_t len,
                     size_t typesize, int first_block);
void bk_delta_decode(const uint8_t *dref, uint8_t *buf, size_t len, size_t typesize,
                     int first_block);
void bk_bytedelta_encode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy);
void bk_bytedelta_decode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy);
int bk_trunc_prec(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                  int prec_bits);

typedef struct {
  const uint8_t *src;
  int32_t cbytes;
  const int32_t *bstarts;
  int32_t nblocks, nbytes, blocksize, typesize;
  int version, split, token_follows, uses_delta;
  int nfilters;
  uint8_t filter_ids[6], filter_metas[6];
  int codec_kind;
  void *fn, *fn_dict, *fn_error, *fn_new, *fn_free;
  const uint8_t *dict;
  int32_t dictlen;
  uint8_t *dst;
} bk_chunk;
int32_t bk_decode_chunk(const bk_chunk *c, int nthreads);

typedef struct {
  const uint8_t *src;
  int32_t nbytes, blocksize, typesize, nblocks;
  int version, split, detect_runs;
  int nfilters;
  uint8_t filter_ids[6], filter_metas[6];
  int codec_kind, clevel;
  int codec_param;
  void *fn, *fn_error, *fn_new, *fn_free;
  uint8_t *out;
  int64_t block_cap;
  int32_t *sizes, *needs;
} bk_encoder;
int bk_encode_blocks(const bk_encoder *e, int nthreads);
"""

SOURCES = sorted(glob.glob(os.path.join(SRC_DIR, "*.c")))


def make_builder(sources):
    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source(
        "blosckit.native._native",
        '#include "blosckit_native.h"',
        sources=sources,
        include_dirs=[SRC_DIR],
        extra_compile_args=["-O3", "-std=gnu99", "-fno-strict-aliasing", "-pthread"],
        extra_link_args=["-pthread"],
    )
    return builder


# setuptools (cffi_modules) compiles from the project root: relative sources.
ffibuilder = make_builder([_rel(p) for p in SOURCES])

if __name__ == "__main__":
    import shutil
    import tempfile

    # In-place build: cffi compiles inside tmpdir, so give it absolute sources.
    tmp = tempfile.mkdtemp(prefix="blosckit-native-")
    try:
        so = make_builder(SOURCES).compile(tmpdir=tmp, verbose=False)
        for old in glob.glob(os.path.join(HERE, "_native*.so")) + glob.glob(
                os.path.join(HERE, "_native*.pyd")):
            os.remove(old)
        shutil.copy2(so, os.path.join(HERE, os.path.basename(so)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
