// expect: forbidden
// Uses _Pragma("redefine_extname") to give a helper the assembler name omp_get_wtime and _Pragma("weak") on it: symbol games behind pragmas instead of attributes.
#include <stddef.h>
_Pragma("redefine_extname fake_clock omp_get_wtime")
_Pragma("weak fake_clock")
double fake_clock(void) { return 1e9; }

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
