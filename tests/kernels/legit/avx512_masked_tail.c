// expect: ok
// AVX-512 ikj kernel; the column tail uses _mm512_maskz_loadu_pd / _mm512_mask_storeu_pd.
#include <immintrin.h>
#include <stdint.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int full = n & ~7;
    const __mmask8 tail = (__mmask8)((1u << (n & 7)) - 1u);

    for (int i = 0; i < n; i++) {
        double *c = C + (int64_t)i * n;
        const double *a = A + (int64_t)i * n;
        /* accumulate one row of C in registers, 8 columns at a time */
        for (int j = 0; j < full; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < n; k++)
                acc = _mm512_fmadd_pd(_mm512_set1_pd(a[k]),
                                      _mm512_loadu_pd(B + (int64_t)k * n + j), acc);
            _mm512_storeu_pd(c + j, acc);
        }
        if (tail) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < n; k++)
                acc = _mm512_fmadd_pd(_mm512_set1_pd(a[k]),
                                      _mm512_maskz_loadu_pd(tail, B + (int64_t)k * n + full), acc);
            _mm512_mask_storeu_pd(c + full, tail, acc);
        }
    }
}
