// expect: wrong_result problem: jacobi2d
// Correct values, but the border rows are copied in 8-double vectors with a masked load and an unmasked store: the last row's copy writes zeros up to 7 doubles past the end of v (the slack canary).
#include <immintrin.h>

static void copy_row(const double *src, double *dst, int n)
{
    for (int j = 0; j < n; j += 8) {
        __mmask8 m = n - j >= 8 ? 0xFF : (__mmask8)((1u << (n - j)) - 1u);
        _mm512_storeu_pd(dst + j, _mm512_maskz_loadu_pd(m, src + j)); /* forgot the mask here */
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
