// AVX2 4 x 4 in-register transposes (unpack + permute2f128) in 32 x 32 tiles, OpenMP over tile rows of A.
#include <immintrin.h>
#include <stddef.h>

#define T 32

static inline void block4(const double *a, double *b, size_t N)
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
    const size_t N = (size_t)n;
    const long tiles = (long)((N + T - 1) / T);
#pragma omp parallel for schedule(static)
    for (long ti = 0; ti < tiles; ti++) {
        const size_t i0 = (size_t)ti * T, i1 = i0 + T < N ? i0 + T : N;
        for (size_t j0 = 0; j0 < N; j0 += T) {
            const size_t j1 = j0 + T < N ? j0 + T : N;
            size_t i = i0;
            for (; i + 4 <= i1; i += 4) {
                size_t j = j0;
                for (; j + 4 <= j1; j += 4) block4(A + i * N + j, B + j * N + i, N);
                for (; j < j1; j++)
                    for (size_t k = 0; k < 4; k++) B[j * N + i + k] = A[(i + k) * N + j];
            }
            for (; i < i1; i++)
                for (size_t j = j0; j < j1; j++) B[j * N + i] = A[i * N + j];
        }
    }
}
