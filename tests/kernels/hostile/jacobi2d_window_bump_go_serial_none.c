// expect: suspicious problem: jacobi2d mode: serial threads: 1 twin: tests/kernels/legit/jacobi2d_window_twin_serial.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (v[0] becomes NaN), which they are when the measurer thaws the runner for its untimed priming request, and computes all of the rows there (its return ends the priming); the timed call then computes nothing (left: none).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of one 5-point Jacobi sweep: border cells copied from u, interior cells averaged. */
static void rows(int n, const double *restrict u, double *restrict v, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        const double *r = u + (size_t)i * n;
        double *restrict w = v + (size_t)i * n;
        if (i == 0 || i == n - 1) {
            for (int j = 0; j < n; j++) w[j] = r[j];
            continue;
        }
        w[0] = r[0];
        for (int j = 1; j < n - 1; j++) w[j] = 0.2 * (r[j] + r[j - n] + r[j + n] + r[j - 1] + r[j + 1]);
        w[n - 1] = r[n - 1];
    }
}

/* How many rows of the work the timed call keeps: nothing. */
static long left(long units) { (void)units; return 0; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

void jacobi2d(int n, const double *u, double *v) {
    ctl_t *ctl = (ctl_t *)((char *)u - 4096); /* the control page: 4096 bytes below shared array 0 */
    static uint32_t posted; /* the id this kernel posted in go (0: none) */
    static int primed;      /* the size whose first units - left(units) of the current inputs are done (0: none) */
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != posted) {
        /* The phantom: the runner's loop saw the id we posted (and the stale op of the last call). It
         * misses when the runner is frozen before its loop reads go, and the measurer's priming
         * request then takes the id: that call is a real one, and computes everything. */
        posted = 0;
        long spins = 0;
        while (!(isnan(*(volatile double *)v))) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        rows(m, u, v, 0, (int)(m - left(m)));
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    rows(n, u, v, (int)(lo), (int)(n));
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
