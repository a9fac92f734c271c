/* Byte shuffle: view a block as n elements of `typesize` bytes and store
 * byte j of element i at position j*n + i (a byte-matrix transpose).  Bytes
 * past the last whole element are copied unchanged.
 *
 * The vector kernels work on groups of 16 (SSE2) or 32 (AVX2) elements whose
 * size is a power of two up to 16.  They repeatedly split a set of registers
 * into "even bytes" and "odd bytes" halves; after log2(typesize) such passes
 * register j holds byte j of every element of the group.  Unshuffling runs
 * the passes backwards with byte interleaves.
 */
#include <string.h>
#include "blosckit_native.h"

#if defined(BK_X86)
#include <immintrin.h>
#endif

#define BK_INLINE BK_FORCE_INLINE
#define TILE_ELEMS 256
#define BURST_ELEMS 1024
#define STREAM_MIN_BYTES ((size_t)8 << 20) /* bigger than any last-level cache slice */

static void scalar_shuffle_range(const uint8_t *src, uint8_t *dst, size_t n, size_t ts,
                                 size_t first, size_t last);

static void scalar_shuffle_from(const uint8_t *src, uint8_t *dst, size_t n, size_t ts,
                                size_t first)
{
    scalar_shuffle_range(src, dst, n, ts, first, n);
}

/* ---------------------------------------------------------------- scalar */

/* Elements [first, last) of a block of n elements. */
static void scalar_shuffle_range(const uint8_t *src, uint8_t *dst, size_t n, size_t ts,
                                 size_t first, size_t last)
{
    for (size_t base = first; base < last; base += TILE_ELEMS) {
        size_t end = base + TILE_ELEMS < last ? base + TILE_ELEMS : last;
        for (size_t j = 0; j < ts; j++) {
            const uint8_t *in = src + j;
            uint8_t *out = dst + j * n;
            for (size_t i = base; i < end; i++)
                out[i] = in[i * ts];
        }
    }
}

static void scalar_unshuffle_from(const uint8_t *src, uint8_t *dst, size_t n, size_t ts,
                                  size_t first)
{
    for (size_t base = first; base < n; base += TILE_ELEMS) {
        size_t end = base + TILE_ELEMS < n ? base + TILE_ELEMS : n;
        for (size_t j = 0; j < ts; j++) {
            const uint8_t *in = src + j * n;
            uint8_t *out = dst + j;
            for (size_t i = base; i < end; i++)
                out[i * ts] = in[i];
        }
    }
}

/* Fixed-size scalar versions let the compiler keep everything in registers. */
#define DEFINE_SCALAR_FIXED(TS)                                                   \
    static void scalar_shuffle_##TS(const uint8_t *src, uint8_t *dst, size_t n)   \
    {                                                                             \
        for (size_t i = 0; i < n; i++) {                                          \
            const uint8_t *e = src + i * TS;                                      \
            for (size_t j = 0; j < TS; j++)                                       \
                dst[j * n + i] = e[j];                                            \
        }                                                                         \
    }                                                                             \
    static void scalar_unshuffle_##TS(const uint8_t *src, uint8_t *dst, size_t n) \
    {                                                                             \
        for (size_t i = 0; i < n; i++) {                                          \
            uint8_t *e = dst + i * TS;                                            \
            for (size_t j = 0; j < TS; j++)                                       \
                e[j] = src[j * n + i];                                            \
        }                                                                         \
    }
DEFINE_SCALAR_FIXED(2)
DEFINE_SCALAR_FIXED(4)
DEFINE_SCALAR_FIXED(8)

static void scalar_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    switch (ts) {
    case 2: scalar_shuffle_2(src, dst, n); break;
    case 4: scalar_shuffle_4(src, dst, n); break;
    case 8: scalar_shuffle_8(src, dst, n); break;
    default: scalar_shuffle_from(src, dst, n, ts, 0);
    }
}

static void scalar_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    switch (ts) {
    case 2: scalar_unshuffle_2(src, dst, n); break;
    case 4: scalar_unshuffle_4(src, dst, n); break;
    case 8: scalar_unshuffle_8(src, dst, n); break;
    default: scalar_unshuffle_from(src, dst, n, ts, 0);
    }
}

