// AVX-512, serial: 64 x 64 tiles made of 8 x 8 blocks transposed in registers (unpack, permutex2var, shuffle_f64x2), scalar edges.
#include <immintrin.h>
#include <stddef.h>

#define T 64

/* B[0..7][0..7] (stride N) = transpose of A[0..7][0..7] (stride N). */
static inline void block8(const double *a, double *b, size_t N)
{
    const __m512i lo2 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    const __m512i hi2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    __m512d r0 = _mm512_loadu_pd(a), r1 = _mm512_loadu_pd(a + N);
    __m512d r2 = _mm512_loadu_pd(a + 2 * N), r3 = _mm512_loadu_pd(a + 3 * N);
    __m512d r4 = _mm512_loadu_pd(a + 4 * N), r5 = _mm512_loadu_pd(a + 5 * N);
    __m512d r6 = _mm512_loadu_pd(a + 6 * N), r7 = _mm512_loadu_pd(a + 7 * N);
    /* pairs of rows interleaved: t0 = r0_0 r1_0 r0_2 r1_2 ..., t1 = r0_1 r1_1 r0_3 r1_3 ... */
    __m512d t0 = _mm512_unpacklo_pd(r0, r1), t1 = _mm512_unpackhi_pd(r0, r1);
    __m512d t2 = _mm512_unpacklo_pd(r2, r3), t3 = _mm512_unpackhi_pd(r2, r3);
    __m512d t4 = _mm512_unpacklo_pd(r4, r5), t5 = _mm512_unpackhi_pd(r4, r5);
    __m512d t6 = _mm512_unpacklo_pd(r6, r7), t7 = _mm512_unpackhi_pd(r6, r7);
    /* quads: u0 = rows 0-3 of columns 0 and 4, u1 = columns 2 and 6, u2 = 1 and 5, u3 = 3 and 7; u4-u7 rows 4-7 */
    __m512d u0 = _mm512_permutex2var_pd(t0, lo2, t2), u1 = _mm512_permutex2var_pd(t0, hi2, t2);
    __m512d u2 = _mm512_permutex2var_pd(t1, lo2, t3), u3 = _mm512_permutex2var_pd(t1, hi2, t3);
    __m512d u4 = _mm512_permutex2var_pd(t4, lo2, t6), u5 = _mm512_permutex2var_pd(t4, hi2, t6);
    __m512d u6 = _mm512_permutex2var_pd(t5, lo2, t7), u7 = _mm512_permutex2var_pd(t5, hi2, t7);
    _mm512_storeu_pd(b, _mm512_shuffle_f64x2(u0, u4, 0x44));
    _mm512_storeu_pd(b + 4 * N, _mm512_shuffle_f64x2(u0, u4, 0xEE));
    _mm512_storeu_pd(b + 2 * N, _mm512_shuffle_f64x2(u1, u5, 0x44));
    _mm512_storeu_pd(b + 6 * N, _mm512_shuffle_f64x2(u1, u5, 0xEE));
    _mm512_storeu_pd(b + 1 * N, _mm512_shuffle_f64x2(u2, u6, 0x44));
    _mm512_storeu_pd(b + 5 * N, _mm512_shuffle_f64x2(u2, u6, 0xEE));
    _mm512_storeu_pd(b + 3 * N, _mm512_shuffle_f64x2(u3, u7, 0x44));
    _mm512_storeu_pd(b + 7 * N, _mm512_shuffle_f64x2(u3, u7, 0xEE));
}

static void tile(const double *A, double *B, size_t N, size_t i0, size_t i1, size_t j0, size_t j1)
{
    size_t i = i0;
    for (; i + 8 <= i1; i += 8) {
        size_t j = j0;
        for (; j + 8 <= j1; j += 8) block8(A + i * N + j, B + j * N + i, N);
        for (; j < j1; j++)
            for (size_t k = 0; k < 8; k++) B[j * N + i + k] = A[(i + k) * N + j];
    }
    for (; i < i1; i++)
        for (size_t j = j0; j < j1; j++) B[j * N + i] = A[i * N + j];
}

void transpose(int n, const double *A, double *B)
{
    const size_t N = (size_t)n;
    for (size_t i0 = 0; i0 < N; i0 += T)
        for (size_t j0 = 0; j0 < N; j0 += T)
            tile(A, B, N, i0, i0 + T < N ? i0 + T : N, j0, j0 + T < N ? j0 + T : N);
}
