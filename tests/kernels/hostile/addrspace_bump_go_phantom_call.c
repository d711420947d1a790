// expect: suspicious
// Bumps the control page's go word before returning, so the runner's loop at once calls it again: a phantom call that spins until the measurer's next inputs appear (C poisoned) and computes them during the trusted priming step. Priming is inside the timed window, so the phantom would buy nothing; and the frozen runner's go word no longer holds the id the measurer posted (ids are random): suspicious.
#include <math.h>
#include <stdint.h>
#include <stddef.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

static void product(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    volatile ctl_t *ctl = (volatile ctl_t *)((const char *)A - 4096);
    static int phantom;
    if (phantom) {
        long spins = 0; /* bounded: the measurer kills the runner after its last request */
        while (!isnan(*(volatile double *)C) && ++spins < 4000000000L) {}
        n = ctl->n; /* the size of the request the measurer has just posted */
    }
    product(n, A, B, C);
    ctl->go = ctl->go + 1; /* the runner's loop sees a new request as soon as we return */
    phantom = 1;
}
