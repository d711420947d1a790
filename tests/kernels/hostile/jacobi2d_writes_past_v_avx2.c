// expect: wrong_result problem: jacobi2d
// AVX2 form of jacobi2d_writes_past_v.c: correct values, but the border rows are copied in 4-double vectors with a masked load and an unmasked store: the last row's copy writes zeros up to 3 doubles past the end of v (the slack canary).
#include <immintrin.h>

static void copy_row(const double *src, double *dst, int n)
{
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    for (int j = 0; j < n; j += 4) {
        __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n - j), lane); /* lanes j + l < n */
        _mm256_storeu_pd(dst + j, _mm256_maskload_pd(src + j, m)); /* forgot the mask here */
    }
}

void jacobi2d(int n, const double *u, double *v)
{
    copy_row(u, v, n); /* its overrun lands in row 1, rewritten below */
    for (int i = 1; i < n - 1; i++) {
        v[i * n] = u[i * n];
        v[i * n + n - 1] = u[i * n + n - 1];
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    }
    copy_row(u + (n - 1) * n, v + (n - 1) * n, n);
}
