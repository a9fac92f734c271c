/* One-shot zlib streams through the zlib-ng that the zlib-ng Python package
 * ships (its native "zng_" API, reached through function pointers).
 *
 * C-Blosc2 encodes each stream with one deflate(Z_FINISH) into a buffer of
 * the stream's size limit and decodes with one inflate; doing the same
 * gives the same bytes.  The stream struct below is zlib-ng's public layout
 * for its native API. */
#include <string.h>

#include "blosckit_native.h"

typedef struct {
  const uint8_t *next_in;
  uint32_t avail_in;
  size_t total_in;
  uint8_t *next_out;
  uint32_t avail_out;
  size_t total_out;
  const char *msg;
  void *state;
  void *zalloc, *zfree, *opaque;
  int data_type;
  uint32_t adler;
  unsigned long reserved;
} zng_stream_abi;

#define ZNG_FINISH 4
#define ZNG_STREAM_END 1

typedef int32_t (*inflate_init_fn)(zng_stream_abi *);
typedef int32_t (*deflate_init_fn)(zng_stream_abi *, int32_t level);
typedef int32_t (*step_fn)(zng_stream_abi *, int32_t flush);
typedef int32_t (*end_fn)(zng_stream_abi *);

int64_t bk_zng_once(int inflating, void *begin, void *step, void *end, int level,
                    const uint8_t *src, int32_t srclen, uint8_t *dst, int32_t dstlen) {
  zng_stream_abi st;
  int32_t rc;
  int64_t n;
  memset(&st, 0, sizeof st);
  rc = inflating ? ((inflate_init_fn)begin)(&st) : ((deflate_init_fn)begin)(&st, level);
  if (rc != 0) return -1;
  st.next_in = src;
  st.avail_in = (uint32_t)srclen;
  st.next_out = dst;
  st.avail_out = (uint32_t)dstlen;
  rc = ((step_fn)step)(&st, ZNG_FINISH);
  n = rc == ZNG_STREAM_END ? (int64_t)st.total_out : -1;
  ((end_fn)end)(&st);
  return n;
}
