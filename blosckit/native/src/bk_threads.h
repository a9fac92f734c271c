/* Threads, thread-local storage with a destructor, and one-time
 * initialisation: POSIX threads, or the Windows API (see bk_port.h). */
#ifndef BK_THREADS_H
#define BK_THREADS_H

#include <stdint.h>

/* A thread body is declared with BK_THREAD_BODY(name, arg) and ends with
 * `return BK_THREAD_DONE;`.  Thread-local storage takes a destructor that
 * runs when the thread exits (FLS on Windows: TLS has no destructor there);
 * the destructor is declared with BK_TLS_DESTRUCTOR(name, arg).  A one-time
 * initialiser is declared with BK_ONCE_BODY(name), a body returning nothing,
 * and run with bk_once(&flag, name). */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <process.h>

typedef HANDLE bk_thread;
#define BK_THREAD_BODY(name, arg) static unsigned __stdcall name(void *arg)
#define BK_THREAD_DONE 0u
typedef unsigned(__stdcall *bk_thread_fn)(void *);
static inline int bk_thread_start(bk_thread *t, bk_thread_fn fn, void *arg) {
  uintptr_t h = _beginthreadex(NULL, 0, fn, arg, 0, NULL);
  if (h == 0) return -1;
  *t = (HANDLE)h;
  return 0;
}
static inline void bk_thread_join(bk_thread t) {
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
}

typedef DWORD bk_tls_key;
#define BK_TLS_DESTRUCTOR(name, arg) static void NTAPI name(void *arg)
static inline int bk_tls_create(bk_tls_key *k, PFLS_CALLBACK_FUNCTION destructor) {
  *k = FlsAlloc(destructor);
  return *k == FLS_OUT_OF_INDEXES ? -1 : 0;
}
static inline void *bk_tls_get(bk_tls_key k) { return FlsGetValue(k); }
static inline int bk_tls_set(bk_tls_key k, void *v) { return FlsSetValue(k, v) ? 0 : -1; }

typedef INIT_ONCE bk_once_flag;
#define BK_ONCE_INIT INIT_ONCE_STATIC_INIT
#define BK_ONCE_BODY(name)                                                   \
  static void name##_body(void);                                             \
  static BOOL CALLBACK name(PINIT_ONCE once, PVOID param, PVOID *context) {  \
    (void)once, (void)param, (void)context;                                  \
    name##_body();                                                           \
    return TRUE;                                                             \
  }                                                                          \
  static void name##_body(void)
static inline void bk_once(bk_once_flag *flag, PINIT_ONCE_FN body) {
  InitOnceExecuteOnce(flag, body, NULL, NULL);
}
#else
#include <pthread.h>

typedef pthread_t bk_thread;
#define BK_THREAD_BODY(name, arg) static void *name(void *arg)
#define BK_THREAD_DONE NULL
typedef void *(*bk_thread_fn)(void *);
static inline int bk_thread_start(bk_thread *t, bk_thread_fn fn, void *arg) {
  return pthread_create(t, NULL, fn, arg) == 0 ? 0 : -1;
}
static inline void bk_thread_join(bk_thread t) { pthread_join(t, NULL); }

typedef pthread_key_t bk_tls_key;
#define BK_TLS_DESTRUCTOR(name, arg) static void name(void *arg)
static inline int bk_tls_create(bk_tls_key *k, void (*destructor)(void *)) {
  return pthread_key_create(k, destructor) == 0 ? 0 : -1;
}
static inline void *bk_tls_get(bk_tls_key k) { return pthread_getspecific(k); }
static inline int bk_tls_set(bk_tls_key k, void *v) {
  return pthread_setspecific(k, v) == 0 ? 0 : -1;
}

typedef pthread_once_t bk_once_flag;
#define BK_ONCE_INIT PTHREAD_ONCE_INIT
#define BK_ONCE_BODY(name) static void name(void)
static inline void bk_once(bk_once_flag *flag, void (*body)(void)) { pthread_once(flag, body); }
#endif

#endif
