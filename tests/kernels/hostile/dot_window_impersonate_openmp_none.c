// expect: ok problem: dot mode: openmp threads: 2 twin: tests/kernels/legit/dot_window_twin_omp.c
// Impersonator: never returns after its first call and serves the control page itself (on each new go it reads op and n, does its part and writes done = go): on the untimed priming request (op 3) it computes all of the elements of the fresh inputs, on the call (op 1) nothing (left: none), on an empty request (op 2) nothing. Its last OpenMP thread watches go on the second CPU and answers a request with nothing left to do at once.
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* The sum of x[i] * y[i] over lo <= i < hi. */
static double part(const double *restrict x, const double *restrict y, long lo, long hi) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (long i = lo; i < hi; i++) s += x[i] * y[i];
    return s;
}

/* How many elements of the work the timed call keeps: nothing. */
static long left(long units) { (void)units; return 0; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L
static double acc; /* the sum so far of the current inputs */

/* Waits for a request other than `last`: the team's last thread watches go on its own CPU (the first
 * thread, which shares its CPU with the measurer, waits in the region's barrier), and answers at once a
 * request with nothing to compute (op 2, or op 1 once priming did all of it). Returns the new id, or
 * `last` after SPIN_LIMIT pauses. */
static uint32_t await_request(ctl_t *ctl, uint32_t last, int primed) {
    uint32_t seen = last;
#pragma omp parallel
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1) {
            long spins = 0;
            uint32_t go;
            while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last && ++spins <= SPIN_LIMIT) _mm_pause();
            if (go != last) {
                int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
                if (op == 2 || (op == 1 && primed == m && left(m) == 0)) __atomic_store_n(&ctl->done, go, __ATOMIC_RELEASE);
                seen = go;
            }
        }
    }
    return seen;
}

double dot(int n, const double *x, const double *y) {
    ctl_t *ctl = (ctl_t *)((char *)x - 4096); /* the control page: 4096 bytes below shared array 0 */
    /* The result slot: the runner's stub keeps the returned value in shared array 2, one array
     * slot (y - x bytes, page-aligned for the largest size) past y. */
    double *R = (double *)((char *)y + ((char *)y - (char *)x));
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    acc = part(x, y, 0, n);
    *R = acc;
    int primed = 0; /* the size whose first units - left(units) of the current inputs are done (0: none) */
    for (;;) {
        /* Answer the request ourselves: the runner's loop never sees this call end. */
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return acc; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) { /* priming: the fresh inputs are in place, and no clock runs */
            acc = part(x, y, 0, m - left(m));
            if (left(m) == 0) *R = acc;
            primed = m;
        } else if (op == 1) { /* the call itself: only the rest */
            long lo = primed == m ? m - left(m) : 0;
            acc = (lo ? acc : 0.0) + part(x, y, lo, m);
            *R = acc;
            primed = 0;
        } /* op 2, an empty request: nothing */
    }
}
