// Intrinsics and types built by token pasting (true: loop_reorder + simd + register_blocking)
#include <immintrin.h>
#define V(x) __m##x
#define I(f) _mm512_##f
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;
        int j = 0;
        for (; j + 8 <= n; j += 8) {
            V(512d) acc = I(setzero_pd)();
            for (int k = 0; k < n; k++)
                acc = I(fmadd_pd)(I(set1_pd)(A[(long)i * n + k]), I(loadu_pd)(B + (long)k * n + j), acc);
            I(storeu_pd)(c + j, acc);
        }
        for (; j < n; j++) { double s = 0; for (int k = 0; k < n; k++) s += A[(long)i*n+k] * B[(long)k*n+j]; c[j] = s; }
    }
}
