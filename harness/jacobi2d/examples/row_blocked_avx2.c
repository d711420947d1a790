// AVX2, serial, rows blocked by 4: one pass over 6 input rows yields 4 output rows (each input row is loaded 1.5 times instead of 3), scalar tails.
#include <immintrin.h>
#include <stddef.h>

static inline __m256d cell4(__m256d up, __m256d c, __m256d dn, const double *row, size_t j, __m256d fifth)
{
    __m256d s = _mm256_add_pd(_mm256_add_pd(c, up),
                              _mm256_add_pd(dn, _mm256_add_pd(_mm256_loadu_pd(row + j - 1), _mm256_loadu_pd(row + j + 1))));
    return _mm256_mul_pd(s, fifth);
}

static inline double cell1(const double *c, size_t N, size_t j)
{
    return 0.2 * (c[j] + c[j - N] + c[j + N] + c[j - 1] + c[j + 1]);
}

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n;
    const __m256d fifth = _mm256_set1_pd(0.2);
    for (size_t j = 0; j < N; j++) {
        v[j] = u[j];
        v[(N - 1) * N + j] = u[(N - 1) * N + j];
    }
    for (size_t i = 1; i + 1 < N; i++) {
        v[i * N] = u[i * N];
        v[i * N + N - 1] = u[i * N + N - 1];
    }
    size_t i = 1;
    for (; i + 4 < N; i += 4) { /* output rows i .. i+3, input rows i-1 .. i+4 */
        const double *r0 = u + (i - 1) * N, *r1 = r0 + N, *r2 = r1 + N, *r3 = r2 + N, *r4 = r3 + N, *r5 = r4 + N;
        double *o1 = v + i * N, *o2 = o1 + N, *o3 = o2 + N, *o4 = o3 + N;
        size_t j = 1;
        for (; j + 4 < N; j += 4) {
            __m256d a0 = _mm256_loadu_pd(r0 + j), a1 = _mm256_loadu_pd(r1 + j), a2 = _mm256_loadu_pd(r2 + j);
            __m256d a3 = _mm256_loadu_pd(r3 + j), a4 = _mm256_loadu_pd(r4 + j), a5 = _mm256_loadu_pd(r5 + j);
            _mm256_storeu_pd(o1 + j, cell4(a0, a1, a2, r1, j, fifth));
            _mm256_storeu_pd(o2 + j, cell4(a1, a2, a3, r2, j, fifth));
            _mm256_storeu_pd(o3 + j, cell4(a2, a3, a4, r3, j, fifth));
            _mm256_storeu_pd(o4 + j, cell4(a3, a4, a5, r4, j, fifth));
        }
        for (; j + 1 < N; j++) {
            o1[j] = cell1(r1, N, j); o2[j] = cell1(r2, N, j);
            o3[j] = cell1(r3, N, j); o4[j] = cell1(r4, N, j);
        }
    }
    for (; i + 1 < N; i++)
        for (size_t j = 1; j + 1 < N; j++) v[i * N + j] = cell1(u + i * N, N, j);
}
