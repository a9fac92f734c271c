/* Bit shuffle with the layout used by Blosc (the "bitshuffle" library's
 * bit-in-element transpose):
 *
 *   n elements (n a multiple of 8), ts bytes each.  The output is 8*ts rows
 *   of n/8 bytes; row 8*j + k, byte g, bit m  ==  bit k of byte j of element
 *   8*g + m.
 *
 * Implementation: the elements are processed in tiles.  A tile is first
 * byte-shuffled into a scratch buffer (giving one contiguous byte stream per
 * byte position j), then every group of 8 stream bytes is bit-transposed into
 * the 8 rows of that stream.  The inverse runs the two steps the other way.
 */
#include <stdlib.h>
#include <string.h>
#include "blosckit_native.h"

#if defined(BK_X86)
#include <immintrin.h>
#endif

#define TILE 2048 /* elements per tile; a multiple of 128 */

/* Transpose an 8x8 bit matrix held in a 64-bit word (bit 8*r + c <-> bit
 * 8*c + r) with three masked swaps: 1x1, 2x2 and 4x4 sub-blocks. */
static inline uint64_t bitmatrix8_transpose(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
    x ^= t ^ (t << 28);
    return x;
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Stream bytes s[first..cnt) -> rows (row k at rows + k*rowlen, column i/8). */
static void rows_from_stream_scalar(const uint8_t *s, size_t first, size_t cnt,
                                    uint8_t *rows, size_t rowlen)
{
    for (size_t i = first; i < cnt; i += 8) {
        uint64_t y = bitmatrix8_transpose(load_le64(s + i));
        size_t col = i / 8;
        for (int k = 0; k < 8; k++)
            rows[k * rowlen + col] = (uint8_t)(y >> (8 * k));
    }
}

static void stream_from_rows_scalar(const uint8_t *rows, size_t rowlen, size_t first,
                                    size_t cnt, uint8_t *s)
{
    for (size_t i = first; i < cnt; i += 8) {
        size_t col = i / 8;
        uint64_t x = 0;
        for (int k = 7; k >= 0; k--)
            x = (x << 8) | rows[k * rowlen + col];
        store_le64(s + i, bitmatrix8_transpose(x));
    }
}

#if defined(BK_X86)
/* Forward: movemask collects the top bit of every byte, i.e. bit 7 of 16
 * consecutive elements = 16 bits of row 7; doubling each byte moves the next
 * bit up. */
BK_SSE2_FN static void rows_from_stream_sse2(const uint8_t *s, size_t cnt, uint8_t *rows,
                                             size_t rowlen)
{
    size_t i = 0;
    for (; i + 16 <= cnt; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        size_t col = i / 8;
        for (int k = 7; k >= 0; k--) {
            uint16_t m = (uint16_t)_mm_movemask_epi8(v);
            memcpy(rows + k * rowlen + col, &m, 2);
            v = _mm_add_epi8(v, v);
        }
    }
    rows_from_stream_scalar(s, i, cnt, rows, rowlen);
}

BK_AVX2_FN static void rows_from_stream_avx2(const uint8_t *s, size_t cnt, uint8_t *rows,
                                             size_t rowlen)
{
    size_t i = 0;
    for (; i + 32 <= cnt; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + i));
        size_t col = i / 8;
        for (int k = 7; k >= 0; k--) {
            uint32_t m = (uint32_t)_mm256_movemask_epi8(v);
            memcpy(rows + k * rowlen + col, &m, 4);
            v = _mm256_add_epi8(v, v);
        }
    }
    rows_from_stream_scalar(s, i, cnt, rows, rowlen);
}

BK_SSE2_FN static inline __m128i bitmatrix8_transpose_x2(__m128i x)
{
    __m128i t;
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)),
                      _mm_set1_epi64x(0x00AA00AA00AA00AALL));
    x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 7)));
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)),
                      _mm_set1_epi64x(0x0000CCCC0000CCCCLL));
    x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 14)));
    t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)),
                      _mm_set1_epi64x(0x00000000F0F0F0F0LL));
    x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 28)));
    return x;
}

/* Inverse: gather 16 columns of the 8 rows, transpose the 8x16 byte block with
 * three interleave rounds into 16 words (one per column), then bit-transpose
 * each word. */
