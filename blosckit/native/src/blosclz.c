/* BloscLZ: bounds-checked decoder plus encoders that reproduce, byte for
 * byte, the streams written by C-Blosc2 3.x and by C-Blosc 1.21.x.
 *
 * Stream format (one token after another):
 *   literal run   ctrl = 000LLLLL           -> copy LLLLL+1 bytes that follow
 *   match         ctrl = LLLHHHHH, [ext], lo -> length LLL+2 (LLL < 7) or
 *                 9 + sum of extension bytes (LLL == 7, 255 means "more");
 *                 distance = HHHHH*256 + lo + 1, or, for HHHHH == 31 and
 *                 lo == 255, 8192 + two more bytes (big-endian).
 *   The first token is always a literal; its top 3 bits are a format marker.
 */
#include <string.h>
#include "blosckit_native.h"

#define LIT_MAX 32           /* longest literal run */
#define NEAR_LIMIT 8191      /* biased distances below this use the short form */
#define FAR_LIMIT 73725      /* candidate distances at or above this are ignored */
#define HASH_MUL 2654435761U

/* ------------------------------------------------------------ decoder */

/* Copy an LZ match of m bytes from `from` (dist bytes back) to `out`; room
 * is how many bytes may be written at `out` (>= m).  Bytes between m and
 * room may be written too: later output overwrites them. */
static inline void copy_match(uint8_t *out, const uint8_t *from, size_t dist, size_t m,
                              size_t room)
{
    size_t k = 0;
    if (dist == 1) {
        memset(out, from[0], m);
        return;
    }
    if (dist >= m) {                   /* source and destination do not overlap */
        memcpy(out, from, m);
        return;
    }
    if (dist >= 16) {
        /* each 16-byte step reads only bytes written before that step */
        for (; k + 16 <= m || (k < m && k + 16 <= room); k += 16)
            memcpy(out + k, from + k, 16);
    } else if (room >= 16) {
        /* short period: build 16 bytes of the pattern in a local buffer,
         * then stamp it at every multiple of the period that fits in 16
         * bytes; no load waits on a store of this copy */
        uint8_t pat[16];
        size_t span = dist * (16 / dist);              /* 8..16, a multiple of dist */
        for (size_t i = 0; i < 16; i++)
            pat[i] = i < dist ? from[i] : pat[i - dist];
        for (; k < m && k + 16 <= room; k += span)
            memcpy(out + k, pat, 16);
    }
    for (; k < m; k++)                 /* the tail close to the end of dst */
        out[k] = from[k];
}

int64_t bk_blosclz_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen)
{
    size_t ip = 0, op = 0;
    if (srclen == 0)
        return 0;
    unsigned ctrl = src[ip++] & 31u;
    for (;;) {
        if (ctrl < 32) {
            size_t run = (size_t)ctrl + 1;
            if (run > dstlen - op || run > srclen - ip)
                return 0;
            if (dstlen - op >= 32 && srclen - ip >= 32)
                memcpy(dst + op, src + ip, 32);   /* fixed size: two vector moves */
            else
                memcpy(dst + op, src + ip, run);
            op += run;
            ip += run;
            if (ip >= srclen)
                break;
            ctrl = src[ip++];
            continue;
        }
        /* match token */
        uint64_t mlen = (ctrl >> 5) + 2;
        size_t hi = (size_t)(ctrl & 31u) << 8;
        if ((ctrl >> 5) == 7) {
            uint8_t ext;
            do {
                if (srclen - ip < 2)
                    return 0;
                ext = src[ip++];
                mlen += ext;
                if (mlen > dstlen - op)   /* can never fit: stop early (no overflow) */
                    return 0;
            } while (ext == 255);
        } else if (srclen - ip < 2) {
            return 0;
        }
        uint8_t lo = src[ip++];
        size_t dist = hi + lo + 1;
        if (lo == 255 && hi == (31u << 8)) {
            if (srclen - ip < 2)
                return 0;
            dist = ((size_t)src[ip] << 8 | src[ip + 1]) + NEAR_LIMIT + 1;
            ip += 2;
        }
        if (mlen > dstlen - op || dist > op)
            return 0;
        if (ip >= srclen)
            break;   /* a match that ends the input is not executed */
        ctrl = src[ip++];
        uint8_t *out = dst + op;
        const uint8_t *from = out - dist;
        size_t m = (size_t)mlen;
        copy_match(out, from, dist, m, dstlen - op);
        op += m;
    }
    return (int64_t)op;
}

