/* Compiler and platform differences, kept in this one header.
 *
 * The native code builds with GCC and Clang (Linux, macOS; x86-64 and arm64)
 * and with MSVC (Windows x64 and arm64).  Everything that is spelled
 * differently between them is named here once: bit scans, forced inlining,
 * alignment, byte order, 32-bit atomics; threads, thread-local storage with
 * a destructor, and one-time initialisation (those three in bk_threads.h,
 * which only parallel.c includes: windows.h defines too many names to be
 * seen everywhere).  No other file uses a __builtin, an __attribute__, an
 * MSVC intrinsic or a thread API directly (cpu.c's feature probe aside: it
 * is the one place that asks the CPU).
 */
#ifndef BK_PORT_H
#define BK_PORT_H

#include <stdint.h>

#if defined(_MSC_VER)
#include <intrin.h>
#endif

/* ---------------------------------------------------------------- compiler */

/* Attributes by the compiler's dialect (GCC, Clang, and GCC-style clang
 * and MinGW on Windows define __GNUC__); intrinsics below by the run-time
 * library's (_MSC_VER: MSVC and clang-cl). */
#if defined(__GNUC__)
#define BK_FORCE_INLINE static inline __attribute__((always_inline))
#define BK_ALIGN(n) __attribute__((aligned(n)))
#else
#define BK_FORCE_INLINE static __forceinline
#define BK_ALIGN(n) __declspec(align(n))
#endif

/* Byte order when the compiler tells it (every MSVC target, x64 and arm64,
 * is little-endian); code for neither keeps to byte-wise reads. */
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_MSC_VER)
#define BK_LITTLE_ENDIAN 1
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BK_BIG_ENDIAN 1
#endif

/* Index of the lowest set bit of x (x != 0). */
static inline int bk_ctz64(uint64_t x) {
#if defined(_MSC_VER)
  unsigned long i;
  _BitScanForward64(&i, x);
  return (int)i;
#else
  return __builtin_ctzll(x);
#endif
}

/* Byte swaps in plain C (compilers turn these into one instruction). */
static inline uint32_t bk_bswap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
static inline uint64_t bk_bswap64(uint64_t v) {
  return ((uint64_t)bk_bswap32((uint32_t)v) << 32) | bk_bswap32((uint32_t)(v >> 32));
}

/* --------------------------------------------------------- 32-bit atomics
 * The orders the block loop needs: relaxed loads, counters and
 * compare-exchange, and one sequentially consistent store.  MSVC's
 * Interlocked functions are full barriers, stronger than asked. */
#if defined(_MSC_VER)
static inline int32_t bk_atomic_load(int32_t *p) { return *(volatile int32_t *)p; }
static inline void bk_atomic_store(int32_t *p, int32_t v) {
  _InterlockedExchange((volatile long *)p, (long)v);
}
static inline int32_t bk_atomic_fetch_add(int32_t *p, int32_t v) {
  return (int32_t)_InterlockedExchangeAdd((volatile long *)p, (long)v);
}
/* Store `desired` when *p equals *expected (1); else 0 with *expected
 * updated to the value seen. */
static inline int bk_atomic_cas(int32_t *p, int32_t *expected, int32_t desired) {
  long seen = _InterlockedCompareExchange((volatile long *)p, (long)desired, (long)*expected);
  if (seen == (long)*expected) return 1;
  *expected = (int32_t)seen;
  return 0;
}
#else
static inline int32_t bk_atomic_load(int32_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void bk_atomic_store(int32_t *p, int32_t v) {
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}
static inline int32_t bk_atomic_fetch_add(int32_t *p, int32_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline int bk_atomic_cas(int32_t *p, int32_t *expected, int32_t desired) {
  return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED);
}
#endif

#endif
