// expect: wrong_result problem: spmv
// Wrong edge case: AVX-512 gathers over each row in blocks of 8 nonzeros with no masked tail, correct only for rows whose length is a multiple of 8 (0, 8, 16, 24, 32); every other row drops its last 1-7 terms.
#include <immintrin.h>

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        __m512d s = _mm512_setzero_pd();
        for (int k = rowptr[i]; k + 8 <= rowptr[i + 1]; k += 8) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(col + k));
            s = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(c, x, 8), s);
        }
        y[i] = _mm512_reduce_add_pd(s);
    }
}
