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

BK_CHECK_INT32("nbytes", BK_CHUNK_HEADER_NBYTES_SIZE, BK_CHUNK_HEADER_NBYTES_SIGNED);
BK_CHECK_INT32("blocksize", BK_CHUNK_HEADER_BLOCKSIZE_SIZE, BK_CHUNK_HEADER_BLOCKSIZE_SIGNED);
BK_CHECK_INT32("cbytes", BK_CHUNK_HEADER_CBYTES_SIZE, BK_CHUNK_HEADER_CBYTES_SIGNED);
/* bk_header holds either extended layout, whose filter arrays are bytes */
_Static_assert(BK_CHUNK_EXTENDED_FILTERS_SIZE == BK_CHUNK_EXTENDED_FILTERS_COUNT &&
               BK_CHUNK_EXTENDED_ALPHA_FILTERS_SIZE == BK_CHUNK_EXTENDED_ALPHA_FILTERS_COUNT &&
               BK_CHUNK_EXTENDED_ALPHA_FILTERS_COUNT <= BK_CHUNK_EXTENDED_FILTERS_COUNT &&
               BK_CHUNK_EXTENDED_ALPHA_FILTERS_META_COUNT <= BK_CHUNK_EXTENDED_FILTERS_META_COUNT &&
               BK_CHUNK_EXTENDED_ALPHA_END == BK_CHUNK_EXTENDED_END,
               "the extended header layouts no longer fit bk_header");

int bk_read_header(const uint8_t *src, size_t len, bk_header *h)
{
    memset(h, 0, sizeof *h);
    if (len < BK_CHUNK_HEADER_END)
        return 0;
    h->version = src[BK_CHUNK_HEADER_VERSION_OFS];
    h->versionlz = src[BK_CHUNK_HEADER_VERSIONLZ_OFS];
    h->flags = src[BK_CHUNK_HEADER_FLAGS_OFS];
    h->typesize = src[BK_CHUNK_HEADER_TYPESIZE_OFS];
    h->nbytes = bk_le32(src + BK_CHUNK_HEADER_NBYTES_OFS);
    h->blocksize = bk_le32(src + BK_CHUNK_HEADER_BLOCKSIZE_OFS);
    h->cbytes = bk_le32(src + BK_CHUNK_HEADER_CBYTES_OFS);
    if ((h->flags & BK_CHUNK_FLAGS_EXTENDED_BITS) != BK_CHUNK_FLAGS_EXTENDED_BITS)
        return BK_CHUNK_HEADER_END;
    if (len < BK_CHUNK_EXTENDED_END)
        return 0;
    h->extended = 1;
    if (h->version == BK_CHUNK_EXTENDED_ALPHA_VERSION) {
        /* fewer slots and no codec bytes; the rest is reserved */
        memcpy(h->filters, src + BK_CHUNK_EXTENDED_ALPHA_FILTERS_OFS,
               BK_CHUNK_EXTENDED_ALPHA_FILTERS_COUNT);
        memcpy(h->filters_meta, src + BK_CHUNK_EXTENDED_ALPHA_FILTERS_META_OFS,
               BK_CHUNK_EXTENDED_ALPHA_FILTERS_META_COUNT);
        h->b2flags = src[BK_CHUNK_EXTENDED_ALPHA_BLOSC2_FLAGS_OFS];
        return BK_CHUNK_EXTENDED_ALPHA_END;
    }
    memcpy(h->filters, src + BK_CHUNK_EXTENDED_FILTERS_OFS, BK_CHUNK_EXTENDED_FILTERS_COUNT);
    h->udcodec = src[BK_CHUNK_EXTENDED_UDCODEC_OFS];
    h->compcode_meta = src[BK_CHUNK_EXTENDED_COMPCODE_META_OFS];
    memcpy(h->filters_meta, src + BK_CHUNK_EXTENDED_FILTERS_META_OFS,
           BK_CHUNK_EXTENDED_FILTERS_META_COUNT);
    h->flags2 = src[BK_CHUNK_EXTENDED_BLOSC2_FLAGS2_OFS];
    h->b2flags = src[BK_CHUNK_EXTENDED_BLOSC2_FLAGS_OFS];
    return BK_CHUNK_EXTENDED_END;
}

/* Filter ids this path knows how to undo (trunc_prec needs nothing). */
static int known_filter(int id)
{
    switch (id) {
    case BK_FILTER_NOFILTER:
    case BK_FILTER_SHUFFLE:
    case BK_FILTER_BITSHUFFLE:
    case BK_FILTER_DELTA:
    case BK_FILTER_TRUNC_PREC:
    case BK_FILTER_BYTEDELTA_BUGGY:
    case BK_FILTER_BYTEDELTA:
        return 1;
    default:
        return 0;
    }
}

/* Codec formats this path may decode (when the table has their codec). */
static int known_format(int fmt)
{
    return fmt == BK_COMPFORMAT_BLOSCLZ || fmt == BK_COMPFORMAT_LZ4 ||
           fmt == BK_COMPFORMAT_ZLIB || fmt == BK_COMPFORMAT_ZSTD;
}

