// immintrin.h's unaligned vector type __m512d_u with C operators, no _mm* call (true: loop_reorder + simd)
#include <immintrin.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(long)i * n + k];
            const double *b = B + (long)k * n;
            int j = 0;
            for (; j + 8 <= n; j += 8) *(__m512d_u *)(c + j) += a * *(const __m512d_u *)(b + j);
            for (; j < n; j++) c[j] += a * b[j];
        }
    }
}