BK_SSE2_FN static void stream_from_rows_sse2(const uint8_t *rows, size_t rowlen, size_t cnt,
                                             uint8_t *s)
{
    size_t i = 0;
    for (; i + 128 <= cnt; i += 128) {
        size_t col = i / 8;
        __m128i r[8], a[8], b[8];
        for (int k = 0; k < 8; k++)
            r[k] = _mm_loadu_si128((const __m128i *)(rows + k * rowlen + col));
        for (int k = 0; k < 4; k++) {
            a[2 * k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
            a[2 * k + 1] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
        }
        /* a[0],a[1]: rows 0-1 cols 0-7, 8-15; a[2],a[3]: rows 2-3; ... */
        for (int h = 0; h < 2; h++) {
            b[4 * h + 0] = _mm_unpacklo_epi16(a[h], a[2 + h]);
            b[4 * h + 1] = _mm_unpackhi_epi16(a[h], a[2 + h]);
            b[4 * h + 2] = _mm_unpacklo_epi16(a[4 + h], a[6 + h]);
            b[4 * h + 3] = _mm_unpackhi_epi16(a[4 + h], a[6 + h]);
        }
        /* b[4h + 0/1]: rows 0-3 of cols 8h+0..3 / 8h+4..7; b[4h + 2/3]: rows 4-7 */
        for (int h = 0; h < 2; h++) {
            for (int q = 0; q < 2; q++) {
                __m128i lo = b[4 * h + q], hi = b[4 * h + 2 + q];
                __m128i w0 = _mm_unpacklo_epi32(lo, hi);
                __m128i w1 = _mm_unpackhi_epi32(lo, hi);
                size_t c = 8 * (size_t)h + 4 * (size_t)q;
                _mm_storeu_si128((__m128i *)(s + i + 8 * c), bitmatrix8_transpose_x2(w0));
                _mm_storeu_si128((__m128i *)(s + i + 8 * c + 16), bitmatrix8_transpose_x2(w1));
            }
        }
    }
    stream_from_rows_scalar(rows, rowlen, i, cnt, s);
}

BK_AVX2_FN static inline __m256i bitmatrix8_transpose_x4(__m256i x)
{
    __m256i t;
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 7)),
                         _mm256_set1_epi64x(0x00AA00AA00AA00AALL));
    x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 7)));
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 14)),
                         _mm256_set1_epi64x(0x0000CCCC0000CCCCLL));
    x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 14)));
    t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 28)),
                         _mm256_set1_epi64x(0x00000000F0F0F0F0LL));
    x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 28)));
    return x;
}

/* The SSE2 routine twice over: AVX2 unpacks work inside each 128-bit lane,
 * so a 32-column load gives two independent 16-column problems (columns
 * 0-15 in the low lane, 16-31 in the high lane); each lane's results are
 * stored 128 stream bytes apart. */
BK_AVX2_FN static void stream_from_rows_avx2(const uint8_t *rows, size_t rowlen, size_t cnt,
                                             uint8_t *s)
{
    size_t i = 0;
    for (; i + 256 <= cnt; i += 256) {
        size_t col = i / 8;
        __m256i r[8], a[8], b[8];
        for (int k = 0; k < 8; k++)
            r[k] = _mm256_loadu_si256((const __m256i *)(rows + k * rowlen + col));
        for (int k = 0; k < 4; k++) {
            a[2 * k] = _mm256_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
            a[2 * k + 1] = _mm256_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
        }
        for (int h = 0; h < 2; h++) {
            b[4 * h + 0] = _mm256_unpacklo_epi16(a[h], a[2 + h]);
            b[4 * h + 1] = _mm256_unpackhi_epi16(a[h], a[2 + h]);
            b[4 * h + 2] = _mm256_unpacklo_epi16(a[4 + h], a[6 + h]);
            b[4 * h + 3] = _mm256_unpackhi_epi16(a[4 + h], a[6 + h]);
        }
        for (int h = 0; h < 2; h++) {
            for (int q = 0; q < 2; q++) {
                __m256i lo = b[4 * h + q], hi = b[4 * h + 2 + q];
                __m256i w0 = bitmatrix8_transpose_x4(_mm256_unpacklo_epi32(lo, hi));
                __m256i w1 = bitmatrix8_transpose_x4(_mm256_unpackhi_epi32(lo, hi));
                uint8_t *o = s + i + 8 * (8 * (size_t)h + 4 * (size_t)q);
                _mm_storeu_si128((__m128i *)o, _mm256_castsi256_si128(w0));
                _mm_storeu_si128((__m128i *)(o + 16), _mm256_castsi256_si128(w1));
                _mm_storeu_si128((__m128i *)(o + 128), _mm256_extracti128_si256(w0, 1));
                _mm_storeu_si128((__m128i *)(o + 144), _mm256_extracti128_si256(w1, 1));
            }
        }
    }
    stream_from_rows_sse2(rows + i / 8, rowlen, cnt - i, s + i);
}
#endif

