/* One-call decoding of the common Blosc2 chunk: header, checks and blocks.
 *
 * chunk.py's reader is the reference: it names the exact rule a bad chunk
 * breaks.  This file covers only the chunks C-Blosc2 writes by default
 * (version 4 or 5, extended header, regular blocks, no special, lazy,
 * instrumented or VL-block chunks, codecs blosclz, lz4, zlib and zstd, the
 * standard filters) and declines everything else.  For what it covers it
 * repeats every check of the reader, in the reader's terms, so that it
 * never accepts a chunk the reader would reject; whatever it rejects the
 * reader reads again to explain.  Only bytes in [0, srclen) are read and
 * only bytes in [0, nbytes) of dst are written.
 */
#include <string.h>

#include "blosckit_native.h"

#define LEN_HEADER 16
#define LEN_EXTENDED 32
#define MAX_BLOCKSIZE 536866816 /* the largest block C-Blosc2 accepts */
#define MAX_DICTSIZE 32768

#define FLAG_MEMCPYED 0x02
#define FLAG_DONT_SPLIT 0x10
#define B2_DICT 0x01
/* lazy (bit 3), special kind (bits 4-6) and instrumented (bit 7) */
#define B2_NOT_HANDLED 0xF8

static int32_t le32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                     ((uint32_t)p[3] << 24));
}

int bk_read_header(const uint8_t *src, size_t len, bk_header *h)
{
    memset(h, 0, sizeof *h);
    if (len < LEN_HEADER)
        return 0;
    h->version = src[0];
    h->versionlz = src[1];
    h->flags = src[2];
    h->typesize = src[3];
    h->nbytes = le32(src + 4);
    h->blocksize = le32(src + 8);
    h->cbytes = le32(src + 12);
    if ((h->flags & 0x05) != 0x05)   /* shuffle + bitshuffle bits: 32-byte header */
        return LEN_HEADER;
    if (len < LEN_EXTENDED)
        return 0;
    h->extended = 1;
    h->b2flags = src[31];
    if (h->version == 3) {
        /* the alpha layout: five slots and their metas, the rest reserved */
        memcpy(h->filters, src + 16, 5);
        memcpy(h->filters_meta, src + 24, 5);
        return LEN_EXTENDED;
    }
    memcpy(h->filters, src + 16, 6);
    h->udcodec = src[22];
    h->compcode_meta = src[23];
    memcpy(h->filters_meta, src + 24, 6);
    h->flags2 = src[30];
    return LEN_EXTENDED;
}

/* Filter ids this path knows how to undo (4, trunc_prec, needs nothing). */
static int known_filter(int id)
{
    return id == 0 || id == 1 || id == 2 || id == 3 || id == 4 || id == 34 || id == 35;
}

/* The codec entry when the chunk is one this path handles, else NULL. */
static const bk_codec_entry *handled(const bk_header *h, const bk_codec_table *t)
{
    int fmt = h->flags >> 5;
    const bk_codec_entry *e;
    if (!h->extended || (h->version != 4 && h->version != 5))
        return NULL;
    if (h->flags2 != 0 || (h->b2flags & B2_NOT_HANDLED))
        return NULL;
    for (int k = 0; k < 6; k++)
        if (!known_filter(h->filters[k]))
            return NULL;
    if (fmt != 0 && fmt != 1 && fmt != 3 && fmt != 4)
        return NULL;
    e = &t->by_format[fmt];
    if (e->kind == BK_CODEC_NONE)
        return NULL;
    /* the reader hands a dictionary to lz4 and zstd only */
    if ((h->b2flags & B2_DICT) && e->kind != BK_CODEC_LZ4 && e->kind != BK_CODEC_ZSTD)
        return NULL;
    return e;
}

/* What the checks derive for the decoder. */
typedef struct {
    int32_t blocksize; /* clamped to nbytes */
    int32_t nblocks;
    int kind;          /* 0 empty, 1 memcpyed, 2 blocks */
    int split;
    const uint8_t *dict;
    int32_t dictlen;
} layout;

/* The reader's header rules for this subset (H2-H6, H14, T-nbytes,
 * T-max-nbytes; the extended header is known to be there). */
static int header_ok(const bk_header *h, size_t srclen, int32_t max_nbytes)
{
    if (h->cbytes < LEN_EXTENDED || h->typesize == 0)
        return 0;
    if (h->nbytes < 0 || h->nbytes > max_nbytes)
        return 0;
    if (h->blocksize <= 0 || h->blocksize > MAX_BLOCKSIZE)
        return 0;
    return (uint64_t)h->cbytes <= (uint64_t)srclen;
}

/* Dictionary section after the bstarts (D7-D9); returns where streams start, or -1. */
static int64_t read_dict(const uint8_t *src, const bk_header *h, int64_t end, layout *L)
{
    int32_t dsize;
    if (end + 4 > h->cbytes)
        return -1;
    dsize = le32(src + end);
    if (dsize <= 0 || dsize > MAX_DICTSIZE || end + 4 + dsize > h->cbytes)
        return -1;
    L->dict = src + end + 4;
    L->dictlen = dsize;
    return end + 4 + dsize;
}

