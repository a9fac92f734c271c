/* Strided byte runs between a b2nd chunk and its array (blosckit/b2nd.py
 * computes the runs from the shapes; this only copies them, so a chunk of
 * thousands of short rows costs one call, not thousands).
 */
#include <string.h>
#include "blosckit_native.h"

/* start + (count - 1) * step + n <= len, without overflow (all values
 * come from int64 >= 0, so start + n fits in uint64). */
static int run_fits(uint64_t start, uint64_t n, uint64_t count, uint64_t step, size_t len)
{
    uint64_t end = start + n;
    if (step != 0 && count - 1 > (UINT64_MAX - end) / step)
        return 0;
    end += (count - 1) * step;
    return end <= (uint64_t)len;
}

/* Each run is BK_RUN_FIELDS int64: chunk offset, array offset, length,
 * count, chunk step, array step; `array_base` moves every array offset (a chunk inside
 * the array reuses the runs of the chunk at the origin).  Every byte
 * touched is checked against both buffers before any copy, so bad runs
 * copy nothing; returns 0, or -1 then. */
int bk_copy_runs(uint8_t *chunk, size_t chunk_len, uint8_t *array, size_t array_len,
                 const int64_t *runs, size_t nruns, int64_t array_base, int to_chunk)
{
    if (array_base < 0)
        return -1;
    for (size_t r = 0; r < nruns; r++) {
        const int64_t *x = runs + BK_RUN_FIELDS * r;
        int64_t c = x[0], a = x[1], n = x[2], count = x[3], cs = x[4], as = x[5];
        if (c < 0 || a < 0 || n < 0 || count < 0 || cs < 0 || as < 0 ||
            a > INT64_MAX - array_base)
            return -1;
        a += array_base;
        if (count == 0 || n == 0)
            continue;
        /* the last run of the group ends furthest (the steps are not negative) */
        if (!run_fits((uint64_t)c, (uint64_t)n, (uint64_t)count, (uint64_t)cs, chunk_len) ||
            !run_fits((uint64_t)a, (uint64_t)n, (uint64_t)count, (uint64_t)as, array_len))
            return -1;
    }
    bk_copy_checked_runs(chunk, 0, array, array_base, runs, nruns, to_chunk);
    return 0;
}

void bk_copy_checked_runs(uint8_t *chunk, int64_t chunk_base, uint8_t *array,
                          int64_t array_base, const int64_t *runs, size_t nruns, int to_chunk)
{
    for (size_t r = 0; r < nruns; r++) {
        const int64_t *x = runs + BK_RUN_FIELDS * r;
        int64_t c = x[0] - chunk_base, a = x[1] + array_base, n = x[2], count = x[3];
        int64_t cs = x[4], as = x[5];
        for (int64_t k = 0; k < count; k++, c += cs, a += as) {
            if (to_chunk)
                memcpy(chunk + c, array + a, (size_t)n);
            else
                memcpy(array + a, chunk + c, (size_t)n);
        }
    }
}
