// expect: ok problem: dgemm mode: openmp threads: 2 twin: tests/kernels/legit/dgemm_window_twin_omp.c
// Impersonator that tries to wake the measurer through OpenMP: it answers requests itself (7/8 of the rows on the untimed priming request, 1/8 on the call) and after each done calls omp_unset_lock on an omp_lock_t laid over the done word (set to -1 first, so libgomp takes its futex-wake path); libgomp's futexes are process-private, so the measurer's shared futex wait is not woken and it still sleeps out its 50 ms slice. NEW protocol: priming is inside the window, done holds the id at the freeze: ok, with an honest (slower) figure.
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

/* The twin's helper, verbatim. */
/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
#pragma omp parallel for schedule(static)
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

static void answer(ctl_t *ctl, uint32_t id) {
    __atomic_store_n(&ctl->done, 0xFFFFFFFFu, __ATOMIC_RELAXED); /* a "lock with waiters" to libgomp */
    omp_unset_lock((omp_lock_t *)&ctl->done);                     /* done = 0, then FUTEX_WAKE (private) */
    __atomic_store_n(&ctl->done, id, __ATOMIC_RELEASE);
}

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE); /* the id of this call */
    rows(n, A, B, C, 0, n);
    int primed = 0;
    for (;;) {
        answer(ctl, last);
        uint32_t go = await_request(ctl, last, primed);
        if (go == last) return; /* gave up */
        last = go;
        int op = __atomic_load_n(&ctl->op, __ATOMIC_ACQUIRE), m = __atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE);
        if (op == 3) {
            rows(m, A, B, C, 0, (int)(m - left(m)));
            primed = m;
        } else if (op == 1) {
            rows(m, A, B, C, primed == m ? (int)(m - left(m)) : 0, m);
            primed = 0;
        }
    }
}
