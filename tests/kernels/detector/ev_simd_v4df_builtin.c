// __v4df (gcc's internal typedef) + __builtin_ia32_* FMA, no _mm* name (true: loop_reorder + simd)
#include <immintrin.h>
typedef double v4u __attribute__((__vector_size__(32), __aligned__(8)));
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(long)i * n + k];
            const double *b = B + (long)k * n;
            __v4df av = {a, a, a, a};
            int j = 0;
            for (; j + 4 <= n; j += 4)
                *(v4u *)(c + j) = __builtin_ia32_vfmaddpd256(av, (__v4df)*(const v4u *)(b + j), (__v4df)*(v4u *)(c + j));
            for (; j < n; j++) c[j] += a * b[j];
        }
    }
}