/* The codec entry when the chunk is one this path handles, else NULL. */
static const bk_codec_entry *handled(const bk_header *h, const bk_codec_table *t)
{
    int fmt = bk_compformat(h->flags);
    const bk_codec_entry *e;
    if (!h->extended ||
        (h->version != BK_VERSION_BLOSC2_BETA1 && h->version != BK_VERSION_BLOSC2_STABLE))
        return NULL;
    if (h->flags2 != 0 || (h->b2flags & BK_B2FLAGS_DECLINED))
        return NULL;
    for (int k = 0; k < BK_CHUNK_EXTENDED_FILTERS_COUNT; k++)
        if (!known_filter(h->filters[k]))
            return NULL;
    if (!known_format(fmt))
        return NULL;
    e = &t->by_format[fmt];
    if (e->kind == BK_KIND_NONE)
        return NULL;
    /* the reader hands a dictionary to lz4 and zstd only */
    if ((h->b2flags & BK_CHUNK_EXTENDED_BLOSC2_FLAGS_USE_DICT_BITS) && e->kind != BK_KIND_LZ4 &&
        e->kind != BK_KIND_ZSTD)
        return NULL;
    return e;
}

/* What the checks derive for the decoder. */
typedef struct {
    int32_t blocksize; /* clamped to nbytes */
    int32_t nblocks;
    enum { BODY_EMPTY, BODY_MEMCPYED, BODY_BLOCKS } kind;
    int split;
    const uint8_t *dict;
    int32_t dictlen;
} layout;

/* The reader's header rules for this subset (H2-H6, H14, T-nbytes,
 * T-max-nbytes; the extended header is known to be there). */
static int header_ok(const bk_header *h, size_t srclen, int32_t max_nbytes)
{
    if (h->cbytes < BK_CHUNK_EXTENDED_END || h->typesize == 0)
        return 0;
    if (h->nbytes < 0 || h->nbytes > max_nbytes)
        return 0;
    if (h->blocksize <= 0 || h->blocksize > BK_CHUNK_MAX_BLOCKSIZE)
        return 0;
    return (uint64_t)h->cbytes <= (uint64_t)srclen;
}

/* Dictionary section after the bstarts (D7-D9); returns where streams start, or -1. */
static int64_t read_dict(const uint8_t *src, const bk_header *h, int64_t end, layout *L)
{
    int32_t dsize;
    if (end + BK_CHUNK_LEN_DSIZE > h->cbytes)
        return -1;
    dsize = bk_le32(src + end);
    if (dsize <= 0 || dsize > BK_CHUNK_MAX_DICTSIZE ||
        end + BK_CHUNK_LEN_DSIZE + dsize > h->cbytes)
        return -1;
    L->dict = src + end + BK_CHUNK_LEN_DSIZE;
    L->dictlen = dsize;
    return end + BK_CHUNK_LEN_DSIZE + dsize;
}

/* Every rule the reader applies before decoding (cbytes <= srclen holds). */
static int layout_ok(const uint8_t *src, const bk_header *h, layout *L)
{
    int64_t nb = h->nbytes, cb = h->cbytes, end, lo, hi;
    L->blocksize = h->blocksize;
    L->nblocks = 0;
    L->dict = NULL;
    L->dictlen = 0;
    L->split = !(h->flags & BK_CHUNK_HEADER_FLAGS_DONT_SPLIT_BITS);
    if (nb > 0) {
        if (L->blocksize > nb)
            L->blocksize = (int32_t)nb;   /* as C-Blosc2 does (H13) */
        L->nblocks = (int32_t)((nb + L->blocksize - 1) / L->blocksize);
    }
    if (h->flags & BK_CHUNK_HEADER_FLAGS_MEMCPYED_BITS) {
        L->kind = BODY_MEMCPYED;
        return cb == nb + BK_CHUNK_EXTENDED_END;   /* D3 */
    }
    if (nb == 0) {
        L->kind = BODY_EMPTY;
        return cb == BK_CHUNK_EXTENDED_END;        /* D4 */
    }
    L->kind = BODY_BLOCKS;
    end = BK_CHUNK_EXTENDED_END + BK_CHUNK_LEN_BSTART * (int64_t)L->nblocks;
    if (end > cb)                         /* D6 (cbytes is within the buffer) */
        return 0;
    lo = end;
    if (h->b2flags & BK_CHUNK_EXTENDED_BLOSC2_FLAGS_USE_DICT_BITS) {
        lo = read_dict(src, h, end, L);
        if (lo < 0)
            return 0;
    }
    hi = cb - BK_CHUNK_LEN_CSIZE;
    for (int32_t j = 0; j < L->nblocks; j++) {   /* B1 */
        int32_t b = bk_le32(src + BK_CHUNK_EXTENDED_END + BK_CHUNK_LEN_BSTART * (int64_t)j);
        if (b < lo || b > hi)
            return 0;
    }
    /* B2, B3: a split block must hold whole items */
    if (L->split && nb / L->blocksize > 0 && h->typesize > 1 &&
        (L->blocksize < h->typesize || L->blocksize % h->typesize != 0))
        return 0;
    return 1;
}

