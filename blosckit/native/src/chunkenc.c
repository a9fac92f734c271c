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

static int apply_filters(const bk_encoder *e, int32_t j, const uint8_t *block,
                         const uint8_t *block0, int32_t bsize, uint8_t *s1, uint8_t *s2,
                         const uint8_t **result) {
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
        bk_delta_encode(j == 0 ? cur : block0, cur, nxt, (size_t)bsize, (size_t)e->typesize,
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

/* Block j (its bytes at `block`, block 0's at `block0`) into `out`, as the
 * reference encoder does when `budget`
 * bytes are left from the block's start (INT64_MAX: no limit): a stream
 * that cannot fit makes it give up (BK_OVER_BUDGET), writing nothing past
 * the budget.  *size: bytes written; *need: the highest position compared
 * with the budget; *zeros: every stream is a zero run. */
enum { BK_OVER_BUDGET = 1 };
static int encode_block_into(const bk_encoder *e, int32_t j, const uint8_t *block,
                             const uint8_t *block0, uint8_t *s1, uint8_t *s2, void *ctx,
                             uint8_t *out, int64_t budget, int64_t *size, int64_t *need,
                             int *zeros) {
  int32_t rest = e->nbytes % e->blocksize;
  int leftover = (j == e->nblocks - 1) && rest;
  int32_t bsize = leftover ? rest : e->blocksize;
  int32_t nstreams = (e->split && !leftover) ? e->typesize : 1;
  int32_t neblock = bsize / nstreams;
  const uint8_t *data;
  int64_t pos = 0, high = 0;
  int all_zero = 1;

  if (apply_filters(e, j, block, block0, bsize, s1, s2, &data) != 0)
    return -1;
  for (int32_t k = 0; k < nstreams; k++) {
    const uint8_t *piece = data + (int64_t)k * neblock;
    int64_t n, maxout = neblock;
    int64_t at = pos;         /* the stream's csize */
    pos += BK_CHUNK_LEN_CSIZE;
    if (e->detect_runs && is_run(piece, neblock)) {
      int64_t end = pos + (piece[0] ? BK_CHUNK_LEN_TOKEN : 0);
      if (end > high) high = end;
      if (end > budget) return BK_OVER_BUDGET;
      if (piece[0]) {
        bk_put_le32(out + at, -(int32_t)piece[0]);
        out[pos] = BK_CHUNK_TOKEN_RUN;    /* token: a run of one byte value */
        all_zero = 0;
      } else {
        bk_put_le32(out + at, 0);
      }
      pos = end;
      continue;
    }
    all_zero = 0;
    if (pos + neblock > high) high = pos + neblock;
    if (pos + maxout > budget) {
      maxout = budget - pos;
      if (maxout <= 0) return BK_OVER_BUDGET;
    }
    n = encode_stream(e, ctx, piece, neblock, out + pos, (int32_t)maxout);
    if (n < 0) return -1;
    if (n == 0 || n == neblock) {
      if (pos + neblock > budget) return BK_OVER_BUDGET;
      memcpy(out + pos, piece, (size_t)neblock);
      n = neblock;
    }
    bk_put_le32(out + at, (int32_t)n);
    pos += n;
  }
  *size = pos;
  *need = high;
  *zeros = all_zero;
  return 0;
}

static int encode_block(const bk_encoder *e, int32_t j, uint8_t *s1, uint8_t *s2, void *ctx) {
  int64_t size, need;
  int zeros;
  if (encode_block_into(e, j, e->src + (int64_t)j * e->blocksize, e->src, s1, s2, ctx,
                        e->out + (int64_t)j * e->block_cap, INT64_MAX, &size, &need, &zeros) != 0)
    return -1;
  e->sizes[j] = (int32_t)size;
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

/* ---------------------------------------------------------------- arrays
 *
 * Every chunk of a b2nd array in one call (bk_array_encoder): each chunk is
 * gathered from the array block by block, in C order over its block grid,
 * padding zeroed (or read in place when it is a contiguous slice of the
 * array), its blocks encoded one after another with the budget the
 * reference encoder has at each (so no block is encoded twice), and the
 * chunk written whole -- header, bstarts, streams; the raw chunk when the
 * budget runs out; the zeros special chunk when every stream is a zero
 * run.  Chunks are spread over the threads, each kept by one. */

/* The headers' order in bk_array_encoder.headers; the scratch buffer s1's
 * parts, a block each (s2 is the other filter buffer). */
enum { HEADER_REGULAR, HEADER_RAW, HEADER_ZEROS };
enum { SCRATCH_BLOCK0, SCRATCH_CURRENT, SCRATCH_FILTER, SCRATCH_BLOCKS };

/* Where chunk j lies: its origin (items), the array's strides and the
 * block's (bytes), its block grid. */
typedef struct {
  int64_t origin[BK_ARRAY_MAX_DIM], astride[BK_ARRAY_MAX_DIM], bstride[BK_ARRAY_MAX_DIM];
  int64_t bgrid[BK_ARRAY_MAX_DIM];
  int64_t base;             /* the array offset of its origin */
  int in_place;             /* a contiguous slice of the array, from base */
} chunk_place;

static void place_chunk(const bk_array_encoder *a, int32_t j, chunk_place *p) {
  int nd = a->ndim;
  int64_t rest = j, bbytes = a->enc.typesize;
  int inside = 1;
  p->base = 0;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t grid = (a->shape[d] + a->chunkshape[d] - 1) / a->chunkshape[d];
    p->origin[d] = rest % grid * a->chunkshape[d];
    rest /= grid;
    p->bgrid[d] = (a->chunkshape[d] + a->blockshape[d] - 1) / a->blockshape[d];
    p->bstride[d] = bbytes;
    bbytes *= a->blockshape[d];
    p->astride[d] = d == nd - 1 ? a->enc.typesize : p->astride[d + 1] * a->shape[d + 1];
    inside &= p->origin[d] + a->chunkshape[d] <= a->shape[d];
  }
  for (int d = 0; d < nd; d++) p->base += p->origin[d] * p->astride[d];
  /* blocks spanning all but the first dimension whole, as the chunk and
     the array do, lie one after another in the array (0-d: one item) */
  p->in_place = inside && (nd == 0 || a->chunkshape[0] % a->blockshape[0] == 0);
  for (int d = 1; d < nd; d++)
    p->in_place &= a->blockshape[d] == a->chunkshape[d] && a->chunkshape[d] == a->shape[d];
}

/* Block b of the chunk at p, its padding zeroed, into dst (bsize bytes). */
static void gather_block(const bk_array_encoder *a, const chunk_place *p, int64_t b,
                         uint8_t *dst) {
  int nd = a->ndim, k, full = 1;
  int64_t start[BK_ARRAY_MAX_DIM], extent[BK_ARRAY_MAX_DIM], idx[BK_ARRAY_MAX_DIM];
  int64_t src = 0, run = a->enc.typesize, outer = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t e = a->blockshape[d], end = p->origin[d] + a->chunkshape[d];
    start[d] = p->origin[d] + b % p->bgrid[d] * a->blockshape[d];
    b /= p->bgrid[d];
    if (end > a->shape[d]) end = a->shape[d];
    if (end - start[d] < e) e = end - start[d];
    extent[d] = e > 0 ? e : 0;
    full &= extent[d] == a->blockshape[d];
    src += start[d] * p->astride[d];
  }
  if (!full) memset(dst, 0, (size_t)a->enc.blocksize);
  /* trailing dimensions the block and the array span whole: one run */
  k = nd - 1;
  while (k > 0 && extent[k] == a->blockshape[k] && extent[k] == a->shape[k]) k--;
  for (int d = k < 0 ? 0 : k; d < nd; d++) run *= extent[d];
  for (int d = 0; d < k; d++) {
    outer *= extent[d];
    idx[d] = 0;
  }
  for (int64_t r = 0; r < outer && run > 0; r++) {
    int64_t so = src, bo = 0;
    for (int d = 0; d < k; d++) {
      so += idx[d] * p->astride[d];
      bo += idx[d] * p->bstride[d];
    }
    memcpy(dst + bo, a->array + so, (size_t)run);
    for (int d = k - 1; d >= 0; d--) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
  }
}

/* Chunk j: gathered a block at a time just before the block is encoded
 * (block 0 kept for delta), or read in place. */
static int encode_array_chunk(void *arg, bk_worker *w, int32_t j) {
  const bk_array_encoder *a = (const bk_array_encoder *)arg;
  const bk_encoder *e = &a->enc;
  int32_t nbytes = e->nbytes, over = a->overhead, bs = e->blocksize;
  int32_t slot = j - a->first;
  uint8_t *out = a->out + (int64_t)slot * a->chunk_cap;
  uint8_t *block0 = w->s1 + SCRATCH_BLOCK0 * (int64_t)bs;
  uint8_t *cur = w->s1 + SCRATCH_CURRENT * (int64_t)bs;
  uint8_t *f1 = w->s1 + SCRATCH_FILTER * (int64_t)bs, *f2 = w->s2;
  int64_t pos = over + (int64_t)BK_CHUNK_LEN_BSTART * e->nblocks;
  int all_zero = 1;
  chunk_place p;

  place_chunk(a, j, &p);
  if (p.in_place) block0 = (uint8_t *)a->array + p.base;
  else gather_block(a, &p, 0, block0);
  for (int32_t b = 0; b < e->nblocks && !a->raw_only; b++) {
    int64_t size, need;
    int zeros, rc;
    const uint8_t *block = block0;
    if (b > 0 && p.in_place) {
      block = block0 + (int64_t)b * bs;
    } else if (b > 0) {
      gather_block(a, &p, b, cur);
      block = cur;
    }
    rc = encode_block_into(e, b, block, block0, f1, f2, w->ctx, out + pos, a->destsize - pos,
                           &size, &need, &zeros);
    if (rc < 0) return -1;
    if (rc == BK_OVER_BUDGET) goto raw;
    bk_put_le32(out + over + (int64_t)BK_CHUNK_LEN_BSTART * b, (int32_t)pos);
    pos += size;
    all_zero &= zeros;
  }
  if (a->raw_only) goto raw;
  if (e->detect_runs && all_zero) {
    memcpy(out, a->headers + HEADER_ZEROS * over, (size_t)over);
    a->sizes[slot] = over;
    return 0;
  }
  memcpy(out, a->headers + HEADER_REGULAR * over, (size_t)over);
  bk_put_le32(out + BK_CHUNK_HEADER_CBYTES_OFS, (int32_t)pos);
  a->sizes[slot] = (int32_t)pos;
  return 0;
raw:
  memcpy(out, a->headers + HEADER_RAW * over, (size_t)over);
  bk_put_le32(out + BK_CHUNK_HEADER_CBYTES_OFS, over + nbytes);
  if (p.in_place)
    memcpy(out + over, block0, (size_t)nbytes);
  else
    for (int32_t b = 0; b < e->nblocks; b++)
      gather_block(a, &p, b, out + over + (int64_t)b * bs);
  a->sizes[slot] = over + nbytes;
  return 0;
}

/* The shapes describe the buffers: the array's items, each chunk's padded
 * blocks and a block, the chunk grid (first + count chunks in it). */
static int array_shapes_ok(const bk_array_encoder *a, int32_t count) {
  int64_t items = 1, padded = 1, chunks = 1, block = 1;
  if (a->ndim < 0 || a->ndim > BK_ARRAY_MAX_DIM || a->enc.typesize <= 0 ||
      a->enc.typesize > UINT8_MAX)
    return 0;
  for (int d = 0; d < a->ndim; d++) {
    int64_t s = a->shape[d], c = a->chunkshape[d], b = a->blockshape[d];
    if (s <= 0 || c <= 0 || b <= 0 || s > INT32_MAX || c > INT32_MAX || b > INT32_MAX) return 0;
    items *= s;
    padded *= (c + b - 1) / b * b;
    block *= b;
    chunks *= (s + c - 1) / c;
    if (items > INT64_MAX / INT32_MAX || padded > INT32_MAX || chunks > INT32_MAX) return 0;
  }
  return (uint64_t)(items * a->enc.typesize) == (uint64_t)a->array_len &&
         padded * a->enc.typesize == a->enc.nbytes &&
         block * a->enc.typesize == a->enc.blocksize && a->first >= 0 &&
         (int64_t)a->first + count <= chunks;
}

int bk_encode_array_chunks(const bk_array_encoder *a, int32_t nchunks, int nthreads) {
  const bk_encoder *e = &a->enc;
  size_t scratch = SCRATCH_BLOCKS * (size_t)e->blocksize;
  void *ctx_new = e->codec_kind == BK_KIND_ZSTD ? e->fn_new : NULL;
  int64_t need = (int64_t)a->overhead + e->nbytes;
  if (nchunks <= 0) return 0;
  if (!array_shapes_ok(a, nchunks) || a->chunk_cap < need || a->chunk_cap < a->destsize ||
      e->blocksize <= 0 || e->nbytes % e->blocksize || e->nblocks != e->nbytes / e->blocksize ||
      a->overhead < BK_CHUNK_HEADER_CBYTES_OFS + BK_CHUNK_HEADER_CBYTES_SIZE)
    return BK_EPARAM;
  int32_t r = bk_parallel_blocks(encode_array_chunk, (void *)a, a->first, a->first + nchunks,
                                 nthreads, scratch, ctx_new, e->fn_free);
  if (r == BK_DECODE_NOMEM) return BK_ENOMEM;
  return r == -1 ? BK_OK : BK_EPARAM;
}
