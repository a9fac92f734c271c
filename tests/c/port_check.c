/* A stand-alone check of the native layer's platform-dependent parts, built
 * by tests/test_native_portability.py with each available compiler (the
 * host's, MinGW for Windows, a cross GCC for aarch64) and run natively or
 * under an emulator (wine, qemu-user):
 *
 * - every vector level this CPU offers gives the scalar path's bytes for the
 *   byte and bit shuffles, and each round-trips;
 * - BloscLZ round-trips (its match search uses the bit-scan helper);
 * - the block loop visits every index once on 1 to 8 threads, reports the
 *   lowest failing index, survives failed worker set-ups, and reports
 *   BK_DECODE_NOMEM when no worker could start;
 * - the calling thread's kept codec context is released when that thread
 *   ends (the thread-local destructor: pthread keys, or FLS on Windows).
 *
 * Prints one line per group and "port_check: ok"; exits 1 on the first
 * mismatch.  The sources are compiled together with the native layer's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blosckit_native.h"
#include "bk_threads.h"

static int failures = 0;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);         \
      printf(__VA_ARGS__);                                \
      printf("\n");                                       \
      failures++;                                         \
      return;                                             \
    }                                                     \
  } while (0)

static uint32_t rng_state = 12345u;
static uint8_t next_byte(void) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (uint8_t)(rng_state >> 16);
}

/* ------------------------------------------------------------ shuffles */

static void check_shuffles(void) {
  enum { MAX = 4096 + 37 };
  static uint8_t src[MAX], ref[MAX], out[MAX], back[MAX];
  size_t lens[] = {1, 15, 16, 17, 255, 256, 1000, 4096, MAX};
  int best = bk_simd_best(), cases = 0;
  for (size_t i = 0; i < MAX; i++) src[i] = next_byte();
  for (size_t ts = 1; ts <= 18; ts++) {
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      size_t len = lens[k];
      for (int bit = 0; bit < 2; bit++) {
        CHECK(bk_set_simd_level(BK_LEVEL_SCALAR) == BK_OK, "scalar level refused");
        if (bit)
          bk_bitshuffle(src, ref, len, ts, 0);
        else
          bk_shuffle(src, ref, len, ts);
        for (int level = BK_LEVEL_SCALAR; level <= best; level++) {
          CHECK(bk_set_simd_level(level) == BK_OK, "level %d refused", level);
          if (bit) {
            bk_bitshuffle(src, out, len, ts, 0);
            bk_bitunshuffle(out, back, len, ts, 0);
          } else {
            bk_shuffle(src, out, len, ts);
            bk_unshuffle(out, back, len, ts);
          }
          CHECK(memcmp(out, ref, len) == 0, "%s level %d ts %zu len %zu differs from scalar",
                bit ? "bitshuffle" : "shuffle", level, ts, len);
          CHECK(memcmp(back, src, len) == 0, "%s level %d ts %zu len %zu does not round-trip",
                bit ? "bitshuffle" : "shuffle", level, ts, len);
          cases++;
        }
      }
    }
  }
  bk_set_simd_level(best);
  printf("shuffles: %d cases agree, best level %d\n", cases, best);
}

/* ------------------------------------------------------------- BloscLZ */

static void check_blosclz(void) {
  enum { N = 1 << 16 };
  static uint8_t src[N], packed[N + N / 8 + 64], back[N];
  /* runs and repeats with noise: long matches end at varied bytes */
  for (size_t i = 0; i < N; i++)
    src[i] = (i % 977 < 600) ? (uint8_t)(i % 13) : next_byte();
  for (int clevel = 1; clevel <= 9; clevel += 4) {
    int64_t n = bk_blosclz_compress(clevel, src, N, packed, sizeof packed, 2, 1);
    CHECK(n > 0 && n < N, "blosclz clevel %d compressed to %lld", clevel, (long long)n);
    int64_t m = bk_blosclz_decompress(packed, (size_t)n, back, N);
    CHECK(m == N && memcmp(back, src, N) == 0, "blosclz clevel %d does not round-trip", clevel);
  }
  printf("blosclz: round-trips\n");
}

/* ---------------------------------------------------------- block loop */

