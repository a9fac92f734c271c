/* Frame builders (frame/build.py) over many chunks in one call: the run of
 * chunks a fixed-size frame stores as they are, their offsets index
 * entries counted on the way.
 *
 * The builder hands the first LEN_EXTENDED bytes of each chunk, end to end
 * (`heads`), and each chunk's length.  A chunk belongs to the run while its
 * header says: the frame's chunk size, its own length as cbytes, an
 * extended header of the current layout (its version not marked in
 * `odd_versions`), no special kind, and the frame's VL-block choice.  The
 * first chunk that says otherwise ends the run: the Python builder reads
 * it whole (a special chunk, the frame turning variable-size, an error).
 * Mirrors formats.chunk.plain_chunk_test (a test compares the two).
 */
#include <stdint.h>

#include "blosckit_native.h"

int32_t bk_plain_chunks(const uint8_t *heads, int64_t heads_len, const int64_t *lens, int32_t n,
                        int64_t nbytes, int vl_blocks, const uint8_t *odd_versions,
                        int64_t cbytes, int64_t *offsets) {
  const int want_vl = vl_blocks ? BK_CHUNK_EXTENDED_BLOSC2_FLAGS2_VL_BLOCKS_BITS : 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t at = (int64_t)i * BK_CHUNK_EXTENDED_END;
    int64_t len = lens[i];
    if (len < BK_CHUNK_EXTENDED_END || at + BK_CHUNK_EXTENDED_END > heads_len) return i;
    const uint8_t *h = heads + at;
    int flags = h[BK_CHUNK_HEADER_FLAGS_OFS];
    if (bk_le32(h + BK_CHUNK_HEADER_NBYTES_OFS) != nbytes ||
        bk_le32(h + BK_CHUNK_HEADER_CBYTES_OFS) != len ||
        (flags & BK_CHUNK_FLAGS_EXTENDED_BITS) != BK_CHUNK_FLAGS_EXTENDED_BITS ||
        odd_versions[h[BK_CHUNK_HEADER_VERSION_OFS]] ||
        (h[BK_CHUNK_EXTENDED_BLOSC2_FLAGS_OFS] & BK_CHUNK_EXTENDED_BLOSC2_FLAGS_SPECIAL_BITS) ||
        (h[BK_CHUNK_EXTENDED_BLOSC2_FLAGS2_OFS] & BK_CHUNK_EXTENDED_BLOSC2_FLAGS2_VL_BLOCKS_BITS) !=
            want_vl)
      return i;
    offsets[i] = cbytes;
    cbytes += len;
  }
  return n;
}
