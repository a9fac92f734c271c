/* blosckit native layer: constants, the API (blosckit_api.h) and internal helpers.
 *
 * All lengths are byte counts.  Functions that can fail return a negative
 * BK_E* code; the Python wrapper turns those into exceptions.  Every fact of
 * the Blosc formats (offsets, widths, bits, ids, limits) comes from
 * blosckit_layout.h, generated from the declarations in blosckit/formats/.
 */
#ifndef BLOSCKIT_NATIVE_H
#define BLOSCKIT_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#define BK_LEVEL_SCALAR 0
#define BK_LEVEL_SSE2 1
#define BK_LEVEL_AVX2 2

#define BK_OK 0
#define BK_EPARAM (-1)
#define BK_ENOMEM (-2)

#include "bk_port.h"
#include "blosckit_layout.h"
#include "blosckit_api.h"

/* internal helpers shared between translation units */

/* The little-endian int32 fields of chunks (nbytes, blocksize, cbytes,
 * bstarts, csizes, dsize).  BK_CHECK_INT32 fails the build when a
 * declaration no longer gives a field read with bk_le32 that type. */
#define BK_CHECK_INT32(what, width, is_signed) \
  _Static_assert((width) == (int)sizeof(int32_t) && (is_signed), what " is no int32")
_Static_assert(BK_CHUNK_HEADER_LITTLE_ENDIAN, "chunk integers are little-endian");
BK_CHECK_INT32("a bstart", BK_CHUNK_LEN_BSTART, 1);
BK_CHECK_INT32("a csize", BK_CHUNK_LEN_CSIZE, 1);
BK_CHECK_INT32("dsize", BK_CHUNK_LEN_DSIZE, 1);
static inline int32_t bk_le32(const uint8_t *p) {
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                   ((uint32_t)p[3] << 24));
}
static inline void bk_put_le32(uint8_t *p, int32_t v) {
  uint32_t u = (uint32_t)v;
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}

/* The codec format held in a chunk's flags byte. */
static inline int bk_compformat(int flags) {
  return (flags >> BK_CHUNK_HEADER_FLAGS_COMPFORMAT_SHIFT) & BK_CHUNK_HEADER_FLAGS_COMPFORMAT_MASK;
}

/* blosc2_flags bits of the chunks the one-call paths (fastpath.c,
 * framecheck.c) leave to the Python reader: lazy, special, instrumented. */
#define BK_B2FLAGS_DECLINED                                                         \
  (BK_CHUNK_EXTENDED_BLOSC2_FLAGS_LAZY_BITS | BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_BITS | \
   BK_CHUNK_EXTENDED_BLOSC2_FLAGS_INSTRUMENTED_BITS)

/* zng_once.c: one zlib stream in one call (inflate, or deflate at `level`);
 * bytes produced, or -1 when the stream does not finish in dst */
int64_t bk_zng_once(int inflating, void *begin, void *step, void *end, int level,
                    const uint8_t *src, int32_t srclen, uint8_t *dst, int32_t dstlen);

/* parallel.c: run fn(arg, worker, j) for j in [first, count) on up to
 * nthreads threads; each worker has two scratch buffers of `scratch` bytes
 * (none when 0) and a context from ctx_new (none when NULL), released with
 * ctx_free.  Returns the lowest failing j (fn returned non-zero), -1 when all
 * succeeded, or BK_DECODE_NOMEM when no worker could set itself up. */
#define BK_MAX_THREADS 64
typedef struct {
  uint8_t *s1, *s2;
  void *ctx;
} bk_worker;
typedef int (*bk_block_fn)(void *arg, bk_worker *w, int32_t j);
int32_t bk_parallel_blocks(bk_block_fn fn, void *arg, int32_t first, int32_t count,
                           int nthreads, size_t scratch, void *ctx_new, void *ctx_free);
/* runs.c: the copies of runs already checked against both buffers (chunk
 * offsets less chunk_base, array offsets plus array_base; to_chunk 0: the
 * chunk is only read) */
void bk_copy_checked_runs(uint8_t *chunk, int64_t chunk_base, uint8_t *array,
                          int64_t array_base, const int64_t *runs, size_t nruns, int to_chunk);
void bk_shuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t typesize);
void bk_unshuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t typesize);

/* The SSE2 and AVX2 paths: built on x86 (MSVC: x64 only, whose intrinsics
 * need no target flag), chosen at run time by cpu.c. */
#if (defined(__x86_64__) || defined(__i386__) || (defined(_M_X64) && !defined(_M_ARM64EC))) && \
    !defined(BK_NO_SIMD)
#define BK_X86 1
#if defined(__GNUC__) || defined(__clang__)
#define BK_SSE2_FN __attribute__((target("sse2")))
#define BK_AVX2_FN __attribute__((target("avx2")))
#else
#define BK_SSE2_FN
#define BK_AVX2_FN
#endif
#endif

#endif
