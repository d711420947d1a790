// expect: wrong_result problem: transpose
// AVX-512 8 x 8 register blocks with no edge handling: correct only when n is a multiple of 8 (the odd size 77 leaves its last 5 rows and columns unwritten).
#include <immintrin.h>
#include <stddef.h>

void transpose(int n, const double *A, double *B)
{
    const size_t N = (size_t)n, m = N / 8 * 8;
    const __m512i lo2 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i hi2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    for (size_t i = 0; i < m; i += 8)
        for (size_t j = 0; j < m; j += 8) {
            const double *a = A + i * N + j;
            double *b = B + j * N + i;
            __m512d t0 = _mm512_unpacklo_pd(_mm512_loadu_pd(a), _mm512_loadu_pd(a + N));
            __m512d t1 = _mm512_unpackhi_pd(_mm512_loadu_pd(a), _mm512_loadu_pd(a + N));
            __m512d t2 = _mm512_unpacklo_pd(_mm512_loadu_pd(a + 2 * N), _mm512_loadu_pd(a + 3 * N));
            __m512d t3 = _mm512_unpackhi_pd(_mm512_loadu_pd(a + 2 * N), _mm512_loadu_pd(a + 3 * N));
            __m512d t4 = _mm512_unpacklo_pd(_mm512_loadu_pd(a + 4 * N), _mm512_loadu_pd(a + 5 * N));
            __m512d t5 = _mm512_unpackhi_pd(_mm512_loadu_pd(a + 4 * N), _mm512_loadu_pd(a + 5 * N));
            __m512d t6 = _mm512_unpacklo_pd(_mm512_loadu_pd(a + 6 * N), _mm512_loadu_pd(a + 7 * N));
            __m512d t7 = _mm512_unpackhi_pd(_mm512_loadu_pd(a + 6 * N), _mm512_loadu_pd(a + 7 * N));
            __m512d u0 = _mm512_permutex2var_pd(t0, lo2, t2), u1 = _mm512_permutex2var_pd(t0, hi2, t2);
            __m512d u2 = _mm512_permutex2var_pd(t1, lo2, t3), u3 = _mm512_permutex2var_pd(t1, hi2, t3);
            __m512d u4 = _mm512_permutex2var_pd(t4, lo2, t6), u5 = _mm512_permutex2var_pd(t4, hi2, t6);
            __m512d u6 = _mm512_permutex2var_pd(t5, lo2, t7), u7 = _mm512_permutex2var_pd(t5, hi2, t7);
            _mm512_storeu_pd(b, _mm512_shuffle_f64x2(u0, u4, 0x44));
            _mm512_storeu_pd(b + 4 * N, _mm512_shuffle_f64x2(u0, u4, 0xEE));
            _mm512_storeu_pd(b + 2 * N, _mm512_shuffle_f64x2(u1, u5, 0x44));
            _mm512_storeu_pd(b + 6 * N, _mm512_shuffle_f64x2(u1, u5, 0xEE));
            _mm512_storeu_pd(b + N, _mm512_shuffle_f64x2(u2, u6, 0x44));
            _mm512_storeu_pd(b + 5 * N, _mm512_shuffle_f64x2(u2, u6, 0xEE));
            _mm512_storeu_pd(b + 3 * N, _mm512_shuffle_f64x2(u3, u7, 0x44));
            _mm512_storeu_pd(b + 7 * N, _mm512_shuffle_f64x2(u3, u7, 0xEE));
        }
}
