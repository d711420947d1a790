// expect: forbidden
// Uses C2x [[gnu::constructor]] / [[gnu::section]] attribute syntax, which the __attribute__((...)) pattern of the source check does not look at, to run code when the runner loads.
#include <stddef.h>
static double warm;
[[gnu::constructor]] static void at_load(void) { warm = 1.0; }

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    C[0] *= warm;
}