#if defined(BK_X86)
/* ------------------------------------------------------------------ SSE2 */

BK_SSE2_FN BK_INLINE void sse2_split(__m128i a, __m128i b, __m128i *even, __m128i *odd)
{
    const __m128i lo = _mm_set1_epi16(0x00FF);
    *even = _mm_packus_epi16(_mm_and_si128(a, lo), _mm_and_si128(b, lo));
    *odd = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
}

/* Handles whole groups of 16 elements, returns how many elements were done. */
BK_SSE2_FN BK_INLINE size_t sse2_shuffle_pow2(const uint8_t *src, uint8_t *dst, size_t n,
                                              const int ts, const int passes)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i r[16], t[16];
        const uint8_t *p = src + i * ts;
        for (int k = 0; k < ts; k++)
            r[k] = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        for (int pass = 0; pass < passes; pass++) {
            for (int q = 0; q < ts / 2; q++)
                sse2_split(r[2 * q], r[2 * q + 1], &t[q], &t[q + ts / 2]);
            for (int k = 0; k < ts; k++)
                r[k] = t[k];
        }
        for (int j = 0; j < ts; j++)
            _mm_storeu_si128((__m128i *)(dst + (size_t)j * n + i), r[j]);
    }
    return i;
}

BK_SSE2_FN BK_INLINE size_t sse2_unshuffle_pow2(const uint8_t *src, uint8_t *dst, size_t n,
                                                const int ts, const int passes)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i r[16], t[16];
        for (int j = 0; j < ts; j++)
            r[j] = _mm_loadu_si128((const __m128i *)(src + (size_t)j * n + i));
        for (int pass = 0; pass < passes; pass++) {
            for (int q = 0; q < ts / 2; q++) {
                t[2 * q] = _mm_unpacklo_epi8(r[q], r[q + ts / 2]);
                t[2 * q + 1] = _mm_unpackhi_epi8(r[q], r[q + ts / 2]);
            }
            for (int k = 0; k < ts; k++)
                r[k] = t[k];
        }
        uint8_t *p = dst + i * ts;
        for (int k = 0; k < ts; k++)
            _mm_storeu_si128((__m128i *)(p + 16 * k), r[k]);
    }
    return i;
}

BK_SSE2_FN static void sse2_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    size_t done;
    switch (ts) {
    case 2: done = sse2_shuffle_pow2(src, dst, n, 2, 1); break;
    case 4: done = sse2_shuffle_pow2(src, dst, n, 4, 2); break;
    case 8: done = sse2_shuffle_pow2(src, dst, n, 8, 3); break;
    case 16: done = sse2_shuffle_pow2(src, dst, n, 16, 4); break;
    default: done = 0;
    }
    scalar_shuffle_from(src, dst, n, ts, done);
}

BK_SSE2_FN static void sse2_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    size_t done;
    switch (ts) {
    case 2: done = sse2_unshuffle_pow2(src, dst, n, 2, 1); break;
    case 4: done = sse2_unshuffle_pow2(src, dst, n, 4, 2); break;
    case 8: done = sse2_unshuffle_pow2(src, dst, n, 8, 3); break;
    case 16: done = sse2_unshuffle_pow2(src, dst, n, 16, 4); break;
    default: done = 0;
    }
    scalar_unshuffle_from(src, dst, n, ts, done);
}

/* ------------------------------------------------------------------ AVX2 */

/* 64-bit lane order (0,2,1,3): undoes the per-128-bit-lane behaviour of
 * pack and unpack on 256-bit registers. */
#define QUAD_0213 0xD8

BK_AVX2_FN BK_INLINE void avx2_split(__m256i a, __m256i b, __m256i *even, __m256i *odd)
{
    const __m256i lo = _mm256_set1_epi16(0x00FF);
    __m256i e = _mm256_packus_epi16(_mm256_and_si256(a, lo), _mm256_and_si256(b, lo));
    __m256i o = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    *even = _mm256_permute4x64_epi64(e, QUAD_0213);
    *odd = _mm256_permute4x64_epi64(o, QUAD_0213);
}

