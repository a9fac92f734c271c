/* b2nd arrays read block by block straight into their place.
 *
 * blosckit/frame/b2nd_read.py plans, from the shapes alone, which byte runs
 * of each block of a chunk land where in the output (the whole array, or
 * the box around a region).  Here every chunk is checked as the one-call
 * reader checks it (fastpath.c), then the (chunk, block) pairs are shared
 * among the threads: a block with no run is never decoded; one that fills
 * a single run of the output is decoded there; any other is decoded into
 * the thread's scratch and its runs copied out while it is in cache.
 *
 * A whole read (decode_all) decodes the blocks without runs too, the
 * padding of edge chunks, so that a damaged one fails the read as it fails
 * the chunk; a region read decodes only its blocks.
 *
 * A chunk this path does not take (special entry, declined, rejected, a
 * block that fails, delta, sizes not the array's) is reported per chunk:
 * the Python reader reads it again and explains, so errors are the ones it
 * gives.  The plan itself is checked against the blocks and the output
 * before any byte is written.
 */
#include <stdlib.h>
#include <string.h>

#include "blosckit_native.h"

enum { UNIT_SKIPPED = 0, UNIT_READ = 1, UNIT_FAILED = 2 };
enum { TAKE_NONE = 0, TAKE_BLOCKS = 1, TAKE_MEMCPYED = 2 };

typedef struct {
  const bk_b2nd_job *job;
  bk_chunk *chunks;   /* per chunk, prepared when take[i] != TAKE_NONE */
  uint8_t *take;
  uint8_t *units;     /* per (chunk, block): UNIT_*, each written by one thread */
} read_state;

/* The furthest byte a group of `count` runs of n bytes reaches from start
 * (`step` apart), or -1 when it passes `limit` (no overflow: all >= 0). */
static int64_t group_end(int64_t start, int64_t n, int64_t count, int64_t step, int64_t limit) {
  int64_t end;
  if (start < 0 || n < 0 || count < 0 || step < 0 || start > limit || n > limit - start)
    return -1;
  end = start + n;
  if (count > 1) {
    if (step != 0 && count - 1 > (limit - end) / step) return -1;
    end += (count - 1) * step;
  }
  return end;
}

/* Every plan's runs stay in their block; out_end[p]: the furthest output
 * byte plan p writes (relative to a chunk's base).  0, or BK_EPARAM. */
static int check_plans(const bk_b2nd_job *j, int64_t *out_end) {
  int64_t bb = j->block_bytes, nb = j->nblocks;
  for (int32_t p = 0; p < j->nplans; p++) {
    const int32_t *k = j->block_runs + (int64_t)p * (nb + 1);
    out_end[p] = 0;
    for (int64_t b = 0; b < nb; b++) {
      if (k[b] < 0 || k[b] > k[b + 1] || k[b + 1] > j->nruns) return BK_EPARAM;
      for (int64_t r = k[b]; r < k[b + 1]; r++) {
        const int64_t *x = j->runs + BK_RUN_FIELDS * r;
        int64_t lo = b * bb, c_end, a_end;
        if (x[3] == 0 || x[2] == 0) continue;
        c_end = group_end(x[0] - lo, x[2], x[3], x[4], bb);
        a_end = group_end(x[1], x[2], x[3], x[5], INT64_MAX);
        if (x[0] < lo || c_end < 0 || a_end < 0) return BK_EPARAM;
        if (a_end > out_end[p]) out_end[p] = a_end;
      }
    }
  }
  return 0;
}

