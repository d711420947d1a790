// AVX-512 with four independent accumulators (32 products in flight), masked tail.
#include <immintrin.h>

double dot(int n, const double *x, const double *y)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    __m512d s2 = _mm512_setzero_pd(), s3 = _mm512_setzero_pd();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i), _mm512_loadu_pd(y + i), s0);
        s1 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i + 8), _mm512_loadu_pd(y + i + 8), s1);
        s2 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i + 16), _mm512_loadu_pd(y + i + 16), s2);
        s3 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i + 24), _mm512_loadu_pd(y + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i), _mm512_loadu_pd(y + i), s0);
    if (i < n) {
        __mmask8 m = (__mmask8)((1u << (n - i)) - 1u);
        s1 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, x + i), _mm512_maskz_loadu_pd(m, y + i), s1);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}
