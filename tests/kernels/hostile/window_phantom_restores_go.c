// expect: suspicious problem: dgemm mode: openmp threads: 2 twin: tests/kernels/legit/dgemm_window_twin_omp.c
// Bump-go phantom that hides its bump: it posts go + 1 before returning; the phantom call this makes the runner's loop start writes go back to the id of the call just answered (if the runner has not been frozen yet), so a frozen runner's control words look untouched, then waits for the next inputs (C poisoned) and computes 3/4 of the rows during the priming request; the timed call computes the last 1/4. NEW protocol: the runner is frozen at done, before its loop can read go and start the phantom, so the bump is still there: suspicious (and when the phantom does start, its work is inside the timed window: an honest figure).
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

/* How many rows of the work the timed call keeps: 1/4. */
static long left(long units) { return units / 4; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    static uint32_t answered, posted; /* the id of the last call, and the one this kernel posted (0: none) */
    static int primed;
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) == answered) { /* the phantom */
        posted = 0;
        /* Put go back while the runner can still be frozen with it (the next inputs not yet there; once
         * they are, the runner has been frozen and thawed, and a go put back would look like a new
         * request to its loop). The measurer, with sequential ids, posts the same id for its priming. */
        if (!isnan(*(volatile double *)C)) __atomic_store_n(&ctl->go, answered, __ATOMIC_RELEASE);
        long spins = 0;
        while (!isnan(*(volatile double *)C)) {
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        rows(m, A, B, C, 0, (int)(m - left(m)));
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    rows(n, A, B, C, (int)lo, n);
    answered = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED);
    posted = answered + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
