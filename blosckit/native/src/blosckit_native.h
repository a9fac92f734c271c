/* blosckit native layer: constants, the API (blosckit_api.h) and internal helpers.
 *
 * All lengths are byte counts.  Functions that can fail return a negative
 * BK_E* code; the Python wrapper turns those into exceptions.
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

#define BK_CODEC_NONE (-1)
#define BK_CODEC_BLOSCLZ 0
#define BK_CODEC_LZ4 1
#define BK_CODEC_ZSTD 4
#define BK_CODEC_LZ4HC 2
#define BK_CODEC_ZLIB 3

#include "blosckit_api.h"

/* internal helpers shared between translation units */

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
void bk_shuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t typesize);
void bk_unshuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t typesize);

#if (defined(__x86_64__) || defined(__i386__)) && !defined(BK_NO_SIMD)
#define BK_X86 1
#define BK_SSE2_FN __attribute__((target("sse2")))
#define BK_AVX2_FN __attribute__((target("avx2")))
#endif

#endif