/* ------------------------------------------------------------ encoder */

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t bucket(uint32_t v, unsigned bits)
{
    return (v * HASH_MUL) >> (32 - bits);
}

/* End of the match that starts at `pos` (copying from pos - dist), searched
 * no further than `stop`.  Like the reference encoders this returns one past
 * the first differing byte, or `stop` when none differs before it. */
static inline size_t match_end(const uint8_t *in, size_t pos, size_t dist, size_t stop)
{
    while (pos + 8 <= stop) {
        uint64_t a, b;
        memcpy(&a, in + pos, 8);
        memcpy(&b, in + pos - dist, 8);
        uint64_t diff = a ^ b;
        if (diff != 0) {
#if defined(BK_LITTLE_ENDIAN)
            pos += (size_t)bk_ctz64(diff) / 8;
#else
            while (in[pos] == in[pos - dist]) pos++;
#endif
            return pos + 1;
        }
        pos += 8;
    }
    while (pos < stop) {
        if (in[pos] != in[pos - dist])
            return pos + 1;
        pos++;
    }
    return stop;
}

/* Tunables that differ between the two reference encoders. */
struct lz_recipe {
    unsigned probe_bits;   /* hash bits used by the entropy probe */
    size_t probe_back;     /* probe: bytes given back after a match */
    size_t probe_min;      /* probe: shortest match counted */
    size_t back;           /* encoder: bytes given back after a match */
    size_t min;            /* encoder: shortest match emitted */
};

static const double ratio_floor[10] = {0, 2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0};
static const unsigned level_bits[10] = {0, 12, 13, 14, 14, 14, 14, 14, 14, 14};

/* Estimated compression ratio of in[0..avail): a dry run of the match finder
 * over at most 2^bits bytes that only counts output bytes. */
static double estimate_ratio(const uint8_t *in, size_t avail, const struct lz_recipe *rc,
                             uint32_t *table)
{
    size_t span = (size_t)1 << rc->probe_bits;
    size_t lim = avail < span ? avail : span;
    memset(table, 0, span * sizeof(uint32_t));
    if (lim < 13)
        return 0.0;
    size_t last = lim - 1, stop_at = lim - 12;
    size_t pos = 0;
    int64_t outc = 5;
    unsigned pending = 4;
    while (pos < stop_at) {
        size_t start = pos;
        uint32_t h = bucket(rd32(in + pos), rc->probe_bits);
        size_t cand = table[h];
        size_t dist = start - cand;
        table[h] = (uint32_t)start;
        int literal = 1;
        size_t len = 0;
        if (dist != 0 && dist < FAR_LIMIT && rd32(in + cand) == rd32(in + start)) {
            pos = match_end(in, start + 4, dist, last) - rc->probe_back;
            len = pos - start;
            literal = len < rc->probe_min;
        }
        if (literal) {
            outc++;
            pos = start + 1;
            if (++pending == LIT_MAX) {
                pending = 0;
                outc++;
            }
            continue;
        }
        if (pending == 0)
            outc--;
        pending = 0;
        if (len >= 7)
            outc += (int64_t)((len - 7) / 255) + 1;
        outc += (dist - 1 < NEAR_LIMIT) ? 2 : 4;
        table[bucket(rd32(in + pos), rc->probe_bits)] = (uint32_t)pos;
        pos += 2;
        outc++;
    }
    return (double)pos / (double)outc;
}

/* Main encoder.  Returns the stream size, or 0 when the input is not worth
 * compressing or the stream would not fit in maxout bytes. */
