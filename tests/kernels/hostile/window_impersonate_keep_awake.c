// expect: ok problem: dgemm mode: openmp threads: 2 twin: tests/kernels/legit/dgemm_window_twin_omp.c
// Impersonator that keeps the measurer awake: it never returns after its first call and answers requests itself (7/8 of the rows on the untimed priming request, 1/8 on the call); the moment a call is posted its second thread starts rewriting done with throwaway values while the first thread computes the call's 1/8, so that the measurer's futex waits fail and it polls instead of sleeping out its 50 ms slice, and the timed call is the last 1/8 on one thread (a race: the measurer's first wait can come before the first rewrite, and a futex wait can still find the word unchanged between two rewrites). NEW protocol: priming is inside the window and the control words hold the id at the freeze: ok, with an honest (slower) figure.
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
#pragma omp parallel for schedule(static)
    for (int i = lo; i < hi; i++) {
        double *restrict c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)i * n + k];
            const double *restrict b = B + (size_t)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}

/* How many rows of the work the timed call keeps: 1/8. */
static long left(long units) { return units / 8; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

/* Waits for the next request, and serves a call (op 1) in the same parallel region, so that the
 * measurer never falls asleep on it: the team's last thread watches go on the other CPU and, the
 * moment a call is posted, starts rewriting done with throwaway values (never the id, nor a nearby
 * one) and hands the call's rows lo..m-1 to the first thread (which runs them alone: its nested
 * parallel for is inactive); once they are finished it writes done = id. Each futex wait of the
 * measurer finds done changed and returns at once, so it polls instead of sleeping out its 50 ms
 * slice, and sees done = id within microseconds. An empty request is answered at once; a priming
 * request (op 3) is left to the caller. Returns the new id, or `last` after SPIN_LIMIT pauses. */
static uint32_t serve(ctl_t *ctl, uint32_t last, int primed, const double *A, const double *B, double *C) {
    uint32_t seen = last;
    int task = -1, finished = 0, size = 0; /* task >= 0: rows task..size-1 for the first thread; -2: none */
#pragma omp parallel
    {
        int me = omp_get_thread_num(), watcher = omp_get_num_threads() - 1;
        if (me == watcher) {
            long spins = 0;
            uint32_t go, k = 0;
            while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last && ++spins <= SPIN_LIMIT) _mm_pause();
            int op = 0, m = 0;
            if (go != last) {
                seen = go;
                op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE);
                /* First of all, before the measurer's first futex wait can find done unchanged. */
                if (op == 1) __atomic_store_n(&ctl->done, go ^ (0x80000000u | k++), __ATOMIC_RELAXED);
                m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
            }
            if (op == 1) {
                int lo = primed == m ? (int)(m - left(m)) : 0;
                size = m;
                if (watcher == 0) rows(m, A, B, C, lo, m); /* a team of one: no one to keep the measurer awake */
                else {
                    __atomic_store_n(&task, lo, __ATOMIC_RELEASE);
                    while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) /* never the id: its top bit differs */
                        __atomic_store_n(&ctl->done, go ^ (0x80000000u | k++), __ATOMIC_RELAXED);
                }
                __atomic_store_n(&ctl->done, go, __ATOMIC_RELEASE);
            } else {
                if (op == 2) __atomic_store_n(&ctl->done, go, __ATOMIC_RELEASE);
                __atomic_store_n(&task, -2, __ATOMIC_RELEASE);
            }
        }
        if (me == 0 && watcher != 0) {
            int lo;
            /* Bounded by the watcher's wait: it sets task after at most SPIN_LIMIT pauses. */
            while ((lo = __atomic_load_n(&task, __ATOMIC_ACQUIRE)) == -1) _mm_pause();
            if (lo >= 0) {
                rows(size, A, B, C, lo, size);
                __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
            }
        }
    }
    return seen;
}

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    rows(n, A, B, C, 0, n);
    int primed = 0;
    for (;;) {
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE); /* the first call, or the last priming request */
        uint32_t go = serve(ctl, last, primed, A, B, C);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        primed = 0;
        if (op == 3) { /* priming: the fresh inputs are in place, and no clock runs */
            rows(m, A, B, C, 0, (int)(m - left(m)));
            primed = m;
        }
    }
}
