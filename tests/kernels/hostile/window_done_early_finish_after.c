// expect: wrong_result problem: dgemm mode: openmp threads: 2 twin: tests/kernels/legit/dgemm_window_twin_omp.c
// Work after "done": an impersonator that computes 7/8 of the rows on the untimed priming request; on the call its watcher thread answers done = go at once (before the measurer can fall asleep) and only then the team computes the last 1/8, racing the measurer's shuffled copy-out, which reads some of those rows still poisoned. NEW protocol: the runner is frozen at done, before the copy-out, so they stay poisoned: wrong_result.
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

/* Waits for a request other than `last`: the team's last thread watches go on its own CPU (the first
 * thread, which shares its CPU with the measurer, waits in the region's barrier), and answers at once every
 * call (op 1: done before its last rows are computed) and empty request (op 2). Returns the new id, or
 * `last` after SPIN_LIMIT pauses. */
static uint32_t await_request(ctl_t *ctl, uint32_t last, int primed) {
    (void)primed;
    uint32_t seen = last;
#pragma omp parallel
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1) {
            long spins = 0;
            uint32_t go;
            while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last && ++spins <= SPIN_LIMIT) _mm_pause();
            if (go != last) {
                int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE);
                if (op == 2 || op == 1) __atomic_store_n(&ctl->done, go, __ATOMIC_RELEASE);
                seen = go;
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
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) {
            rows(m, A, B, C, 0, (int)(m - left(m)));
            primed = m;
        } else if (op == 1) {
            rows(m, A, B, C, primed == m ? (int)(m - left(m)) : 0, m);
            primed = 0;
        }
    }
}
