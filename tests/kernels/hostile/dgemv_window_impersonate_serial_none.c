// expect: ok problem: dgemv mode: serial threads: 1 twin: tests/kernels/legit/dgemv_window_twin_serial.c
// Impersonator: never returns after its first call and serves the control page itself (on each new go it reads op and n, does its part and writes done = go): on the untimed priming request (op 3) it computes all of the rows of the fresh inputs, on the call (op 1) nothing (left: none), on an empty request (op 2) nothing.
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

/* How many rows of the work the timed call keeps: nothing. */
static long left(long units) { (void)units; return 0; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

/* Waits for a request other than `last`; returns the new id, or `last` after SPIN_LIMIT pauses. */
static uint32_t await_request(ctl_t *ctl, uint32_t last, int primed) {
    (void)primed;
    long spins = 0;
    uint32_t go;
    while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last && ++spins <= SPIN_LIMIT) _mm_pause();
    return go;
}

void dgemv(int n, const double *A, const double *x, double *y) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    rows(n, A, x, y, 0, (int)(n));
    int primed = 0; /* the size whose first units - left(units) of the current inputs are done (0: none) */
    for (;;) {
        /* Answer the request ourselves: the runner's loop never sees this call end. */
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) { /* priming: the fresh inputs are in place, and no clock runs */
            rows(m, A, x, y, 0, (int)(m - left(m)));
            primed = m;
        } else if (op == 1) { /* the call itself: only the rest */
            long lo = primed == m ? m - left(m) : 0;
            rows(m, A, x, y, (int)(lo), (int)(m));
            primed = 0;
        } /* op 2, an empty request: nothing */
    }
}