/* Every rule the reader applies before decoding (cbytes <= srclen holds). */
static int layout_ok(const uint8_t *src, const bk_header *h, layout *L)
{
    int64_t nb = h->nbytes, cb = h->cbytes, end, lo, hi;
    L->blocksize = h->blocksize;
    L->nblocks = 0;
    L->dict = NULL;
    L->dictlen = 0;
    L->split = !(h->flags & FLAG_DONT_SPLIT);
    if (nb > 0) {
        if (L->blocksize > nb)
            L->blocksize = (int32_t)nb;   /* as C-Blosc2 does (H13) */
        L->nblocks = (int32_t)((nb + L->blocksize - 1) / L->blocksize);
    }
    if (h->flags & FLAG_MEMCPYED) {
        L->kind = 1;
        return cb == nb + LEN_EXTENDED;   /* D3 */
    }
    if (nb == 0) {
        L->kind = 0;
        return cb == LEN_EXTENDED;        /* D4 */
    }
    L->kind = 2;
    end = LEN_EXTENDED + 4 * (int64_t)L->nblocks;
    if (end > cb)                         /* D6 (cbytes is within the buffer) */
        return 0;
    lo = end;
    if (h->b2flags & B2_DICT) {
        lo = read_dict(src, h, end, L);
        if (lo < 0)
            return 0;
    }
    hi = cb - 4;
    for (int32_t j = 0; j < L->nblocks; j++) {   /* B1 */
        int32_t b = le32(src + LEN_EXTENDED + 4 * (int64_t)j);
        if (b < lo || b > hi)
            return 0;
    }
    /* B2, B3: a split block must hold whole items */
    if (L->split && nb / L->blocksize > 0 && h->typesize > 1 &&
        (L->blocksize < h->typesize || L->blocksize % h->typesize != 0))
        return 0;
    return 1;
}

/* Decode the blocks with chunkdec.c; a BK_FAST_* status. */
static int decode_blocks(const uint8_t *src, const bk_header *h, const layout *L,
                         const bk_codec_entry *e, uint8_t *dst, int nthreads)
{
    bk_chunk c;
    int32_t rc;
    memset(&c, 0, sizeof c);
    c.src = src;
    c.cbytes = h->cbytes;
    c.bstarts_le = src + LEN_EXTENDED;
    c.nblocks = L->nblocks;
    c.nbytes = h->nbytes;
    c.blocksize = L->blocksize;
    c.typesize = h->typesize;
    c.version = h->version;
    c.split = L->split;
    c.token_follows = 1;                 /* versions >= 4 */
    for (int slot = 5; slot >= 0; slot--) {   /* decode order: last slot first */
        int id = h->filters[slot];
        if (id == 0 || id == 4)
            continue;                   /* nothing to undo */
        c.filter_ids[c.nfilters] = (uint8_t)id;
        c.filter_metas[c.nfilters] = h->filters_meta[slot];
        c.nfilters++;
        if (id == 3)
            c.uses_delta = 1;
    }
    c.codec_kind = e->kind;
    c.fn = e->fn;
    c.fn_dict = e->fn_dict;
    c.fn_error = e->fn_error;
    c.fn_new = e->fn_new;
    c.fn_free = e->fn_free;
    c.fn_begin = e->fn_begin;
    c.fn_end = e->fn_end;
    c.dict = L->dict;
    c.dictlen = L->dictlen;
    c.dst = dst;
    rc = bk_decode_chunk(&c, nthreads < 1 ? 1 : nthreads);
    if (rc == -1)
        return BK_FAST_DONE;
    return rc == BK_DECODE_NOMEM ? BK_FAST_NOMEM : BK_FAST_REJECTED;
}

int bk_fast_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                       int32_t max_nbytes, int nthreads, const bk_codec_table *table,
                       int32_t *nbytes)
{
    bk_header h;
    layout L;
    const bk_codec_entry *e;
    if (nbytes != NULL)
        *nbytes = -1;
    if (bk_read_header(src, srclen, &h) == 0)
        return BK_FAST_REJECTED;   /* shorter than its header: H1 or H7 */
    e = handled(&h, table);
    if (e == NULL)
        return BK_FAST_DECLINED;
    if (!header_ok(&h, srclen, max_nbytes) || !layout_ok(src, &h, &L))
        return BK_FAST_REJECTED;
    if (nbytes != NULL)
        *nbytes = h.nbytes;
    if (dst == NULL)
        return BK_FAST_DONE;             /* checked, nothing decoded */
    if ((uint64_t)h.nbytes > dstlen)
        return BK_FAST_SMALL_DST;
    if (L.kind == 0)
        return BK_FAST_DONE;
    if (L.kind == 1) {
        memcpy(dst, src + LEN_EXTENDED, (size_t)h.nbytes);
        return BK_FAST_DONE;
    }
    return decode_blocks(src, &h, &L, e, dst, nthreads);
}

int bk_fast_decompress_at(const uint8_t *src, size_t srclen, uintptr_t dst, size_t dstlen,
                          int32_t max_nbytes, int nthreads, const bk_codec_table *table,
                          int32_t *nbytes)
{
    return bk_fast_decompress(src, srclen, (uint8_t *)dst, dstlen, max_nbytes, nthreads, table,
                              nbytes);
}
