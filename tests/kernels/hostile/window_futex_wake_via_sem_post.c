// expect: forbidden problem: dgemm mode: openmp threads: 2
// Impersonator that wakes the measurer: it answers requests itself (7/8 of the rows on the untimed priming request, 1/8 on the call) and, instead of leaving the measurer asleep in its 50 ms futex slice, overlays a process-shared sem_t on the control page's done word and calls sem_post, whose FUTEX_WAKE is a shared one; <semaphore.h> is refused by the source check.
#include <immintrin.h>
#include <omp.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

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

/* done (low half of sem_t's 64-bit value: the count) and op (high half: the waiters) are adjacent:
 * sem_post adds 1 to done and, since op > 0, issues FUTEX_WAKE on it. */
static void answer(ctl_t *ctl, uint32_t id) {
    __atomic_store_n(&ctl->done, id - 1, __ATOMIC_RELEASE);
    sem_post((sem_t *)&ctl->done);
}

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096);
    uint32_t last = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE);
    rows(n, A, B, C, 0, n);
    int primed = 0;
    for (;;) {
        answer(ctl, last);
        uint32_t go;
        long spins = 0;
        while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last)
            if (++spins > SPIN_LIMIT) return;
            else _mm_pause();
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
