/* Block encoding for the chunk builder (compress.py).
 *
 * compress.py decides everything about a chunk (block size, split, filters,
 * codec parameters) and keeps the budget logic that makes C-Blosc fall back
 * to a memcpyed chunk.  This file does the bulk work: every block is run
 * through the filters, cut into streams, and each stream is stored as a
 * zero run, a byte run, a codec stream or raw bytes -- in parallel threads,
 * each block into its own slot of one output buffer.  For every block it
 * reports the bytes written and the highest output position the reference
 * encoder would have compared with its budget ("need"), so the caller can
 * replay the budget check in block order.
 */
#include <stdlib.h>
#include <string.h>

#include "blosckit_native.h"

_Static_assert(BK_CHUNK_LEN_TOKEN == 1, "the token is written as one byte");

typedef int (*lz4_fast_fn)(const char *, char *, int, int, int);
typedef size_t (*zstd_cctx_fn)(void *, void *, size_t, const void *, size_t, int);
typedef unsigned (*zstd_err_fn)(size_t);
typedef void *(*new_fn)(void);
typedef size_t (*free_fn)(void *);

/* Encode one stream with the chunk's codec; 0 when it does not fit. */
static int64_t encode_stream(const bk_encoder *e, void *ctx, const uint8_t *src, int32_t len,
                             uint8_t *dst, int32_t maxout) {
  switch (e->codec_kind) {
    case BK_KIND_BLOSCLZ: {
      int64_t n = bk_blosclz_compress(e->clevel, src, (size_t)len, dst, (size_t)maxout,
                                      e->codec_param, e->split);
      return n > 0 ? n : 0;
    }
    case BK_KIND_LZ4:
    case BK_KIND_LZ4HC: {
      /* fast mode takes an acceleration, HC a level: both one int */
      int n = ((lz4_fast_fn)e->fn)((const char *)src, (char *)dst, len, maxout,
                                   e->codec_param);
      return n > 0 ? n : 0;
    }
    case BK_KIND_ZSTD: {
      size_t r;
      if (ctx == NULL) return -1;
      r = ((zstd_cctx_fn)e->fn)(ctx, dst, (size_t)maxout, src, (size_t)len, e->codec_param);
      return ((zstd_err_fn)e->fn_error)(r) ? 0 : (int64_t)r;
    }
    case BK_KIND_ZLIB: {
      int64_t n = bk_zng_once(0, e->fn_begin, e->fn, e->fn_end, e->codec_param, src, len, dst,
                              maxout);
      return n > 0 ? n : 0;
    }
    default:
      return -1;
  }
}

/* All bytes equal (a one-byte stream counts as a run). */
static int is_run(const uint8_t *p, int32_t n) {
  return n > 0 && (n == 1 || (p[0] == p[n - 1] && memcmp(p, p + 1, (size_t)n - 1) == 0));
}

static int apply_filters(const bk_encoder *e, int32_t j, const uint8_t *block, int32_t bsize,
                         uint8_t *s1, uint8_t *s2, const uint8_t **result) {
  const uint8_t *cur = block;
  for (int f = 0; f < e->nfilters; f++) {
    uint8_t *nxt = (cur == s1) ? s2 : s1;
    int meta = e->filter_metas[f];
    size_t group = meta ? (size_t)meta : (size_t)e->typesize;
    int rc = 0;
    switch (e->filter_ids[f]) {
      case BK_FILTER_SHUFFLE:
        rc = bk_shuffle(cur, nxt, (size_t)bsize, group);
        break;
      case BK_FILTER_BITSHUFFLE:   /* Blosc1 chunks: the legacy bit order rule */
        rc = bk_bitshuffle(cur, nxt, (size_t)bsize, (size_t)e->typesize,
                           e->version <= BK_VERSION_BLOSC1);
        break;
      case BK_FILTER_DELTA:
        /* block 0 is XORed with itself shifted, the others with the raw
           (unfiltered) first block of the input */
        bk_delta_encode(j == 0 ? cur : e->src, cur, nxt, (size_t)bsize, (size_t)e->typesize,
                        j == 0);
        break;
      case BK_FILTER_TRUNC_PREC:
        rc = bk_trunc_prec(cur, nxt, (size_t)bsize, (size_t)e->typesize, (int8_t)meta);
        break;
      case BK_FILTER_BYTEDELTA:
        bk_bytedelta_encode(cur, nxt, (size_t)bsize, group, 0);
        break;
      default:
        return -1;
    }
    if (rc < 0) return -1;
    cur = nxt;
  }
  *result = cur;
  return 0;
}

static int encode_block(const bk_encoder *e, int32_t j, uint8_t *s1, uint8_t *s2, void *ctx) {
  int32_t rest = e->nbytes % e->blocksize;
  int leftover = (j == e->nblocks - 1) && rest;
  int32_t bsize = leftover ? rest : e->blocksize;
  int32_t nstreams = (e->split && !leftover) ? e->typesize : 1;
  int32_t neblock = bsize / nstreams;
  const uint8_t *data;
  uint8_t *out = e->out + (int64_t)j * e->block_cap;
  int64_t pos = 0, need = 0;

  if (apply_filters(e, j, e->src + (int64_t)j * e->blocksize, bsize, s1, s2, &data) != 0)
    return -1;
  for (int32_t k = 0; k < nstreams; k++) {
    const uint8_t *piece = data + (int64_t)k * neblock;
    int64_t n;
    int64_t at = pos;         /* the stream's csize */
    pos += BK_CHUNK_LEN_CSIZE;
    if (e->detect_runs && is_run(piece, neblock)) {
      if (piece[0]) {
        bk_put_le32(out + at, -(int32_t)piece[0]);
        out[pos] = BK_CHUNK_TOKEN_RUN;    /* token: a run of one byte value */
        pos += BK_CHUNK_LEN_TOKEN;
      } else {
        bk_put_le32(out + at, 0);
      }
      if (pos > need) need = pos;
      continue;
    }
    if (pos + neblock > need) need = pos + neblock;
    n = encode_stream(e, ctx, piece, neblock, out + pos, neblock);
    if (n < 0) return -1;
    if (n == 0 || n == neblock) {
      memcpy(out + pos, piece, (size_t)neblock);
      n = neblock;
    }
    bk_put_le32(out + at, (int32_t)n);
    pos += n;
  }
  e->sizes[j] = (int32_t)pos;
  e->needs[j] = (int32_t)need;
  return 0;
}

static int encode_one(void *arg, bk_worker *w, int32_t j) {
  return encode_block((const bk_encoder *)arg, j, w->s1, w->s2, w->ctx);
}

int bk_encode_blocks(const bk_encoder *e, int nthreads) {
  size_t scratch = e->nfilters ? (size_t)e->blocksize : 0;
  void *ctx_new = e->codec_kind == BK_KIND_ZSTD ? e->fn_new : NULL;
  if (e->nblocks <= 0) return 0;
  int32_t r = bk_parallel_blocks(encode_one, (void *)e, 0, e->nblocks, nthreads, scratch,
                                 ctx_new, e->fn_free);
  if (r == BK_DECODE_NOMEM) return BK_ENOMEM;
  return r == -1 ? BK_OK : BK_EPARAM;
}
