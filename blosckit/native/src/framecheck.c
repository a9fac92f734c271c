/* Every chunk of a contiguous frame in one call: checked (validate on
 * frames of thousands of chunks) or decoded (Frame.decompress).
 *
 * Each regular chunk goes through the one-call reader (fastpath.c, the
 * reader's rules for the chunks it handles): without a destination in its
 * check-only mode (header, bstarts and dictionary), with one decoding every
 * block.  A chunk passes only when the reader accepts it and it holds the
 * bytes the frame says; for validate, also when none of the reader
 * divergences of blosckit's table can apply to it.  Every other chunk is
 * left to the Python reader and rules, which explain what is wrong.
 */
#include <stdint.h>

#include "blosckit_native.h"

/* The index entries are read as the host's int64 (little-endian hosts). */
_Static_assert(BK_FRAME_LEN_OFFSET == (int)sizeof(int64_t), "an offset is an int64");

/* Mirrors divergences.beyond_all_reader_divergences (a test compares the
 * two on every header byte value of chunks of many kinds); c holds the
 * extended header. */
static int beyond_divergences(const uint8_t *c) {
  int version = c[BK_CHUNK_HEADER_VERSION_OFS];
  int flags = c[BK_CHUNK_HEADER_FLAGS_OFS];
  int b2 = c[BK_CHUNK_EXTENDED_BLOSC2_FLAGS_OFS];
  const uint8_t *ids = c + BK_CHUNK_EXTENDED_FILTERS_OFS;
  const uint8_t *metas = c + BK_CHUNK_EXTENDED_FILTERS_META_OFS;
  if (version != BK_VERSION_BLOSC2_BETA1 && version != BK_VERSION_BLOSC2_STABLE) return 0;
  if ((flags & BK_CHUNK_FLAGS_EXTENDED_BITS) != BK_CHUNK_FLAGS_EXTENDED_BITS) return 0;
  if (b2 & BK_B2FLAGS_DECLINED) return 0;                  /* special, lazy, instrumented */
  if (bk_compformat(flags) == BK_COMPFORMAT_SNAPPY) return 0;
  if ((flags & BK_CHUNK_HEADER_FLAGS_MEMCPYED_BITS) &&
      (b2 & BK_CHUNK_EXTENDED_BLOSC2_FLAGS_USE_DICT_BITS))
    return 0;                                              /* memcpyed with use_dict */
  for (int k = 0; k < BK_CHUNK_EXTENDED_FILTERS_COUNT; k++)   /* bytedelta with meta 0 */
    if ((ids[k] == BK_FILTER_BYTEDELTA_BUGGY || ids[k] == BK_FILTER_BYTEDELTA) && metas[k] == 0)
      return 0;
  int active = 0, last_delta = -1;                 /* deltas with a filter between */
  for (int k = 0; k < BK_CHUNK_EXTENDED_FILTERS_COUNT; k++) {
    if (ids[k] == BK_FILTER_NOFILTER) continue;
    if (ids[k] == BK_FILTER_DELTA) {
      if (last_delta >= 0 && active - last_delta > 1) return 0;
      last_delta = active;
    }
    active++;
  }
  return 1;
}

/* The loop of both entry points: chunk i goes to dst + i * stride (dst
 * NULL: checked only), must hold the frame's bytes for it and, with
 * `filtered`, be beyond every reader divergence. */
static void each_chunk(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                       int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                       int nthreads, uint8_t *dst, int64_t stride, int filtered,
                       uint8_t *status) {
  for (int32_t i = 0; i < n; i++) {
    int64_t off = offsets[i];
    int64_t want = (i == n - 1) ? last_nbytes : (int64_t)chunksize;
    int32_t nbytes = -1;
    if ((uint64_t)off & BK_FRAME_OFFSET_SPECIAL_BITS) {
      status[i] = BK_CHECK_SPECIAL;
      continue;
    }
    status[i] = (off <= len - BK_CHUNK_EXTENDED_END &&
                 bk_fast_decompress(section + off, (size_t)(len - off),
                                    dst ? dst + i * stride : NULL, dst ? (size_t)want : 0,
                                    INT32_MAX, nthreads, table, &nbytes) == BK_FAST_DONE &&
                 nbytes == want && (!filtered || beyond_divergences(section + off)))
                    ? BK_CHECK_OK : BK_CHECK_PYTHON;
  }
}

/* Decoding a run of chunks into one buffer (chunk i at dst + i * chunksize).
 * No divergence filter: decoding follows the format, as the Python reader
 * does; the Python reader decodes or explains every chunk not OK. */
void bk_decode_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                      int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                      int nthreads, uint8_t *dst, uint8_t *status) {
  each_chunk(section, len, offsets, n, chunksize, last_nbytes, table, nthreads, dst, chunksize,
             0, status);
}

int bk_beyond_divergences(const uint8_t *chunk, size_t len) {
  return len >= BK_CHUNK_EXTENDED_END && beyond_divergences(chunk);
}

/* Checking for validate: scratch (deep; at least chunksize bytes, reused by
 * every chunk) or NULL (header, bstarts and dictionary only). */
void bk_check_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                     int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                     uint8_t *scratch, size_t scratch_len, uint8_t *status) {
  if (scratch != NULL && scratch_len < (size_t)chunksize) {
    for (int32_t i = 0; i < n; i++) status[i] = BK_CHECK_PYTHON;
    return;
  }
  each_chunk(section, len, offsets, n, chunksize, last_nbytes, table, 1, scratch, 0, 1, status);
}