typedef struct {
  int32_t *visits;
  int32_t fail_at;      /* indexes >= fail_at and odd fail; -1: none */
} visit_arg;

static int visit(void *p, bk_worker *w, int32_t j) {
  visit_arg *a = (visit_arg *)p;
  w->s1[0] = (uint8_t)j;    /* the scratch is there and writable */
  w->s2[0] = (uint8_t)j;
  bk_atomic_fetch_add(&a->visits[j], 1);
  return a->fail_at >= 0 && j >= a->fail_at && (j & 1);
}

static int32_t contexts_made = 0, contexts_freed = 0;
static void *ctx_new(void) {
  bk_atomic_fetch_add(&contexts_made, 1);
  return malloc(16);
}
static size_t ctx_free(void *ctx) {
  bk_atomic_fetch_add(&contexts_freed, 1);
  free(ctx);
  return 0;
}

static void check_block_loop(void) {
  enum { N = 20000 };
  static int32_t visits[N];
  visit_arg a = {visits, -1};
  for (int nthreads = 1; nthreads <= 8; nthreads *= 2) {
    memset(visits, 0, sizeof visits);
    int32_t rc = bk_parallel_blocks(visit, &a, 0, N, nthreads, 64, (void *)ctx_new,
                                    (void *)ctx_free);
    CHECK(rc == -1, "%d threads: rc %d", nthreads, rc);
    for (int32_t j = 0; j < N; j++)
      CHECK(visits[j] == 1, "%d threads: index %d visited %d times", nthreads, j, visits[j]);
  }
  a.fail_at = 777;
  memset(visits, 0, sizeof visits);
  int32_t rc = bk_parallel_blocks(visit, &a, 0, N, 4, 64, NULL, NULL);
  CHECK(rc == 777, "lowest failing index: %d, not 777", rc);
  a.fail_at = -1;
  /* three of four workers fail to set up: the fourth does everything */
  bk_test_fail_worker_setups(3);
  memset(visits, 0, sizeof visits);
  rc = bk_parallel_blocks(visit, &a, 0, N, 4, 64, NULL, NULL);
  CHECK(rc == -1, "with 3 failed set-ups: rc %d", rc);
  for (int32_t j = 0; j < N; j++) CHECK(visits[j] == 1, "index %d visited %d times", j, visits[j]);
  bk_test_fail_worker_setups(4);
  rc = bk_parallel_blocks(visit, &a, 0, N, 4, 64, NULL, NULL);
  CHECK(rc == BK_DECODE_NOMEM, "no worker set up: rc %d, not BK_DECODE_NOMEM", rc);
  bk_test_fail_worker_setups(0);
  printf("block loop: every index once on 1-8 threads, failures reported\n");
}

/* A thread that runs the loop keeps its context; its exit must free it. */
BK_THREAD_BODY(loop_then_exit, p) {
  visit_arg *a = (visit_arg *)p;
  bk_parallel_blocks(visit, a, 0, 100, 1, 64, (void *)ctx_new, (void *)ctx_free);
  bk_parallel_blocks(visit, a, 0, 100, 1, 64, (void *)ctx_new, (void *)ctx_free);
  return BK_THREAD_DONE;
}

static void check_kept_state(void) {
  static int32_t visits[100];
  visit_arg a = {visits, -1};
  int32_t made0 = bk_atomic_load(&contexts_made), freed0 = bk_atomic_load(&contexts_freed);
  bk_thread t[4];
  for (int i = 0; i < 4; i++) CHECK(bk_thread_start(&t[i], loop_then_exit, &a) == 0, "start");
  for (int i = 0; i < 4; i++) bk_thread_join(t[i]);
  int32_t made = bk_atomic_load(&contexts_made) - made0;
  int32_t freed = bk_atomic_load(&contexts_freed) - freed0;
  /* one kept context per thread, reused by its second call */
  CHECK(made == 4, "%d contexts made by 4 threads, not 4", made);
  CHECK(freed == made, "%d of %d kept contexts freed when their threads ended", freed, made);
  printf("kept state: %d contexts made, all freed at thread exit\n", made);
}

int main(void) {
  check_shuffles();
  check_blosclz();
  check_block_loop();
  check_kept_state();
  if (failures) return 1;
  printf("port_check: ok\n");
  return 0;
}
