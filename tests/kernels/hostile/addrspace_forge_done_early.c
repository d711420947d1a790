// expect: wrong_result
// Finds the control page just below A in the shared region and writes done = go at the start of each call (a forged early "finished"), then keeps computing for ~0.3 s and writes C only at the end.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint32_t ready, go, done; int32_t op, n, trap_nr; } ctl_t; /* harness/bench.h's bench_ctl */

static volatile double sink;

void dgemm(int n, const double *A, const double *B, double *C) {
    volatile ctl_t *ctl = (volatile ctl_t *)((const char *)A - 4096);
    ctl->done = ctl->go; /* "done" before any work */
    size_t nn = (size_t)n * n;
    double *t = calloc(nn, sizeof *t);
    if (!t) return;
    double x = 1.0;
    for (volatile long i = 0; i < 300000000L; i++) x = x * 0.999999999 + 1e-9; /* ~0.3 s: past the measurer's 50 ms wait slice */
    sink = x;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) t[(size_t)i * n + j] += a * B[(size_t)k * n + j];
        }
    memcpy(C, t, nn * sizeof *t);
    free(t);
}
