// expect: suspicious problem: dgemv mode: serial threads: 1 twin: tests/kernels/legit/dgemv_window_twin_serial.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (y[0] becomes NaN), which they are when the measurer thaws the runner for its untimed priming request, and computes the first 3/4 of the rows there (its return ends the priming); the timed call then computes only the last 1/4 (1/4 left).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of y = A * x: one dot product per row. */
static void rows(int n, const double *restrict A, const double *restrict x, double *restrict y, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        const double *restrict a = A + (size_t)i * n;
        double s = 0.0;
        for (int j = 0; j < n; j++) s += a[j] * x[j];
        y[i] = s;
    }
}

/* How many rows of the work the timed call keeps: 1/4. */
static long left(long units) { return units / 4; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

void dgemv(int n, const double *A, const double *x, double *y) {
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
        while (!(isnan(*(volatile double *)y))) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        rows(m, A, x, y, 0, (int)(m - left(m)));
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    rows(n, A, x, y, (int)(lo), (int)(n));
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
