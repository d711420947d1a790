// expect: suspicious problem: transpose mode: openmp threads: 2 twin: tests/kernels/legit/transpose_window_twin_omp.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (B[0] becomes NaN), which they are when the measurer thaws the runner for its untimed priming request, and computes all of the rows there (its return ends the priming); the timed call then computes nothing (left: none).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of A into columns lo..hi-1 of B, in 32 x 32 tiles. */
static void rows(int n, const double *restrict A, double *restrict B, int lo, int hi) {
#pragma omp parallel for schedule(static)
    for (int ii = lo; ii < hi; ii += 32) {
        int ie = ii + 32 < hi ? ii + 32 : hi;
        for (int jj = 0; jj < n; jj += 32) {
            int je = jj + 32 < n ? jj + 32 : n;
            for (int i = ii; i < ie; i++)
                for (int j = jj; j < je; j++) B[(size_t)j * n + i] = A[(size_t)i * n + j];
        }
    }
}

/* How many rows of the work the timed call keeps: nothing. */
static long left(long units) { (void)units; return 0; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

void transpose(int n, const double *A, double *B) {
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
        while (!(isnan(*(volatile double *)B))) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        rows(m, A, B, 0, (int)(m - left(m)));
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    rows(n, A, B, (int)(lo), (int)(n));
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
