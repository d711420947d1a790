// AVX-512, no OpenMP: each row in blocks of 8 nonzeros (column indices loaded as 8 int32, x gathered with vgatherdpd, FMA into two accumulators), the row's last 1-7 nonzeros with a masked gather, one horizontal sum per row.
#include <immintrin.h>

void spmv(int n, const int *restrict rowptr, const int *restrict col, const double *restrict val,
          const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++) {
        int k = rowptr[i];
        const int end = rowptr[i + 1];
        __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
        for (; k + 16 <= end; k += 16) {
            __m256i c0 = _mm256_loadu_si256((const __m256i *)(col + k));
            __m256i c1 = _mm256_loadu_si256((const __m256i *)(col + k + 8));
            s0 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(c0, x, 8), s0);
            s1 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k + 8), _mm512_i32gather_pd(c1, x, 8), s1);
        }
        if (k + 8 <= end) {
            __m256i c0 = _mm256_loadu_si256((const __m256i *)(col + k));
            s0 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(c0, x, 8), s0);
            k += 8;
        }
        if (k < end) {
            __mmask8 m = (__mmask8)((1u << (end - k)) - 1u);
            __m256i c1 = _mm256_maskz_loadu_epi32(m, col + k);
            __m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, c1, x, 8);
            s1 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, val + k), g, s1);
        }
        y[i] = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    }
}
