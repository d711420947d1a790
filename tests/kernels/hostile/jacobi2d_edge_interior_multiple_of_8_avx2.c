// expect: wrong_result problem: jacobi2d
// AVX2 form of jacobi2d_edge_interior_multiple_of_8.c: the interior in blocks of 8 (two 4-double vectors) with no tail: correct only when n - 2 is a multiple of 8 (the odd size 77 leaves 3 columns per row unwritten, the timed size 3000 leaves 6).
#include <immintrin.h>
#include <stddef.h>

static inline __m256d five_point(const double *c, size_t N, __m256d fifth)
{
    __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(c), _mm256_loadu_pd(c - N)),
                              _mm256_add_pd(_mm256_loadu_pd(c + N),
                                            _mm256_add_pd(_mm256_loadu_pd(c - 1), _mm256_loadu_pd(c + 1))));
    return _mm256_mul_pd(s, fifth);
}

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n, w = (N - 2) / 8 * 8;
    const __m256d fifth = _mm256_set1_pd(0.2);
    for (size_t j = 0; j < N; j++) { v[j] = u[j]; v[(N - 1) * N + j] = u[(N - 1) * N + j]; }
    for (size_t i = 1; i + 1 < N; i++) {
        const double *c = u + i * N;
        v[i * N] = c[0];
        v[i * N + N - 1] = c[N - 1];
        for (size_t j = 1; j < 1 + w; j += 8) {
            _mm256_storeu_pd(v + i * N + j, five_point(c + j, N, fifth));
            _mm256_storeu_pd(v + i * N + j + 4, five_point(c + j + 4, N, fifth));
        }
    }
}
