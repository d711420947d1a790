// expect: suspicious problem: dot mode: serial threads: 1 twin: tests/kernels/legit/dot_window_twin_serial.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (the result slot, shared array 2, becomes NaN), which they are when the measurer thaws the runner for its untimed priming request, and computes the first 3/4 of the elements there (its return ends the priming); the timed call then computes only the last 1/4 (1/4 left).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* The sum of x[i] * y[i] over lo <= i < hi. */
static double part(const double *restrict x, const double *restrict y, long lo, long hi) {
    double s = 0.0;
    for (long i = lo; i < hi; i++) s += x[i] * y[i];
    return s;
}

/* How many elements of the work the timed call keeps: 1/4. */
static long left(long units) { return units / 4; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L
static double acc; /* the sum so far of the current inputs */

double dot(int n, const double *x, const double *y) {
    ctl_t *ctl = (ctl_t *)((char *)x - 4096); /* the control page: 4096 bytes below shared array 0 */
    /* The result slot: the runner's stub keeps the returned value in shared array 2, one array
     * slot (y - x bytes, page-aligned for the largest size) past y. */
    double *R = (double *)((char *)y + ((char *)y - (char *)x));
    static uint32_t posted; /* the id this kernel posted in go (0: none) */
    static int primed;      /* the size whose first units - left(units) of the current inputs are done (0: none) */
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != posted) {
        /* The phantom: the runner's loop saw the id we posted (and the stale op of the last call). It
         * misses when the runner is frozen before its loop reads go, and the measurer's priming
         * request then takes the id: that call is a real one, and computes everything. */
        posted = 0;
        long spins = 0;
        while (!(isnan(*(volatile double *)R))) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return 0.0;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        acc = part(x, y, 0, m - left(m));
        primed = m;
        return 0.0;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    acc = (lo ? acc : 0.0) + part(x, y, lo, n);
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
    return acc;
}
