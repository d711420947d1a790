// expect: wrong_result problem: jacobi2d
// AVX-512 over the interior in vectors of 8 with no tail: correct only when n - 2 is a multiple of 8 (the odd size 77 leaves 3 columns per row unwritten, the timed size 3000 leaves 6).
#include <immintrin.h>
#include <stddef.h>

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n, w = (N - 2) / 8 * 8;
    const __m512d fifth = _mm512_set1_pd(0.2);
    for (size_t j = 0; j < N; j++) { v[j] = u[j]; v[(N - 1) * N + j] = u[(N - 1) * N + j]; }
    for (size_t i = 1; i + 1 < N; i++) {
        const double *c = u + i * N;
        v[i * N] = c[0];
        v[i * N + N - 1] = c[N - 1];
        for (size_t j = 1; j < 1 + w; j += 8) {
            __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_loadu_pd(c + j), _mm512_loadu_pd(c - N + j)),
                                      _mm512_add_pd(_mm512_loadu_pd(c + N + j),
                                                    _mm512_add_pd(_mm512_loadu_pd(c + j - 1), _mm512_loadu_pd(c + j + 1))));
            _mm512_storeu_pd(v + i * N + j, _mm512_mul_pd(s, fifth));
        }
    }
}
