// expect: forbidden
// Runtime CPU dispatch with __builtin_cpu_init / __builtin_cpu_supports("avx512f") (reads libgcc's __cpu_model, which cpuid filled at load time): a builtin outside the allow-list.
#include <stddef.h>

static void product(int n, const double *A, const double *B, double *C, int wide) {
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            if (wide)
#pragma GCC unroll 8
                for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
            else
                for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C) {
    __builtin_cpu_init();
    product(n, A, B, C, __builtin_cpu_supports("avx512f"));
}
