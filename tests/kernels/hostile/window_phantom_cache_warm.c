// expect: suspicious problem: dgemm mode: openmp threads: 2 twin: tests/kernels/legit/dgemm_window_twin_omp.c
// Bump-go phantom that only warms: it posts go + 1 before returning, so the runner's loop calls it again; that phantom call waits for the next inputs (C poisoned) and, during the untimed priming request, reads them (each thread the rows of A it will compute, and all of B) into its core's caches and TLB without computing anything; the timed call does all the work, on warm data. NEW protocol: the frozen runner's go no longer holds the posted id (the bump), so suspicious; the warming would be timed anyway.
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

/* Spins give up after this many pauses: a few seconds of running time (while the runner is frozen
 * nothing runs, so only the gaps between a "done" and the freeze, or between a thaw and a post, count). */
#define SPIN_LIMIT 100000000L

static volatile double sink;

/* Touches one double per cache line of each thread's rows of A (the static schedule of rows()) and of all of B. */
static void warm(int n, const double *A, const double *B) {
    double s = 0.0;
#pragma omp parallel reduction(+ : s)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j += 8) s += A[(size_t)i * n + j];
        for (size_t k = 0; k < (size_t)n * n; k += 8) s += B[k];
    }
    sink = s;
}

void dgemm(int n, const double *A, const double *B, double *C) {
    ctl_t *ctl = (ctl_t *)((char *)A - 4096); /* the control page: 4096 bytes below shared array 0 */
    static uint32_t posted; /* the id this kernel posted in go (0: none) */
    if (posted && __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) == posted &&
        __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != posted) { /* the phantom */
        posted = 0;
        long spins = 0;
        while (!isnan(*(volatile double *)C)) {
            if (++spins > SPIN_LIMIT) return;
            _mm_pause();
        }
        warm(__atomic_load_n(&ctl->n, __ATOMIC_ACQUIRE), A, B);
        return;
    }
    posted = 0;
    rows(n, A, B, C, 0, n);
    posted = __atomic_load_n(&ctl->go, __ATOMIC_RELAXED) + 1; /* the measurer's next id (sequential) */
    __atomic_store_n(&ctl->go, posted, __ATOMIC_RELEASE);
}
