/* Checking every chunk of a contiguous frame in one call (validate on
 * frames of thousands of chunks).
 *
 * Each regular chunk goes through the one-call reader (fastpath.c, the
 * reader's rules for the chunks it handles): without scratch in its
 * check-only mode (header, bstarts and dictionary), with scratch (at least
 * chunksize bytes) decoding every block into it.  A chunk passes only when that check accepts it,
 * when it holds the bytes the frame says, and when none of the reader
 * divergences of blosckit's table can apply to it; every other chunk is
 * left to the Python validator, which explains what is wrong.
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
  return 1;
}

/* Decoding a run of chunks of a contiguous frame into one buffer (chunk i
 * at dst + i * chunksize): status OK for each chunk decoded whole at the
 * frame's size, SPECIAL for special offsets, PYTHON for the rest, which the
 * Python reader decodes or explains.  No divergence filter: decoding
 * follows the format, as the Python reader does. */
void bk_decode_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                      int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                      int nthreads, uint8_t *dst, uint8_t *status) {
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
                                    dst + (int64_t)i * chunksize, (size_t)want, (int32_t)want,
                                    nthreads, table, &nbytes) == BK_FAST_DONE &&
                 nbytes == want) ? BK_CHECK_OK : BK_CHECK_PYTHON;
  }
}

int bk_beyond_divergences(const uint8_t *chunk, size_t len) {
  return len >= 32 && beyond_divergences(chunk);
}

void bk_check_chunks(const uint8_t *section, int64_t len, const int64_t *offsets, int32_t n,
                     int32_t chunksize, int64_t last_nbytes, const bk_codec_table *table,
                     uint8_t *scratch, size_t scratch_len, uint8_t *status) {
  for (int32_t i = 0; i < n; i++) {
    int64_t off = offsets[i];
    int64_t want = (i == n - 1) ? last_nbytes : (int64_t)chunksize;
    int32_t nbytes = -1;
    if (off < 0) {
      status[i] = BK_CHECK_SPECIAL;
      continue;
    }
    if (off > len - 32 ||
        bk_fast_decompress(section + off, (size_t)(len - off), scratch, scratch_len, INT32_MAX, 1, table,
                           &nbytes) != BK_FAST_DONE ||
        nbytes != want || !beyond_divergences(section + off)) {
      status[i] = BK_CHECK_PYTHON;
      continue;
    }
    status[i] = BK_CHECK_OK;
  }
}