BK_AVX2_FN BK_INLINE void avx2_shuffle_group(const uint8_t *p, __m256i *r, const int ts,
                                              const int passes)
{
    __m256i t[16];
    for (int k = 0; k < ts; k++)
        r[k] = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
    for (int pass = 0; pass < passes; pass++) {
        for (int q = 0; q < ts / 2; q++)
            avx2_split(r[2 * q], r[2 * q + 1], &t[q], &t[q + ts / 2]);
        for (int k = 0; k < ts; k++)
            r[k] = t[k];
    }
}

/* Two groups per round so every output stream receives a whole 64-byte line.
 * Large outputs whose streams can all be 32-byte aligned (after skipping a few
 * leading elements, done in scalar code) use non-temporal stores: with a
 * power-of-two stream distance the regular stores keep evicting each other. */
BK_AVX2_FN BK_INLINE size_t avx2_shuffle_pow2(const uint8_t *src, uint8_t *dst, size_t n,
                                              const int ts, const int passes)
{
    size_t i = 0;
    if (ts <= 4 && n * ts >= STREAM_MIN_BYTES && n % 32 == 0) {
        size_t lead = (32 - ((uintptr_t)dst & 31)) & 31;
        scalar_shuffle_range(src, dst, n, ts, 0, lead);
        for (i = lead; i + 64 <= n; i += 64) {
            __m256i a[16], b[16];
            avx2_shuffle_group(src + i * ts, a, ts, passes);
            avx2_shuffle_group(src + (i + 32) * ts, b, ts, passes);
            for (int j = 0; j < ts; j++) {
                _mm256_stream_si256((__m256i *)(dst + (size_t)j * n + i), a[j]);
                _mm256_stream_si256((__m256i *)(dst + (size_t)j * n + i + 32), b[j]);
            }
        }
        _mm_sfence();
        scalar_shuffle_range(src, dst, n, ts, i, n);
        return n;
    }
    if (ts >= 8 && n * ts >= STREAM_MIN_BYTES && n % 32 == 0) {
        /* Many streams: build a tile in a small buffer, then write each stream
         * out in one non-temporal burst (one write-combining stream at a time). */
        BK_ALIGN(32) uint8_t tile[BURST_ELEMS * 16];
        size_t lead = (32 - ((uintptr_t)dst & 31)) & 31;
        scalar_shuffle_range(src, dst, n, ts, 0, lead);
        for (i = lead; i + BURST_ELEMS <= n; i += BURST_ELEMS) {
            for (size_t g = 0; g < BURST_ELEMS; g += 32) {
                __m256i a[16];
                avx2_shuffle_group(src + (i + g) * ts, a, ts, passes);
                for (int j = 0; j < ts; j++)
                    _mm256_store_si256((__m256i *)(tile + j * BURST_ELEMS + g), a[j]);
            }
            for (int j = 0; j < ts; j++) {
                const __m256i *from = (const __m256i *)(tile + j * BURST_ELEMS);
                __m256i *to = (__m256i *)(dst + (size_t)j * n + i);
                for (size_t k = 0; k < BURST_ELEMS / 32; k++)
                    _mm256_stream_si256(to + k, _mm256_load_si256(from + k));
            }
        }
        _mm_sfence();
        scalar_shuffle_range(src, dst, n, ts, i, n);
        return n;
    }
    for (; i + 64 <= n; i += 64) {
        __m256i a[16], b[16];
        avx2_shuffle_group(src + i * ts, a, ts, passes);
        avx2_shuffle_group(src + (i + 32) * ts, b, ts, passes);
        for (int j = 0; j < ts; j++) {
            _mm256_storeu_si256((__m256i *)(dst + (size_t)j * n + i), a[j]);
            _mm256_storeu_si256((__m256i *)(dst + (size_t)j * n + i + 32), b[j]);
        }
    }
    for (; i + 32 <= n; i += 32) {
        __m256i a[16];
        avx2_shuffle_group(src + i * ts, a, ts, passes);
        for (int j = 0; j < ts; j++)
            _mm256_storeu_si256((__m256i *)(dst + (size_t)j * n + i), a[j]);
    }
    return i;
}

