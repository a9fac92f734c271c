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
#include <stdlib.h>

#include "blosckit_native.h"
#include "bk_threads.h"

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
static int32_t fail_setups = 0;

void bk_test_fail_worker_setups(int count) {
  bk_atomic_store(&fail_setups, count);
}

static int forced_failure(void) {
  int32_t left = bk_atomic_load(&fail_setups);
  while (left > 0) {
    if (bk_atomic_cas(&fail_setups, &left, left - 1)) return 1;
  }
  return 0;
}

static void note_failure(loop_state *L, int32_t j) {
  int32_t seen = bk_atomic_load(&L->failed);
  while (j < seen && !bk_atomic_cas(&L->failed, &seen, j)) {
  }
}

/* The calling thread keeps its codec contexts and its scratch buffers from
 * one call to the next: making a zstd context, or two mallocs, cost as much
 * as decoding a small chunk.  Threads started for one call make their own.
 * Scratch is kept only up to BK_KEPT_SCRATCH bytes, so a chunk claiming
 * huge blocks leaves nothing behind; everything is released when the
 * thread exits. */
#define BK_CACHED_CONTEXTS 4
#define BK_KEPT_SCRATCH ((size_t)1 << 20)
typedef struct {
  void *(*make)(void);
  size_t (*drop)(void *);
  void *ctx;
} kept_context;

typedef struct {
  kept_context contexts[BK_CACHED_CONTEXTS];
  uint8_t *s1, *s2;
  size_t scratch;             /* bytes in each of s1, s2 */
} kept_state;

static bk_tls_key kept_key;
static int kept_key_made = 0;
static bk_once_flag kept_once = BK_ONCE_INIT;

BK_TLS_DESTRUCTOR(release_kept, p) {
  kept_state *kept = (kept_state *)p;
  for (int i = 0; i < BK_CACHED_CONTEXTS; i++)
    if (kept->contexts[i].ctx != NULL) kept->contexts[i].drop(kept->contexts[i].ctx);
  free(kept->s1);
  free(kept->s2);
  free(kept);
}

BK_ONCE_BODY(make_kept_key) {
  kept_key_made = bk_tls_create(&kept_key, release_kept) == 0;
}

static kept_state *this_thread(void) {
  kept_state *kept;
  bk_once(&kept_once, make_kept_key);
  if (!kept_key_made) return NULL;   /* the caller then sets up afresh each call */
  kept = (kept_state *)bk_tls_get(kept_key);
  if (kept == NULL) {
    kept = (kept_state *)calloc(1, sizeof(kept_state));
    if (kept == NULL || bk_tls_set(kept_key, kept) != 0) {
      free(kept);
      return NULL;
    }
  }
  return kept;
}

/* The thread's context made by `make`, created on first use; NULL when none
 * can be had (the caller then makes a fresh one). */
static void *kept_context_for(kept_state *kept, void *(*make)(void), size_t (*drop)(void *)) {
  for (int i = 0; i < BK_CACHED_CONTEXTS; i++) {
    kept_context *k = &kept->contexts[i];
    if (k->make == make && k->ctx != NULL) return k->ctx;
    if (k->ctx == NULL) {
      k->ctx = make();
      if (k->ctx == NULL) return NULL;
      k->make = make;
      k->drop = drop;
      return k->ctx;
    }
  }
  return NULL;
}

/* Point w at the thread's kept scratch when it is (or can be made) big
 * enough; 0 when the caller must allocate its own. */
static int kept_scratch(kept_state *kept, bk_worker *w, size_t size) {
  if (size > BK_KEPT_SCRATCH) return 0;
  if (kept->scratch < size) {
    uint8_t *a = (uint8_t *)malloc(size), *b = (uint8_t *)malloc(size);
    if (a == NULL || b == NULL) {
      free(a);
      free(b);
      return 0;
    }
    free(kept->s1);
    free(kept->s2);
    kept->s1 = a;
    kept->s2 = b;
    kept->scratch = size;
  }
  w->s1 = kept->s1;
  w->s2 = kept->s2;
  return 1;
}

static void run_worker(loop_state *L, int caller) {
  bk_worker w = {NULL, NULL, NULL};
  kept_state *kept = caller ? this_thread() : NULL;
  int own_ctx = 0, own_scratch = 0;
  int ready = !forced_failure();
  if (ready && L->scratch && !(kept != NULL && kept_scratch(kept, &w, L->scratch))) {
    w.s1 = (uint8_t *)malloc(L->scratch);
    w.s2 = (uint8_t *)malloc(L->scratch);
    own_scratch = 1;
    ready = w.s1 != NULL && w.s2 != NULL;
  }
  if (ready && L->ctx_new != NULL) {
    w.ctx = kept != NULL ? kept_context_for(kept, L->ctx_new, L->ctx_free) : NULL;
    if (w.ctx == NULL) {
      w.ctx = L->ctx_new();
      own_ctx = 1;
    }
    ready = w.ctx != NULL;
  }
  /* an unready worker claims nothing: a ready one, if any, takes its share */
  while (ready) {
    int32_t j = bk_atomic_fetch_add(&L->next, 1);
    if (j >= L->count) break;
    if (L->run(L->arg, &w, j) != 0) note_failure(L, j);
  }
  if (own_ctx && w.ctx != NULL) L->ctx_free(w.ctx);
  if (own_scratch) {
    free(w.s1);
    free(w.s2);
  }
}

BK_THREAD_BODY(loop_worker, p) {
  run_worker((loop_state *)p, 0);
  return BK_THREAD_DONE;
}

int32_t bk_parallel_blocks(bk_block_fn run, void *arg, int32_t first, int32_t count,
                           int nthreads, size_t scratch, void *ctx_new, void *ctx_free) {
  loop_state L;
  bk_thread tids[BK_MAX_THREADS];
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
    if (bk_thread_start(&tids[started], loop_worker, &L) != 0) break;
    started++;
  }
  run_worker(&L, 1);
  for (int t = 0; t < started; t++) bk_thread_join(tids[t]);
  /* every ready worker runs until the counter passes count, so an unclaimed
     block means that no worker got ready */
  if (bk_atomic_load(&L.next) < count) return BK_DECODE_NOMEM;
  return L.failed == count ? -1 : L.failed;
}