/* The chunk as chunkdec.c's decoder takes it (no dst yet). */
static void fill_chunk(const uint8_t *src, const bk_header *h, const layout *L,
                       const bk_codec_entry *e, bk_chunk *c)
{
    memset(c, 0, sizeof *c);
    c->src = src;
    c->cbytes = h->cbytes;
    c->bstarts_le = src + BK_CHUNK_EXTENDED_END;
    c->nblocks = L->nblocks;
    c->nbytes = h->nbytes;
    c->blocksize = L->blocksize;
    c->typesize = h->typesize;
    c->version = h->version;
    c->split = L->split;
    c->token_follows = h->version >= BK_CHUNK_TOKEN_MIN_VERSION;
    /* decode order: last slot first */
    for (int slot = BK_CHUNK_EXTENDED_FILTERS_COUNT - 1; slot >= 0; slot--) {
        int id = h->filters[slot];
        if (id == BK_FILTER_NOFILTER || id == BK_FILTER_TRUNC_PREC)
            continue;                   /* nothing to undo */
        c->filter_ids[c->nfilters] = (uint8_t)id;
        c->filter_metas[c->nfilters] = h->filters_meta[slot];
        c->nfilters++;
        if (id == BK_FILTER_DELTA)
            c->uses_delta = 1;
    }
    c->codec_kind = e->kind;
    c->fn = e->fn;
    c->fn_dict = e->fn_dict;
    c->fn_error = e->fn_error;
    c->fn_new = e->fn_new;
    c->fn_free = e->fn_free;
    c->fn_begin = e->fn_begin;
    c->fn_end = e->fn_end;
    c->dict = L->dict;
    c->dictlen = L->dictlen;
}

/* Decode the blocks with chunkdec.c; a BK_FAST_* status. */
static int decode_blocks(const uint8_t *src, const bk_header *h, const layout *L,
                         const bk_codec_entry *e, uint8_t *dst, int nthreads)
{
    bk_chunk c;
    int32_t rc;
    fill_chunk(src, h, L, e, &c);
    c.dst = dst;
    rc = bk_decode_chunk(&c, nthreads < 1 ? 1 : nthreads);
    if (rc == -1)
        return BK_FAST_DONE;
    return rc == BK_DECODE_NOMEM ? BK_FAST_NOMEM : BK_FAST_REJECTED;
}

/* Header, codec and layout checked (the reader's rules): BK_FAST_DONE
 * with h, L and *e filled, else DECLINED or REJECTED. */
static int checked(const uint8_t *src, size_t srclen, int32_t max_nbytes,
                   const bk_codec_table *table, bk_header *h, layout *L,
                   const bk_codec_entry **e)
{
    if (bk_read_header(src, srclen, h) == 0)
        return BK_FAST_REJECTED;   /* shorter than its header: H1 or H7 */
    *e = handled(h, table);
    if (*e == NULL)
        return BK_FAST_DECLINED;
    if (!header_ok(h, srclen, max_nbytes) || !layout_ok(src, h, L))
        return BK_FAST_REJECTED;
    return BK_FAST_DONE;
}

int bk_fast_prepare(const uint8_t *src, size_t srclen, int32_t max_nbytes,
                    const bk_codec_table *table, bk_chunk *c, int *body,
                    int32_t *stored_blocksize)
{
    bk_header h;
    layout L;
    const bk_codec_entry *e = NULL;
    int rc = checked(src, srclen, max_nbytes, table, &h, &L, &e);
    if (rc != BK_FAST_DONE)
        return rc;
    fill_chunk(src, &h, &L, e, c);
    *stored_blocksize = h.blocksize;     /* c's is clamped to nbytes */
    *body = L.kind == BODY_MEMCPYED ? BK_BODY_MEMCPYED
            : L.kind == BODY_EMPTY ? BK_BODY_EMPTY : BK_BODY_BLOCKS;
    return BK_FAST_DONE;
}

int bk_fast_decompress(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                       int32_t max_nbytes, int nthreads, const bk_codec_table *table,
                       int32_t *nbytes)
{
    bk_header h;
    layout L;
    const bk_codec_entry *e = NULL;
    int rc;
    if (nbytes != NULL)
        *nbytes = -1;
    rc = checked(src, srclen, max_nbytes, table, &h, &L, &e);
    if (rc != BK_FAST_DONE)
        return rc;
    if (nbytes != NULL)
        *nbytes = h.nbytes;
    if (dst == NULL)
        return BK_FAST_DONE;             /* checked, nothing decoded */
    if ((uint64_t)h.nbytes > dstlen)
        return BK_FAST_SMALL_DST;
    if (L.kind == BODY_EMPTY)
        return BK_FAST_DONE;
    if (L.kind == BODY_MEMCPYED) {
        memcpy(dst, src + BK_CHUNK_EXTENDED_END, (size_t)h.nbytes);
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