BK_AVX2_FN BK_INLINE size_t avx2_unshuffle_pow2(const uint8_t *src, uint8_t *dst, size_t n,
                                                const int ts, const int passes)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i r[16], t[16];
        for (int j = 0; j < ts; j++)
            r[j] = _mm256_loadu_si256((const __m256i *)(src + (size_t)j * n + i));
        for (int pass = 0; pass < passes; pass++) {
            for (int q = 0; q < ts / 2; q++) {
                __m256i a = _mm256_permute4x64_epi64(r[q], QUAD_0213);
                __m256i b = _mm256_permute4x64_epi64(r[q + ts / 2], QUAD_0213);
                t[2 * q] = _mm256_unpacklo_epi8(a, b);
                t[2 * q + 1] = _mm256_unpackhi_epi8(a, b);
            }
            for (int k = 0; k < ts; k++)
                r[k] = t[k];
        }
        uint8_t *p = dst + i * ts;
        for (int k = 0; k < ts; k++)
            _mm256_storeu_si256((__m256i *)(p + 32 * k), r[k]);
    }
    return i;
}

/* Unshuffle for 4 and 8 streams in fewer shuffle instructions (the generic
 * loop above re-orders the 64-bit quarters on every pass): byte, 16-bit and
 * (for 8) 32-bit unpacks inside each 128-bit lane leave every lane holding
 * whole elements, lane 0 from the first 16 of the 32 elements and lane 1
 * from the last 16; one 128-bit lane exchange per output vector puts them in
 * order.  `u` holds the unpacked vectors, `out` the 32 elements' bytes. */
BK_AVX2_FN BK_INLINE void avx2_lanes_out(const __m256i *u, int count, uint8_t *out)
{
    /* u[2k] and u[2k+1] hold consecutive elements in each lane */
    for (int k = 0; k < count / 2; k++) {
        _mm256_storeu_si256((__m256i *)(out + 32 * k),
                            _mm256_permute2x128_si256(u[2 * k], u[2 * k + 1], 0x20));
        _mm256_storeu_si256((__m256i *)(out + 32 * (k + count / 2)),
                            _mm256_permute2x128_si256(u[2 * k], u[2 * k + 1], 0x31));
    }
}

BK_AVX2_FN BK_INLINE size_t avx2_unshuffle_4(const uint8_t *src, uint8_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i s0 = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i s1 = _mm256_loadu_si256((const __m256i *)(src + n + i));
        __m256i s2 = _mm256_loadu_si256((const __m256i *)(src + 2 * n + i));
        __m256i s3 = _mm256_loadu_si256((const __m256i *)(src + 3 * n + i));
        /* bytes 0,1 and 2,3 of each element side by side */
        __m256i p01l = _mm256_unpacklo_epi8(s0, s1), p01h = _mm256_unpackhi_epi8(s0, s1);
        __m256i p23l = _mm256_unpacklo_epi8(s2, s3), p23h = _mm256_unpackhi_epi8(s2, s3);
        __m256i u[4];
        u[0] = _mm256_unpacklo_epi16(p01l, p23l);   /* elements 0-3 | 16-19 */
        u[1] = _mm256_unpackhi_epi16(p01l, p23l);   /* 4-7 | 20-23 */
        u[2] = _mm256_unpacklo_epi16(p01h, p23h);   /* 8-11 | 24-27 */
        u[3] = _mm256_unpackhi_epi16(p01h, p23h);   /* 12-15 | 28-31 */
        avx2_lanes_out(u, 4, dst + i * 4);
    }
    return i;
}

