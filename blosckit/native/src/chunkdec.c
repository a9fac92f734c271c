/* Whole-chunk decoding for regular (fixed-size block) chunks.
 *
 * The Python reader in chunk.py is the reference and the explainer: it
 * checks the header, bstarts and dictionary, then hands the chunk to
 * bk_decode_chunk.  Any failure here only reports the first failing block;
 * the reader then decodes that block with its Python path, which raises
 * the FormatError with the exact offset, path and rule.
 *
 * Codecs other than BloscLZ are called through function pointers that the
 * codec packages (python-lz4, python-zstandard) export, so every stream is
 * decoded straight into its place with no Python in between.  Blocks are
 * spread over worker threads; the GIL is released by cffi for the whole call.
 */
#include <stdlib.h>
#include <string.h>

#include "blosckit_native.h"

_Static_assert(BK_CHUNK_LEN_TOKEN == 1, "the token is read as one byte");

typedef int (*lz4_fn)(const char *, char *, int, int);
typedef int (*lz4_dict_fn)(const char *, char *, int, int, const char *, int);
typedef size_t (*zstd_fn)(void *, void *, size_t, const void *, size_t);
typedef size_t (*zstd_dict_fn)(void *, void *, size_t, const void *, size_t, const void *,
                               size_t);
typedef unsigned (*zstd_err_fn)(size_t);
typedef void *(*zstd_new_fn)(void);
typedef size_t (*zstd_free_fn)(void *);

/* One codec call: 0 and up = bytes produced, negative = failure. */
static int64_t run_codec(const bk_chunk *c, void *zctx, const uint8_t *src, int32_t srclen,
                         uint8_t *dst, int32_t dstlen) {
  switch (c->codec_kind) {
    case BK_KIND_BLOSCLZ:
      return bk_blosclz_decompress(src, (size_t)srclen, dst, (size_t)dstlen);
    case BK_KIND_LZ4:
      if (c->dict != NULL)
        return ((lz4_dict_fn)c->fn_dict)((const char *)src, (char *)dst, srclen, dstlen,
                                         (const char *)c->dict, c->dictlen);
      return ((lz4_fn)c->fn)((const char *)src, (char *)dst, srclen, dstlen);
    case BK_KIND_ZSTD: {
      size_t r;
      if (zctx == NULL) return -1;
      if (c->dict != NULL)
        r = ((zstd_dict_fn)c->fn_dict)(zctx, dst, (size_t)dstlen, src, (size_t)srclen,
                                       c->dict, (size_t)c->dictlen);
      else
        r = ((zstd_fn)c->fn)(zctx, dst, (size_t)dstlen, src, (size_t)srclen);
      if (((zstd_err_fn)c->fn_error)(r)) return -1;
      return (int64_t)r;
    }
    case BK_KIND_ZLIB:
      return bk_zng_once(1, c->fn_begin, c->fn, c->fn_end, 0, src, srclen, dst, dstlen);
    default:
      return -1;
  }
}

static int32_t block_len(const bk_chunk *c, int32_t j) {
  int32_t rest = c->nbytes % c->blocksize;
  return (j == c->nblocks - 1 && rest) ? rest : c->blocksize;
}

/* Undo the filter pipeline (already in decode order) of block j. */
static int run_filters(const bk_chunk *c, int32_t j, uint8_t *cur, uint8_t *dst,
                       uint8_t *s1, uint8_t *s2, int32_t bsize) {
  for (int f = 0; f < c->nfilters; f++) {
    uint8_t *nxt = (f == c->nfilters - 1) ? dst : (cur == s1 ? s2 : s1);
    int meta = c->filter_metas[f];
    size_t group = meta ? (size_t)meta : (size_t)c->typesize;
    int rc = 0;
    switch (c->filter_ids[f]) {
      case BK_FILTER_SHUFFLE:
        rc = bk_unshuffle(cur, nxt, (size_t)bsize, group);
        break;
      case BK_FILTER_BITSHUFFLE:   /* Blosc1 chunks: the legacy bit order rule */
        rc = bk_bitunshuffle(cur, nxt, (size_t)bsize, (size_t)c->typesize,
                             c->version <= BK_VERSION_BLOSC1);
        break;
      case BK_FILTER_DELTA:
        memcpy(nxt, cur, (size_t)bsize);
        if (j == 0)
          bk_delta_decode(nxt, nxt, (size_t)bsize, (size_t)c->typesize, 1);
        else
          bk_delta_decode(c->dst, nxt, (size_t)bsize, (size_t)c->typesize, 0);
        break;
      case BK_FILTER_BYTEDELTA_BUGGY:
      case BK_FILTER_BYTEDELTA:
        bk_bytedelta_decode(cur, nxt, (size_t)bsize, group,
                            c->filter_ids[f] == BK_FILTER_BYTEDELTA_BUGGY);
        break;
      default:
        return -1;
    }
    if (rc < 0) return -1;
    cur = nxt;
  }
  return 0;
}

