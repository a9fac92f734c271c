/* Blosc2 filters that are not shuffles: DELTA, BYTEDELTA (ids 35 and 34)
 * and TRUNC_PREC.  All work on one block; in-place use (src == dst) is fine.
 */
#include <string.h>
#include "blosckit_native.h"

/* DELTA groups bytes into words: the type size when it is 1, 2, 4 or 8,
 * 8 for other multiples of 8, single bytes otherwise.  XOR is bytewise, so
 * the word size only decides how far back "the previous word" is. */
static size_t delta_word(size_t ts)
{
    if (ts == 1 || ts == 2 || ts == 4 || ts == 8)
        return ts;
    return ts % 8 == 0 ? 8 : 1;
}

/* Block 0 XORs each word with the preceding word of the same block (the
 * first word is kept); any other block XORs with block 0's raw bytes `dref`.
 * Bytes after the last whole word are copied unchanged. */
void bk_delta_encode(const uint8_t *dref, const uint8_t *src, uint8_t *dst, size_t len,
                     size_t typesize, int first_block)
{
    size_t w = delta_word(typesize);
    size_t body = len - len % w;
    if (first_block) {
        /* walk backwards so that dst may alias src */
        for (size_t i = body; i-- > w;)
            dst[i] = src[i] ^ src[i - w];
        size_t keep = body < w ? body : w;
        if (dst != src)
            memmove(dst, src, keep);
    } else {
        for (size_t i = 0; i < body; i++)
            dst[i] = src[i] ^ dref[i];
    }
    if (dst != src)
        memmove(dst + body, src + body, len - body);
}

/* Inverse, in place.  For block 0 it is a running XOR; other blocks XOR with
 * the already decoded block 0. */
void bk_delta_decode(const uint8_t *dref, uint8_t *buf, size_t len, size_t typesize,
                     int first_block)
{
    size_t w = delta_word(typesize);
    size_t body = len - len % w;
    if (first_block) {
        for (size_t i = w; i < body; i++)
            buf[i] ^= buf[i - w];
    } else {
        for (size_t i = 0; i < body; i++)
            buf[i] ^= dref[i];
    }
}

/* BYTEDELTA views the block as `typesize` streams of len/typesize bytes.
 * Encoding stores each byte minus its predecessor in the stream (mod 256).
 * The buggy variant (filter id 34) restarts the running value at zero where
 * C-Blosc2's 16-byte vector loop stops, i.e. at the last multiple of 16 of
 * the stream length (only when the stream holds at least 16 bytes). */
static size_t restart_point(size_t n, int buggy)
{
    return (buggy && n >= 16) ? n - n % 16 : (size_t)-1;
}

void bk_bytedelta_encode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy)
{
    size_t n = len / typesize;
    size_t cut = restart_point(n, buggy);
    for (size_t j = 0; j < typesize; j++) {
        const uint8_t *s = src + j * n;
        uint8_t *d = dst + j * n;
        uint8_t prev = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == cut)
                prev = 0;
            uint8_t v = s[i];
            d[i] = (uint8_t)(v - prev);
            prev = v;
        }
    }
    if (dst != src)
        memmove(dst + n * typesize, src + n * typesize, len - n * typesize);
}

void bk_bytedelta_decode(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize,
                         int buggy)
{
    size_t n = len / typesize;
    size_t cut = restart_point(n, buggy);
    for (size_t j = 0; j < typesize; j++) {
        const uint8_t *s = src + j * n;
        uint8_t *d = dst + j * n;
        uint8_t acc = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == cut)
                acc = 0;
            acc = (uint8_t)(acc + s[i]);
            d[i] = acc;
        }
    }
    if (dst != src)
        memmove(dst + n * typesize, src + n * typesize, len - n * typesize);
}

/* TRUNC_PREC: clear low mantissa bits of float32/float64 values.
 * prec_bits >= 0 keeps that many mantissa bits, < 0 clears -prec_bits bits.
 * Rejected (as C-Blosc2 does): |prec_bits| above the mantissa width, and
 * requests that would clear the whole mantissa (prec_bits == 0 or
 * -prec_bits == width). */
int bk_trunc_prec(const uint8_t *src, uint8_t *dst, size_t len, size_t typesize, int prec_bits)
{
    int width;
    if (typesize == 4)
        width = 23;
    else if (typesize == 8)
        width = 52;
    else
        return BK_EPARAM;
    if (prec_bits < -128 || prec_bits > 127)
        return BK_EPARAM;
    int mag = prec_bits < 0 ? -prec_bits : prec_bits;
    if (mag > width)
        return BK_EPARAM;
    int cleared = prec_bits >= 0 ? width - prec_bits : -prec_bits;
    if (cleared >= width)
        return BK_EPARAM;

    size_t n = len / typesize;
    if (typesize == 4) {
        uint32_t keep = ~(((uint32_t)1 << cleared) - 1u);
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, src + 4 * i, 4);
#if defined(BK_BIG_ENDIAN)
            v = bk_bswap32(bk_bswap32(v) & keep);
#else
            v &= keep;
#endif
            memcpy(dst + 4 * i, &v, 4);
        }
    } else {
        uint64_t keep = ~(((uint64_t)1 << cleared) - 1u);
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, src + 8 * i, 8);
#if defined(BK_BIG_ENDIAN)
            v = bk_bswap64(bk_bswap64(v) & keep);
#else
            v &= keep;
#endif
            memcpy(dst + 8 * i, &v, 8);
        }
    }
    if (dst != src)
        memmove(dst + n * typesize, src + n * typesize, len - n * typesize);
    return BK_OK;
}
