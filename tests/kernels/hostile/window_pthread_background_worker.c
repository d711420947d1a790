// expect: forbidden problem: dgemm mode: openmp threads: 2
// A thread of its own outside OpenMP: the first call starts a pthread that stays alive after the call returns (the runner's loop keeps serving the protocol, so no race with the freeze), watches for the next inputs (C poisoned) and computes 7/8 of the rows during the untimed priming request, leaving 1/8 to the timed call; <pthread.h> and pthread_create are refused by the source check.
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

static const double *gA, *gB;
static double *gC;
static volatile int primed, busy;

/* Rows lo..hi-1 of C = A * B: each row zeroed, then one scaled row of B added per k (ikj). */
static void rows(int n, const double *restrict A, const double *restrict B, double *restrict C, int lo, int hi) {
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

static void *worker(void *arg) {
    (void)arg;
    ctl_t *ctl = (ctl_t *)((char *)gA - 4096);
    for (long spins = 0; spins < 4000000000L; spins++) {
        if (!busy && !primed && isnan(*(volatile double *)gC)) {
            int m = ctl->n;
            rows(m, gA, gB, gC, 0, m - m / 8);
            primed = m;
        }
    }
    return NULL;
}

void dgemm(int n, const double *A, const double *B, double *C) {
    static pthread_t tid;
    static int started;
    busy = 1;
    if (!started) {
        gA = A, gB = B, gC = C;
        started = pthread_create(&tid, NULL, worker, NULL) == 0;
    }
    int lo = primed == n ? n - n / 8 : 0;
    rows(n, A, B, C, lo, n);
    primed = 0;
    busy = 0;
}
