// expect: suspicious problem: prefix_sum mode: serial threads: 1 twin: tests/kernels/legit/prefix_sum_window_twin_serial.c
// Bump-go phantom: after computing a call, sets the control page's go to the measurer's next id (go + 1) before returning, so the runner's loop calls it again at once; that phantom call spins until the next inputs are in place (y[0] becomes 0x5A5A5A5A5A5A5A5A), which they are when the measurer thaws the runner for its untimed priming request, and computes all of the elements there (its return ends the priming); the timed call then computes nothing (left: none).
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* y[i] = carry + x[lo] + ... + x[i] for lo <= i < hi. */
static void scan(const int64_t *restrict x, int64_t *restrict y, long lo, long hi, int64_t carry) {
    int64_t s = carry;
    for (long i = lo; i < hi; i++) {
        s += x[i];
        y[i] = s;
    }
}

/* How many elements of the work the timed call keeps: nothing. */
static long left(long units) { (void)units; return 0; }

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

void prefix_sum(int n, const int64_t *x, int64_t *y) {
    ctl_t *ctl = (ctl_t *)((char *)x - 4096); /* the control page: 4096 bytes below shared array 0 */
    static uint32_t posted; /* the id this kernel posted in go (0: none) */
    static int primed;      /* the size whose first units - left(units) of the current inputs are done (0: none) */
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != posted) {
        /* The phantom: the runner's loop saw the id we posted (and the stale op of the last call). It
         * misses when the runner is frozen before its loop reads go, and the measurer's priming
         * request then takes the id: that call is a real one, and computes everything. */
        posted = 0;
        long spins = 0;
        while (!(*(volatile int64_t *)y == (int64_t)0x5A5A5A5A5A5A5A5AULL)) { /* the measurer's next inputs */
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        int m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE); /* the size of that request */
        scan(x, y, 0, m - left(m), 0);
        primed = m;
        return;
    }
    posted = 0;
    long lo = primed == n ? n - left(n) : 0;
    primed = 0;
    scan(x, y, lo, n, lo ? y[lo - 1] : 0);
    /* The measurer's next request id is go + 1 (ids are sequential): post it, so the runner's loop calls again. */
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
