/* Run-time selection of the vector path (scalar / SSE2 / AVX2). */
#include "blosckit_native.h"

static int detected = -1;  /* best level the CPU can run */
static int in_use = -1;    /* level currently used by the dispatchers */

static int probe_cpu(void)
{
#if defined(BK_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return BK_LEVEL_AVX2;
    if (__builtin_cpu_supports("sse2"))
        return BK_LEVEL_SSE2;
#endif
    return BK_LEVEL_SCALAR;
}

int bk_simd_best(void)
{
    if (detected < 0)
        detected = probe_cpu();   /* idempotent, so a racing first call is harmless */
    return detected;
}

int bk_simd_level(void)
{
    if (in_use < 0)
        in_use = bk_simd_best();
    return in_use;
}

int bk_set_simd_level(int level)
{
    if (level < BK_LEVEL_SCALAR || level > bk_simd_best())
        return BK_EPARAM;
    in_use = level;
    return BK_OK;
}