static int64_t lz_encode(int clevel, const uint8_t *in, size_t len, uint8_t *out, size_t maxout,
                         const struct lz_recipe *rc, double ratio, uint32_t *table)
{
    if (ratio < ratio_floor[clevel])
        return 0;
    if (len < 16 || maxout < 66)
        return 0;
    unsigned bits = level_bits[clevel];
    memset(table, 0, ((size_t)1 << bits) * sizeof(uint32_t));

    size_t last = len - 1, stop_at = len - 12;
    size_t op = 0, pos = 0;
    unsigned pending = 4;     /* literals written since the current count byte */

    out[op++] = LIT_MAX - 1;
    for (int k = 0; k < 4; k++)
        out[op++] = in[pos++];

    while (pos < stop_at) {
        size_t start = pos;
        uint32_t word = rd32(in + pos);
        uint32_t h = bucket(word, bits);
        size_t cand = table[h];
        size_t dist = start - cand;
        table[h] = (uint32_t)start;
        int literal = 1;
        size_t mlen = 0;
        if (dist != 0 && dist < FAR_LIMIT && rd32(in + cand) == word) {
            pos = match_end(in, start + 4, dist, last) - rc->back;
            mlen = pos - start;
            literal = mlen < rc->min || (mlen <= 5 && dist - 1 >= NEAR_LIMIT);
        }
        if (literal) {
            if (op + 2 > maxout)
                return 0;
            out[op++] = in[start];
            pos = start + 1;
            if (++pending == LIT_MAX) {
                pending = 0;
                out[op++] = LIT_MAX - 1;
            }
            continue;
        }
        /* close the literal run in front of the match (or drop its count byte) */
        if (pending)
            out[op - pending - 1] = (uint8_t)(pending - 1);
        else
            op--;
        pending = 0;

        size_t d = dist - 1;
        int far = d >= NEAR_LIMIT;
        size_t code = far ? 31 : d >> 8;
        if (far)
            d -= NEAR_LIMIT;
        if (mlen < 7) {
            size_t need = far ? 4 : 2;
            if (op + need > maxout)
                return 0;
            out[op++] = (uint8_t)((mlen << 5) + code);
        } else {
            if (op + 1 > maxout)
                return 0;
            out[op++] = (uint8_t)(0xE0 + code);
            size_t rest = mlen - 7;
            for (; rest >= 255; rest -= 255) {
                if (op + 1 > maxout)
                    return 0;
                out[op++] = 255;
            }
            if (op + (far ? 4 : 2) > maxout)
                return 0;
            out[op++] = (uint8_t)rest;
        }
        if (far) {
            out[op++] = 255;
            out[op++] = (uint8_t)(d >> 8);
            out[op++] = (uint8_t)(d & 255);
        } else {
            out[op++] = (uint8_t)(d & 255);
        }

        /* re-seed the table where the match ended */
        uint32_t tail = rd32(in + pos);
        table[bucket(tail, bits)] = (uint32_t)pos;
        pos++;
        if (clevel == 9)
            table[bucket(tail >> 8, bits)] = (uint32_t)pos;
        pos++;

        if (op + 1 > maxout)
            return 0;
        out[op++] = LIT_MAX - 1;
    }

    while (pos <= last) {
        if (op + 2 > maxout)
            return 0;
        out[op++] = in[pos++];
        if (++pending == LIT_MAX) {
            pending = 0;
            out[op++] = LIT_MAX - 1;
        }
    }
    if (pending)
        out[op - pending - 1] = (uint8_t)(pending - 1);
    else
        op--;
    out[0] |= 0x20;
    return (int64_t)op;
}

int64_t bk_blosclz_compress(int clevel, const uint8_t *src, size_t len, uint8_t *dst,
                            size_t maxout, int flavor, int split)
{
    uint32_t table[1 << 14];   /* big enough for the largest hash (14 bits) */
    struct lz_recipe rc;
    size_t window;

    if (clevel < 1 || clevel > 9 || len > 0x7FFFFFFF)
        return BK_EPARAM;
    if (maxout > 0x7FFFFFFF)
        maxout = 0x7FFFFFFF;

    if (flavor == 1) {
        /* C-Blosc 1.21: fixed 12-bit probe on the last quarter, 3-byte give-back */
        rc.probe_bits = 12;
        window = len / 4;
        rc.probe_back = rc.probe_min = 3;
    } else {
        /* C-Blosc2 3.x: probe size grows with clevel */
        rc.probe_bits = level_bits[clevel];
        window = len;
        if (clevel < 2)
            window /= 8;
        else if (clevel < 4)
            window /= 4;
        else if (clevel < 7)
            window /= 2;
        rc.probe_back = rc.probe_min = 4;
    }
    double ratio = estimate_ratio(src + (len - window), window, &rc, table);
    if (flavor == 1 && (!split || ratio < 4))
        rc.back = rc.min = 3;
    else
        rc.back = rc.min = 4;
    return lz_encode(clevel, src, len, dst, maxout, &rc, ratio, table);
}