/* Chunk i checked (the reader's rules, the array's sizes): TAKE_*. */
static int prepare(const bk_b2nd_job *j, int32_t i, bk_chunk *c) {
  int64_t off = j->offsets[i];
  int64_t padded = (int64_t)j->nblocks * j->block_bytes;
  int body = BK_BODY_EMPTY;
  int32_t stored = 0;
  if ((uint64_t)off & BK_FRAME_OFFSET_SPECIAL_BITS) {
    j->status[i] = BK_CHECK_SPECIAL;
    return TAKE_NONE;
  }
  j->status[i] = BK_CHECK_PYTHON;
  if (off < 0 || off > j->section_len - BK_CHUNK_EXTENDED_END || padded > INT32_MAX)
    return TAKE_NONE;
  if (bk_fast_prepare(j->section + off, (size_t)(j->section_len - off), (int32_t)padded,
                      j->table, c, &body, &stored) != BK_FAST_DONE)
    return TAKE_NONE;
  /* F-b2nd: a padded chunk of the array's blocks; delta blocks refer to
     block 0 in the chunk's own buffer, which this path does not have */
  if (c->nbytes != padded || stored != j->block_bytes || c->blocksize != j->block_bytes ||
      c->nblocks != j->nblocks || c->uses_delta)
    return TAKE_NONE;
  j->status[i] = BK_CHECK_OK;
  return body == BK_BODY_MEMCPYED ? TAKE_MEMCPYED : TAKE_BLOCKS;
}

/* The block fills a single run of the output: decoded there, in place. */
static int in_place(const int64_t *x, int64_t nrun, int64_t at, int64_t bb) {
  return nrun == 1 && x[0] == at && x[2] == bb && x[3] == 1;
}

/* Every block of every plan with runs is decoded in place. */
static int in_place_only(const bk_b2nd_job *j) {
  int64_t nb = j->nblocks;
  for (int32_t p = 0; p < j->nplans; p++) {
    const int32_t *k = j->block_runs + (int64_t)p * (nb + 1);
    for (int64_t b = 0; b < nb; b++)
      if (k[b + 1] > k[b] ? !in_place(j->runs + BK_RUN_FIELDS * (int64_t)k[b], k[b + 1] - k[b],
                                      b * j->block_bytes, j->block_bytes)
                          : j->decode_all)
        return 0;
  }
  return 1;
}

/* The block's runs (checked by check_plans) from the block at blk, which
 * starts at chunk offset block_at, into the output (read only: the cast). */
static void copy_out(const int64_t *x, int64_t nrun, int64_t block_at, const uint8_t *blk,
                     uint8_t *out) {
  bk_copy_checked_runs((uint8_t *)blk, block_at, out, 0, x, (size_t)nrun, 0);
}

static int read_unit(void *arg, bk_worker *w, int32_t u) {
  const read_state *st = (const read_state *)arg;
  const bk_b2nd_job *j = st->job;
  int32_t i = u / j->nblocks, b = u % j->nblocks;
  int64_t bb = j->block_bytes, at = (int64_t)b * bb;
  const int32_t *k = j->block_runs + (int64_t)j->chunk_plan[i] * (j->nblocks + 1);
  const int64_t *x = j->runs + BK_RUN_FIELDS * (int64_t)k[b];
  int64_t nrun = k[b + 1] - k[b];
  uint8_t *out = j->out + j->bases[i] + j->base_shift;
  const bk_chunk *c = &st->chunks[i];
  uint8_t *blk;
  if (st->take[i] == TAKE_NONE) return 0;
  if (nrun == 0) {
    /* whole reads decode the padding blocks too: a damaged one fails the
       read, as it fails the chunk's decoding */
    if (!j->decode_all) return 0;
    /* (a stored block has nothing to decode, nothing to fail) */
    st->units[u] = st->take[i] == TAKE_MEMCPYED ||
                   bk_decode_block_to(c, b, w->s2 + bb, w->s1, w->s2, w->ctx) == 0
                       ? UNIT_READ : UNIT_FAILED;
    return 0;
  }
  if (st->take[i] == TAKE_MEMCPYED) {
    copy_out(x, nrun, at, c->src + BK_CHUNK_EXTENDED_END + at, out);
    st->units[u] = UNIT_READ;
    return 0;
  }
  /* the whole block is one run of the output: decode it there */
  if (in_place(x, nrun, at, bb)) {
    st->units[u] = bk_decode_block_to(c, b, out + x[1], w->s1, w->s2, w->ctx) == 0
                       ? UNIT_READ : UNIT_FAILED;
    return 0;
  }
  blk = w->s2 + bb;              /* scratch holds two blocks: see bk_b2nd_read */
  if (bk_decode_block_to(c, b, blk, w->s1, w->s2, w->ctx) != 0) {
    st->units[u] = UNIT_FAILED;
    return 0;
  }
  copy_out(x, nrun, at, blk, out);
  st->units[u] = UNIT_READ;
  return 0;
}

