// expect: ok problem: histogram mode: serial threads: 1 twin: tests/kernels/legit/histogram_window_twin_serial.c
// Impersonator: never returns after its first call and serves the control page itself (on each new go it reads op and n, does its part and writes done = go): on the untimed priming request (op 3) it computes all of the elements of the fresh inputs, on the call (op 1) nothing (left: none), on an empty request (op 2) nothing.
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
static void clear(int64_t *counts) {
    for (int b = 0; b < 256; b++) counts[b] = 0;
}

/* Adds the counts of x[lo..hi-1] to counts. */
static void count(const uint8_t *restrict x, int64_t *restrict counts, long lo, long hi) {
    for (long i = lo; i < hi; i++) counts[x[i]]++;
}

/* How many elements of the work the timed call keeps: nothing. */
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

void histogram(int n, const uint8_t *x, int64_t *counts) {
    ctl_t *ctl = (ctl_t *)((char *)x - 4096); /* the control page: 4096 bytes below shared array 0 */
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    clear(counts);
    count(x, counts, 0, n);
    int primed = 0; /* the size whose first units - left(units) of the current inputs are done (0: none) */
    for (;;) {
        /* Answer the request ourselves: the runner's loop never sees this call end. */
        __atomic_store_n(&ctl->done, last, __ATOMIC_RELEASE);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) { /* priming: the fresh inputs are in place, and no clock runs */
            clear(counts);
            count(x, counts, 0, m - left(m));
            primed = m;
        } else if (op == 1) { /* the call itself: only the rest */
            long lo = primed == m ? m - left(m) : 0;
            if (lo == 0) clear(counts);
            count(x, counts, lo, m);
            primed = 0;
        } /* op 2, an empty request: nothing */
    }
}
