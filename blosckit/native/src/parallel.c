/* Block-parallel loop shared by the chunk decoder and encoder.
 *
 * Worker threads claim block indexes from one atomic counter; each keeps its
 * own scratch buffers and codec context for its whole life.  The caller's
 * thread works too, so nthreads = 1 starts no thread at all.
 *
 * A worker that cannot get its scratch buffers or codec context claims no
 * block and leaves them to the others; only when no worker could start is
 * the whole run reported as out of memory (BK_DECODE_NOMEM), so that the
 * caller does not mistake it for corrupt data.
 */
#include <pthread.h>
#include <stdlib.h>

#include "blosckit_native.h"

typedef struct {
  bk_block_fn run;
  void *arg;
  size_t scratch;
  void *(*ctx_new)(void);
  size_t (*ctx_free)(void *);
  int32_t count;
  int32_t next;       /* next index to claim */
  int32_t failed;     /* lowest failing index, or count */
} loop_state;

/* tests only: how many upcoming worker set-ups to fail on purpose */
static int fail_setups = 0;

void bk_test_fail_worker_setups(int count) {
  __atomic_store_n(&fail_setups, count, __ATOMIC_SEQ_CST);
}

static int forced_failure(void) {
  int left = __atomic_load_n(&fail_setups, __ATOMIC_RELAXED);
  while (left > 0) {
    if (__atomic_compare_exchange_n(&fail_setups, &left, left - 1, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return 1;
  }
  return 0;
}

static void note_failure(loop_state *L, int32_t j) {
  int32_t seen = __atomic_load_n(&L->failed, __ATOMIC_RELAXED);
  while (j < seen &&
         !__atomic_compare_exchange_n(&L->failed, &seen, j, 0, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}

static void *loop_worker(void *p) {
  loop_state *L = (loop_state *)p;
  bk_worker w = {NULL, NULL, NULL};
  int ready = !forced_failure();
  if (ready && L->scratch) {
    w.s1 = (uint8_t *)malloc(L->scratch);
    w.s2 = (uint8_t *)malloc(L->scratch);
    ready = w.s1 != NULL && w.s2 != NULL;
  }
  if (ready && L->ctx_new != NULL) {
    w.ctx = L->ctx_new();
    ready = w.ctx != NULL;
  }
  /* an unready worker claims nothing: a ready one, if any, takes its share */
  while (ready) {
    int32_t j = __atomic_fetch_add(&L->next, 1, __ATOMIC_RELAXED);
    if (j >= L->count) break;
    if (L->run(L->arg, &w, j) != 0) note_failure(L, j);
  }
  if (w.ctx != NULL) L->ctx_free(w.ctx);
  free(w.s1);
  free(w.s2);
  return NULL;
}

int32_t bk_parallel_blocks(bk_block_fn run, void *arg, int32_t first, int32_t count,
                           int nthreads, size_t scratch, void *ctx_new, void *ctx_free) {
  loop_state L;
  pthread_t tids[BK_MAX_THREADS];
  int started = 0;
  if (first >= count) return -1;
  L.run = run;
  L.arg = arg;
  L.scratch = scratch;
  L.ctx_new = (void *(*)(void))ctx_new;
  L.ctx_free = (size_t(*)(void *))ctx_free;
  L.count = count;
  L.next = first;
  L.failed = count;
  if (nthreads > BK_MAX_THREADS) nthreads = BK_MAX_THREADS;
  if (nthreads > count - first) nthreads = count - first;
  for (int t = 1; t < nthreads; t++) {
    if (pthread_create(&tids[started], NULL, loop_worker, &L) != 0) break;
    started++;
  }
  loop_worker(&L);
  for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
  /* every ready worker runs until the counter passes count, so an unclaimed
     block means that no worker got ready */
  if (__atomic_load_n(&L.next, __ATOMIC_RELAXED) < count) return BK_DECODE_NOMEM;
  return L.failed == count ? -1 : L.failed;
}
