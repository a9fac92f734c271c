/* Run-time selection of the vector path (scalar / SSE2 / AVX2). */
#include "blosckit_native.h"

#if defined(BK_X86) && defined(_MSC_VER) && !defined(__clang__)
#include <immintrin.h>   /* _xgetbv */
#endif

static int detected = -1;  /* best level the CPU can run */
static int in_use = -1;    /* level currently used by the dispatchers */

static int probe_cpu(void)
{
#if defined(BK_X86) && defined(_MSC_VER) && !defined(__clang__)
    /* CPUID leaf 1: SSE2 (EDX bit 26), OSXSAVE and AVX (ECX bits 27, 28);
     * leaf 7: AVX2 (EBX bit 5); XCR0 bits 1 and 2: the OS saves the YMM
     * registers (what GCC's __builtin_cpu_supports checks for us) */
    int r[4];
    __cpuid(r, 0);
    int top = r[0];
    __cpuid(r, 1);
    int sse2 = (r[3] >> 26) & 1, ymm_ok = 0;
    if (((r[2] >> 27) & 1) && ((r[2] >> 28) & 1))
        ymm_ok = (_xgetbv(0) & 6) == 6;
    if (top >= 7 && ymm_ok) {
        __cpuidex(r, 7, 0);
        if ((r[1] >> 5) & 1)
            return BK_LEVEL_AVX2;
    }
    if (sse2)
        return BK_LEVEL_SSE2;
#elif defined(BK_X86)
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
