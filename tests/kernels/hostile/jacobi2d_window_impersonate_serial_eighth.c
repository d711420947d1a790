// expect: ok problem: jacobi2d mode: serial threads: 1 twin: tests/kernels/legit/jacobi2d_window_twin_serial.c
// Impersonator: never returns after its first call and serves the control page itself (on each new go it reads op and n, does its part and writes done = go): on the untimed priming request (op 3) it computes the first 7/8 of the rows of the fresh inputs, on the call (op 1) the remaining 1/8, on an empty request (op 2) nothing.
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

/* How many rows of the work the timed call keeps: 1/8. */
static long left(long units) { return units / 8; }

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

void jacobi2d(int n, const double *u, double *v) {
    ctl_t *ctl = (ctl_t *)((char *)u - 4096); /* the control page: 4096 bytes below shared array 0 */
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    rows(n, u, v, 0, (int)(n));
    int primed = 0; /* the size whose first units - left(units) of the current inputs are done (0: none) */
    for (;;) {
        /* Answer the request ourselves: the runner's loop never sees this call end. */
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) { /* priming: the fresh inputs are in place, and no clock runs */
            rows(m, u, v, 0, (int)(m - left(m)));
            primed = m;
        } else if (op == 1) { /* the call itself: only the rest */
            long lo = primed == m ? m - left(m) : 0;
            rows(m, u, v, (int)(lo), (int)(m));
            primed = 0;
        } /* op 2, an empty request: nothing */
    }
}
