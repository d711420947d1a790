// expect: forbidden
// Calls a helper through __builtin_call_with_static_chain (sets the static-chain register, the mechanism behind nested-function trampolines) instead of a plain call.
#include <stddef.h>

static void product(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    static int chain;
    __builtin_call_with_static_chain(product(n, A, B, C), &chain);
}
