// expect: wrong_result problem: transpose
// AVX2 form of transpose_edge_multiple_of_8.c: 8 x 8 register blocks (four 4 x 4 AVX2 transposes) with no edge handling: correct only when n is a multiple of 8 (the odd size 77 leaves its last 5 rows and columns unwritten).
#include <immintrin.h>
#include <stddef.h>

static inline void transpose4(const double *a, double *b, size_t N)
{
    __m256d r0 = _mm256_loadu_pd(a), r1 = _mm256_loadu_pd(a + N);
    __m256d r2 = _mm256_loadu_pd(a + 2 * N), r3 = _mm256_loadu_pd(a + 3 * N);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(b, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(b + N, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(b + 2 * N, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(b + 3 * N, _mm256_permute2f128_pd(t1, t3, 0x31));
}

void transpose(int n, const double *A, double *B)
{
    const size_t N = (size_t)n, m = N / 8 * 8;
    for (size_t i = 0; i < m; i += 8)
        for (size_t j = 0; j < m; j += 8) {
            const double *a = A + i * N + j;
            double *b = B + j * N + i;
            transpose4(a, b, N);
            transpose4(a + 4, b + 4 * N, N);
            transpose4(a + 4 * N, b + 4, N);
            transpose4(a + 4 * N + 4, b + 4 * N + 4, N);
        }
}