static void rows_from_stream(int level, const uint8_t *s, size_t cnt, uint8_t *rows,
                             size_t rowlen)
{
#if defined(BK_X86)
    if (level >= BK_LEVEL_AVX2) { rows_from_stream_avx2(s, cnt, rows, rowlen); return; }
    if (level >= BK_LEVEL_SSE2) { rows_from_stream_sse2(s, cnt, rows, rowlen); return; }
#else
    (void)level;
#endif
    rows_from_stream_scalar(s, 0, cnt, rows, rowlen);
}

static void stream_from_rows(int level, const uint8_t *rows, size_t rowlen, size_t cnt,
                             uint8_t *s)
{
#if defined(BK_X86)
    if (level >= BK_LEVEL_AVX2) { stream_from_rows_avx2(rows, rowlen, cnt, s); return; }
    if (level >= BK_LEVEL_SSE2) { stream_from_rows_sse2(rows, rowlen, cnt, s); return; }
#else
    (void)level;
#endif
    stream_from_rows_scalar(rows, rowlen, 0, cnt, s);
}

/* How many elements get transposed; everything after n*ts is copied as is. */
static size_t transposed_elems(size_t len, size_t ts, int legacy)
{
    size_t n = len / ts;
    if (legacy)
        return (n % 8 == 0 && len >= ts) ? n : 0;
    return n - n % 8;
}

int bk_bitshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t ts, int legacy)
{
    if (ts < 1)
        return BK_EPARAM;
    size_t n = transposed_elems(len, ts, legacy);
    if (n > 0) {
        int level = bk_simd_level();
        size_t rowlen = n / 8;
        size_t tile = n < TILE ? n : TILE;
        uint8_t *tmp = NULL;
        if (ts > 1) {
            tmp = (uint8_t *)malloc(tile * ts);
            if (tmp == NULL)
                return BK_ENOMEM;
        }
        for (size_t t0 = 0; t0 < n; t0 += tile) {
            size_t cnt = n - t0 < tile ? n - t0 : tile;
            const uint8_t *streams = src + t0;
            if (ts > 1) {
                bk_shuffle_level(level, src + t0 * ts, tmp, cnt, ts);
                streams = tmp;
            }
            for (size_t j = 0; j < ts; j++)
                rows_from_stream(level, streams + j * cnt, cnt, dst + 8 * j * rowlen + t0 / 8,
                                 rowlen);
        }
        free(tmp);
    }
    memcpy(dst + n * ts, src + n * ts, len - n * ts);
    return BK_OK;
}

int bk_bitunshuffle(const uint8_t *src, uint8_t *dst, size_t len, size_t ts, int legacy)
{
    if (ts < 1)
        return BK_EPARAM;
    size_t n = transposed_elems(len, ts, legacy);
    if (n > 0) {
        int level = bk_simd_level();
        size_t rowlen = n / 8;
        size_t tile = n < TILE ? n : TILE;
        uint8_t *tmp = NULL;
        if (ts > 1) {
            tmp = (uint8_t *)malloc(tile * ts);
            if (tmp == NULL)
                return BK_ENOMEM;
        }
        for (size_t t0 = 0; t0 < n; t0 += tile) {
            size_t cnt = n - t0 < tile ? n - t0 : tile;
            uint8_t *streams = ts > 1 ? tmp : dst + t0;
            for (size_t j = 0; j < ts; j++)
                stream_from_rows(level, src + 8 * j * rowlen + t0 / 8, rowlen, cnt,
                                 streams + j * cnt);
            if (ts > 1)
                bk_unshuffle_level(level, tmp, dst + t0 * ts, cnt, ts);
        }
        free(tmp);
    }
    memcpy(dst + n * ts, src + n * ts, len - n * ts);
    return BK_OK;
}
