// expect: ok
// Computes C in the default rounding mode, then leaves the SSE control register changed (flush-to-zero, denormals-are-zero, round toward zero) for whatever runs next in the process; the measurer, the baseline and the checks live in another process, so nothing it measures or checks changes.
#include <stddef.h>
#include <immintrin.h>

void dgemm(int n, const double *A, const double *B, double *C) {
    unsigned int saved = _mm_getcsr();
    _mm_setcsr(saved & ~0x6000u); /* round to nearest for our own work */
    for (int i = 0; i < n; i++) {
        double *c = C + (size_t)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            for (int j = 0; j < n; j++) c[j] += a * B[(size_t)k * n + j];
        }
    }
    _mm_setcsr(saved | 0x8040u | 0x6000u); /* FTZ + DAZ + round toward zero, left behind */
}