int bk_b2nd_read(bk_b2nd_job *j, int nthreads) {
  read_state st;
  int64_t *out_end = NULL;
  int64_t nunits = (int64_t)j->nchunks * j->nblocks;
  int zstd = 0, rc = 0;
  const bk_codec_entry *ze;
  j->blocks_read = 0;
  if (j->nchunks < 0 || j->nblocks <= 0 || j->block_bytes <= 0 ||
      (j->out != NULL && j->nplans <= 0) || nunits > INT32_MAX)
    return BK_EPARAM;
  if (j->nchunks == 0) return 0;
  memset(&st, 0, sizeof st);
  st.job = j;
  out_end = (int64_t *)malloc(sizeof(int64_t) * (size_t)j->nplans);
  st.chunks = (bk_chunk *)malloc(sizeof(bk_chunk) * (size_t)j->nchunks);
  st.take = (uint8_t *)calloc((size_t)j->nchunks, 1);
  st.units = (uint8_t *)calloc((size_t)nunits, 1);
  if (out_end == NULL || st.chunks == NULL || st.take == NULL || st.units == NULL) {
    rc = BK_ENOMEM;
    goto done;
  }
  if (j->out == NULL) {            /* the checks of each chunk only */
    for (int32_t i = 0; i < j->nchunks; i++) prepare(j, i, &st.chunks[i]);
    goto done;
  }
  if (check_plans(j, out_end) != 0) {
    rc = BK_EPARAM;
    goto done;
  }
  for (int32_t i = 0; i < j->nchunks; i++) {
    int32_t p = j->chunk_plan[i];
    int64_t base = j->bases[i];
    /* both within a quarter of the range: their sum cannot overflow */
    if (p < 0 || p >= j->nplans || base < 0 || base > INT64_MAX / 4 ||
        j->base_shift < -(INT64_MAX / 4) || j->base_shift > INT64_MAX / 4 ||
        base + j->base_shift < 0 || out_end[p] > j->out_len - (base + j->base_shift)) {
      rc = BK_EPARAM;
      goto done;
    }
  }
  for (int32_t i = 0; i < j->nchunks; i++) {
    st.take[i] = (uint8_t)prepare(j, i, &st.chunks[i]);
    zstd |= st.take[i] == TAKE_BLOCKS && st.chunks[i].codec_kind == BK_KIND_ZSTD;
  }
  ze = &j->table->by_format[BK_COMPFORMAT_ZSTD];
  {
    /* scratch: the filters' two buffers, and after s2's first block the
       block decoded, when some block is not decoded in place (threads
       started for this call allocate theirs: no more than needed) */
    size_t scratch = (size_t)j->block_bytes * (in_place_only(j) ? 1 : 2);
    int32_t r = bk_parallel_blocks(read_unit, &st, 0, (int32_t)nunits, nthreads, scratch,
                                   zstd ? ze->fn_new : NULL, zstd ? ze->fn_free : NULL);
    if (r == BK_DECODE_NOMEM) {
      rc = BK_ENOMEM;
      goto done;
    }
  }
  for (int64_t u = 0; u < nunits; u++) {
    if (st.units[u] == UNIT_READ) j->blocks_read++;
    else if (st.units[u] == UNIT_FAILED) j->status[u / j->nblocks] = BK_CHECK_PYTHON;
  }
done:
  free(out_end);
  free(st.chunks);
  free(st.take);
  free(st.units);
  return rc;
}