/* Block j into dst (s1, s2: the filters' scratch, blocksize bytes each). */
int bk_decode_block_to(const bk_chunk *c, int32_t j, uint8_t *dst, uint8_t *s1, uint8_t *s2,
                       void *zctx) {
  int32_t bsize = block_len(c, j);
  int leftover = bsize != c->blocksize;
  int32_t nstreams = (c->split && !leftover) ? c->typesize : 1;
  int32_t neblock = bsize / nstreams;
  uint8_t *target = c->nfilters ? s1 : dst;
  int64_t pos = c->bstarts_le ? bk_le32(c->bstarts_le + BK_CHUNK_LEN_BSTART * (int64_t)j)
                              : c->bstarts[j];
  const int64_t end = c->cbytes;

  if (neblock <= 0 || (int64_t)neblock * nstreams != bsize) return -1;
  for (int32_t k = 0; k < nstreams; k++) {
    uint8_t *seg = target + (int64_t)k * neblock;
    int32_t csize;
    if (pos < 0 || pos + BK_CHUNK_LEN_CSIZE > end) return -1;
    csize = bk_le32(c->src + pos);
    pos += BK_CHUNK_LEN_CSIZE;
    if (csize == 0) {
      memset(seg, 0, (size_t)neblock);
    } else if (csize < 0) {
      if (c->token_follows) {
        if (pos + BK_CHUNK_LEN_TOKEN > end || !(c->src[pos] & BK_CHUNK_TOKEN_RUN)) return -1;
        pos += BK_CHUNK_LEN_TOKEN;
      }
      if (csize < -BK_CHUNK_MAX_RUN_BYTE) return -1;
      memset(seg, (uint8_t)(-csize), (size_t)neblock);
    } else {
      if ((int64_t)csize > end - pos) return -1;
      if (csize == neblock) {
        memcpy(seg, c->src + pos, (size_t)neblock);
      } else if (run_codec(c, zctx, c->src + pos, csize, seg, neblock) != neblock) {
        return -1;
      }
      pos += csize;
    }
  }
  if (c->nfilters) return run_filters(c, j, target, dst, s1, s2, bsize);
  return 0;
}

static int decode_one(void *arg, bk_worker *w, int32_t j) {
  const bk_chunk *c = (const bk_chunk *)arg;
  return bk_decode_block_to(c, j, c->dst + (int64_t)(j - c->first) * c->blocksize, w->s1, w->s2,
                            w->ctx);
}

/* Decode blocks [first, first + count) of the chunk (count 0: all of them)
 * into dst; returns -1 when all went well, BK_DECODE_NOMEM when no worker
 * could allocate its buffers, else the lowest index of a block that failed.
 * With delta, first must be 0 (blocks refer to block 0). */
int32_t bk_decode_chunk(const bk_chunk *c, int nthreads) {
  size_t scratch = c->nfilters ? (size_t)c->blocksize : 0;
  void *ctx_new = c->codec_kind == BK_KIND_ZSTD ? c->fn_new : NULL;
  int32_t stop = c->count ? c->first + c->count : c->nblocks;
  if (c->nblocks <= 0) return -1;
  if (c->first < 0 || stop > c->nblocks || c->first >= stop || (c->uses_delta && c->first))
    return c->first;
  if (c->uses_delta) {
    /* every other block XORs against the decoded block 0: finish it first */
    int32_t r0 = bk_parallel_blocks(decode_one, (void *)c, 0, 1, 1, scratch, ctx_new, c->fn_free);
    if (r0 != -1) return r0;   /* block 0 failed, or no memory */
    return bk_parallel_blocks(decode_one, (void *)c, 1, stop, nthreads, scratch, ctx_new,
                              c->fn_free);
  }
  return bk_parallel_blocks(decode_one, (void *)c, c->first, stop, nthreads, scratch, ctx_new,
                            c->fn_free);
}