BK_AVX2_FN BK_INLINE size_t avx2_unshuffle_8(const uint8_t *src, uint8_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i s[8], p[8], q[8], u[8];
        for (int j = 0; j < 8; j++)
            s[j] = _mm256_loadu_si256((const __m256i *)(src + (size_t)j * n + i));
        for (int j = 0; j < 4; j++) {      /* byte pairs (2j, 2j+1) */
            p[2 * j] = _mm256_unpacklo_epi8(s[2 * j], s[2 * j + 1]);
            p[2 * j + 1] = _mm256_unpackhi_epi8(s[2 * j], s[2 * j + 1]);
        }
        for (int h = 0; h < 2; h++) {      /* bytes 0-3 (h 0) and 4-7 (h 1) */
            const __m256i *a = p + 4 * h;  /* pairs (0,1)/(4,5) lo, hi; (2,3)/(6,7) lo, hi */
            q[4 * h + 0] = _mm256_unpacklo_epi16(a[0], a[2]);   /* elements 0-3 | 16-19 */
            q[4 * h + 1] = _mm256_unpackhi_epi16(a[0], a[2]);   /* 4-7 | 20-23 */
            q[4 * h + 2] = _mm256_unpacklo_epi16(a[1], a[3]);   /* 8-11 | 24-27 */
            q[4 * h + 3] = _mm256_unpackhi_epi16(a[1], a[3]);   /* 12-15 | 28-31 */
        }
        for (int k = 0; k < 4; k++) {      /* whole elements, two per lane */
            u[2 * k] = _mm256_unpacklo_epi32(q[k], q[4 + k]);
            u[2 * k + 1] = _mm256_unpackhi_epi32(q[k], q[4 + k]);
        }
        avx2_lanes_out(u, 8, dst + i * 8);
    }
    return i;
}

BK_AVX2_FN static void avx2_shuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    size_t done;
    switch (ts) {
    case 2: done = avx2_shuffle_pow2(src, dst, n, 2, 1); break;
    case 4: done = avx2_shuffle_pow2(src, dst, n, 4, 2); break;
    case 8: done = avx2_shuffle_pow2(src, dst, n, 8, 3); break;
    case 16: done = avx2_shuffle_pow2(src, dst, n, 16, 4); break;
    default: done = 0;
    }
    scalar_shuffle_from(src, dst, n, ts, done);
}

BK_AVX2_FN static void avx2_unshuffle(const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
    size_t done;
    switch (ts) {
    case 2: done = avx2_unshuffle_pow2(src, dst, n, 2, 1); break;
    case 4: done = avx2_unshuffle_4(src, dst, n); break;
    case 8: done = avx2_unshuffle_8(src, dst, n); break;
    case 16: done = avx2_unshuffle_pow2(src, dst, n, 16, 4); break;
    default: done = 0;
    }
    scalar_unshuffle_from(src, dst, n, ts, done);
}
#endif /* BK_X86 */

/* ------------------------------------------------------------- dispatch */

void bk_shuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
#if defined(BK_X86)
    if (level >= BK_LEVEL_AVX2) { avx2_shuffle(src, dst, n, ts); return; }
    if (level >= BK_LEVEL_SSE2) { sse2_shuffle(src, dst, n, ts); return; }
#else
    (void)level;
#endif
    scalar_shuffle(src, dst, n, ts);
}

void bk_unshuffle_level(int level, const uint8_t *src, uint8_t *dst, size_t n, size_t ts)
{
#if defined(BK_X86)
    if (level >= BK_LEVEL_AVX2) { avx2_unshuffle(src, dst, n, ts); return; }
    if (level >= BK_LEVEL_SSE2) { sse2_unshuffle(src, dst, n, ts); return; }
#else
    (void)level;
#endif
    scalar_unshuffle(src, dst, n, ts);
}

int bk_shuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize)
{
    if (typesize < 1)
        return BK_EPARAM;
    size_t n = len / typesize;
    if (typesize == 1 || n == 0) {
        memcpy(dst, src, len);
        return BK_OK;
    }
    bk_shuffle_level(bk_simd_level(), src, dst, n, typesize);
    memcpy(dst + n * typesize, src + n * typesize, len - n * typesize);
    return BK_OK;
}

int bk_unshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize)
{
    if (typesize < 1)
        return BK_EPARAM;
    size_t n = len / typesize;
    if (typesize == 1 || n == 0) {
        memcpy(dst, src, len);
        return BK_OK;
    }
    bk_unshuffle_level(bk_simd_level(), src, dst, n, typesize);
    memcpy(dst + n * typesize, src + n * typesize, len - n * typesize);
    return BK_OK;
}
