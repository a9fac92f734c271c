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

/* Mirrors divergences.beyond_all_reader_divergences (a test compares the
 * two on every header byte value of chunks of many kinds). */
static int beyond_divergences(const uint8_t *c) {
  if (c[0] != 4 && c[0] != 5) return 0;
  if ((c[2] & 0x05) != 0x05) return 0;
  if (c[31] & 0xF8) return 0;                      /* special, lazy, instrumented */
  if ((c[2] >> 5) == 2) return 0;                  /* snappy */
  if ((c[2] & 0x02) && (c[31] & 0x01)) return 0;   /* memcpyed with use_dict */
  for (int k = 0; k < 6; k++)                      /* bytedelta with meta 0 */
    if ((c[16 + k] == 34 || c[16 + k] == 35) && c[24 + k] == 0) return 0;
  int active = 0, last_delta = -1;                 /* deltas with a filter between */
  for (int k = 0; k < 6; k++) {
    if (c[16 + k] == 0) continue;
    if (c[16 + k] == 3) {
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
    if (off < 0) {
      status[i] = BK_CHECK_SPECIAL;
      continue;
    }
    status[i] = (off <= len - 32 &&
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
  return len >= 32 && beyond_divergences(chunk);
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
