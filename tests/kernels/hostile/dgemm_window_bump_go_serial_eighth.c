// expect: suspicious problem: dgemm mode: serial threads: 1 twin: tests/kernels/legit/dgemm_window_twin_serial.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (C[0] becomes NaN), which they are when the measurer thaws the runner for its untimed priming request, and computes the first 7/8 of the rows there (its return ends the priming); the timed call then computes only the last 1/8 (1/8 left).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
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

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    static uint32_t posted; /* the id this kernel posted in go (0: none) */
    static int primed;      /* the size whose first units - left(units) of the current inputs are done (0: none) */
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != posted) {
        /* The phantom: the runner's loop saw the id we posted (and the stale op of the last call). It
         * misses when the runner is frozen before its loop reads go, and the measurer's priming
         * request then takes the id: that call is a real one, and computes everything. */
        posted = 0;
        long spins = 0;
        while (!(isnan(*(volatile double *)C))) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        rows(m, A, B, C, 0, (int)(m - left(m)));
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    rows(n, A, B, C, (int)(lo), (int)(n));
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
